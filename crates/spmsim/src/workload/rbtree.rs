//! `rbtree`: a persistent red-black tree; each operation inserts or deletes
//! a random key (Secon 4.1 "RBtree: insert/delete random nodes in a 1GB
//! red-black tree", 256 B values; STAR V-A). The node follows PMDK's
//! `rbtree_map` (key, value pointer, parent, two children, colour); values
//! are separate objects. Insert and delete with their rotations and
//! recolourings are Cormen et al. ch. 13; every field a rotation or a
//! recolouring changes is one undo-logged store (PMDK's TX_SET).
//!
//! ```text
//!  ROOT_BASE: [root node address]
//!  HEAP_BASE: node slots [key][value ptr][parent][left][right][colour][-][-]  (64 B)
//!  values:    value slots (value_bytes, 64 B-aligned)
//!  set field: log the word (once per tx); fence; store it
//! ```
//!
//! Keys are `0..2N`; an operation draws a key and deletes it if present,
//! else inserts it (decided on the host; the loads emitted are those of the
//! insert's or delete's own walk). The initial population (implicit, see
//! [`super::pheap`]) is the complete binary tree of the `N` even keys in
//! heap order (node slot `p - 1` at heap position `p`): all levels black
//! except a partial last level, which is red, so every path counts the same
//! black nodes and no red node has a red child.

use super::params::structure_params;
use super::pheap::{align_up, check_plan, mix, transaction, Layout, NewValues, PHeap, SlotAlloc, HEAP_BASE, ROOT_BASE};
use super::{Event, Generator};
use crate::util::rng::SplitMix64;

structure_params! {
    /// The tree (Secon: 256 B values, 1 GB).
    RbtreeParams, kind = "rbtree", gap = 5, max_size_mib = 4000
}

impl RbtreeParams {
    pub fn validate(&self) -> Result<(), String> {
        self.check_keys()?;
        let l = RbLayout::new(self, 0);
        check_plan("rbtree", l.end(), l.n0 * (NODE + l.val_stride), self.populate)
    }
}

const ROOT: u64 = ROOT_BASE;
const NODE: u64 = 64;
const KEY: u64 = 0;
const VAL: u64 = 8;
const PARENT: u64 = 16;
const LEFT: u64 = 24;
const RIGHT: u64 = 32;
const COLOR: u64 = 40;
const BLACK: u64 = 0;
const RED: u64 = 1;

pub struct RbLayout {
    pub n0: u64,
    pub cap: u64,
    pub val_base: u64,
    pub val_stride: u64,
    /// Levels of the initial tree; the last is partial unless n0 = 2^h - 1.
    height: u32,
    seed: u64,
}

impl RbLayout {
    fn new(p: &RbtreeParams, seed: u64) -> Self {
        let val_stride = align_up(p.value_bytes, 64);
        let n0 = ((p.size_mib << 20) / (NODE + val_stride)).max(1);
        let cap = 2 * n0;
        let val_base = align_up(HEAP_BASE + cap * NODE, 4096);
        RbLayout { n0, cap, val_base, val_stride, height: 64 - n0.leading_zeros(), seed: mix(seed, 0x4B7) }
    }
    pub fn end(&self) -> u64 {
        self.val_base + self.cap * self.val_stride
    }
    pub fn node_addr(&self, slot: u64) -> u64 {
        HEAP_BASE + slot * NODE
    }
    pub fn val_addr(&self, slot: u64) -> u64 {
        self.val_base + slot * self.val_stride
    }
    pub fn initial_value_word(&self, slot: u64, w: u64) -> u64 {
        mix(mix(self.seed, slot), w)
    }
    /// Nodes in the subtree at heap position `q` of the initial tree: full
    /// levels down to the second last, then the part of the last level
    /// below `q`.
    fn size(&self, q: u64) -> u64 {
        if q > self.n0 {
            return 0;
        }
        let lq = 63 - q.leading_zeros();
        let k = self.height - 1 - lq;
        let lo = q << k;
        let last = if self.n0 >= lo { (self.n0 - lo + 1).min(1 << k) } else { 0 };
        (1u64 << k) - 1 + last
    }
    /// In-order rank of heap position `p`.
    fn rank(&self, p: u64) -> u64 {
        let bits = 63 - p.leading_zeros();
        let (mut cur, mut base) = (1u64, 0u64);
        for b in (0..bits).rev() {
            let bit = p >> b & 1;
            if bit == 1 {
                base += self.size(2 * cur) + 1;
            }
            cur = 2 * cur + bit;
        }
        base + self.size(2 * p)
    }
    fn initial_node(&self, slot: u64) -> [u64; 8] {
        let p = slot + 1;
        let rank = self.rank(p);
        let at = |q: u64| if q >= 1 && q <= self.n0 { self.node_addr(q - 1) } else { 0 };
        let level = 63 - p.leading_zeros();
        let partial = self.n0 != (1u64 << self.height) - 1;
        let color = if partial && level + 1 == self.height { RED } else { BLACK };
        [2 * rank, self.val_addr(rank), if p > 1 { at(p / 2) } else { 0 }, at(2 * p), at(2 * p + 1), color, 0, 0]
    }
}

