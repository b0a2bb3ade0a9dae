//! Bonsai Merkle tree (SecPB II-B; STAR Fig. 2b): each node holds eight
//! 64-bit keyed hashes of its children; the leaves are the split counter
//! blocks; the root register holds the hash of each top-level node.
//! Updates are eager: a counter change is hashed up to the root at once
//! (the "BMT root update" every SecPB scheme times).

use super::rebuilt::RebuiltNodes;
use super::RebuildOutcome;
use crate::engine::counter::{bmt_set_slot, bmt_slots};
use crate::engine::crypto::CryptoEngine;
use crate::engine::hooks::SubtreeRoot;
use crate::engine::layout::{Cover, Layout};
use crate::engine::rules::Rules;
use crate::engine::store::{CheckFailure, MetaStore};
use rustc_hash::FxHashMap;

#[derive(Clone, Debug)]
pub struct BonsaiMerkleTree {
    /// The bits of a counter block's hash its level-1 entry keeps: all 64,
    /// or 54 when the scheme takes the other 10 (Secon 3.2 keeps a counter
    /// track unit id there; "using its 54 bits is sufficiently secure").
    leaf_mask: u64,
    /// Contents of a never-written block, per level.
    default_blocks: Vec<[u8; 64]>,
    /// Hash of `default_blocks[l]`, per level.
    default_hashes: Vec<u64>,
    /// The last rebuild's nodes, when kept (see [`Self::keep_rebuilds`]).
    kept: Option<std::sync::Arc<std::sync::Mutex<RebuiltNodes>>>,
    /// A level-1 entry of zero marks its counter block as not written since
    /// the last recovery (Triad-NVM III-C, lazy recovery): the block is
    /// taken as all-zero whatever NVM holds, and a written block's entry is
    /// never zero. Never-written level-1 nodes are then all-zero.
    zero_marks: bool,
    /// Tree levels above the top kept on chip (`tree.onchip_levels`): each
    /// root update hashes them too.
    onchip_levels: u32,
}

impl BonsaiMerkleTree {
    /// Precompute the default (never-written) block of every level. This is
    /// set-up work, not counted as runtime hashing.
    pub fn new(layout: &Layout, crypto: &CryptoEngine) -> Self {
        Self::with_leaf_bits(layout, crypto, 64)
    }

    /// A tree whose level-1 entries keep `bits` bits of their counter
    /// block's hash (64: all; see `leaf_mask`).
    pub fn with_leaf_bits(layout: &Layout, crypto: &CryptoEngine, bits: u32) -> Self {
        Self::configured(layout, crypto, bits, false, 0)
    }

    /// A tree whose level-1 entries keep `bits` bits, with zero entries
    /// marking unwritten counter blocks when `zero_marks` (see the field),
    /// and `onchip_levels` levels above the top on chip.
    pub fn configured(layout: &Layout, crypto: &CryptoEngine, bits: u32, zero_marks: bool, onchip_levels: u32) -> Self {
        let leaf_mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let mut default_blocks = vec![[0u8; 64]];
        let leaf = if zero_marks { 0 } else { crypto.bmt_hash_uncounted(&[0u8; 64]) & leaf_mask };
        let mut default_hashes = vec![leaf];
        for _ in 1..layout.levels() {
            let h = *default_hashes.last().unwrap();
            let mut b = [0u8; 64];
            for s in 0..8 {
                bmt_set_slot(&mut b, s, h);
            }
            default_hashes.push(crypto.bmt_hash_uncounted(&b));
            default_blocks.push(b);
        }
        BonsaiMerkleTree { leaf_mask, default_blocks, default_hashes, kept: None, zero_marks, onchip_levels }
    }

    /// Whether zero level-1 entries mark unwritten counter blocks.
    pub fn zero_marks(&self) -> bool {
        self.zero_marks
    }

