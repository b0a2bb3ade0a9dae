//! CacheTree (Chen, Zhang, Xiao, TCAD 2020) as the multiset-hash paper
//! describes and runs it (Kubo et al. 3.2, 5.1): a small HNode cache of
//! last-level tree nodes, written back, under a small Merkle tree (the
//! HNodeTree) whose root is an on-chip non-volatile register. Counters and
//! every other tree node are written through, as the baseline.
//!
//! ```text
//!  write: counter written through, hashed into its parent, ... up to the
//!         HNode level: the HNode changes in its cache (a cached HNode acts
//!         as a root) and the HNodeTree over the HNode cache's ways is
//!         updated instead of the path to the root
//!  fill:  an HNode entering a way writes the way's tracking entry (its
//!         address, as Anubis's AGIT)
//!  evict: a dirty HNode is written and hashed into its parent, up to the
//!         root, all written through (the eager path of the baseline)
//!  crash: the HNode cache is lost; the register keeps the HNodeTree root
//!  recovery: tracking table -> the HNodes cached at the crash; each is
//!         recomputed from its children in NVM (written through, so
//!         current); the HNodeTree over them must give the register, else
//!         an attack; then each is written back up to the root
//! ```
//! *Choices* (the paper is known here by its abstract and the multiset-hash
//! paper's account): HNodes are the tree's level 1 ("several HNodes at the
//! tree's last level"), 64 of them (8 sets of 8 ways), beside the unified
//! metadata cache, whose budget is Table 1's; the HNodeTree is 8-ary over
//! the ways, a leaf the hash of a way's (address, line), so an update costs
//! a leaf and one hash per HNodeTree level on the tree unit; data MACs live
//! in the data line on this machine, so CacheTree's MACTree has no MAC
//! cache to cover. As with STAR's cache-tree, the functional model computes
//! the register when power fails from the cache as it then is (the value
//! the eager updates would hold) and counts each update the hardware makes.

use super::params::{in_range, one, yes, Completion, Need, ParamError, SchemeParams, SchemeWork, TreeType, WRITE_THROUGH};
use super::{Registered, Role};
use super::sit_restore::{hash8, small_tree_root};
use super::tracking;
use crate::config::SimConfig;
use crate::engine::chip::{ChipState, SchemeNv};
use crate::engine::hooks::{
    default_on_metadata_dirty, BatteryDuty, CacheInstall, DrainWork, NvChange, NvRegister, OwnState, RecoveryAttack, RecoveryReport,
    Scheme, SubtreeRoot,
};
use crate::engine::layout::Layout;
use crate::engine::metacache::LevelCacheGeometry;
use crate::engine::nvm::NvmImage;
use crate::engine::rules::Rules;
use crate::engine::shape::SchemeShape;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::IntegrityTree;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// CacheTree (Chen et al.; the multiset-hash paper's baseline): an HNode
/// cache of last-level tree nodes, written back, under a small tree whose
/// root is an on-chip register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheTree {
    /// The tree level the HNode cache holds (1: the counter blocks'
    /// parents, the last level of nodes).
    #[serde(default = "one")]
    pub hnode_level: u32,
    /// HNodes the cache holds.
    #[serde(default = "default_hnodes")]
    pub hnodes: u32,
    /// Its ways per set.
    #[serde(default = "default_ways")]
    pub hnode_ways: u32,
    /// Recovery recomputes the lost HNodes (false: the control
    /// `cachetree-no-recovery`, which leaves NVM's stale copies in place).
    #[serde(default = "yes")]
    pub recovery: bool,
}

fn default_hnodes() -> u32 {
    64
}

fn default_ways() -> u32 {
    8
}

impl Default for CacheTree {
    fn default() -> Self {
        CacheTree { hnode_level: one(), hnodes: default_hnodes(), hnode_ways: default_ways(), recovery: true }
    }
}

