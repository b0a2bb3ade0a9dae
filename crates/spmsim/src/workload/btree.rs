//! `btree`: a persistent B-tree; each operation inserts or deletes a random
//! key (Secon 4.1 "Btree: insert/delete random nodes in a 1GB B-tree",
//! 256 B values; STAR V-A). The node follows PMDK's `btree_map` (order 8:
//! up to 7 items of key and value pointer, 8 children); values are separate
//! objects of `value_bytes`. Insertion splits full nodes on the way down and
//! deletion fixes thin nodes on the way down (borrow from a sibling or
//! merge), in one pass each (Cormen et al., ch. 18).
//!
//! ```text
//!  ROOT_BASE: [root node address]
//!  HEAP_BASE: node slots  [n | leaf << 32][key x 7][value ptr x 7][child x 8]  (192 B)
//!  values:    value slots (value_bytes, 64 B-aligned)
//!  every changed node: log the node (once per tx); fence; store its changed words
//! ```
//!
//! Keys are `0..2N`; an operation draws a key and deletes it if present,
//! else inserts it. The decision is made on the host; the loads emitted are
//! those of the insert's or the delete's own descent. The initial
//! population (implicit, see [`super::pheap`]) is a bulk-loaded tree of the
//! `N` even keys: every node but the root holds 3/4 of the maximum (5 of 7
//! keys at order 8), all leaves at one depth, nodes numbered level by level,
//! so any node's contents follow from its slot number alone.

use super::params::{check_range, check_value_bytes, OpsPerTx};
use super::pheap::{align_up, check_plan, mix, transaction, Layout, NewValues, PHeap, SlotAlloc, TxStyle, HEAP_BASE, ROOT_BASE};
use super::{Event, Generator};
use crate::util::rng::SplitMix64;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BtreeParams {
    pub value_bytes: u64,
    pub size_mib: u64,
    pub ops_per_tx: OpsPerTx,
    /// Maximum children per node (PMDK btree_map: 8).
    pub order: u32,
    pub gap: u32,
    pub style: TxStyle,
    pub populate: bool,
}

impl Default for BtreeParams {
    fn default() -> Self {
        BtreeParams {
            value_bytes: 256,
            size_mib: 1024,
            ops_per_tx: OpsPerTx { min: 1, max: 16 },
            order: 8,
            gap: 5,
            style: TxStyle::Dynamic,
            populate: false,
        }
    }
}

impl BtreeParams {
    pub fn validate(&self) -> Result<(), String> {
        check_value_bytes("btree", self.value_bytes)?;
        check_range("btree", "size_mib", self.size_mib, 1, 4096)?;
        check_range("btree", "gap", self.gap as u64, 0, 10_000)?;
        check_range("btree", "order", self.order as u64, 4, 16)?;
        if !self.order.is_multiple_of(2) {
            return Err(format!("btree workload: order must be even (a node splits into two halves), got {}", self.order));
        }
        let l = BtreeLayout::new(self, 0);
        check_plan("btree", l.end(), l.nodes0 * l.node_bytes + l.n0 * l.val_stride, self.populate)
    }
}

const ROOT: u64 = ROOT_BASE;

pub struct BtreeLayout {
    pub maxk: usize,
    /// Minimum degree: non-root nodes hold t-1..=2t-1 keys.
    pub t: usize,
    /// Keys per non-root node of the initial tree, and its fan-out.
    c: u64,
    f: u64,
    height: u32,
    root_keys: u64,
    /// Keys of the initial tree.
    pub n0: u64,
    pub nodes0: u64,
    level_start: Vec<u64>,
    /// f^k for k = 0..=height.
    pow: Vec<u64>,
    pub node_words: usize,
    pub node_bytes: u64,
    pub node_cap: u64,
    pub val_base: u64,
    pub val_stride: u64,
    pub val_cap: u64,
    seed: u64,
}