impl Layout for RbLayout {
    fn initial(&self, b: u64) -> [u64; 8] {
        if b == ROOT_BASE {
            return [self.node_addr(0), 0, 0, 0, 0, 0, 0, 0];
        }
        if b >= HEAP_BASE && b < self.node_addr(self.n0) {
            return self.initial_node((b - HEAP_BASE) / NODE);
        }
        if b >= self.val_base && b < self.val_addr(self.n0) {
            let slot = (b - self.val_base) / self.val_stride;
            let first = (b - self.val_addr(slot)) / 8;
            return std::array::from_fn(|w| self.initial_value_word(slot, first + w as u64));
        }
        [0; 8]
    }
    fn extents(&self) -> Vec<(u64, u64)> {
        vec![(ROOT_BASE, ROOT_BASE + 8), (HEAP_BASE, self.node_addr(self.n0)), (self.val_base, self.val_addr(self.n0))]
    }
}

pub struct Rbtree {
    pub h: PHeap<RbLayout>,
    r: SplitMix64,
    p: RbtreeParams,
    populate: bool,
    nodes: SlotAlloc,
    vals: SlotAlloc,
    values: NewValues,
}

impl Rbtree {
    pub fn new(seed: u64, p: RbtreeParams) -> Result<Self, String> {
        p.validate()?;
        let l = RbLayout::new(&p, seed);
        let nodes = SlotAlloc::new(l.n0, l.cap);
        let vals = SlotAlloc::new(l.n0, l.cap);
        let h = PHeap::new(l, p.style, p.gap);
        Ok(Rbtree { h, r: SplitMix64::new(seed), populate: p.populate, p, nodes, vals, values: NewValues::new(mix(seed, 0x4B8)) })
    }

    /// Load a field (0 for the nil node's fields: black, no links).
    fn get(&self, out: &mut Vec<Event>, x: u64, f: u64) -> u64 {
        if x == 0 {
            return if f == COLOR { BLACK } else { 0 };
        }
        self.h.load(out, x + f)
    }
    fn set(&mut self, out: &mut Vec<Event>, x: u64, f: u64, v: u64) {
        debug_assert!(x != 0);
        if self.h.peek(x + f) != v {
            self.h.write(out, x + f, &[v]);
        }
    }
    fn root(&self, out: &mut Vec<Event>) -> u64 {
        self.h.load(out, ROOT)
    }
    fn set_root(&mut self, out: &mut Vec<Event>, x: u64) {
        self.h.write(out, ROOT, &[x]);
    }

    /// Host-side lookup (no events).
    pub fn contains(&self, k: u64) -> bool {
        let mut x = self.h.peek(ROOT);
        while x != 0 {
            let kx = self.h.peek(x + KEY);
            if kx == k {
                return true;
            }
            x = self.h.peek(x + if k < kx { LEFT } else { RIGHT });
        }
        false
    }

