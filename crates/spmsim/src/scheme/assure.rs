//! ASSURE's multi-root tree as the multiset-hash paper configures it
//! (Rakshit and Mohanram, DAC 2017; Kubo et al. 5.1: distributed dynamic
//! multi-root Merkle trees with one hot tree, since the proposal itself
//! has two on-chip NV registers): every metadata line written through, as
//! the paper's baseline, except that one subtree, the most written of its
//! level, is detached with its root's hash in a second register.
//!
//! ```text
//!  write: counter, then each node up the path written through; at the hot
//!         tree's root H the hash goes into the hot register and the path
//!         above H is left alone (ASSURE's shorter update path)
//!  read:  a line's chain of checks ends at a cached node, at H (its
//!         register) or at the root register
//!  every `epoch_writes` writes: the subtree of H's level written most in
//!         the epoch becomes H; the old H is hashed back into its parent
//!         up to the root (one eager path update)
//! ```
//! The hot tree's level is `below_top` levels under the top (the paper:
//! "its hot root is near the root"). Everything in NVM is written through,
//! so recovery has nothing to rebuild: reads check each line against its
//! parent, H against its register. The epoch's write counts are the
//! controller's volatile bookkeeping (SRAM), lost at a crash like any
//! statistic; the hot tree itself is in the chip state.

use super::params::{in_range, one, yes, Completion, Need, ParamError, SchemeParams, SchemeWork, TreeType, WRITE_THROUGH};
use super::{Registered, Role};
use crate::engine::chip::{ChipState, SchemeNv};
use crate::engine::hooks::{DrainWork, NvChange, NvRegister, OwnState, Scheme, SubtreeRoot};
use crate::engine::rules::Rules;
use crate::engine::store::{CheckFailure, MetaStore};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use crate::config::SimConfig;

/// ASSURE's multi-root tree with one hot tree (the multiset-hash paper's
/// configuration of it): write-through metadata, the hot tree's root in a
/// second register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assure {
    /// Levels under the top level at which the hot tree's root sits.
    #[serde(default = "one")]
    pub below_top: u32,
    /// Writes between two choices of the hot tree.
    #[serde(default = "default_epoch")]
    pub epoch_writes: u32,
    /// The hot tree's register is non-volatile (false: the control
    /// `assure-volatile-hot-register`, whose register a power failure
    /// loses, leaving the detached subtree's parent entry stale).
    #[serde(default = "yes")]
    pub nv_hot_register: bool,
}

fn default_epoch() -> u32 {
    4096
}

impl Default for Assure {
    fn default() -> Self {
        Assure { below_top: one(), epoch_writes: default_epoch(), nv_hot_register: true }
    }
}

impl SchemeParams for Assure {
    fn name(&self) -> &'static str {
        "assure"
    }
    /// The write-through baseline's rule (Kubo et al. 5.1): complete once
    /// the update reaches the root, or the hot tree's register.
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(WRITE_THROUGH, false, false).completing(Completion::Root)
    }
    fn validate(&self) -> Result<(), ParamError> {
        // Below the top, within the tree's height; an epoch of at least one write.
        in_range("scheme.below_top", self.below_top as u64, 0, 32)?;
        in_range("scheme.epoch_writes", self.epoch_writes as u64, 1, 1 << 30)
    }
    fn needs(&self) -> Vec<Need> {
        vec![Need::Tree { tree: TreeType::Bmt, no_onchip_levels: true, why: "detaches a subtree of a Bonsai Merkle tree" }]
    }
}

impl Registered for Assure {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
    fn build(&self, _cfg: &SimConfig, _seed: u64) -> Box<dyn Scheme> {
        Box::new(AssureRuntime::new(*self))
    }
}

/// A detached subtree's root: the node (level, index) and the hash its
/// register holds. Updates under it stop at it; its parent's entry for it
/// is left as it was when it was detached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HotTree {
    pub level: u32,
    pub index: u64,
    pub hash: u64,
}

impl HotTree {
    pub fn is(&self, level: u32, index: u64) -> bool {
        (self.level, self.index) == (level, index)
    }
}

/// ASSURE's non-volatile state: the hot tree's register (on chip).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssureNv {
    pub hot_tree: Option<HotTree>,
}

/// ASSURE's runtime: its parameters and the epoch's write counts.
#[derive(Clone, Debug)]
pub struct AssureRuntime {
    p: Assure,
    epoch: RefCell<EpochCounts>,
}