impl BtreeLayout {
    fn new(p: &BtreeParams, seed: u64) -> Self {
        let order = p.order as usize;
        let maxk = order - 1;
        let t = order / 2;
        let c = ((3 * maxk) / 4).max(t - 1).max(1) as u64;
        let f = c + 1;
        let node_words = 1 + 2 * maxk + order;
        let node_bytes = align_up(8 * node_words as u64, 64);
        let val_stride = align_up(p.value_bytes, 64);
        let target = ((p.size_mib << 20) / (val_stride + node_bytes / c)).max(1);
        // The tallest tree of this fill whose root holds 1..=maxk keys.
        let (mut height, mut r) = (1u32, target.min(maxk as u64));
        if target > maxk as u64 {
            loop {
                height += 1;
                let below = f.pow(height - 1);
                let rr = ((target + 1) / below).saturating_sub(1);
                if rr == 0 {
                    height -= 1;
                    r = maxk as u64;
                    break;
                }
                if rr <= maxk as u64 {
                    r = rr;
                    break;
                }
            }
        }
        let n0 = r + (r + 1) * (f.pow(height - 1) - 1);
        let mut level_start = vec![0u64, 1];
        for l in 1..height {
            let count = (r + 1) * f.pow(l - 1);
            level_start.push(level_start[l as usize] + count);
        }
        let nodes0 = level_start[height as usize];
        let node_cap = nodes0.max(1 + 2 * n0 / (t as u64 - 1).max(1)) + 2;
        let val_base = align_up(HEAP_BASE + node_cap * node_bytes, 4096);
        let pow = (0..=height).map(|k| f.pow(k)).collect();
        BtreeLayout {
            maxk,
            t,
            c,
            f,
            height,
            root_keys: r,
            n0,
            nodes0,
            level_start,
            pow,
            node_words,
            node_bytes,
            node_cap,
            val_base,
            val_stride,
            val_cap: 2 * n0,
            seed: mix(seed, 0xB7EE),
        }
    }
    pub fn end(&self) -> u64 {
        self.val_base + self.val_cap * self.val_stride
    }
    pub fn node_addr(&self, slot: u64) -> u64 {
        HEAP_BASE + slot * self.node_bytes
    }
    pub fn val_addr(&self, slot: u64) -> u64 {
        self.val_base + slot * self.val_stride
    }
    pub fn initial_value_word(&self, slot: u64, w: u64) -> u64 {
        mix(mix(self.seed, slot), w)
    }
    /// Keys below the initial subtree root of level `m` (m >= 1).
    fn subtree(&self, m: u32) -> u64 {
        self.pow[(self.height - m) as usize] - 1
    }
    /// Words `first..first + 8` of initial node `slot` (zero past its end).
    fn initial_words(&self, slot: u64, first: usize) -> [u64; 8] {
        let l = (self.level_start.partition_point(|&s| s <= slot) - 1) as u32;
        let i = slot - self.level_start[l as usize];
        let leaf = l + 1 == self.height;
        let below = if leaf { 0 } else { self.subtree(l + 1) };
        let (nkeys, base) = if l == 0 {
            (self.root_keys, 0)
        } else {
            let mut base = 0;
            for m in 1..=l {
                let d = i / self.pow[(l - m) as usize];
                let d = if m == 1 { d } else { d % self.f };
                base += d * (self.subtree(m) + 1);
            }
            (self.c, base)
        };
        let first_kid = self.level_start.get(l as usize + 1).copied().unwrap_or(0) + if l == 0 { 0 } else { i * self.f };
        let (mk, nk) = (self.maxk as u64, nkeys);
        std::array::from_fn(|w| {
            let j = (first + w) as u64;
            let rank = |x: u64| base + x * (below + 1) + below;
            match j {
                0 => nk | (leaf as u64) << 32,
                _ if j <= mk && j - 1 < nk => 2 * rank(j - 1),
                // (`j > mk`, `j > 2 * mk`: the words before were not
                // these; without them the subtraction wrapped in release
                // builds, giving the same 0, and panicked in debug ones.)
                _ if j > mk && j <= 2 * mk && j - 1 - mk < nk => self.val_addr(rank(j - 1 - mk)),
                _ if j > 2 * mk && (j as usize) < self.node_words && !leaf && j - 1 - 2 * mk <= nk => {
                    self.node_addr(first_kid + j - 1 - 2 * mk)
                }
                _ => 0,
            }
        })
    }
}