impl SchemeParams for CacheTree {
    fn name(&self) -> &'static str {
        "cachetree"
    }
    /// Written through up to its HNode, which takes the change on chip:
    /// complete once the update reaches it (Kubo et al. 3.2).
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(WRITE_THROUGH, false, false).completing(Completion::Root)
    }
    fn validate(&self) -> Result<(), ParamError> {
        // A node level (1: the counters' parents) of the tree's height; a
        // small cache ("its complexity limits the HNode cache's capacity").
        in_range("scheme.hnode_level", self.hnode_level as u64, 1, 31)?;
        in_range("scheme.hnodes", self.hnodes as u64, 1, 1 << 16)?;
        in_range("scheme.hnode_ways", self.hnode_ways as u64, 1, crate::config::limits::MAX_WAYS as u64)?;
        if !self.hnodes.is_multiple_of(self.hnode_ways) {
            return Err(ParamError {
                key: "scheme.hnodes",
                message: format!("must be a multiple of scheme.hnode_ways ({}), got {}", self.hnode_ways, self.hnodes),
            });
        }
        Ok(())
    }
    fn needs(&self) -> Vec<Need> {
        vec![
            Need::Tree { tree: TreeType::Bmt, no_onchip_levels: true, why: "caches nodes of a Bonsai Merkle tree" },
            Need::MacInDataLine { why: "models no MAC cache (its MACTree)" },
            Need::NodeLevel { key: "scheme.hnode_level", level: self.hnode_level },
        ]
    }
}

impl Registered for CacheTree {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
    fn build(&self, _cfg: &SimConfig, _seed: u64) -> Box<dyn Scheme> {
        Box::new(CacheTreeRuntime::new(*self))
    }
    /// The HNode cache beside the metadata caches; the tracking table, one
    /// entry per way of it; an HNode filling a way writes the way's
    /// tracking entry (the cache hooks); lines written back dirty the
    /// parent, so a flush goes lowest level first.
    fn shape(&self, _tree: &Layout, _cfg: &SimConfig) -> SchemeShape {
        SchemeShape {
            extra_level_cache: Some(LevelCacheGeometry { level: self.hnode_level, lines: self.hnodes as u64, ways: self.hnode_ways }),
            reserved_recovery_lines: self.hnodes as u64,
            calls_cache_hooks: true,
            write_back_hashes_into_parent: true,
            ..SchemeShape::default()
        }
    }
}

/// CacheTree's runtime: its parameters; its state is the HNode cache (a
/// level cache of the engine's) and the register.
#[derive(Clone, Copy, Debug)]
pub struct CacheTreeRuntime {
    p: CacheTree,
}

/// The HNodeTree's root register (on chip), taken at power loss from the
/// HNode cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheTreeNv {
    pub recovery_root: Option<u64>,
}

fn bmt(tree: &IntegrityTree) -> &crate::engine::tree::BonsaiMerkleTree {
    tree.as_bmt().expect("CacheTree's check requires a BMT")
}

/// The HNodeTree's leaf for a way holding line `addr`: the hash of its
/// address with the line's hash (0: an empty way).
fn leaf(st: &mut MetaStore, addr: u64, line: &[u8; 64], counted: bool) -> u64 {
    let h = match counted {
        true => st.crypto.bmt_hash(line),
        false => st.crypto.bmt_hash_uncounted(line),
    };
    hash8(&mut st.crypto, &[addr + 1, h], counted)
}

impl CacheTreeRuntime {
    pub fn new(p: CacheTree) -> Self {
        CacheTreeRuntime { p }
    }

    /// Hashes of one HNodeTree update: the way's leaf, then one per level
    /// of the 8-ary tree over the ways.
    fn hnode_tree_update_hashes(&self) -> u64 {
        1 + super::tree_above(self.p.hnodes as u64, 8).0 as u64
    }

    /// The HNode cache changed in one way: the hardware updates the
    /// HNodeTree (counted; the register's value is taken at power loss).
    fn hnode_tree_updated(&self, st: &mut MetaStore) {
        st.crypto.work.tree_hashes += self.hnode_tree_update_hashes();
    }