/// Writes per node of the hot tree's level in the current epoch, and
/// their total: the controller's volatile bookkeeping.
#[derive(Clone, Debug, Default)]
pub struct EpochCounts {
    per_node: std::collections::BTreeMap<u64, u64>,
    total: u64,
}

impl EpochCounts {
    /// One more write under `node`; the epoch's writes so far.
    fn count(&mut self, node: u64) -> u64 {
        *self.per_node.entry(node).or_default() += 1;
        self.total += 1;
        self.total
    }

    /// The node written most (the lowest of a tie), starting a new epoch.
    fn end_epoch(&mut self) -> Option<u64> {
        let hottest = self.per_node.iter().max_by_key(|&(i, n)| (*n, std::cmp::Reverse(*i))).map(|(i, _)| *i);
        self.clear();
        hottest
    }

    fn clear(&mut self) {
        self.per_node.clear();
        self.total = 0;
    }
}

impl AssureRuntime {
    pub fn new(p: Assure) -> Self {
        AssureRuntime { p, epoch: RefCell::default() }
    }

    /// The hot tree of `chip`, if one is detached.
    pub fn hot_tree(chip: &ChipState) -> Option<HotTree> {
        chip.scheme.get::<AssureNv>().and_then(|n| n.hot_tree)
    }

    fn hot(st: &MetaStore) -> Option<HotTree> {
        Self::hot_tree(&st.chip)
    }

    /// The hot tree's level and the node of it above counter block `index`.
    fn node_over(&self, st: &MetaStore, index: u64) -> (u32, u64) {
        let level = st.layout.top_level().saturating_sub(self.p.below_top).max(1);
        (level, index / st.layout.arity.pow(level))
    }

    /// Make node (level, index) the hot tree: its current value (fetched
    /// and checked while still attached) goes into the register; the old
    /// hot tree's root is hashed back into its parent up to the root.
    fn move_hot_tree(&self, r: &Rules, st: &mut MetaStore, level: u32, index: u64) -> Result<(), CheckFailure> {
        let bmt = r.tree.as_bmt().expect("assure's configuration requires a BMT");
        let addr = st.layout.meta_addr(level, index);
        let bytes = st.fetch(r, addr)?;
        let hash = st.crypto.bmt_hash(&bytes);
        let old = st.chip.scheme.get_mut::<AssureNv>().hot_tree.replace(HotTree { level, index, hash });
        st.root_updates += 1;
        if let Some(old) = old {
            let oa = st.layout.meta_addr(old.level, old.index);
            // Fetched before the move, the old root would be checked
            // against its register; it is on chip or in NVM as written.
            let ob = match st.peek_line(oa) {
                Some(b) => b,
                None => st.nvm.read(&st.layout.clone(), oa).unwrap_or_else(|| bmt.default_block(old.level)),
            };
            bmt.node_updated(r, st, old.level, old.index, ob)?;
        }
        Ok(())
    }
}

impl Scheme for AssureRuntime {
    fn adopt(&self, chip: &mut ChipState) -> Result<(), String> {
        chip.scheme.adopt::<AssureNv>()
    }

    /// The hot tree's register: its hash, and which node it detached.
    fn onchip_nv_registers(&self) -> Vec<NvRegister> {
        vec![NvRegister { what: "hot tree register (hash and node)", bytes: 16 }]
    }

    fn own_state(&self) -> Vec<OwnState> {
        vec![OwnState::OnChip { name: "hot-tree-register-tamper", why: "ASSURE's hot-tree root is an on-chip non-volatile register" }]
    }

    fn on_power_fail(&self, _r: &Rules, st: &mut MetaStore, _work: &mut DrainWork) {
        if !self.p.nv_hot_register {
            st.chip.scheme.get_mut::<AssureNv>().hot_tree = None;
        }
    }

    /// The epoch's counts are SRAM: lost with power.
    fn on_power_lost(&self) {
        self.epoch.borrow_mut().clear();
    }

    fn on_counter_update(&self, r: &Rules, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let (level, node) = self.node_over(st, index);
        if Self::hot(st).is_none() {
            self.move_hot_tree(r, st, level, node)?;
        }
        r.counter_updated(st, index, bytes)?;
        let writes = self.epoch.borrow_mut().count(node);
        if writes >= self.p.epoch_writes as u64 {
            let hottest = self.epoch.borrow_mut().end_epoch().expect("counted");
            if Self::hot(st).is_some_and(|t| !t.is(level, hottest)) {
                self.move_hot_tree(r, st, level, hottest)?;
            }
        }
        Ok(())
    }