    pub fn default_block(&self, level: u32) -> [u8; 64] {
        self.default_blocks[level as usize]
    }
    pub fn default_root(&self) -> u64 {
        *self.default_hashes.last().unwrap()
    }
    /// Hash of a never-written block at `level`: the entry its parent (or
    /// root register) holds for it until it is first written.
    pub fn default_hash(&self, level: u32) -> u64 {
        self.default_hashes[level as usize]
    }

    /// Whether the hash a level-`level` node holds in `slot` is still the
    /// hash of a never-written child.
    pub fn child_entry_is_initial(&self, level: u32, node: &[u8; 64], slot: usize) -> bool {
        bmt_slots(node)[slot] == self.default_hash(level - 1)
    }

    /// The entry a parent keeps for a level-`level` child whose hash is `h`.
    pub fn entry_for(&self, level: u32, h: u64) -> u64 {
        match level {
            // Triad-NVM III-C re-encrypts a line of a counter block whose
            // MAC comes out zero; taking 1 instead keeps the entry non-zero
            // at the same (2^-64) odds of a collision.
            0 if self.zero_marks && h & self.leaf_mask == 0 => 1,
            0 => h & self.leaf_mask,
            _ => h,
        }
    }

    /// Whether a parent's entry vouches for a level-`level` child hashing
    /// to `h`; bits outside a level-1 entry's mask are not the hash's.
    fn entry_matches(&self, level: u32, entry: u64, h: u64) -> bool {
        match level {
            0 if self.zero_marks => entry == self.entry_for(0, h),
            0 => (entry ^ h) & self.leaf_mask == 0,
            _ => entry == h,
        }
    }

    /// Whether the level-1 node above counter block `index` marks it as not
    /// written since the last recovery (a zero entry; see `zero_marks`).
    /// The node is fetched, so checked, first.
    pub fn marks_unwritten(&self, r: &Rules, st: &mut MetaStore, index: u64) -> Result<bool, CheckFailure> {
        if !self.zero_marks {
            return Ok(false);
        }
        let Some((pl, pi, slot)) = st.layout.parent_of(0, index) else { return Ok(false) };
        let parent = st.fetch(r, st.layout.meta_addr(pl, pi))?;
        Ok(bmt_slots(&parent)[slot] == 0)
    }

    pub fn verify(&self, r: &Rules, st: &mut MetaStore, level: u32, index: u64, bytes: &[u8; 64]) -> Result<(), CheckFailure> {
        let h = st.crypto.bmt_hash(bytes);
        // A node whose hash a register of the scheme's holds (a detached
        // hot tree's root) is checked against that register.
        if let SubtreeRoot::Register(hash) = r.scheme.subtree_root(st, level, index) {
            return if hash == h { Ok(()) } else { Err(CheckFailure::Tree { level, index }) };
        }
        match st.layout.parent_of(level, index) {
            None => {
                if self.root_matches(&st.chip.roots, index, h) {
                    Ok(())
                } else {
                    Err(CheckFailure::Root { index })
                }
            }
            Some((pl, pi, slot)) => {
                let parent = st.fetch(r, st.layout.meta_addr(pl, pi))?;
                if self.entry_matches(level, bmt_slots(&parent)[slot], h) {
                    Ok(())
                } else {
                    Err(CheckFailure::Tree { level, index })
                }
            }
        }
    }

    fn root_matches(&self, roots: &crate::engine::roots::RootRegisters, index: u64, h: u64) -> bool {
        roots.value_or(index, self.default_root()) == h
    }

    /// Whether node `index` of `level` holding `bytes` matches its parent
    /// holding `parent` (or, at the top, its root register): one edge of
    /// [`Self::verify`], by the same comparisons, with nothing fetched or
    /// counted. The crash oracle's incremental reads ask it which edges a
    /// crash point changed.
    pub fn edge_holds(&self, r: &Rules, st: &MetaStore, level: u32, index: u64, bytes: &[u8; 64], parent: &[u8; 64]) -> bool {
        let h = st.crypto.bmt_hash_uncounted(bytes);
        if let SubtreeRoot::Register(hash) = r.scheme.subtree_root(st, level, index) {
            return hash == h;
        }
        match st.layout.parent_of(level, index) {
            None => self.root_matches(&st.chip.roots, index, h),
            Some((_, _, slot)) => self.entry_matches(level, bmt_slots(parent)[slot], h),
        }
    }

