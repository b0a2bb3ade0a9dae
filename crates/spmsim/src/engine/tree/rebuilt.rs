//! The nodes a Bonsai Merkle tree rebuild computed from the counter blocks
//! (recovery: SecPB's BMT rebuild, Secon 3.2 end), kept so that the next
//! rebuild over nearly the same counter blocks recomputes only the paths
//! above the blocks that changed. The nodes are exactly those of a rebuild
//! from nothing; what shrinks is the simulator's own work, never the work
//! the hardware is charged with (the caller counts every hash and read).
//!
//! ```text
//!  leaves (index -> bytes) --diff--> changed indexes
//!    level l changed --/arity--> parents to redo at level l+1
//!    a parent with no child left is dropped; one whose bytes come out the
//!    same stops the climb there
//! ```

use super::BonsaiMerkleTree;
use crate::engine::counter::bmt_set_slot;
use crate::engine::crypto::CryptoEngine;
use rustc_hash::{FxHashMap, FxHashSet};

/// A node's bytes and the keyed hash of those bytes.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub bytes: [u8; 64],
    pub hash: u64,
}

/// Every node of the last rebuild, by level (from `base`, the level of
/// the blocks it read: 0 for counter blocks) and index.
#[derive(Clone, Debug, Default)]
pub struct RebuiltNodes {
    base: u32,
    levels: Vec<FxHashMap<u64, Node>>,
}

impl RebuiltNodes {
    /// The nodes of `level` (at least the base), by index.
    pub fn level(&self, level: u32) -> &FxHashMap<u64, Node> {
        &self.levels[(level - self.base) as usize]
    }

    /// Make these the nodes of a tree from level `base` to `top` whose
    /// blocks at `base` are `leaves` (distinct indexes): rehash the leaves
    /// whose bytes changed, and redo each parent of a changed node, level
    /// by level.
    pub fn update(
        &mut self,
        tree: &BonsaiMerkleTree,
        crypto: &CryptoEngine,
        arity: u64,
        (base, top): (u32, u32),
        leaves: &[(u64, [u8; 64])],
    ) {
        if self.base != base {
            *self = RebuiltNodes { base, levels: Vec::new() };
        }
        self.levels.resize_with((top - base) as usize + 1, FxHashMap::default);
        let mut changed: Vec<u64> = Vec::new();
        let l0 = &mut self.levels[0];
        for &(i, bytes) in leaves {
            if l0.get(&i).is_none_or(|n| n.bytes != bytes) {
                l0.insert(i, Node { bytes, hash: crypto.bmt_hash_uncounted(&bytes) });
                changed.push(i);
            }
        }
        if l0.len() != leaves.len() {
            let now: FxHashSet<u64> = leaves.iter().map(|(i, _)| *i).collect();
            l0.retain(|i, _| {
                let keep = now.contains(i);
                if !keep {
                    changed.push(*i);
                }
                keep
            });
        }
        for level in base..top {
            changed.iter_mut().for_each(|i| *i /= arity);
            changed.sort_unstable();
            changed.dedup();
            let at = (level - base) as usize;
            let (below, above) = self.levels.split_at_mut(at + 1);
            let (children, parents) = (&below[at], &mut above[0]);
            changed.retain(|&p| {
                let mut bytes = tree.default_block(level + 1);
                let mut any = false;
                for s in 0..arity {
                    if let Some(c) = children.get(&(p * arity + s)) {
                        bmt_set_slot(&mut bytes, s as usize, tree.entry_for(level, c.hash));
                        any = true;
                    }
                }
                if !any {
                    return parents.remove(&p).is_some();
                }
                if parents.get(&p).is_some_and(|n| n.bytes == bytes) {
                    return false;
                }
                parents.insert(p, Node { bytes, hash: crypto.bmt_hash_uncounted(&bytes) });
                true
            });
        }
    }
}