    /// Line (level, index) now holds `bytes`: hash it into its parent, and
    /// so on up, every line written through, until an HNode takes the
    /// change (a cached HNode acts as a root: [`SubtreeRoot::StopsUpdate`],
    /// met only by an update climbing from below it) or the root register
    /// does.
    fn hash_up(&self, r: &Rules, st: &mut MetaStore, level: u32, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let changed = bmt(&r.tree).hash_up(r, st, level, index, bytes)?;
        if changed.last().and_then(|&a| st.layout.meta_pos(a)).is_some_and(|(l, _)| l == self.p.hnode_level) {
            self.hnode_tree_updated(st);
        }
        for a in changed {
            st.metadata_dirtied(r, a)?;
        }
        Ok(())
    }

    /// The HNodeTree's root over the HNode cache as it is (uncounted: the
    /// register the hardware kept current).
    fn register(&self, st: &mut MetaStore) -> u64 {
        let Some(slots) = st.caches.level_cache_slots() else { return 0 };
        let mut leaves = BTreeMap::new();
        for (w, s) in slots.iter().enumerate() {
            if let Some((a, b)) = s {
                leaves.insert(w as u64, leaf(st, *a, b, false));
            }
        }
        small_tree_root(&mut st.crypto, slots.len() as u64, &leaves, false)
    }
}

impl Scheme for CacheTreeRuntime {
    fn adopt(&self, chip: &mut ChipState) -> Result<(), String> {
        chip.scheme.adopt::<CacheTreeNv>()
    }

    fn on_cache_install(&self, st: &mut MetaStore, ev: &CacheInstall) {
        if let (Some(w), true) = (ev.filled_way, ev.in_level_cache) {
            tracking::write_entry(st, w, Some(ev.addr));
        }
    }

    /// A cached HNode is where an update from below stops.
    fn subtree_root(&self, _st: &MetaStore, level: u32, _index: u64) -> SubtreeRoot {
        match level == self.p.hnode_level {
            true => SubtreeRoot::StopsUpdate,
            false => SubtreeRoot::No,
        }
    }

    /// The register is read by recovery alone.
    fn nv_change(&self, _st: &MetaStore, _before: &SchemeNv, _after: &SchemeNv) -> NvChange {
        NvChange::Unseen
    }

    /// The HNodeTree's root register.
    fn onchip_nv_registers(&self) -> Vec<NvRegister> {
        vec![NvRegister { what: "HNodeTree root register", bytes: 8 }]
    }

    /// The HNodeTree's root is computed at power loss from the HNode cache
    /// as it then is: a leaf per HNode and a hash per inner node.
    fn battery_duties(&self, _cfg: &SimConfig) -> Vec<BatteryDuty> {
        let hashes = self.p.hnodes as u64 + super::tree_above(self.p.hnodes as u64, 8).1;
        vec![BatteryDuty { what: "HNodeTree root over the HNode cache", lines_moved: 0, hashes }]
    }

    fn own_state(&self) -> Vec<OwnState> {
        vec![OwnState::OnChip {
            name: "hnode-tree-register-tamper",
            why: "the HNodeTree's root is an on-chip non-volatile register (CacheTree; Kubo et al. 3.2)",
        }]
    }

    fn on_counter_update(&self, r: &Rules, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let addr = st.layout.meta_addr(0, index);
        st.install(r, addr, bytes, true);
        st.metadata_dirtied(r, addr)?;
        self.hash_up(r, st, 0, index, bytes)
    }

    fn verify_on_fetch(&self, r: &Rules, st: &mut MetaStore, level: u32, index: u64, bytes: &[u8; 64]) -> Result<(), CheckFailure> {
        r.verify(st, level, index, bytes)?;
        if level == self.p.hnode_level {
            // It fills a way of the HNode cache.
            self.hnode_tree_updated(st);
        }
        Ok(())
    }