    pub fn counter_updated(&self, r: &Rules, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        self.node_updated(r, st, 0, index, bytes)
    }

    /// Node `index` of `level` (0: a counter block) is now `bytes`: install
    /// it dirty and hash it into every node above it up to its root register.
    pub fn node_updated(&self, r: &Rules, st: &mut MetaStore, level: u32, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let addr = st.layout.meta_addr(level, index);
        st.install(r, addr, bytes, true);
        let mut changed = vec![addr];
        changed.extend(self.hash_up(r, st, level, index, bytes)?);
        for a in changed {
            st.metadata_dirtied(r, a)?;
        }
        Ok(())
    }

    /// Hash node `index` of `level`, now `bytes`, into its parent, and
    /// each changed parent into its own, until a root register takes the
    /// hash, or a register of the scheme's (a detached hot tree's), or
    /// until the scheme's cached node has been changed (a node acting as a
    /// root: CacheTree's HNodes), as the scheme's [`SubtreeRoot`] says.
    /// Returns the parents changed, lowest first; the caller says what
    /// follows for each (`metadata_dirtied`).
    pub fn hash_up(&self, r: &Rules, st: &mut MetaStore, level: u32, index: u64, bytes: [u8; 64]) -> Result<Vec<u64>, CheckFailure> {
        let (mut level, mut idx, mut cur) = (level, index, bytes);
        let mut changed = Vec::new();
        loop {
            let h = st.crypto.bmt_hash(&cur);
            // A node the scheme keeps in a register is a root: its register
            // takes the hash and nothing above it changes.
            if let SubtreeRoot::Register(_) = r.scheme.subtree_root(st, level, idx) {
                r.scheme.set_subtree_register(st, level, idx, h);
                st.root_updates += 1;
                break;
            }
            match st.layout.parent_of(level, idx) {
                None => {
                    st.chip.roots.set(idx, h);
                    st.root_updates += 1;
                    // The on-chip levels above the top are hashed too.
                    st.crypto.work.tree_hashes += self.onchip_levels as u64;
                    break;
                }
                Some((pl, pi, slot)) => {
                    let pa = st.layout.meta_addr(pl, pi);
                    let e = self.entry_for(level, h);
                    let p = st.update(r, pa, |p| bmt_set_slot(p, slot, e))?;
                    changed.push(pa);
                    if r.scheme.subtree_root(st, pl, pi) == SubtreeRoot::StopsUpdate {
                        break;
                    }
                    (level, idx, cur) = (pl, pi, p);
                }
            }
        }
        Ok(changed)
    }

    /// Node `index` of `level` (at least 1) as its children in NVM make it:
    /// each child present read and hashed (both counted), an absent one
    /// left at its initial entry. A recovery that trusts the children (they
    /// were written through, or checked) recomputes a lost node so.
    pub fn node_from_nvm_children(&self, st: &mut MetaStore, level: u32, index: u64) -> [u8; 64] {
        let layout = st.layout.clone();
        let mut b = self.default_block(level);
        for slot in 0..layout.arity {
            let child = index * layout.arity + slot;
            if child >= layout.level_nodes[level as usize - 1] {
                break;
            }
            let Some(c) = st.nvm.read(&layout, layout.meta_addr(level - 1, child)) else { continue };
            let h = st.crypto.bmt_hash(&c);
            bmt_set_slot(&mut b, slot as usize, self.entry_for(level - 1, h));
        }
        b
    }

    /// A dirty node leaving the cache is written as it is: the eager update
    /// already hashed it into its parent.
    pub fn write_back(&self, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        st.nvm.write(&st.layout, addr, bytes);
        Ok(())
    }

