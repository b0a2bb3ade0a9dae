//! SGX integrity tree with lazy update (STAR II-C, Fig. 3; Anubis; Vault).
//! Every node, the counter blocks included, is eight 56-bit counters plus
//! a 64-bit MAC over (its counters, its address, the parent's counter for
//! it). Writing a dirty node back to NVM increments that parent counter and
//! recomputes the node's MAC; nothing else changes until the parent itself
//! is written back. The root register holds the counter of each top node.
//!
//! A never-written node is all zero bytes; that is accepted only while the
//! parent's counter for it is still 0, i.e. before its first write-back.

use super::RebuildOutcome;
use crate::engine::counter::{SitNode, SIT_COUNTER_MAX};
use crate::engine::rules::Rules;
use crate::engine::store::{CheckFailure, MetaStore};

#[derive(Clone, Debug, Default)]
pub struct SgxIntegrityTree {
    /// STAR's counter-MAC synergization (III-B): a node's 64-bit MAC field
    /// keeps a 54-bit MAC and, in its 10 spare bits, the LSBs of the
    /// parent's counter for it, so a parent's change persists with its child.
    pub lsbs_in_mac: bool,
}

/// Spare bits of a SIT node's MAC field under synergization (STAR III-B).
pub const SIT_LSB_BITS: u32 = crate::engine::crypto::SPARE_BITS;
pub const SIT_LSB_MASK: u64 = (1 << SIT_LSB_BITS) - 1;

impl SgxIntegrityTree {
    /// The MAC field of a node with these counters at `addr` under parent
    /// counter `pc`: 64 bits of MAC, or with synergization 54 bits of MAC
    /// and the LSBs of `pc` above them. The LSBs are an input of the MAC
    /// through `pc` itself, so tampering with them is detected.
    pub fn mac_field(&self, st: &mut MetaStore, counters: &[u8; 56], addr: u64, pc: u64) -> u64 {
        let mac = st.crypto.sit_mac(counters, addr, pc);
        self.pack(mac, pc)
    }

    /// Whether a node's stored bytes verify against its parent's (or, at
    /// the top, the root register's) counter, as [`Self::verify`] decides,
    /// with nothing counted: the crash oracle's incremental reads.
    pub fn edge_holds(&self, st: &MetaStore, level: u32, index: u64, bytes: &[u8; 64], parent: &[u8; 64]) -> bool {
        let pc = match st.layout.parent_of(level, index) {
            None => st.chip.roots.value_or(index, 0),
            Some((_, _, slot)) => SitNode::decode(parent).counters[slot],
        };
        if *bytes == [0u8; 64] {
            return pc == 0;
        }
        let n = SitNode::decode(bytes);
        let addr = st.layout.meta_addr(level, index);
        self.pack(st.crypto.sit_mac_uncounted(&n.counter_bytes(), addr, pc), pc) == n.mac
    }

    /// [`Self::mac_field`] from a MAC already computed.
    pub fn pack(&self, mac: u64, pc: u64) -> u64 {
        match self.lsbs_in_mac {
            true => (mac & crate::engine::crypto::MAC_MASK) | (pc & SIT_LSB_MASK) << crate::engine::crypto::MAC_BITS,
            false => mac,
        }
    }

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

    fn parent_counter(&self, r: &Rules, st: &mut MetaStore, level: u32, index: u64) -> Result<u64, CheckFailure> {
        match st.layout.parent_of(level, index) {
            None => Ok(st.chip.roots.value_or(index, 0)),
            Some((pl, pi, slot)) => {
                let p = st.fetch(r, st.layout.meta_addr(pl, pi))?;
                Ok(SitNode::decode(&p).counters[slot])
            }
        }
    }

    pub fn verify(&self, r: &Rules, st: &mut MetaStore, level: u32, index: u64, bytes: &[u8; 64]) -> Result<(), CheckFailure> {
        let pc = self.parent_counter(r, st, level, index)?;
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
        if self.mac_field(st, &n.counter_bytes(), addr, pc) == n.mac {
            Ok(())
        } else {
            Err(fail())
        }
    }

    /// Lazy update (SIT, Triad-NVM II-C): only the counter block changes;
    /// its parent learns of it when it is written back.
    pub fn counter_updated(&self, r: &Rules, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let addr = st.layout.meta_addr(0, index);
        st.install(r, addr, bytes, true);
        st.metadata_dirtied(r, addr)
    }