    /// The hot tree's root is a root of its own: checked against, and
    /// updated into, its register.
    fn subtree_root(&self, st: &MetaStore, level: u32, index: u64) -> SubtreeRoot {
        match Self::hot(st) {
            Some(h) if h.is(level, index) => SubtreeRoot::Register(h.hash),
            _ => SubtreeRoot::No,
        }
    }

    fn set_subtree_register(&self, st: &mut MetaStore, level: u32, index: u64, hash: u64) {
        if let Some(h) = st.chip.scheme.get_mut::<AssureNv>().hot_tree.as_mut().filter(|h| h.is(level, index)) {
            h.hash = hash;
        }
    }

    fn subtree_registers(&self, st: &MetaStore) -> Vec<(u32, u64)> {
        Self::hot(st).map(|h| (h.level, h.index)).into_iter().collect()
    }

    /// The register is the root of its node's edge: when it moves, the
    /// edges of the nodes it named are checked again.
    fn nv_change(&self, st: &MetaStore, before: &SchemeNv, after: &SchemeNv) -> NvChange {
        let hot = |nv: &SchemeNv| nv.get::<AssureNv>().and_then(|n| n.hot_tree);
        let (b, a) = (hot(before), hot(after));
        if b == a {
            return NvChange::Unseen;
        }
        NvChange::Edges([b, a].into_iter().flatten().map(|t| st.layout.meta_addr(t.level, t.index)).collect())
    }
}

#[cfg(test)]
mod tests {
    use crate::config::load_preset;
    use crate::machine::System;
    use crate::workload::Event;

    /// ASSURE in 64 MiB, its hot tree at level 4 (four subtrees of 16 MiB;
    /// the levels above hold one node each), a 4 KiB metadata cache and
    /// epochs of 8 writes.
    fn machine() -> System {
        let sets = [
            "memory.capacity_bytes=67108864",
            "metadata_cache.organization={type=\"unified\",unified={capacity_bytes=4096,ways=4}}",
            "scheme.epoch_writes=8",
            "scheme.below_top=3",
        ];
        System::new(&load_preset("assure", &sets.map(String::from)).unwrap(), 3)
    }

    fn store(s: &mut System, block: u64, v: u64) {
        s.apply(&Event::store(block * 64, 8, v, false)).unwrap();
    }

    #[test]
    fn writes_under_the_hot_tree_stop_at_it_and_the_hottest_subtree_takes_its_place() {
        let mut s = machine();
        let far = (40 << 20) / 64; // a block 40 MiB in: another subtree
        store(&mut s, 0, 1);
        let hot = super::AssureRuntime::hot_tree(&s.mc.st.chip).expect("the first write chooses a hot tree");
        // Under the hot tree the root register does not move.
        let roots = s.mc.st.chip.roots.clone();
        for v in 2..6 {
            store(&mut s, v, v);
        }
        assert_eq!(s.mc.st.chip.roots, roots, "writes under the hot tree stop at its root");
        assert_ne!(super::AssureRuntime::hot_tree(&s.mc.st.chip).unwrap().hash, hot.hash, "its register took them");
        // Outside it they climb to the root.
        store(&mut s, far, 7);
        assert_ne!(s.mc.st.chip.roots, roots);
        // An epoch written mostly far away moves the hot tree there.
        for v in 0..12 {
            store(&mut s, far + v, 100 + v);
        }
        let moved = super::AssureRuntime::hot_tree(&s.mc.st.chip).unwrap();
        assert!(!moved.is(hot.level, hot.index), "the hottest subtree of the epoch is the hot tree: {moved:?}");
        // Every block reads back through the re-attached old tree and the
        // detached new one; a tampered hot register is caught.
        s.mc.drop_volatile();
        assert_eq!(s.mc.read(3).unwrap()[..8], 3u64.to_le_bytes());
        assert_eq!(s.mc.read(far + 11).unwrap()[..8], 111u64.to_le_bytes());
        s.mc.drop_volatile();
        s.mc.st.chip.scheme.get_mut::<super::AssureNv>().hot_tree.as_mut().unwrap().hash ^= 1;
        assert!(s.mc.read(far + 11).is_err(), "a block under a tampered hot register must not read");
        assert!(s.mc.read(3).is_ok(), "the rest of the tree does not depend on it");
    }
}
