//! What decides how the engine treats a line of metadata: the integrity
//! tree's shape and the scheme's runtime, passed together down every
//! operation that may reach a hook.
//!
//! ```text
//!  MemoryController { st: MetaStore, rules: Rules { tree, scheme, shape, work, secure } }
//!    st.fetch(&rules, addr) --miss--> rules.scheme.verify_on_fetch(&rules, st, ..)
//!                                       --> rules.verify(st, ..) --> st.fetch(&rules, parent) ...
//! ```
//! Rules are immutable while an operation runs, so a hook can call back
//! into the tree and the store, which call hooks again; a runtime keeps
//! what it must change in cells of its own, or in the chip state (`st`).
//! The methods here are the integrity tree's operations that involve the
//! scheme (its hooks decide what a dirty or evicted line does); the
//! shape-only ones stay on [`IntegrityTree`].

use super::hooks::Scheme;
use super::shape::SchemeShape;
use super::store::{CheckFailure, MetaStore};
use super::tree::{IntegrityTree, RebuildOutcome};
use crate::scheme::params::SchemeWork;

#[derive(Clone, Debug)]
pub struct Rules {
    pub tree: IntegrityTree,
    pub scheme: Box<dyn Scheme>,
    /// What the scheme answered at assembly (`scheme::shape`), kept at
    /// hand.
    pub shape: SchemeShape,
    /// The scheme's description (`SchemeKind::work`), kept at hand.
    pub work: SchemeWork,
    /// `security.enabled`: the engine encrypts, MACs and keeps a tree.
    pub secure: bool,
}

impl Rules {
    pub fn verify(&self, st: &mut MetaStore, level: u32, index: u64, bytes: &[u8; 64]) -> Result<(), CheckFailure> {
        match &self.tree {
            IntegrityTree::Bmt(t) => t.verify(self, st, level, index, bytes),
            IntegrityTree::Sit(t) => t.verify(self, st, level, index, bytes),
        }
    }

    pub fn counter_updated(&self, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        match &self.tree {
            IntegrityTree::Bmt(t) => t.counter_updated(self, st, index, bytes),
            IntegrityTree::Sit(t) => t.counter_updated(self, st, index, bytes),
        }
    }

    /// Write a dirty line that has left (or is leaving) the cache. MAC
    /// lines are no tree's business: they go to NVM as they are.
    pub fn write_back(&self, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        if st.is_mac_line(addr) {
            st.nvm.write(&st.layout, addr, bytes);
            return Ok(());
        }
        match &self.tree {
            IntegrityTree::Bmt(t) => t.write_back(st, addr, bytes),
            IntegrityTree::Sit(t) => t.write_back(self, st, addr, bytes),
        }
    }

    /// Persist a dirty line still in its cache now, as a write-through
    /// policy asks: MAC lines and BMT nodes are written as they are; a SIT
    /// node is written back with every changed node above it.
    pub fn persist_line(&self, st: &mut MetaStore, addr: u64) -> Result<(), CheckFailure> {
        match &self.tree {
            IntegrityTree::Sit(t) if !st.is_mac_line(addr) => t.persist_line(self, st, addr),
            _ => {
                st.write_line_through(addr);
                Ok(())
            }
        }
    }

    /// Hand every dirty victim to the scheme's eviction hook until the
    /// buffer is empty.
    /// Each victim is a step of its own (`MetaStore::steps`), after the
    /// step that evicted it.
    pub fn process_victims(&self, st: &mut MetaStore) -> Result<(), CheckFailure> {
        st.steps += 1;
        while let Some((a, b)) = st.victims.pop_front() {
            self.scheme.on_metadata_evict(self, st, a, b)?;
            st.steps += 1;
        }
        Ok(())
    }

    pub fn flush_all(&self, st: &mut MetaStore) -> Result<u64, CheckFailure> {
        match &self.tree {
            IntegrityTree::Bmt(t) => t.flush_all(self, st),
            IntegrityTree::Sit(t) => t.flush_all(self, st),
        }
    }

    /// Whether counter block `index` is marked as not written since the
    /// last recovery (a zero level-1 entry: Triad-NVM's lazy recovery).
    pub fn marks_unwritten(&self, st: &mut MetaStore, index: u64) -> Result<bool, CheckFailure> {
        match &self.tree {
            IntegrityTree::Bmt(t) if t.zero_marks() => t.marks_unwritten(self, st, index),
            _ => Ok(false),
        }
    }

    /// None when this tree cannot be rebuilt from its leaves (lazy SIT).
    pub fn rebuild(&self, st: &mut MetaStore) -> Option<RebuildOutcome> {
        match &self.tree {
            IntegrityTree::Bmt(t) => t.rebuild(st),
            IntegrityTree::Sit(t) => t.rebuild(st),
        }
    }
}
