//! Integrity trees over the counter blocks.
//!
//! ```text
//!              [root register(s), on chip, non-volatile]
//!                         |
//!                  top-level node(s)          level L-1
//!                   /      ...     \
//!               nodes     ...     nodes       levels 1..L-2
//!              /  ...  \
//!        counter blocks (leaves)              level 0
//! ```
//! Contract every tree implements (the closed enum [`IntegrityTree`] is the
//! registry):
//! - `default_block(level)`: what a never-written block at that level holds.
//! - `verify(store, level, index, bytes)`: check a block read from NVM
//!   against its parent (fetched and verified first) or the root register.
//! - `counter_updated(store, index, bytes)`: the data path changed a
//!   counter block; install it and keep the tree consistent (BMT: eagerly up
//!   to the root; SIT: lazily, nothing until write-back). Every line it
//!   dirties is reported to the scheme (`MetaStore::metadata_dirtied`),
//!   whose policy decides when it reaches NVM.
//! - `write_back(store, addr, bytes)`: a dirty line leaves the cache.
//! - `persist_line(store, addr)`: a dirty line is persisted now (what a
//!   write-through policy asks; SIT persists the changed path with it).
//! - `flush_all(store)`: write every dirty line (battery drain, shutdown).
//! - `rebuild(store)`: recompute the tree from persisted leaves and compare
//!   with the root registers, where the tree allows it.
//! - `default_root()`, `child_entry_is_initial(level, node, slot)`: the
//!   initial values image verification trusts for never-written subtrees.
//!
//! This file is the interface and the dispatch of what concerns the tree
//! alone; the operations that involve the scheme's hooks dispatch from
//! `engine::rules`. Every rule of a tree lives in that tree's own file.

mod bmt;
mod rebuilt;
mod sit;

pub use bmt::BonsaiMerkleTree;
pub use sit::{SgxIntegrityTree, SIT_LSB_BITS, SIT_LSB_MASK};

use serde::Serialize;

/// The tree's counts as the stats tree shows them (`roi.tree`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TreeStats {
    /// Root register updates (SecPB Fig. 8 counts them): one per eager BMT
    /// update, one per write-back of a SIT top node.
    pub root_updates: u64,
}

/// Result of a recovery-time tree rebuild.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RebuildOutcome {
    pub nodes_rebuilt: u64,
    /// Top-level indexes whose recomputed hash differs from the register.
    pub mismatched_roots: Vec<u64>,
}

#[derive(Clone, Debug)]
pub enum IntegrityTree {
    Bmt(BonsaiMerkleTree),
    Sit(SgxIntegrityTree),
}

impl IntegrityTree {
    pub fn name(&self) -> &'static str {
        match self {
            IntegrityTree::Bmt(_) => "bmt",
            IntegrityTree::Sit(_) => "sit",
        }
    }
    pub fn default_block(&self, level: u32) -> [u8; 64] {
        match self {
            IntegrityTree::Bmt(t) => t.default_block(level),
            IntegrityTree::Sit(t) => t.default_block(level),
        }
    }
    /// The initial value of the root register of top node `index`.
    pub fn default_root(&self, _index: u64) -> u64 {
        match self {
            IntegrityTree::Bmt(t) => t.default_root(),
            IntegrityTree::Sit(t) => t.default_root(),
        }
    }
    /// Whether the entry `node` (at `level` >= 1) holds for its child in
    /// `slot` is still the initial one, i.e. the child subtree is vouched
    /// for as never written (see `image::verify` for why that is sound).
    pub fn child_entry_is_initial(&self, level: u32, node: &[u8; 64], slot: usize) -> bool {
        match self {
            IntegrityTree::Bmt(t) => t.child_entry_is_initial(level, node, slot),
            IntegrityTree::Sit(t) => t.child_entry_is_initial(level, node, slot),
        }
    }
    /// Whether a root register value is the initial one for its top node.
    pub fn root_is_initial(&self, index: u64, value: u64) -> bool {
        value == self.default_root(index)
    }
    /// The Bonsai Merkle tree, if this is one (the schemes that require it
    /// check `tree.type` when the configuration loads).
    pub fn as_bmt(&self) -> Option<&BonsaiMerkleTree> {
        match self {
            IntegrityTree::Bmt(t) => Some(t),
            IntegrityTree::Sit(_) => None,
        }
    }

    /// Keep each rebuild's nodes for the next (the crash oracle's
    /// recoveries; see [`BonsaiMerkleTree::keep_rebuilds`]). A SIT is
    /// never rebuilt, so keeps nothing.
    pub fn keep_rebuilds(&mut self) {
        if let IntegrityTree::Bmt(t) = self {
            t.keep_rebuilds();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::load_str;
    use crate::engine::controller::MemoryController;

    fn controller(tree: &str) -> MemoryController {
        let toml = format!("[memory]\ncapacity_bytes = 16777216\n[tree]\ntype = '{tree}'\n[scheme]\ntype = 'battery-write-back'\n");
        crate::scheme::controller(&load_str(&toml, "test", &[]).unwrap(), 3)
    }

    /// The contract every tree keeps, checked for each: initial entries
    /// until a write reaches them, a root register that moves on flush,
    /// and a clean cold read of what was flushed.
    #[test]
    fn every_tree_keeps_the_contract() {
        for name in ["bmt", "sit"] {
            let mut mc = controller(name);
            let layout = mc.layout().clone();
            assert!(mc.rules.tree.root_is_initial(0, mc.chip().roots.value_or(0, mc.rules.tree.default_root(0))), "{name}");
            let (counter, _) = layout.counter_of(5);
            let (pl, pi, slot) = layout.parent_of(0, counter).unwrap();
            let parent = layout.meta_addr(pl, pi);
            let default_parent = mc.rules.tree.default_block(pl);
            assert!(mc.rules.tree.child_entry_is_initial(pl, &default_parent, slot), "{name}");
            mc.write(5, &[7; 64]).unwrap();
            assert!(mc.flush_metadata().unwrap() > 0, "{name}: the write left dirty metadata");
            mc.st.nvm.drain_wpq(&layout);
            let written = mc.st.nvm.image.get(parent).copied().expect("the parent reached NVM");
            assert!(
                !mc.rules.tree.child_entry_is_initial(pl, &written, slot),
                "{name}: the parent still vouches for a never-written child"
            );
            assert!(mc.rules.tree.child_entry_is_initial(pl, &written, (slot + 1) % 8), "{name}: an untouched sibling moved");
            let root = mc.chip().roots.get(0).expect("the root register was written");
            assert!(!mc.rules.tree.root_is_initial(0, root), "{name}");
            mc.drop_volatile();
            assert_eq!(mc.read(5).unwrap(), [7; 64], "{name}: a cold read verifies up to the root");
            let rebuilt = mc.rules.rebuild(&mut mc.st);
            match name {
                "bmt" => assert_eq!(rebuilt.map(|r| r.mismatched_roots), Some(vec![]), "the BMT rebuilds to the same root"),
                _ => assert_eq!(rebuilt, None, "the lazy SIT cannot be rebuilt from its leaves"),
            }
        }
    }
}
