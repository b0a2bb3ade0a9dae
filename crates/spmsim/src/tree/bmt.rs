//! Bonsai Merkle tree (SecPB II-B; STAR Fig. 2b): each node holds eight
//! 64-bit keyed hashes of its children; the leaves are the split counter
//! blocks; the root register holds the hash of each top-level node.
//! Updates are eager: a counter change is hashed up to the root at once
//! (the "BMT root update" every SecPB scheme times).

use super::{IntegrityTree, RebuildOutcome};
use crate::config::WritePolicy;
use crate::counter::{bmt_set_slot, bmt_slots};
use crate::crypto::CryptoEngine;
use crate::layout::Layout;
use crate::store::{CheckFailure, MetaStore};
use rustc_hash::FxHashMap;

#[derive(Clone, Debug)]
pub struct BonsaiMerkleTree {
    /// Contents of a never-written block, per level.
    default_blocks: Vec<[u8; 64]>,
    /// Hash of `default_blocks[l]`, per level.
    default_hashes: Vec<u64>,
}

impl BonsaiMerkleTree {
    /// Precompute the default (never-written) block of every level. This is
    /// set-up work, not counted as runtime hashing.
    pub fn new(layout: &Layout, crypto: &CryptoEngine) -> Self {
        let mut default_blocks = vec![[0u8; 64]];
        let mut default_hashes = vec![crypto.bmt_hash_uncounted(&[0u8; 64])];
        for _ in 1..layout.levels() {
            let h = *default_hashes.last().unwrap();
            let mut b = [0u8; 64];
            for s in 0..8 {
                bmt_set_slot(&mut b, s, h);
            }
            default_hashes.push(crypto.bmt_hash_uncounted(&b));
            default_blocks.push(b);
        }
        BonsaiMerkleTree { default_blocks, default_hashes }
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

    pub fn verify(&self, tree: &IntegrityTree, st: &mut MetaStore, level: u32, index: u64, bytes: &[u8; 64]) -> Result<(), CheckFailure> {
        let h = st.crypto.bmt_hash(bytes);
        match st.layout.parent_of(level, index) {
            None => {
                let expect = st.chip.roots.value_or(index, self.default_root());
                if h == expect {
                    Ok(())
                } else {
                    Err(CheckFailure::Root { index })
                }
            }
            Some((pl, pi, slot)) => {
                let parent = st.fetch(tree, st.layout.meta_addr(pl, pi))?;
                if bmt_slots(&parent)[slot] == h {
                    Ok(())
                } else {
                    Err(CheckFailure::Tree { level, index })
                }
            }
        }
    }

    pub fn counter_updated(&self, tree: &IntegrityTree, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let (mut level, mut idx, mut cur) = (0u32, index, bytes);
        let mut changed = vec![st.layout.meta_addr(0, index)];
        st.install(changed[0], cur, true);
        loop {
            let h = st.crypto.bmt_hash(&cur);
            match st.layout.parent_of(level, idx) {
                None => {
                    st.chip.roots.set(idx, h);
                    st.root_updates += 1;
                    break;
                }
                Some((pl, pi, slot)) => {
                    let pa = st.layout.meta_addr(pl, pi);
                    let p = st.update(tree, pa, |p| bmt_set_slot(p, slot, h))?;
                    changed.push(pa);
                    (level, idx, cur) = (pl, pi, p);
                }
            }
        }
        for a in changed {
            if st.policy_for(a) == WritePolicy::WriteThrough {
                st.write_line_through(a);
            }
        }
        Ok(())
    }

    /// A dirty node leaving the cache is written as it is: the eager update
    /// already hashed it into its parent.
    pub fn write_back(&self, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        st.nvm.write(&st.layout, addr, bytes);
        Ok(())
    }

    /// Write every dirty line in place; no order is needed, since no
    /// write-back changes another node.
    pub fn flush_all(&self, tree: &IntegrityTree, st: &mut MetaStore) -> Result<u64, CheckFailure> {
        tree.process_victims(st)?;
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
        let layout = st.layout.clone();
        let mut level_blocks: FxHashMap<u64, [u8; 64]> = FxHashMap::default();
        for a in st.nvm.image.sorted_addrs() {
            if let Some((0, idx)) = layout.meta_pos(a) {
                level_blocks.insert(idx, *st.nvm.image.get(a).unwrap());
            }
        }
        let mut rebuilt: Vec<(u64, [u8; 64])> = Vec::new();
        for level in 0..layout.top_level() {
            let mut parents: FxHashMap<u64, [u8; 64]> = FxHashMap::default();
            let mut idxs: Vec<u64> = level_blocks.keys().copied().collect();
            idxs.sort_unstable();
            for i in idxs {
                let h = st.crypto.bmt_hash(&level_blocks[&i]);
                let p = parents.entry(i / layout.arity).or_insert(self.default_blocks[level as usize + 1]);
                bmt_set_slot(p, (i % layout.arity) as usize, h);
            }
            for (&i, b) in &parents {
                rebuilt.push((layout.meta_addr(level + 1, i), *b));
            }
            level_blocks = parents;
        }
        let mut mismatched = Vec::new();
        let mut tops: Vec<u64> = level_blocks.keys().copied().collect();
        tops.sort_unstable();
        for &i in &tops {
            let h = st.crypto.bmt_hash(&level_blocks[&i]);
            if st.chip.roots.value_or(i, self.default_root()) != h {
                mismatched.push(i);
            }
        }
        let mut extra: Vec<u64> =
            st.chip.roots.iter().filter(|(i, r)| !level_blocks.contains_key(i) && *r != self.default_root()).map(|(i, _)| i).collect();
        extra.sort_unstable();
        mismatched.extend(extra);
        let nodes_rebuilt = rebuilt.len() as u64;
        if mismatched.is_empty() {
            st.nvm.image.retain(|a| !matches!(layout.meta_pos(a), Some((l, _)) if l > 0));
            rebuilt.sort_unstable_by_key(|(a, _)| *a);
            for (a, b) in rebuilt {
                st.nvm.writes.tree += 1;
                st.nvm.image.put(a, b);
            }
        }
        Some(RebuildOutcome { nodes_rebuilt, mismatched_roots: mismatched })
    }
}