impl Layout for BtreeLayout {
    fn initial(&self, b: u64) -> [u64; 8] {
        if b == ROOT_BASE {
            return [self.node_addr(0), 0, 0, 0, 0, 0, 0, 0];
        }
        if b >= HEAP_BASE && b < self.node_addr(self.nodes0) {
            let slot = (b - HEAP_BASE) / self.node_bytes;
            return self.initial_words(slot, ((b - self.node_addr(slot)) / 8) as usize);
        }
        if b >= self.val_base && b < self.val_addr(self.n0) {
            let slot = (b - self.val_base) / self.val_stride;
            let first = (b - self.val_addr(slot)) / 8;
            let vw = self.val_stride / 8;
            return std::array::from_fn(|w| if first + (w as u64) < vw { self.initial_value_word(slot, first + w as u64) } else { 0 });
        }
        [0; 8]
    }
    fn extents(&self) -> Vec<(u64, u64)> {
        vec![(ROOT_BASE, ROOT_BASE + 8), (HEAP_BASE, self.node_addr(self.nodes0)), (self.val_base, self.val_addr(self.n0))]
    }
}

/// Words of the largest node (order 16).
const MAX_NODE_WORDS: usize = 1 + 2 * 15 + 16;

/// A node as host words (the layout of the module docs).
#[derive(Clone)]
struct Node {
    w: [u64; MAX_NODE_WORDS],
    len: usize,
    maxk: usize,
}

impl Node {
    fn n(&self) -> usize {
        (self.w[0] & 0xFFFF_FFFF) as usize
    }
    fn leaf(&self) -> bool {
        self.w[0] >> 32 & 1 == 1
    }
    fn set_n(&mut self, n: usize) {
        self.w[0] = n as u64 | (self.w[0] & (1 << 32));
    }
    fn key(&self, i: usize) -> u64 {
        self.w[1 + i]
    }
    fn val(&self, i: usize) -> u64 {
        self.w[1 + self.maxk + i]
    }
    fn kid(&self, i: usize) -> u64 {
        self.w[1 + 2 * self.maxk + i]
    }
    fn set_item(&mut self, i: usize, key: u64, val: u64) {
        self.w[1 + i] = key;
        self.w[1 + self.maxk + i] = val;
    }
    fn set_kid(&mut self, i: usize, a: u64) {
        self.w[1 + 2 * self.maxk + i] = a;
    }
    /// Insert an item at `i` (and, for an internal node, child `kid` at
    /// `i + 1`), shifting the rest right.
    fn insert_at(&mut self, i: usize, key: u64, val: u64, kid: Option<u64>) {
        let n = self.n();
        for j in (i..n).rev() {
            let (k, v) = (self.key(j), self.val(j));
            self.set_item(j + 1, k, v);
        }
        self.set_item(i, key, val);
        if let Some(c) = kid {
            for j in (i + 1..=n).rev() {
                let a = self.kid(j);
                self.set_kid(j + 1, a);
            }
            self.set_kid(i + 1, c);
        }
        self.set_n(n + 1);
    }
    /// Remove item `i` (and child `i + kid_off` if internal), shifting left.
    fn remove_at(&mut self, i: usize, kid_off: Option<usize>) {
        let n = self.n();
        for j in i + 1..n {
            let (k, v) = (self.key(j), self.val(j));
            self.set_item(j - 1, k, v);
        }
        if let Some(o) = kid_off {
            for j in i + o + 1..=n {
                let a = self.kid(j);
                self.set_kid(j - 1, a);
            }
        }
        self.set_n(n - 1);
    }
}

pub struct Btree {
    pub h: PHeap<BtreeLayout>,
    r: SplitMix64,
    p: BtreeParams,
    populate: bool,
    nodes: SlotAlloc,
    vals: SlotAlloc,
    values: NewValues,
}

