//! SGX integrity tree with lazy update (STAR II-C, Fig. 3; Anubis; Vault).
//! Every node, the counter blocks included, is eight 56-bit counters plus
//! a 64-bit MAC over (its counters, its address, the parent's counter for
//! it). Writing a dirty node back to NVM increments that parent counter and
//! recomputes the node's MAC; nothing else changes until the parent itself
//! is written back. The root register holds the counter of each top node.
//!
//! A never-written node is all zero bytes; that is accepted only while the
//! parent's counter for it is still 0, i.e. before its first write-back.

use super::{IntegrityTree, RebuildOutcome};
use crate::config::WritePolicy;
use crate::counter::{SitNode, SIT_COUNTER_MAX};
use crate::store::{CheckFailure, MetaStore};

#[derive(Clone, Debug, Default)]
pub struct SgxIntegrityTree;

impl SgxIntegrityTree {
    /// A never-written node of any level is all zero bytes.
    pub fn default_block(&self, _level: u32) -> [u8; 64] {
        [0; 64]
    }
    /// A root register starts at counter 0.
    pub fn default_root(&self) -> u64 {
        0
    }
    /// Whether the counter a node holds for the child in `slot` is still
    /// 0: the child was never written back.
    pub fn child_entry_is_initial(&self, _level: u32, node: &[u8; 64], slot: usize) -> bool {
        SitNode::decode(node).counters[slot] == 0
    }
    /// The lazy tree cannot be rebuilt from its leaves: a parent's counter
    /// counts write-backs, which the leaves do not record (STAR II-C).
    pub fn rebuild(&self, _st: &mut MetaStore) -> Option<RebuildOutcome> {
        None
    }

    fn parent_counter(&self, tree: &IntegrityTree, st: &mut MetaStore, level: u32, index: u64) -> Result<u64, CheckFailure> {
        match st.layout.parent_of(level, index) {
            None => Ok(st.chip.roots.value_or(index, 0)),
            Some((pl, pi, slot)) => {
                let p = st.fetch(tree, st.layout.meta_addr(pl, pi))?;
                Ok(SitNode::decode(&p).counters[slot])
            }
        }
    }

    pub fn verify(&self, tree: &IntegrityTree, st: &mut MetaStore, level: u32, index: u64, bytes: &[u8; 64]) -> Result<(), CheckFailure> {
        let pc = self.parent_counter(tree, st, level, index)?;
        let failure = match st.layout.parent_of(level, index) {
            None => CheckFailure::Root { index },
            Some(_) => CheckFailure::Tree { level, index },
        };
        let fail = || failure.clone();
        if *bytes == [0u8; 64] {
            return if pc == 0 { Ok(()) } else { Err(fail()) };
        }
        let n = SitNode::decode(bytes);
        let addr = st.layout.meta_addr(level, index);
        if st.crypto.sit_mac(&n.counter_bytes(), addr, pc) == n.mac {
            Ok(())
        } else {
            Err(fail())
        }
    }

    pub fn counter_updated(&self, tree: &IntegrityTree, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let addr = st.layout.meta_addr(0, index);
        st.install(addr, bytes, true);
        if st.policy_for(addr) == WritePolicy::WriteThrough {
            // Strict persistence (STAR V-A): persist every changed node from the
            // counter block up to the root.
            let mut a = addr;
            loop {
                let (level, idx) = st.layout.meta_pos(a).unwrap();
                let Some((cur, true)) = st.caches.for_addr(&st.layout.clone(), a).peek(a) else { break };
                self.write_back(tree, st, a, cur)?;
                match st.layout.parent_of(level, idx) {
                    Some((pl, pi, _)) => a = st.layout.meta_addr(pl, pi),
                    None => break,
                }
            }
        }
        Ok(())
    }

    /// Increment the parent's counter, MAC the node under it, write the node.
    pub fn write_back(&self, tree: &IntegrityTree, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let (level, index) = st.layout.meta_pos(addr).expect("SIT metadata address");
        // Take the line out first so the parent fetch cannot evict it as a
        // second dirty victim.
        let layout = st.layout.clone();
        let was_cached = st.caches.for_addr(&layout, addr).remove(addr).is_some();
        let new_pc = match layout.parent_of(level, index) {
            None => {
                let r = st.chip.roots.value_or(index, 0) + 1;
                st.chip.roots.set(index, r);
                st.root_updates += 1;
                r
            }
            Some((pl, pi, slot)) => {
                let pa = layout.meta_addr(pl, pi);
                let mut p = SitNode::decode(&st.fetch(tree, pa)?);
                if p.counters[slot] >= SIT_COUNTER_MAX {
                    return Err(CheckFailure::CounterOverflow { level: pl, index: pi });
                }
                p.counters[slot] += 1;
                st.install(pa, p.encode(), true);
                p.counters[slot]
            }
        };
        let mut n = SitNode::decode(&bytes);
        n.mac = st.crypto.sit_mac(&n.counter_bytes(), addr, new_pc);
        let out = n.encode();
        st.nvm.write(&layout, addr, out);
        if was_cached {
            st.install(addr, out, false);
        }
        Ok(())
    }

    /// Write back bottom-up so that each parent is written after the
    /// children whose write-backs changed it.
    pub fn flush_all(&self, tree: &IntegrityTree, st: &mut MetaStore) -> Result<u64, CheckFailure> {
        let mut written = 0u64;
        loop {
            tree.process_victims(st)?;
            let dirty = st.caches.dirty_lines();
            if dirty.is_empty() {
                return Ok(written);
            }
            let layout = st.layout.clone();
            let key = |a: &u64| match layout.meta_pos(*a) {
                Some((l, _)) => l as i64,
                None => -1, // MAC lines first; they do not touch the tree
            };
            let min_level = dirty.iter().map(|(a, _)| key(a)).min().unwrap();
            for (a, _) in dirty.into_iter().filter(|(a, _)| key(a) == min_level) {
                let Some((cur, true)) = st.caches.for_addr(&layout, a).peek(a) else { continue };
                written += 1;
                if min_level < 0 {
                    st.write_line_through(a);
                } else {
                    self.write_back(tree, st, a, cur)?;
                }
            }
        }
    }
}