    /// Persist a dirty node now (a write-through policy: strict persistence,
    /// STAR V-A). A SIT node in NVM verifies only under its parent's
    /// counter, which its write-back just advanced, so every changed node
    /// from this one up to the root reaches the WPQ, children first.
    pub fn persist_line(&self, r: &Rules, st: &mut MetaStore, addr: u64) -> Result<(), CheckFailure> {
        let layout = st.layout.clone();
        let mut a = addr;
        loop {
            let (level, idx) = layout.meta_pos(a).expect("SIT metadata address");
            let Some((cur, true)) = st.caches.for_addr(&layout, a).peek(a) else { break };
            self.write_back(r, st, a, cur)?;
            match layout.parent_of(level, idx) {
                Some((pl, pi, _)) => a = layout.meta_addr(pl, pi),
                None => break,
            }
        }
        Ok(())
    }

    /// Increment the parent's counter, MAC the node under it, write the node.
    pub fn write_back(&self, r: &Rules, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let (level, index) = st.layout.meta_pos(addr).expect("SIT metadata address");
        // Take the line out first so the parent fetch cannot evict it as a
        // second dirty victim.
        let layout = st.layout.clone();
        let removed = st.caches.for_addr(&layout, addr).remove(addr);
        if let Some((b, _)) = removed {
            st.removed_from_cache(r, addr, &b);
        }
        let was_cached = removed.is_some();
        let (new_pc, parent) = match layout.parent_of(level, index) {
            None => {
                let r = st.chip.roots.value_or(index, 0) + 1;
                st.chip.roots.set(index, r);
                st.root_updates += 1;
                (r, None)
            }
            Some((pl, pi, slot)) => {
                let pa = layout.meta_addr(pl, pi);
                let mut p = SitNode::decode(&st.fetch(r, pa)?);
                if p.counters[slot] >= SIT_COUNTER_MAX {
                    return Err(CheckFailure::CounterOverflow { level: pl, index: pi });
                }
                p.counters[slot] += 1;
                st.install(r, pa, p.encode(), true);
                (p.counters[slot], Some(pa))
            }
        };
        let mut n = SitNode::decode(&bytes);
        n.mac = self.mac_field(st, &n.counter_bytes(), addr, new_pc);
        let out = n.encode();
        st.nvm.write(&layout, addr, out);
        if was_cached {
            st.install(r, addr, out, false);
        }
        r.scheme.on_metadata_written(st, addr);
        // The parent changed only after this node was written, so the
        // scheme hears of it now (a write-through scheme persists it next).
        match parent {
            Some(pa) => st.metadata_dirtied(r, pa),
            None => Ok(()),
        }
    }