impl Btree {
    pub fn new(seed: u64, p: BtreeParams) -> Result<Self, String> {
        p.validate()?;
        let l = BtreeLayout::new(&p, seed);
        let nodes = SlotAlloc::new(l.nodes0, l.node_cap);
        let vals = SlotAlloc::new(l.n0, l.val_cap);
        let h = PHeap::new(l, p.style, p.gap);
        Ok(Btree { h, r: SplitMix64::new(seed), populate: p.populate, p, nodes, vals, values: NewValues::new(mix(seed, 0xB7EF)) })
    }

    fn l(&self) -> &BtreeLayout {
        &self.h.layout
    }

    fn node(&self, a: u64) -> Node {
        let len = self.l().node_words;
        let mut w = [0; MAX_NODE_WORDS];
        self.h.peek_words(a, &mut w[..len]);
        Node { w, len, maxk: self.l().maxk }
    }

    /// Store a changed node: log all of it (PMDK's TX_ADD of the node),
    /// store the words that changed.
    fn put(&mut self, out: &mut Vec<Event>, a: u64, n: &Node) {
        let old = self.node(a);
        self.h.snapshot(a, n.len as u64);
        let mut i = 0;
        while i < n.len {
            if n.w[i] == old.w[i] {
                i += 1;
                continue;
            }
            let mut j = i + 1;
            while j < n.len && n.w[j] != old.w[j] {
                j += 1;
            }
            self.h.set(a + 8 * i as u64, &n.w[i..j]);
            i = j;
        }
        self.h.flush(out);
    }

    /// Linear search as the node code does it: load the count, then keys
    /// until one is >= k. Returns that index.
    fn scan(&self, out: &mut Vec<Event>, a: u64, n: &Node, k: u64) -> usize {
        self.h.load(out, a);
        let mut i = 0;
        while i < n.n() {
            self.h.load(out, a + 8 * (1 + i as u64));
            if n.key(i) >= k {
                break;
            }
            i += 1;
        }
        i
    }

    fn kid_addr(&self, a: u64, i: usize) -> u64 {
        a + 8 * (1 + 2 * self.l().maxk + i) as u64
    }

    fn alloc_node(&mut self) -> u64 {
        let s = self.nodes.alloc().expect("node pool holds every possible node (BtreeLayout::new)");
        self.h.layout.node_addr(s)
    }

    fn free_node(&mut self, a: u64) {
        let s = (a - HEAP_BASE) / self.l().node_bytes;
        self.nodes.release(s);
    }

    /// Host-side lookup (no events).
    pub fn contains(&self, k: u64) -> bool {
        let mut a = self.h.peek(ROOT);
        loop {
            let n = self.node(a);
            let i = (0..n.n()).find(|&i| n.key(i) >= k).unwrap_or(n.n());
            if i < n.n() && n.key(i) == k {
                return true;
            }
            if n.leaf() {
                return false;
            }
            a = n.kid(i);
        }
    }

    /// Split the full child `i` of node `xa` (x is its current content).
    fn split_child(&mut self, out: &mut Vec<Event>, xa: u64, x: &mut Node, i: usize) {
        let t = self.l().t;
        let ya = x.kid(i);
        let mut y = self.node(ya);
        self.h.copy_loads(out, ya, self.l().node_bytes);
        let za = self.alloc_node();
        let mut z = self.node(za);
        z.w[0] = (t as u64 - 1) | (y.leaf() as u64) << 32;
        for j in 0..t - 1 {
            z.set_item(j, y.key(j + t), y.val(j + t));
        }
        if !y.leaf() {
            for j in 0..t {
                z.set_kid(j, y.kid(j + t));
            }
        }
        y.set_n(t - 1);
        x.insert_at(i, y.key(t - 1), y.val(t - 1), Some(za));
        self.put(out, za, &z);
        self.put(out, ya, &y);
        self.put(out, xa, x);
    }