    /// Rotate `x` down to the `dir` side (LEFT: left rotation).
    fn rotate(&mut self, out: &mut Vec<Event>, x: u64, dir: u64) {
        let other = if dir == LEFT { RIGHT } else { LEFT };
        let y = self.get(out, x, other);
        let inner = self.get(out, y, dir);
        self.set(out, x, other, inner);
        if inner != 0 {
            self.set(out, inner, PARENT, x);
        }
        let xp = self.get(out, x, PARENT);
        self.set(out, y, PARENT, xp);
        if xp == 0 {
            self.set_root(out, y);
        } else if self.get(out, xp, LEFT) == x {
            self.set(out, xp, LEFT, y);
        } else {
            self.set(out, xp, RIGHT, y);
        }
        self.set(out, y, dir, x);
        self.set(out, x, PARENT, y);
    }

    pub fn insert(&mut self, out: &mut Vec<Event>, k: u64) {
        let (mut y, mut x) = (0, self.root(out));
        while x != 0 {
            y = x;
            x = if k < self.get(out, x, KEY) { self.get(out, x, LEFT) } else { self.get(out, x, RIGHT) };
        }
        let vslot = self.vals.alloc().expect("value pool holds every key (RbLayout::new)");
        let va = self.h.layout.val_addr(vslot);
        let v = self.values.next_value((self.p.value_bytes / 8) as usize);
        self.h.write(out, va, v);
        let z = self.h.layout.node_addr(self.nodes.alloc().expect("node pool holds every key (RbLayout::new)"));
        self.h.write(out, z, &[k, va, y, 0, 0, RED]);
        if y == 0 {
            self.set_root(out, z);
        } else if k < self.h.peek(y + KEY) {
            self.set(out, y, LEFT, z);
        } else {
            self.set(out, y, RIGHT, z);
        }
        self.insert_fixup(out, z);
    }

    fn insert_fixup(&mut self, out: &mut Vec<Event>, mut z: u64) {
        loop {
            let p = self.get(out, z, PARENT);
            if self.get(out, p, COLOR) != RED {
                break;
            }
            // A red parent is not the root, so the grandparent exists.
            let g = self.get(out, p, PARENT);
            let (side, other) = if self.get(out, g, LEFT) == p { (LEFT, RIGHT) } else { (RIGHT, LEFT) };
            let u = self.get(out, g, other);
            if self.get(out, u, COLOR) == RED {
                self.set(out, p, COLOR, BLACK);
                self.set(out, u, COLOR, BLACK);
                self.set(out, g, COLOR, RED);
                z = g;
                continue;
            }
            let mut p = p;
            if self.get(out, p, other) == z {
                z = p;
                self.rotate(out, z, side);
                p = self.get(out, z, PARENT);
            }
            self.set(out, p, COLOR, BLACK);
            self.set(out, g, COLOR, RED);
            self.rotate(out, g, other);
        }
        let r = self.root(out);
        self.set(out, r, COLOR, BLACK);
    }

    /// Put `v` where `u` hangs from its parent.
    fn transplant(&mut self, out: &mut Vec<Event>, u: u64, v: u64) {
        let up = self.get(out, u, PARENT);
        if up == 0 {
            self.set_root(out, v);
        } else if self.get(out, up, LEFT) == u {
            self.set(out, up, LEFT, v);
        } else {
            self.set(out, up, RIGHT, v);
        }
        if v != 0 {
            self.set(out, v, PARENT, up);
        }
    }

    pub fn delete(&mut self, out: &mut Vec<Event>, k: u64) {
        let mut z = self.root(out);
        while z != 0 {
            let kz = self.get(out, z, KEY);
            if kz == k {
                break;
            }
            z = self.get(out, z, if k < kz { LEFT } else { RIGHT });
        }
        if z == 0 {
            return;
        }
        let (zl, zr) = (self.get(out, z, LEFT), self.get(out, z, RIGHT));
        let mut removed_color = self.get(out, z, COLOR);
        let (x, xp);
        if zl == 0 {
            x = zr;
            xp = self.get(out, z, PARENT);
            self.transplant(out, z, zr);
        } else if zr == 0 {
            x = zl;
            xp = self.get(out, z, PARENT);
            self.transplant(out, z, zl);
        } else {
            let mut y = zr;
            loop {
                let l = self.get(out, y, LEFT);
                if l == 0 {
                    break;
                }
                y = l;
            }
            removed_color = self.get(out, y, COLOR);
            x = self.get(out, y, RIGHT);
            if self.get(out, y, PARENT) == z {
                xp = y;
            } else {
                xp = self.get(out, y, PARENT);
                self.transplant(out, y, x);
                self.set(out, y, RIGHT, zr);
                self.set(out, zr, PARENT, y);
            }
            self.transplant(out, z, y);
            self.set(out, y, LEFT, zl);
            self.set(out, zl, PARENT, y);
            let zc = self.get(out, z, COLOR);
            self.set(out, y, COLOR, zc);
        }
        if removed_color == BLACK {
            self.delete_fixup(out, x, xp);
        }
        let va = self.h.peek(z + VAL);
        let l = &self.h.layout;
        let (vslot, nslot) = ((va - l.val_base) / l.val_stride, (z - HEAP_BASE) / NODE);
        self.vals.release(vslot);
        self.nodes.release(nslot);
    }

