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

use super::{MetadataPolicy, Scheme, SchemeWork};
use crate::config::{SimConfig, TreeConfig, WritePolicy};
use crate::engine::chip::HotTree;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::IntegrityTree;
use serde::{Deserialize, Serialize};

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

fn yes() -> bool {
    true
}

fn one() -> u32 {
    1
}

fn default_epoch() -> u32 {
    4096
}

impl Default for Assure {
    fn default() -> Self {
        Assure { below_top: one(), epoch_writes: default_epoch(), nv_hot_register: true }
    }
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

    pub fn clear(&mut self) {
        self.per_node.clear();
        self.total = 0;
    }
}

impl Assure {
    /// The hot tree's level and the node of it above counter block `index`.
    fn node_over(&self, st: &MetaStore, index: u64) -> (u32, u64) {
        let level = st.layout.top_level().saturating_sub(self.below_top).max(1);
        (level, index / st.layout.arity.pow(level))
    }

    /// Make node (level, index) the hot tree: its current value (fetched
    /// and checked while still attached) goes into the register; the old
    /// hot tree's root is hashed back into its parent up to the root.
    fn move_hot_tree(&self, tree: &IntegrityTree, st: &mut MetaStore, level: u32, index: u64) -> Result<(), CheckFailure> {
        let bmt = tree.as_bmt().expect("assure's check requires a BMT");
        let addr = st.layout.meta_addr(level, index);
        let bytes = st.fetch(tree, addr)?;
        let hash = st.crypto.bmt_hash(&bytes);
        let old = st.chip.hot_tree.replace(HotTree { level, index, hash });
        st.root_updates += 1;
        if let Some(old) = old {
            let oa = st.layout.meta_addr(old.level, old.index);
            // Fetched before the move, the old root would be checked
            // against its register; it is on chip or in NVM as written.
            let ob = match st.peek_line(oa) {
                Some(b) => b,
                None => st.nvm.read(&st.layout.clone(), oa).unwrap_or_else(|| bmt.default_block(old.level)),
            };
            bmt.node_updated(tree, st, old.level, old.index, ob)?;
        }
        Ok(())
    }
}

impl Scheme for Assure {
    fn name(&self) -> &'static str {
        "assure"
    }

    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteThrough), false, false)
    }

    fn check(&self, cfg: &SimConfig) -> Result<(), String> {
        if !matches!(cfg.tree, TreeConfig::Bmt { onchip_levels: 0, .. }) {
            return Err("scheme `assure` detaches a subtree of a Bonsai Merkle tree; set tree.type = \"bmt\" (no on-chip levels)".into());
        }
        super::check_front(self, cfg)
    }

    /// The hot tree's register: its hash, and which node it detached.
    fn onchip_nv_registers(&self) -> Vec<super::NvRegister> {
        vec![super::NvRegister { what: "hot tree register (hash and node)", bytes: 16 }]
    }

    fn own_state(&self) -> Vec<super::OwnState> {
        vec![super::OwnState::OnChip {
            name: "hot-tree-register-tamper",
            why: "ASSURE's hot-tree root is an on-chip non-volatile register",
        }]
    }

    fn on_power_fail(&self, sys: &mut crate::machine::System, work: &mut crate::machine::DrainWork) {
        super::drain_front_and_metadata(self, sys, work);
        if !self.nv_hot_register {
            sys.mc.st.chip.hot_tree = None;
        }
    }

    fn on_counter_update(&self, tree: &IntegrityTree, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let (level, node) = self.node_over(st, index);
        if st.chip.hot_tree.is_none() {
            self.move_hot_tree(tree, st, level, node)?;
        }
        tree.counter_updated(st, index, bytes)?;
        if st.epoch_counts.count(node) >= self.epoch_writes as u64 {
            let hottest = st.epoch_counts.end_epoch().expect("counted");
            if st.chip.hot_tree.is_some_and(|t| !t.is(level, hottest)) {
                self.move_hot_tree(tree, st, level, hottest)?;
            }
        }
        Ok(())
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
        let hot = s.mc.st.chip.hot_tree.expect("the first write chooses a hot tree");
        // Under the hot tree the root register does not move.
        let roots = s.mc.st.chip.roots.clone();
        for v in 2..6 {
            store(&mut s, v, v);
        }
        assert_eq!(s.mc.st.chip.roots, roots, "writes under the hot tree stop at its root");
        assert_ne!(s.mc.st.chip.hot_tree.unwrap().hash, hot.hash, "its register took them");
        // Outside it they climb to the root.
        store(&mut s, far, 7);
        assert_ne!(s.mc.st.chip.roots, roots);
        // An epoch written mostly far away moves the hot tree there.
        for v in 0..12 {
            store(&mut s, far + v, 100 + v);
        }
        let moved = s.mc.st.chip.hot_tree.unwrap();
        assert!(!moved.is(hot.level, hot.index), "the hottest subtree of the epoch is the hot tree: {moved:?}");
        // Every block reads back through the re-attached old tree and the
        // detached new one; a tampered hot register is caught.
        s.mc.drop_volatile();
        assert_eq!(s.mc.read(3).unwrap()[..8], 3u64.to_le_bytes());
        assert_eq!(s.mc.read(far + 11).unwrap()[..8], 111u64.to_le_bytes());
        s.mc.drop_volatile();
        s.mc.st.chip.hot_tree.as_mut().unwrap().hash ^= 1;
        assert!(s.mc.read(far + 11).is_err(), "a block under a tampered hot register must not read");
        assert!(s.mc.read(3).is_ok(), "the rest of the tree does not depend on it");
    }
}