    pub fn insert(&mut self, out: &mut Vec<Event>, k: u64) {
        let maxk = self.l().maxk;
        let root = self.h.load(out, ROOT);
        let rn = self.node(root);
        let mut xa = root;
        if rn.n() == maxk {
            let s = self.alloc_node();
            let mut sn = self.node(s);
            sn.w[..sn.len].iter_mut().for_each(|w| *w = 0);
            sn.set_kid(0, root);
            self.split_child(out, s, &mut sn, 0);
            self.h.write(out, ROOT, &[s]);
            xa = s;
        }
        loop {
            let mut x = self.node(xa);
            let mut i = self.scan(out, xa, &x, k);
            if x.leaf() {
                let vslot = self.vals.alloc().expect("value pool holds every key (BtreeLayout::new)");
                let va = self.l().val_addr(vslot);
                let v = self.values.next_value((self.p.value_bytes / 8) as usize);
                self.h.write(out, va, v);
                self.h.copy_loads(out, xa + 8 * (1 + i as u64), 8 * (x.n() - i) as u64);
                x.insert_at(i, k, va, None);
                self.put(out, xa, &x);
                return;
            }
            let ca = self.h.load(out, self.kid_addr(xa, i));
            self.h.load(out, ca);
            if self.node(ca).n() == maxk {
                self.split_child(out, xa, &mut x, i);
                if k > x.key(i) {
                    i += 1;
                }
            }
            xa = x.kid(i);
        }
    }

    /// Merge child `i + 1` of `xa` and item `i` into child `i`; free the
    /// right child; a root left empty gives way to the merged child.
    fn merge(&mut self, out: &mut Vec<Event>, xa: u64, x: &mut Node, i: usize) -> u64 {
        let t = self.l().t;
        let (ya, za) = (x.kid(i), x.kid(i + 1));
        let mut y = self.node(ya);
        let z = self.node(za);
        self.h.copy_loads(out, za, self.l().node_bytes);
        y.set_item(t - 1, x.key(i), x.val(i));
        for j in 0..z.n() {
            y.set_item(t + j, z.key(j), z.val(j));
        }
        if !y.leaf() {
            for j in 0..=z.n() {
                y.set_kid(t + j, z.kid(j));
            }
        }
        y.set_n(t + z.n());
        x.remove_at(i, Some(1));
        self.put(out, ya, &y);
        self.free_node(za);
        if x.n() == 0 && self.h.peek(ROOT) == xa {
            self.h.write(out, ROOT, &[ya]);
            self.free_node(xa);
        } else {
            self.put(out, xa, x);
        }
        ya
    }

    /// The largest (`right`) or smallest item of the subtree at `a`.
    fn extreme(&self, out: &mut Vec<Event>, mut a: u64, right: bool) -> (u64, u64) {
        loop {
            let n = self.node(a);
            self.h.load(out, a);
            if n.leaf() {
                let i = if right { n.n() - 1 } else { 0 };
                self.h.load(out, a + 8 * (1 + i as u64));
                return (n.key(i), n.val(i));
            }
            let i = if right { n.n() } else { 0 };
            a = self.h.load(out, self.kid_addr(a, i));
        }
    }