    fn delete_fixup(&mut self, out: &mut Vec<Event>, mut x: u64, mut xp: u64) {
        while xp != 0 && self.get(out, x, COLOR) == BLACK {
            let (side, other) = if self.get(out, xp, LEFT) == x { (LEFT, RIGHT) } else { (RIGHT, LEFT) };
            let mut w = self.get(out, xp, other);
            if self.get(out, w, COLOR) == RED {
                self.set(out, w, COLOR, BLACK);
                self.set(out, xp, COLOR, RED);
                self.rotate(out, xp, side);
                w = self.get(out, xp, other);
            }
            let (wn, wf) = (self.get(out, w, side), self.get(out, w, other));
            if self.get(out, wn, COLOR) == BLACK && self.get(out, wf, COLOR) == BLACK {
                self.set(out, w, COLOR, RED);
                x = xp;
                xp = self.get(out, x, PARENT);
                continue;
            }
            if self.get(out, wf, COLOR) == BLACK {
                self.set(out, wn, COLOR, BLACK);
                self.set(out, w, COLOR, RED);
                self.rotate(out, w, other);
                w = self.get(out, xp, other);
            }
            let pc = self.get(out, xp, COLOR);
            self.set(out, w, COLOR, pc);
            self.set(out, xp, COLOR, BLACK);
            let wf = self.get(out, w, other);
            self.set(out, wf, COLOR, BLACK);
            self.rotate(out, xp, side);
            x = self.root(out);
            xp = 0;
        }
        if x != 0 {
            self.set(out, x, COLOR, BLACK);
        }
    }

    /// Toggle `k`; true if it was inserted.
    pub fn toggle(&mut self, out: &mut Vec<Event>, k: u64) -> bool {
        if self.contains(k) {
            self.delete(out, k);
            false
        } else {
            self.insert(out, k);
            true
        }
    }

    /// Host-side check of the red-black properties (root black, no red
    /// node with a red child, one black height), search order and parent
    /// links. Returns the keys in order.
    pub fn check(&self) -> Result<Vec<u64>, String> {
        let l = &self.h.layout;
        let root = self.h.peek(ROOT);
        if root != 0 && (self.h.peek(root + COLOR) != BLACK || self.h.peek(root + PARENT) != 0) {
            return Err("the root is red or has a parent".into());
        }
        let mut keys = Vec::new();
        let mut seen = rustc_hash::FxHashSet::default();
        // Returns the black height of the subtree at x.
        #[allow(clippy::too_many_arguments)]
        fn walk(
            t: &Rbtree,
            l: &RbLayout,
            x: u64,
            parent: u64,
            lo: Option<u64>,
            hi: Option<u64>,
            keys: &mut Vec<u64>,
            seen: &mut rustc_hash::FxHashSet<u64>,
        ) -> Result<u32, String> {
            if x == 0 {
                return Ok(1);
            }
            if x < HEAP_BASE || x >= l.node_addr(l.cap) || !(x - HEAP_BASE).is_multiple_of(NODE) || !seen.insert(x) {
                return Err(format!("bad or shared node {x:#x}"));
            }
            let (k, c) = (t.h.peek(x + KEY), t.h.peek(x + COLOR));
            if t.h.peek(x + PARENT) != parent {
                return Err(format!("node {x:#x}: parent link wrong"));
            }
            if lo.is_some_and(|v| k <= v) || hi.is_some_and(|v| k >= v) {
                return Err(format!("key {k} out of search order"));
            }
            let (lc, rc) = (t.h.peek(x + LEFT), t.h.peek(x + RIGHT));
            if c == RED && [lc, rc].iter().any(|&y| y != 0 && t.h.peek(y + COLOR) == RED) {
                return Err(format!("red node {x:#x} has a red child"));
            }
            if c != RED && c != BLACK {
                return Err(format!("node {x:#x}: colour {c}"));
            }
            let bl = walk(t, l, lc, x, lo, Some(k), keys, seen)?;
            keys.push(k);
            let br = walk(t, l, rc, x, Some(k), hi, keys, seen)?;
            if bl != br {
                return Err(format!("node {x:#x}: black heights {bl} and {br}"));
            }
            Ok(bl + (c == BLACK) as u32)
        }
        walk(self, l, root, 0, None, None, &mut keys, &mut seen)?;
        Ok(keys)
    }