    fn on_metadata_dirty(&self, r: &Rules, st: &mut MetaStore, addr: u64) -> Result<(), CheckFailure> {
        match st.layout.meta_pos(addr) {
            Some((level, _)) if level == self.p.hnode_level => Ok(()),
            _ => default_on_metadata_dirty(r, st, addr),
        }
    }

    fn on_metadata_evict(&self, r: &Rules, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        st.nvm.write(&st.layout, addr, bytes);
        match st.layout.meta_pos(addr) {
            Some((level, index)) if level == self.p.hnode_level => self.hash_up(r, st, level, index, bytes),
            _ => Ok(()),
        }
    }

    fn on_shutdown(&self, st: &mut MetaStore) {
        // The HNode cache empties: its ways' entries say so.
        let Some(slots) = st.caches.level_cache_slots() else { return };
        for (w, s) in slots.iter().enumerate() {
            if s.is_some() {
                tracking::write_entry(st, w, None);
            }
        }
    }

    fn on_power_fail(&self, r: &Rules, st: &mut MetaStore, _work: &mut DrainWork) {
        if r.secure {
            let root = self.register(st);
            st.chip.scheme.get_mut::<CacheTreeNv>().recovery_root = Some(root);
        }
    }

    fn recovery_attack_names(&self) -> &'static [&'static str] {
        tracking::CACHETREE
    }

    fn recovery_state_pending(&self, st: &MetaStore, _volatile_data: bool) -> bool {
        !st.caches.dirty_lines().is_empty()
    }

    fn recovery_attacks(&self, _r: &Rules, st: &MetaStore, earlier: &NvmImage) -> Vec<RecoveryAttack> {
        tracking::attacks(st, earlier, tracking::CACHETREE)
    }

    fn recover(&self, r: &Rules, st: &mut MetaStore, rep: &mut RecoveryReport) {
        if !r.secure || !self.p.recovery {
            return;
        }
        let tree = &r.tree;
        let Some(expect) = st.chip.scheme.get_mut::<CacheTreeNv>().recovery_root.take() else { return };
        // 1. The tracking table: the HNodes cached at the crash, by way.
        let listed = tracking::read_table(st);
        // 2. Each recomputed from its children, and the HNodeTree over them.
        let mut restored = Vec::new();
        let mut leaves = BTreeMap::new();
        for &(w, a) in &listed {
            let Some((level, index)) = st.layout.meta_pos(a).filter(|&(l, _)| l == self.p.hnode_level) else {
                rep.scheme_failure = Some(format!("tracking entry {w} lists {a:#x}, not a level-{} node", self.p.hnode_level));
                return;
            };
            // Its children are written through, so NVM holds them current.
            let line = bmt(tree).node_from_nvm_children(st, level, index);
            leaves.insert(w, leaf(st, a, &line, true));
            restored.push((a, level, index, line));
        }
        let got = small_tree_root(&mut st.crypto, self.p.hnodes as u64, &leaves, true);
        if got != expect {
            rep.scheme_failure = Some(format!(
                "the HNodeTree over the {} recomputed HNode(s) does not match its on-chip root: recovery input was tampered with or lost",
                restored.len()
            ));
            return;
        }
        // 3. Each HNode NVM holds stale is written back up to the root; the
        // table is cleared, the HNode cache starting empty.
        let layout = st.layout.clone();
        for (a, level, index, line) in restored {
            if st.nvm.read(&layout, a).unwrap_or_else(|| bmt(tree).default_block(level)) != line {
                st.nvm.write(&st.layout, a, line);
                rep.add_count("stale_restored", 1);
                if let Err(e) = self.hash_up(r, st, level, index, line).and_then(|_| r.process_victims(st)) {
                    rep.scheme_failure = Some(format!("writing the recomputed HNode {a:#x} back: {e}"));
                    return;
                }
            }
        }
        for (w, _) in listed {
            tracking::write_entry(st, w as usize, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::load_preset;
    use crate::machine::System;
    use crate::workload::Event;

    /// CacheTree in 64 MiB with an HNode cache of 8 (two sets of 4), so
    /// that HNodes are evicted within a few writes.
    fn machine(extra: &[&str]) -> System {
        let mut sets = vec!["memory.capacity_bytes=67108864".to_string(), "scheme.hnodes=8".into(), "scheme.hnode_ways=4".into()];
        sets.extend(extra.iter().map(|s| s.to_string()));
        System::new(&load_preset("cachetree", &sets).unwrap(), 7)
    }

    /// Block i of a spread: one per 32 KiB (one level-1 node each), with
    /// block 0 again and again.
    fn writes(s: &mut System, n: u64, base: u64) {
        for i in 0..n {
            let block = if i % 3 == 0 { 0 } else { (i * 977 % 64) * 512 };
            s.apply(&Event::store(block * 64, 8, base + i, false)).unwrap();
        }
    }

    #[test]
    fn writes_stop_at_their_hnode_and_recovery_recomputes_the_lost_ones() {
        let mut s = machine(&[]);
        let roots = s.mc.st.chip.roots.clone();
        s.apply(&Event::store(0, 8, 1, false)).unwrap();
        assert_eq!(s.mc.st.chip.roots, roots, "a write under a cached HNode leaves the root register alone");
        let dirty = s.mc.st.caches.dirty_lines();
        assert_eq!(dirty.len(), 1, "only the HNode is dirty: the counter was written through");
        assert_eq!(s.mc.st.layout.meta_pos(dirty[0].0).map(|(l, _)| l), Some(1));
        writes(&mut s, 200, 10);
        assert_ne!(s.mc.st.chip.roots, roots, "evicted HNodes were written back up to the root");
        let want = s.mc.read(0).unwrap();
        s.power_fail();
        let r = s.recover();
        assert!(r.ok(), "{r:?}");
        assert!(r.count("stale_restored") > 0, "dirty HNodes were lost and recomputed: {r:?}");
        assert_eq!(s.mc.read(0).unwrap(), want);
        // The machine runs on, crashes and recovers again.
        writes(&mut s, 30, 1000);
        s.power_fail();
        assert!(s.recover().ok());
    }

    #[test]
    fn a_tampered_child_or_tracking_entry_breaks_the_hnode_tree_check() {
        for target in ["child", "entry"] {
            let mut s = machine(&[]);
            writes(&mut s, 40, 1);
            s.power_fail();
            let listed = super::tracking::read_table(&mut s.mc.st);
            let (w, hnode) = listed[0];
            let layout = s.mc.st.layout.clone();
            let (level, index) = layout.meta_pos(hnode).unwrap();
            let addr = match target {
                // A counter block under the first listed HNode.
                "child" => (0..layout.arity)
                    .map(|c| layout.meta_addr(level - 1, index * layout.arity + c))
                    .find(|&a| s.mc.st.nvm.peek(a).is_some())
                    .unwrap(),
                _ => layout.recovery_addr(w),
            };
            let mut b = s.mc.st.nvm.peek(addr).unwrap();
            b[if target == "child" { 9 } else { 1 }] ^= 1;
            s.mc.st.nvm.image.put(addr, b);
            let r = s.recover();
            assert!(r.scheme_failure.as_deref().is_some_and(|f| f.contains("HNodeTree")), "{target}: {r:?}");
        }
    }

    #[test]
    fn an_orderly_shutdown_leaves_nothing_for_a_later_recovery_to_trip_on() {
        let mut s = machine(&[]);
        writes(&mut s, 40, 1);
        s.shutdown_clean().unwrap();
        assert!(super::tracking::read_table(&mut s.mc.st).is_empty(), "the table says the HNode cache is empty");
        // Power on, fill fewer ways than before, crash.
        s.apply(&Event::store(64, 8, 5, false)).unwrap();
        s.power_fail();
        let r = s.recover();
        assert!(r.ok(), "{r:?}");
        assert_eq!(s.mc.read(1).unwrap()[..8], 5u64.to_le_bytes());
    }
}