    /// Write every dirty line in place; no order is needed, since no
    /// write-back changes another node.
    pub fn flush_all(&self, r: &Rules, st: &mut MetaStore) -> Result<u64, CheckFailure> {
        r.process_victims(st)?;
        if r.shape.write_back_hashes_into_parent {
            // A lazy tree's write-back dirties the parent: lowest level
            // first, until nothing is dirty.
            let mut n = 0;
            loop {
                let mut dirty = st.caches.dirty_lines();
                if dirty.is_empty() {
                    return Ok(n);
                }
                let level = |layout: &crate::engine::layout::Layout, a: u64| layout.meta_pos(a).map_or(0, |(l, _)| l);
                dirty.sort_by_key(|(a, _)| (level(&st.layout, *a), *a));
                let lowest = level(&st.layout, dirty[0].0);
                let batch: Vec<u64> = dirty.iter().map(|(a, _)| *a).filter(|&a| level(&st.layout, a) == lowest).collect();
                for a in batch {
                    let layout = &st.layout;
                    let Some(b) = st.caches.for_addr(layout, a).take_dirty(a) else { continue };
                    r.scheme.on_metadata_evict(r, st, a, b)?;
                    r.process_victims(st)?;
                    n += 1;
                }
            }
        }
        let dirty = st.caches.dirty_lines();
        for (a, _) in &dirty {
            st.write_line_through(*a);
        }
        Ok(dirty.len() as u64)
    }

    /// Recompute every node above the persisted counter blocks and compare
    /// the top with the root registers. On a match the rebuilt nodes replace
    /// the tree region of the image.
    pub fn rebuild(&self, st: &mut MetaStore) -> Option<RebuildOutcome> {
        self.rebuild_over(st, &[])
    }

    /// [`Self::rebuild`] with some counter blocks taken from `overlay`
    /// (index, bytes) instead of the image: a recovery that corrects
    /// counters before checking them (Secon 3.2's roll-back) builds over
    /// its corrections without writing them. Every counter block read, node
    /// hashed and node written is counted, whatever [`Self::keep_rebuilds`]
    /// spares the simulator.
    pub fn rebuild_over(&self, st: &mut MetaStore, overlay: &[(u64, [u8; 64])]) -> Option<RebuildOutcome> {
        let layout = st.layout.clone();
        let top = layout.top_level();
        let mut corrected: FxHashMap<u64, [u8; 64]> = overlay.iter().copied().collect();
        let (lo, hi) = layout.counter_range();
        let mut leaves: Vec<(u64, [u8; 64])> = Vec::new();
        // Hardware cannot know which counter blocks were ever written: it
        // reads every one and hashes every node up to the roots (as
        // `rebuild_region` counts). The simulator reads the stored blocks
        // only (the rest are the never-written block) and counts the others.
        st.nvm.reads.counter += layout.level_nodes[0];
        for a in st.nvm.image.addrs_in(lo, hi) {
            let i = a - lo;
            let b = corrected.remove(&i).unwrap_or_else(|| *st.nvm.image.get(a).expect("listed"));
            leaves.push((i, b));
        }
        leaves.extend(corrected);
        let (mut guard, mut fresh) = (None, RebuiltNodes::default());
        let kept = self.kept_nodes(&mut guard, &mut fresh);
        kept.update(self, &st.crypto, layout.arity, (0, top), &leaves);
        st.crypto.work.tree_hashes += layout.level_nodes[..=top as usize].iter().sum::<u64>();
        let nodes_rebuilt = layout.level_nodes[1..=top as usize].iter().sum::<u64>();
        let tops = kept.level(top);
        let mut mismatched: Vec<u64> =
            tops.iter().filter(|(i, n)| st.chip.roots.value_or(**i, self.default_root()) != n.hash).map(|(i, _)| *i).collect();
        mismatched.sort_unstable();
        let mut extra: Vec<u64> =
            st.chip.roots.iter().filter(|(i, r)| !tops.contains_key(i) && *r != self.default_root()).map(|(i, _)| i).collect();
        extra.sort_unstable();
        mismatched.extend(extra);
        if mismatched.is_empty() {
            // The tree region becomes the rebuilt nodes: a node the image
            // already holds as rebuilt is left as it is.
            let (lo, hi) = layout.tree_range();
            for a in st.nvm.image.addrs_in(lo, hi) {
                let (l, i) = layout.meta_pos(a).expect("a tree node");
                if !kept.level(l).contains_key(&i) {
                    st.nvm.image.remove(a);
                }
            }
            let mut changed: Vec<(u64, [u8; 64])> = Vec::new();
            for l in 1..=top {
                for (&i, n) in kept.level(l) {
                    let a = layout.meta_addr(l, i);
                    if st.nvm.image.get(a) != Some(&n.bytes) {
                        changed.push((a, n.bytes));
                    }
                }
            }
            changed.sort_unstable_by_key(|(a, _)| *a);
            for (a, b) in changed {
                st.nvm.image.put(a, b);
            }
            st.nvm.writes.tree += nodes_rebuilt;
        }
        Some(RebuildOutcome { nodes_rebuilt, mismatched_roots: mismatched })
    }