    /// An operation of the stream: toggle a key drawn uniformly from `0..2N`.
    fn toggle_random(&mut self, out: &mut Vec<Event>) -> bool {
        let k = self.r.below(2 * self.h.layout.n0);
        self.toggle(out, k)
    }
}

impl Generator for Rbtree {
    fn next_op(&mut self, out: &mut Vec<Event>) {
        let (populate, toggles) = (std::mem::take(&mut self.populate), self.p.ops_per_tx.draw(&mut self.r));
        transaction(self, out, populate, toggles, |g| &mut g.h, Self::toggle_random);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::pheap::tests::check_stream;
    use std::collections::BTreeSet;

    #[test]
    fn the_implicit_tree_is_a_red_black_tree_of_the_even_keys() {
        for vb in [4096, 1024, 1000, 256] {
            let g = Rbtree::new(2, RbtreeParams { size_mib: 1, value_bytes: vb, ..RbtreeParams::default() }).unwrap();
            let n0 = g.h.layout.n0;
            assert_eq!(g.check().unwrap(), (0..n0).map(|r| 2 * r).collect::<Vec<_>>(), "value_bytes {vb}: {n0} keys");
        }
        let g = Rbtree::new(2, RbtreeParams::default()).unwrap();
        assert!(g.h.layout.n0 > 3_000_000 && g.h.layout.end() < 8 << 30);
        assert!(g.contains(0) && g.contains(2 * (g.h.layout.n0 - 1)) && !g.contains(1));
    }

    #[test]
    fn inserts_and_deletes_keep_the_red_black_properties() {
        // About 250 keys: the phases empty the tree and grow it again.
        let p = RbtreeParams { size_mib: 1, value_bytes: 4096, ..RbtreeParams::default() };
        let mut g = Rbtree::new(6, p).unwrap();
        let mut model: BTreeSet<u64> = g.check().unwrap().into_iter().collect();
        let space = 2 * g.h.layout.n0;
        let mut r = SplitMix64::new(3);
        let mut ev = Vec::new();
        let mut emptied = false;
        for step in 0..3000 {
            let x = r.below(space);
            let k = match step / 200 {
                0 | 4 => (x..space).chain(0..x).find(|k| !model.contains(k)).unwrap_or(x),
                1..=3 if !model.is_empty() => *model.range(x..).next().or(model.iter().next()).unwrap(),
                _ => x,
            };
            let mut v = Vec::new();
            g.h.begin(&mut v);
            let inserted = g.toggle(&mut v, k);
            g.h.commit(&mut v);
            assert_eq!(inserted, !model.contains(&k));
            if inserted {
                model.insert(k);
            } else {
                model.remove(&k);
            }
            emptied |= model.is_empty();
            ev.extend(v);
            if step % 50 == 49 {
                assert_eq!(g.check().unwrap(), model.iter().copied().collect::<Vec<_>>(), "step {step}");
            }
        }
        assert!(emptied);
        check_stream(&ev, &g.h);
    }

    #[test]
    fn same_seed_same_events() {
        crate::workload::pheap::tests::deterministic(|seed| {
            Rbtree::new(seed, RbtreeParams { size_mib: 1, ..RbtreeParams::default() }).ok().unwrap()
        });
    }
}