    /// Write back bottom-up so that each parent is written after the
    /// children whose write-backs changed it.
    pub fn flush_all(&self, r: &Rules, st: &mut MetaStore) -> Result<u64, CheckFailure> {
        let mut written = 0u64;
        loop {
            r.process_victims(st)?;
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
                    self.write_back(r, st, a, cur)?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{SimConfig, TreeConfig};
    use crate::engine::controller::MemoryController;

    /// A 64 MiB machine: 131072 SIT counter blocks under 7 levels, with a
    /// write-back metadata cache (lazy update, STAR II-C).
    fn machine() -> MemoryController {
        let mut cfg = SimConfig::default();
        cfg.memory.capacity_bytes = 64 << 20;
        cfg.tree = TreeConfig::Sit { arity: 8, levels: None };
        cfg.scheme = crate::scheme::SchemeKind::BatteryWriteBack(crate::scheme::BatteryWriteBack {});
        let mc = crate::scheme::controller(&cfg, 3);
        assert_eq!((mc.st.layout.levels(), mc.st.layout.level_nodes[6]), (7, 1), "one top node");
        mc
    }

    /// A counter block whose slot 2 counts `c` writes.
    fn leaf(c: u64) -> [u8; 64] {
        let mut n = SitNode::decode(&[0; 64]);
        n.counters[2] = c;
        n.encode()
    }

    fn counter_in_parent(mc: &mut MemoryController, level: u32, index: u64) -> u64 {
        let (pl, pi, slot) = mc.st.layout.parent_of(level, index).unwrap();
        let a = mc.st.layout.meta_addr(pl, pi);
        SitNode::decode(&mc.st.fetch(&mc.rules, a).unwrap()).counters[slot]
    }

    /// Write every dirty line, drain the WPQ and lose the caches.
    fn persist_all(mc: &mut MemoryController) {
        mc.flush_metadata().unwrap();
        let layout = mc.st.layout.clone();
        mc.st.nvm.drain_wpq(&layout);
        mc.drop_volatile();
    }

    #[test]
    fn an_update_touches_nothing_above_the_leaf_until_it_is_written_back() {
        let mut mc = machine();
        let a = mc.st.layout.meta_addr(0, 500);
        mc.rules.counter_updated(&mut mc.st, 500, leaf(1)).unwrap();
        assert_eq!((mc.st.root_updates, mc.st.nvm.enqueued.total()), (0, 0), "lazy: no root update, no NVM write");
        assert_eq!(counter_in_parent(&mut mc, 0, 500), 0);
        mc.rules.write_back(&mut mc.st, a, leaf(1)).unwrap();
        assert_eq!(counter_in_parent(&mut mc, 0, 500), 1, "the write-back increments the parent's counter");
        assert_eq!(mc.st.root_updates, 0, "the parent itself is not written back yet");
        // The leaf went out MACed under that parent counter.
        let out = SitNode::decode(&mc.st.nvm.peek(a).unwrap());
        assert_eq!(out.counters[2], 1);
        assert_eq!(out.mac, mc.st.crypto.sit_mac(&out.counter_bytes(), a, 1));
    }

    #[test]
    fn a_flush_moves_the_root_and_every_node_verifies_from_nvm() {
        let mut mc = machine();
        for (i, index) in [0u64, 9, 500, 131071].into_iter().enumerate() {
            mc.rules.counter_updated(&mut mc.st, index, leaf(i as u64 + 1)).unwrap();
        }
        persist_all(&mut mc);
        assert_eq!(mc.st.chip.roots.get(0), Some(1), "the top node was written back once");
        for (i, index) in [0u64, 9, 500, 131071].into_iter().enumerate() {
            let a = mc.st.layout.meta_addr(0, index);
            let got = SitNode::decode(&mc.st.fetch(&mc.rules, a).unwrap());
            assert_eq!(got.counters, SitNode::decode(&leaf(i as u64 + 1)).counters, "counter block {index}");
        }
        assert!(mc.rules.rebuild(&mut mc.st).is_none(), "a lazy SIT cannot be rebuilt from its leaves");
    }

    #[test]
    fn a_replayed_node_fails_against_its_parent_counter() {
        let mut mc = machine();
        let a = mc.st.layout.meta_addr(0, 500);
        mc.rules.counter_updated(&mut mc.st, 500, leaf(1)).unwrap();
        persist_all(&mut mc);
        let old = *mc.st.nvm.image.get(a).unwrap();
        mc.rules.counter_updated(&mut mc.st, 500, leaf(2)).unwrap();
        persist_all(&mut mc);
        let mut replayed = mc.clone();
        replayed.st.nvm.image.put(a, old);
        assert_eq!(replayed.st.fetch(&replayed.rules, a), Err(CheckFailure::Tree { level: 0, index: 500 }));
        assert!(mc.st.fetch(&mc.rules, a).is_ok(), "the current node verifies");
    }

    #[test]
    fn a_tampered_node_fails_verification() {
        let mut mc = machine();
        mc.rules.counter_updated(&mut mc.st, 500, leaf(1)).unwrap();
        persist_all(&mut mc);
        let l = mc.st.layout.clone();
        let counter = l.meta_addr(0, 500);
        let (pl, pi, slot) = l.parent_of(0, 500).unwrap();
        let mut m = mc.clone();
        let mut node = *m.st.nvm.image.get(l.meta_addr(pl, pi)).unwrap();
        node[slot * 7] ^= 1;
        m.st.nvm.image.put(l.meta_addr(pl, pi), node);
        assert_eq!(m.st.fetch(&m.rules, counter), Err(CheckFailure::Tree { level: 1, index: pi }));
        let mut m = mc.clone();
        let top = l.meta_addr(l.top_level(), 0);
        let mut node = *m.st.nvm.image.get(top).unwrap();
        node[60] ^= 1;
        m.st.nvm.image.put(top, node);
        assert_eq!(m.st.fetch(&m.rules, counter), Err(CheckFailure::Root { index: 0 }));
    }

    #[test]
    fn an_all_zero_node_passes_only_while_its_parent_counter_is_zero() {
        let mut mc = machine();
        let a = mc.st.layout.meta_addr(0, 500);
        assert_eq!(mc.st.fetch(&mc.rules, a), Ok([0; 64]), "never written");
        mc.rules.counter_updated(&mut mc.st, 500, leaf(1)).unwrap();
        persist_all(&mut mc);
        mc.st.nvm.image.retain(|x| x != a);
        assert_eq!(mc.st.fetch(&mc.rules, a), Err(CheckFailure::Tree { level: 0, index: 500 }), "rolled back to never written");
    }
}