    pub fn delete(&mut self, out: &mut Vec<Event>, mut k: u64) {
        let t = self.l().t;
        let mut xa = self.h.load(out, ROOT);
        let mut victim = None;
        loop {
            let mut x = self.node(xa);
            let i = self.scan(out, xa, &x, k);
            if i < x.n() && x.key(i) == k {
                if victim.is_none() {
                    victim = Some(x.val(i));
                }
                if x.leaf() {
                    self.h.copy_loads(out, xa + 8 * (1 + i as u64), 8 * (x.n() - i) as u64);
                    x.remove_at(i, None);
                    self.put(out, xa, &x);
                    break;
                }
                let ya = self.h.load(out, self.kid_addr(xa, i));
                self.h.load(out, ya);
                let za = self.h.load(out, self.kid_addr(xa, i + 1));
                self.h.load(out, za);
                if self.node(ya).n() >= t {
                    let (pk, pv) = self.extreme(out, ya, true);
                    x.set_item(i, pk, pv);
                    self.put(out, xa, &x);
                    k = pk;
                    xa = ya;
                } else if self.node(za).n() >= t {
                    let (sk, sv) = self.extreme(out, za, false);
                    x.set_item(i, sk, sv);
                    self.put(out, xa, &x);
                    k = sk;
                    xa = za;
                } else {
                    xa = self.merge(out, xa, &mut x, i);
                }
                continue;
            }
            if x.leaf() {
                break;
            }
            let mut ca = self.h.load(out, self.kid_addr(xa, i));
            self.h.load(out, ca);
            let mut c = self.node(ca);
            if c.n() == t - 1 {
                let left = if i > 0 { Some(self.node(x.kid(i - 1))) } else { None };
                let right = if i < x.n() { Some(self.node(x.kid(i + 1))) } else { None };
                if let Some(mut ls) = left.filter(|s| s.n() >= t) {
                    // Rotate right through the parent.
                    let la = x.kid(i - 1);
                    self.h.copy_loads(out, la, self.l().node_bytes);
                    let m = ls.n();
                    let kid = if c.leaf() { None } else { Some(ls.kid(m)) };
                    if let Some(kd) = kid {
                        for j in (0..=c.n()).rev() {
                            let a = c.kid(j);
                            c.set_kid(j + 1, a);
                        }
                        c.set_kid(0, kd);
                    }
                    let n = c.n();
                    for j in (0..n).rev() {
                        let (kk, vv) = (c.key(j), c.val(j));
                        c.set_item(j + 1, kk, vv);
                    }
                    c.set_item(0, x.key(i - 1), x.val(i - 1));
                    c.set_n(n + 1);
                    x.set_item(i - 1, ls.key(m - 1), ls.val(m - 1));
                    ls.set_n(m - 1);
                    self.put(out, la, &ls);
                    self.put(out, ca, &c);
                    self.put(out, xa, &x);
                } else if let Some(mut rs) = right.filter(|s| s.n() >= t) {
                    // Rotate left through the parent.
                    let ra = x.kid(i + 1);
                    self.h.copy_loads(out, ra, self.l().node_bytes);
                    let n = c.n();
                    c.set_item(n, x.key(i), x.val(i));
                    if !c.leaf() {
                        c.set_kid(n + 1, rs.kid(0));
                    }
                    c.set_n(n + 1);
                    x.set_item(i, rs.key(0), rs.val(0));
                    rs.remove_at(0, if rs.leaf() { None } else { Some(0) });
                    self.put(out, ra, &rs);
                    self.put(out, ca, &c);
                    self.put(out, xa, &x);
                } else if i < x.n() {
                    ca = self.merge(out, xa, &mut x, i);
                } else {
                    ca = self.merge(out, xa, &mut x, i - 1);
                }
            }
            xa = ca;
        }
        if let Some(v) = victim {
            self.vals.release((v - self.l().val_base) / self.l().val_stride);
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

    /// Host-side check of the B-tree properties: keys ordered within and
    /// across nodes, every non-root node between t-1 and 2t-1 keys, all
    /// leaves at one depth, no node or value shared. Returns the keys.
    pub fn check(&self) -> Result<Vec<u64>, String> {
        let l = self.l();
        let mut keys = Vec::new();
        let mut seen_nodes = rustc_hash::FxHashSet::default();
        let mut seen_vals = rustc_hash::FxHashSet::default();
        let mut leaf_depth = None;
        // (node, depth, low bound exclusive, high bound exclusive)
        let mut stack = vec![(self.h.peek(ROOT), 0u32, None::<u64>, None::<u64>)];
        let root = self.h.peek(ROOT);
        while let Some((a, d, lo, hi)) = stack.pop() {
            if a < HEAP_BASE || a >= l.node_addr(l.node_cap) || !(a - HEAP_BASE).is_multiple_of(l.node_bytes) || !seen_nodes.insert(a) {
                return Err(format!("bad or shared node address {a:#x}"));
            }
            let n = self.node(a);
            let cnt = n.n();
            if cnt > l.maxk || (a != root && cnt < l.t - 1) {
                return Err(format!("node {a:#x} holds {cnt} keys (t = {})", l.t));
            }
            for i in 0..cnt {
                let k = n.key(i);
                if lo.is_some_and(|x| k <= x) || hi.is_some_and(|x| k >= x) || (i > 0 && k <= n.key(i - 1)) {
                    return Err(format!("key {k} out of order in node {a:#x}"));
                }
                let v = n.val(i);
                if v < l.val_base || v >= l.end() || !(v - l.val_base).is_multiple_of(l.val_stride) || !seen_vals.insert(v) {
                    return Err(format!("key {k}: bad or shared value {v:#x}"));
                }
                keys.push(k);
            }
            if n.leaf() {
                if *leaf_depth.get_or_insert(d) != d {
                    return Err(format!("leaves at depths {} and {d}", leaf_depth.unwrap()));
                }
            } else {
                for i in 0..=cnt {
                    let lo2 = if i == 0 { lo } else { Some(n.key(i - 1)) };
                    let hi2 = if i == cnt { hi } else { Some(n.key(i)) };
                    stack.push((n.kid(i), d + 1, lo2, hi2));
                }
            }
        }
        keys.sort_unstable();
        Ok(keys)
    }

    /// An operation of the stream: toggle a key drawn uniformly from `0..2N`.
    fn toggle_random(&mut self, out: &mut Vec<Event>) -> bool {
        let k = self.r.below(2 * self.l().n0);
        self.toggle(out, k)
    }
}

impl Generator for Btree {
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
    fn the_implicit_tree_is_a_valid_btree_of_the_even_keys() {
        for (size_mib, order) in [(1, 8), (1, 4), (3, 6), (1024, 8)] {
            let p = BtreeParams { size_mib, order, ..BtreeParams::default() };
            let g = Btree::new(1, p).unwrap();
            let l = g.l();
            if size_mib == 1024 {
                // Checking 3.6 M keys on the host takes a while; the shape
                // and sizes are what matter here.
                assert!(l.n0 > 2_000_000 && l.end() < 3 << 30, "{} keys, end {:#x}", l.n0, l.end());
                assert!(g.contains(0) && g.contains(2 * (l.n0 - 1)) && !g.contains(7));
                continue;
            }
            let keys = g.check().unwrap();
            assert_eq!(keys, (0..l.n0).map(|r| 2 * r).collect::<Vec<_>>(), "size {size_mib} order {order}");
        }
    }

    #[test]
    fn inserts_and_deletes_keep_the_btree_properties() {
        // Big values make a small tree (about 250 keys), so the phases below
        // grow it through root splits and empty it through root merges.
        for order in [4, 8] {
            let p = BtreeParams { size_mib: 1, order, value_bytes: 4096, ops_per_tx: OpsPerTx::fixed(3), ..BtreeParams::default() };
            let mut g = Btree::new(11, p).unwrap();
            let mut model: BTreeSet<u64> = g.check().unwrap().into_iter().collect();
            let space = 2 * g.l().n0;
            let mut r = SplitMix64::new(8);
            let mut ev = Vec::new();
            let (mut ins, mut del, mut emptied) = (0, 0, false);
            for step in 0..3000 {
                let x = r.below(space);
                let k = match step / 200 {
                    // Grow: absent keys only.
                    0 | 4 => (x..space).chain(0..x).find(|k| !model.contains(k)).unwrap_or(x),
                    // Shrink: present keys only, until the tree is empty.
                    1..=3 if !model.is_empty() => *model.range(x..).next().or(model.iter().next()).unwrap(),
                    _ => x,
                };
                let mut v = Vec::new();
                g.h.begin(&mut v);
                let inserted = g.toggle(&mut v, k);
                g.h.commit(&mut v);
                assert_eq!(inserted, !model.contains(&k), "key {k}");
                if inserted {
                    model.insert(k);
                    ins += 1;
                } else {
                    model.remove(&k);
                    del += 1;
                }
                emptied |= model.is_empty();
                ev.extend(v);
                if step % 100 == 99 {
                    assert_eq!(g.check().unwrap(), model.iter().copied().collect::<Vec<_>>(), "order {order} step {step}");
                }
            }
            assert!(ins > 500 && del > 500 && emptied, "{ins} {del} {emptied}");
            check_stream(&ev, &g.h);
        }
    }

    #[test]
    fn same_seed_same_events() {
        crate::workload::pheap::tests::deterministic(|seed| {
            Btree::new(seed, BtreeParams { size_mib: 1, ..BtreeParams::default() }).ok().unwrap()
        });
    }
}
