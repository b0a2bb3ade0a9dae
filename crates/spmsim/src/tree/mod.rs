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
//!   to the root; SIT: lazily, nothing until write-back). Under a
//!   write-through policy every changed line reaches the WPQ before return.
//! - `write_back(store, addr, bytes)`: a dirty line leaves the cache.
//! - `flush_all(store)`: write every dirty line (battery drain, shutdown).
//! - `rebuild(store)`: recompute the tree from persisted leaves and compare
//!   with the root registers, where the tree allows it.

mod bmt;
mod sit;

pub use bmt::BonsaiMerkleTree;
pub use sit::SgxIntegrityTree;

use crate::counter::{bmt_slots, SitNode};
use crate::store::{CheckFailure, MetaStore};
use serde::Serialize;

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
            IntegrityTree::Sit(_) => [0; 64],
        }
    }
    pub fn default_root(&self, _index: u64) -> u64 {
        match self {
            IntegrityTree::Bmt(t) => t.default_root(),
            IntegrityTree::Sit(_) => 0,
        }
    }
    /// Whether the entry `node` (at `level` >= 1) holds for its child in
    /// `slot` is still the initial one, i.e. the child subtree is vouched
    /// for as never written (see `image::verify` for why that is sound).
    pub fn child_entry_is_initial(&self, level: u32, node: &[u8; 64], slot: usize) -> bool {
        match self {
            IntegrityTree::Bmt(t) => bmt_slots(node)[slot] == t.default_hash(level - 1),
            IntegrityTree::Sit(_) => SitNode::decode(node).counters[slot] == 0,
        }
    }
    /// Whether a root register value is the initial one for its top node.
    pub fn root_is_initial(&self, index: u64, value: u64) -> bool {
        value == self.default_root(index)
    }
    pub fn verify(&self, st: &mut MetaStore, level: u32, index: u64, bytes: &[u8; 64]) -> Result<(), CheckFailure> {
        match self {
            IntegrityTree::Bmt(t) => t.verify(self, st, level, index, bytes),
            IntegrityTree::Sit(t) => t.verify(self, st, level, index, bytes),
        }
    }
    pub fn counter_updated(&self, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        match self {
            IntegrityTree::Bmt(t) => t.counter_updated(self, st, index, bytes),
            IntegrityTree::Sit(t) => t.counter_updated(self, st, index, bytes),
        }
    }
    /// Write a dirty line that has left (or is leaving) the cache.
    pub fn write_back(&self, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        if st.is_mac_line(addr) {
            st.nvm.write(&st.layout, addr, bytes);
            return Ok(());
        }
        match self {
            IntegrityTree::Bmt(_) => {
                st.nvm.write(&st.layout, addr, bytes);
                Ok(())
            }
            IntegrityTree::Sit(t) => t.write_back(self, st, addr, bytes),
        }
    }
    /// Write back every dirty victim until the buffer is empty.
    pub fn process_victims(&self, st: &mut MetaStore) -> Result<(), CheckFailure> {
        while let Some((a, b)) = st.victims.pop_front() {
            self.write_back(st, a, b)?;
        }
        Ok(())
    }
    pub fn flush_all(&self, st: &mut MetaStore) -> Result<u64, CheckFailure> {
        match self {
            IntegrityTree::Bmt(_) => {
                self.process_victims(st)?;
                let dirty = st.caches.dirty_lines();
                for (a, _) in &dirty {
                    st.write_line_through(*a);
                }
                Ok(dirty.len() as u64)
            }
            IntegrityTree::Sit(t) => t.flush_all(self, st),
        }
    }
    /// None when this tree cannot be rebuilt from its leaves (lazy SIT).
    pub fn rebuild(&self, st: &mut MetaStore) -> Option<RebuildOutcome> {
        match self {
            IntegrityTree::Bmt(t) => Some(t.rebuild(st)),
            IntegrityTree::Sit(_) => None,
        }
    }
}