    /// The kept rebuild's nodes (locked into `guard`), or a fresh set (in
    /// `fresh`) when rebuilds are not kept.
    fn kept_nodes<'a, 's: 'a>(
        &'s self,
        guard: &'a mut Option<std::sync::MutexGuard<'s, RebuiltNodes>>,
        fresh: &'a mut RebuiltNodes,
    ) -> &'a mut RebuiltNodes {
        match &self.kept {
            Some(k) => guard.insert(k.lock().expect("the kept rebuild")),
            None => fresh,
        }
    }

    /// Nodes of levels `from..=to` whose cover is `kind`.
    fn nodes_in(layout: &Layout, from: u32, to: u32, kind: Cover) -> u64 {
        (from..=to).map(|l| layout.nodes_covering(l, kind).iter().map(|(a, b)| b - a).sum::<u64>()).sum()
    }

    /// Rebuild the subtrees over the data `kind` covers from their nodes
    /// at level `base`, as persisted (Triad-NVM III-C: "iterating over the
    /// intermediate nodes at the persist level and construct the upper
    /// levels"), and compare each top node with its root register. Every
    /// node of `base` in the region is read and hashed and every node above
    /// it hashed and written, as hardware that cannot know which were ever
    /// written must; the simulator reads only the stored ones (the rest are
    /// the never-written block) and counts the others with them. On a match
    /// the rebuilt nodes replace the region's nodes above `base`.
    pub fn rebuild_region(&self, st: &mut MetaStore, base: u32, kind: Cover) -> RebuildOutcome {
        let layout = st.layout.clone();
        let top = layout.top_level();
        let base = base.min(top);
        let mut leaves: Vec<(u64, [u8; 64])> = Vec::new();
        for (lo, hi) in layout.nodes_covering(base, kind) {
            let (a0, a1) = (layout.meta_addr(base, lo), layout.meta_addr(base, hi));
            for a in st.nvm.image.addrs_in(a0, a1) {
                leaves.push((a - layout.meta_addr(base, 0), *st.nvm.image.get(a).expect("listed")));
            }
        }
        let read = Self::nodes_in(&layout, base, base, kind);
        match base {
            0 => st.nvm.reads.counter += read,
            _ => st.nvm.reads.tree += read,
        }
        st.crypto.work.tree_hashes += Self::nodes_in(&layout, base, top, kind);
        let (mut guard, mut fresh) = (None, RebuiltNodes::default());
        let kept = self.kept_nodes(&mut guard, &mut fresh);
        kept.update(self, &st.crypto, layout.arity, (base, top), &leaves);
        let mut mismatched: Vec<u64> = Vec::new();
        for (lo, hi) in layout.nodes_covering(top, kind) {
            for i in lo..hi {
                let h = kept.level(top).get(&i).map_or(self.default_hash(top), |n| n.hash);
                if st.chip.roots.value_or(i, self.default_root()) != h {
                    mismatched.push(i);
                }
            }
        }
        let nodes_rebuilt = if base < top { Self::nodes_in(&layout, base + 1, top, kind) } else { 0 };
        if mismatched.is_empty() {
            for l in base + 1..=top {
                for (lo, hi) in layout.nodes_covering(l, kind) {
                    let (a0, a1) = (layout.meta_addr(l, lo), layout.meta_addr(l, hi));
                    for a in st.nvm.image.addrs_in(a0, a1) {
                        if !kept.level(l).contains_key(&(a - layout.meta_addr(l, 0))) {
                            st.nvm.image.remove(a);
                        }
                    }
                    let mut changed: Vec<(u64, [u8; 64])> = kept
                        .level(l)
                        .iter()
                        .filter(|(i, _)| **i >= lo && **i < hi)
                        .map(|(&i, n)| (layout.meta_addr(l, i), n.bytes))
                        .filter(|(a, b)| st.nvm.image.get(*a) != Some(b))
                        .collect();
                    changed.sort_unstable_by_key(|(a, _)| *a);
                    for (a, b) in changed {
                        st.nvm.image.put(a, b);
                    }
                }
            }
            st.nvm.writes.tree += nodes_rebuilt;
        }
        RebuildOutcome { nodes_rebuilt, mismatched_roots: mismatched }
    }

    /// Start the subtrees over the data `kind` covers afresh (Triad-NVM
    /// III-C, lazy recovery of the non-persistent subtree): every level-1
    /// node is zeroed, so each counter block below reads as unwritten until
    /// its first write, and the levels above are built over the zeroed
    /// nodes, up to root registers that vouch for an unwritten region.
    /// Counter blocks, MACs and data are left as they are: nothing below
    /// level 1 is read. Every node is counted as hardware writes and hashes
    /// it; the simulator drops the stored ones, which then read as the
    /// never-written (all-zero) node. Returns the nodes reset.
    pub fn reset_region(&self, st: &mut MetaStore, kind: Cover) -> u64 {
        let layout = st.layout.clone();
        let top = layout.top_level();
        if top == 0 {
            return 0;
        }
        for l in 1..=top {
            for (lo, hi) in layout.nodes_covering(l, kind) {
                let (a0, a1) = (layout.meta_addr(l, lo), layout.meta_addr(l, hi));
                for a in st.nvm.image.addrs_in(a0, a1) {
                    st.nvm.image.remove(a);
                }
            }
        }
        for (lo, hi) in layout.nodes_covering(top, kind) {
            for i in lo..hi {
                st.chip.roots.set(i, self.default_root());
            }
        }
        let nodes = Self::nodes_in(&layout, 1, top, kind);
        st.crypto.work.tree_hashes += nodes;
        st.nvm.writes.tree += nodes;
        nodes
    }

    /// Keep each rebuild's nodes for the next, this tree and its copies
    /// sharing them (for the crash oracle, which recovers from nearly the
    /// same image at every crash point): a rebuild then hashes only the
    /// paths above the counter blocks that changed since the last.
    pub fn keep_rebuilds(&mut self) {
        self.kept = Some(Default::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SimConfig;
    use crate::engine::controller::MemoryController;
    use crate::engine::counter::SplitCounterBlock;
    use crate::engine::tree::IntegrityTree;

    /// A 64 MiB machine: 16384 counter blocks under one 6-level BMT, with
    /// write-back metadata caches.
    fn machine() -> MemoryController {
        let mut cfg = SimConfig::default();
        cfg.memory.capacity_bytes = 64 << 20;
        cfg.scheme = crate::scheme::SchemeKind::BatteryWriteBack(crate::scheme::BatteryWriteBack {});
        let mc = crate::scheme::controller(&cfg, 3);
        assert_eq!((mc.st.layout.levels(), mc.st.layout.level_nodes[5]), (6, 1), "one top node");
        mc
    }

    fn bmt(mc: &MemoryController) -> BonsaiMerkleTree {
        match &mc.rules.tree {
            IntegrityTree::Bmt(t) => t.clone(),
            IntegrityTree::Sit(_) => panic!("not a BMT"),
        }
    }

    /// A counter block whose slot 5 has minor `m`.
    fn counter_block(m: u8) -> [u8; 64] {
        let mut c = SplitCounterBlock::decode(&[0; 64]);
        c.minors[5] = m;
        c.encode()
    }

    const LEAVES: [u64; 5] = [0, 7, 8, 4000, 16383];

    /// Update [`LEAVES`], write every dirty line and drain the WPQ: the
    /// whole tree is in the image.
    fn written_machine() -> MemoryController {
        let mut mc = machine();
        for (i, &index) in LEAVES.iter().enumerate() {
            mc.rules.counter_updated(&mut mc.st, index, counter_block(i as u8 + 1)).unwrap();
        }
        mc.flush_metadata().unwrap();
        let layout = mc.st.layout.clone();
        mc.st.nvm.drain_wpq(&layout);
        mc.drop_volatile();
        mc
    }

    fn tree_nodes(mc: &MemoryController) -> Vec<(u64, [u8; 64])> {
        let l = &mc.st.layout;
        mc.st
            .nvm
            .image
            .sorted_addrs()
            .into_iter()
            .filter(|a| matches!(l.meta_pos(*a), Some((lv, _)) if lv > 0))
            .map(|a| (a, *mc.st.nvm.image.get(a).unwrap()))
            .collect()
    }

    #[test]
    fn updating_one_leaf_sets_the_root_to_the_hash_chain_above_it() {
        let mut mc = machine();
        let t = bmt(&mc);
        assert!(mc.st.chip.roots.is_empty(), "a fresh machine holds the default root");
        let leaf = counter_block(1);
        mc.rules.counter_updated(&mut mc.st, 1234, leaf).unwrap();
        // The chain recomputed by hand: each level is the never-written
        // block with the hash of the one below in its slot.
        let l = mc.st.layout.clone();
        let (mut level, mut index, mut cur) = (0, 1234, leaf);
        while let Some((pl, pi, slot)) = l.parent_of(level, index) {
            let mut p = t.default_block(pl);
            bmt_set_slot(&mut p, slot, mc.st.crypto.bmt_hash_uncounted(&cur));
            (level, index, cur) = (pl, pi, p);
        }
        let root = mc.st.chip.roots.get(0).unwrap();
        assert_eq!(root, mc.st.crypto.bmt_hash_uncounted(&cur));
        assert_ne!(root, t.default_root());
        assert_eq!(mc.st.root_updates, 1);
        // Another leaf under the same root moves it again.
        mc.rules.counter_updated(&mut mc.st, 9000, leaf).unwrap();
        assert_ne!(mc.st.chip.roots.get(0).unwrap(), root);
    }

    #[test]
    fn a_rebuild_from_the_persisted_counters_gives_the_same_root_and_nodes() {
        let mut mc = written_machine();
        let nodes = tree_nodes(&mc);
        assert!(nodes.len() >= LEAVES.len(), "every path was written: {}", nodes.len());
        // A crash of a write-back tree with no battery loses the nodes.
        let l = mc.st.layout.clone();
        mc.st.nvm.image.retain(|a| !matches!(l.meta_pos(a), Some((lv, _)) if lv > 0));
        let out = mc.rules.rebuild(&mut mc.st).unwrap();
        assert_eq!(out.mismatched_roots, Vec::<u64>::new());
        // Every node of the tree is counted, as hardware rebuilds them all;
        // the image holds the ones ever written, as before the crash.
        assert_eq!(out.nodes_rebuilt, l.level_nodes[1..].iter().sum::<u64>());
        assert!(out.nodes_rebuilt > nodes.len() as u64);
        assert_eq!(tree_nodes(&mc), nodes, "the rebuilt nodes are the ones written");
    }

    #[test]
    fn a_rebuild_over_a_changed_counter_block_disagrees_with_the_root() {
        let mut mc = written_machine();
        let l = mc.st.layout.clone();
        let a = l.meta_addr(0, 4000);
        let mut b = *mc.st.nvm.image.get(a).unwrap();
        b[20] ^= 1;
        mc.st.nvm.image.put(a, b);
        let before = tree_nodes(&mc);
        let out = mc.rules.rebuild(&mut mc.st).unwrap();
        assert_eq!(out.mismatched_roots, vec![0]);
        assert_eq!(tree_nodes(&mc), before, "a failed rebuild leaves the stored nodes alone");
    }

    /// A rebuild that keeps its nodes between calls gives, at every step,
    /// the outcome, nodes and counted work of a rebuild from nothing: over
    /// the same image, a stale node to drop, a changed leaf, a lost leaf,
    /// and the image put back.
    #[test]
    fn a_kept_rebuild_matches_a_fresh_one_at_every_step() {
        let mut image = written_machine();
        let l = image.st.layout.clone();
        let mut kept = image.rules.tree.clone();
        kept.keep_rebuilds();
        let original = image.st.nvm.image.clone();
        let written = tree_nodes(&image);
        let changed_leaf = {
            let mut b = *original.get(l.meta_addr(0, 4000)).unwrap();
            b[20] ^= 1;
            b
        };
        let steps: [(&str, bool); 5] =
            [("as written", true), ("a stale node", true), ("a changed leaf", false), ("a lost leaf", false), ("put back", true)];
        for (step, matches) in steps {
            match step {
                "a stale node" => image.st.nvm.image.put(l.meta_addr(1, 1000), [7; 64]),
                "a changed leaf" => image.st.nvm.image.put(l.meta_addr(0, 4000), changed_leaf),
                "a lost leaf" => image.st.nvm.image.remove(l.meta_addr(0, 8)),
                "put back" => image.st.nvm.image = original.clone(),
                _ => {}
            }
            let mut fresh = image.clone();
            let mut reused = image.clone();
            reused.rules.tree = kept.clone();
            let want = fresh.rules.rebuild(&mut fresh.st).unwrap();
            let got = reused.rules.rebuild(&mut reused.st).unwrap();
            assert_eq!(got, want, "{step}");
            assert_eq!(want.mismatched_roots.is_empty(), matches, "{step}");
            assert_eq!(tree_nodes(&reused), tree_nodes(&fresh), "{step}");
            if matches {
                assert_eq!(tree_nodes(&reused), written, "{step}: a matching rebuild leaves the written tree, no more");
            }
            let work = |m: &MemoryController| format!("{:?} {:?} {:?}", m.st.crypto.work, m.st.nvm.reads, m.st.nvm.writes);
            assert_eq!(work(&reused), work(&fresh), "{step}");
        }
    }

    #[test]
    fn a_tampered_node_fails_verification() {
        let mc = written_machine();
        let l = mc.st.layout.clone();
        let counter = l.meta_addr(0, 4000);
        let mut intact = mc.clone();
        assert_eq!(intact.st.fetch(&intact.rules, counter).unwrap(), counter_block(4));
        let flip = |addr: u64| {
            let mut m = mc.clone();
            let mut b = *m.st.nvm.image.get(addr).unwrap();
            b[3] ^= 0x10;
            m.st.nvm.image.put(addr, b);
            m
        };
        let (pl, pi, _) = l.parent_of(0, 4000).unwrap();
        let mut m = flip(l.meta_addr(pl, pi));
        assert_eq!(m.st.fetch(&m.rules, counter), Err(CheckFailure::Tree { level: 1, index: pi }));
        let mut m = flip(l.meta_addr(l.top_level(), 0));
        assert_eq!(m.st.fetch(&m.rules, counter), Err(CheckFailure::Root { index: 0 }));
        let mut m = flip(counter);
        assert_eq!(m.st.fetch(&m.rules, counter), Err(CheckFailure::Tree { level: 0, index: 4000 }));
    }
}
