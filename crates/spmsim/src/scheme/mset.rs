//! The multiset-hash scheme (Kubo, Koike, Takamaeda-Yamazaki; sections 4.2
//! to 4.6; `docs/papers/mset-sections-3-5.md`): one write-back metadata
//! cache for counters and tree nodes, made crash-safe by two on-chip
//! non-volatile multiset hashes over its contents.
//!
//! ```text
//!  a line enters or changes in the cache -> Read Hash += new (addr, line)
//!  a line leaves or gives up a value     -> Write Hash += old (addr, line)
//!  write (4.3): counter updated in the cache; the tree is not touched
//!               (a cached line acts as a root)
//!  write-back of a dirty line: to NVM, and its hash into its parent
//!               (fetched into the cache) or the root register
//!  fill: the way's Anubis tracking entry <- the line's address (AGIT)
//!  ADR (4.5): dirty lines lost; Osiris's stop-loss bounds the counters'
//!             lag. Recovery: tracking table -> the lines cached at the
//!             crash; counters by Osiris's trials, nodes from their
//!             children in NVM; Write Hash + recomputed == Read Hash, else
//!             an attack; on a match the lines go back into the cache
//!  eADR (4.6): the battery writes every dirty line back (lowest level
//!             first); recovery recomputes the same lines from NVM
//! ```
//! An invariant makes the recomputation possible: a parent's entry for a
//! child is the hash of the child as NVM holds it. A change to a cached
//! line does not touch the parent; each write of a line to NVM (an
//! eviction, a flush, Osiris's stop-loss) hashes it into the parent.
//! *Choices:* data MACs live in the data line (`security.mac_placement =
//! "data-line"`), which Osiris's trials need persisted with the data (its
//! ECC bits), so the cache holds counters and tree nodes; a tracking entry
//! takes one line per way (AGIT packs them; the write count is the same).

use super::osiris::{stop_loss_due, trial_minor};
use super::{MetadataPolicy, Scheme, SchemeWork};
use crate::config::{MacPlacement, MetadataCacheOrganization, SimConfig, TreeConfig, WritePolicy};
use crate::engine::counter::{bmt_set_slot, SplitCounterBlock};
use crate::engine::layout::Layout;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::IntegrityTree;
use crate::machine::{RecoveryReport, System};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mset {
    /// eADR (4.6): the battery writes the metadata cache back at a crash,
    /// and recovery needs no Osiris.
    #[serde(default)]
    pub eadr: bool,
    /// Osiris's stop-loss N (ADR only; see `osiris`).
    #[serde(default = "default_stop_loss")]
    pub stop_loss: u32,
    /// Evictions are added to Write Hash (false: the control
    /// `mset-no-write-hash`).
    #[serde(default = "yes")]
    pub write_hash: bool,
}

fn default_stop_loss() -> u32 {
    4
}

fn yes() -> bool {
    true
}

impl Default for Mset {
    fn default() -> Self {
        Mset { eadr: false, stop_loss: default_stop_loss(), write_hash: true }
    }
}

fn bmt(tree: &IntegrityTree) -> &crate::engine::tree::BonsaiMerkleTree {
    tree.as_bmt().expect("the multiset-hash scheme's check requires a BMT")
}

impl Mset {
    /// Write `bytes` of line `addr` to NVM and hash it into its parent (in
    /// the cache, fetched and verified if need be) or its root register.
    fn write_back(&self, tree: &IntegrityTree, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        st.nvm.write(&st.layout, addr, bytes);
        let Some((level, index)) = st.layout.meta_pos(addr) else { return Ok(()) };
        let t = bmt(tree);
        let h = st.crypto.bmt_hash(&bytes);
        match st.layout.parent_of(level, index) {
            None => {
                st.chip.roots.set(index, h);
                st.root_updates += 1;
            }
            Some((pl, pi, slot)) => {
                let pa = st.layout.meta_addr(pl, pi);
                let e = t.entry_for(level, h);
                st.update(tree, pa, |p| bmt_set_slot(p, slot, e))?;
                st.metadata_dirtied(tree, pa)?;
            }
        }
        Ok(())
    }
}

impl Scheme for Mset {
    fn name(&self) -> &'static str {
        "mset"
    }

    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteBack), self.eadr, false)
    }

    fn check(&self, cfg: &SimConfig) -> Result<(), String> {
        if !matches!(cfg.tree, TreeConfig::Bmt { onchip_levels: 0, .. }) {
            return Err("scheme `mset` updates a Bonsai Merkle tree lazily; set tree.type = \"bmt\" (no on-chip levels)".into());
        }
        if !matches!(cfg.metadata_cache.organization, MetadataCacheOrganization::Unified { .. }) {
            return Err("scheme `mset` tracks one unified metadata cache; set metadata_cache.organization.type = \"unified\"".into());
        }
        if cfg.security.mac_placement != MacPlacement::DataLine {
            return Err(
                "scheme `mset` keeps data MACs with the data (Osiris's trials read them); set security.mac_placement = \"data-line\""
                    .into(),
            );
        }
        super::check_front(self, cfg)
    }

    fn recovery_area_lines(&self, _layout: &Layout, cfg: &SimConfig) -> u64 {
        match &cfg.metadata_cache.organization {
            MetadataCacheOrganization::Unified { unified } => unified.capacity_bytes / 64,
            MetadataCacheOrganization::Separate { .. } => 0,
        }
    }

    fn lazy_tree(&self) -> bool {
        true
    }

    fn recovery_attack_names(&self) -> &'static [&'static str] {
        super::tracking_attacks::MSET
    }

    /// A dirty counter block in the cache: recovery then recomputes it by
    /// Osiris's trials, and its parent from NVM.
    fn recovery_state_pending(&self, sys: &System) -> bool {
        let layout = &sys.mc.st.layout;
        sys.mc.st.caches.dirty_lines().iter().any(|(a, _)| matches!(layout.meta_pos(*a), Some((0, _))))
    }

    fn recovery_attacks(&self, crashed: &System, earlier: &crate::engine::nvm::NvmImage) -> Vec<super::RecoveryAttack> {
        super::tracking_attacks::attacks(crashed, earlier, super::tracking_attacks::MSET)
    }

    fn own_state(&self) -> Vec<super::OwnState> {
        vec![super::OwnState::OnChip {
            name: "multiset-registers-tamper",
            why: "Read Hash and Write Hash are on-chip non-volatile registers (Kubo et al. 4.2)",
        }]
    }

    fn on_counter_update(&self, tree: &IntegrityTree, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let addr = st.layout.meta_addr(0, index);
        st.install(addr, bytes, true);
        st.metadata_dirtied(tree, addr)?;
        // Osiris's stop-loss (ADR), Osiris's own rule: the block goes to
        // NVM, hashed into its parent like any write-back, once a minor
        // crossed a multiple of N since NVM's copy.
        let n = self.stop_loss as u64;
        if self.eadr || n == 0 {
            return Ok(());
        }
        if stop_loss_due(st, addr, &bytes, n) {
            let layout = &st.layout;
            if let Some(b) = st.caches.for_addr(layout, addr).take_dirty(addr) {
                self.write_back(tree, st, addr, b)?;
            }
        }
        Ok(())
    }

    fn on_metadata_evict(&self, tree: &IntegrityTree, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        self.write_back(tree, st, addr, bytes)
    }

    /// The flush left every line clean; the cache now empties: each line
    /// leaves (Write Hash) and its way's tracking entry is cleared, so the
    /// registers and the table describe the empty cache the next boot
    /// starts from.
    fn on_shutdown(&self, st: &mut MetaStore) {
        let layout = st.layout.clone();
        let lines: Vec<(u64, [u8; 64])> =
            st.caches.all().iter().flat_map(|(_, c)| c.entries().map(|(a, l)| (a, l.bytes)).collect::<Vec<_>>()).collect();
        for (a, b) in lines {
            if st.mset_log_evictions {
                st.log_write(a, &b);
            }
            if let Some(w) = st.caches.for_addr(&layout, a).way_of(a) {
                st.write_tracking_entry(w, None);
            }
        }
    }

    /// 4.2: Read Hash and Write Hash, 128 bits each, beside the root.
    fn onchip_nv_registers(&self) -> Vec<super::NvRegister> {
        vec![super::NvRegister { what: "Read Hash and Write Hash (128 bits each)", bytes: 32 }]
    }

    fn recover(&self, sys: &mut System, rep: &mut RecoveryReport) {
        if !sys.mc.secure {
            return;
        }
        let tree = sys.mc.tree.clone();
        let t = bmt(&tree);
        let st = &mut sys.mc.st;
        let layout = st.layout.clone();
        // 1. The tracking table: what the cache held (AGIT).
        let table = st.read_tracking_table();
        let listed: BTreeMap<(u32, u64), u64> =
            table.iter().map(|&(_, a)| (layout.meta_pos(a).expect("listed lines are metadata"), a)).collect();
        // 2. Recompute each listed line, lowest level first: counters by
        // Osiris (ADR), nodes from their children as NVM holds them.
        let per = layout.blocks_per_counter_block();
        let trials = match self.stop_loss {
            0 => 1,
            n => n as u64,
        };
        let mut recomputed: Vec<(u64, [u8; 64])> = Vec::new();
        let mut unrecovered = 0u64;
        for (&(level, index), &addr) in &listed {
            // A counter block starts from its NVM copy (Osiris's trials
            // move its minors on); a node is computed from its children
            // alone, so its own stale copy is not read.
            let line = if level == 0 {
                let nvm = st.nvm.read(&layout, addr).unwrap_or_else(|| t.default_block(level));
                let mut b = nvm;
                if !self.eadr {
                    let ctr = SplitCounterBlock::decode(&nvm);
                    for slot in 0..per {
                        let block = index * per + slot;
                        if st.nvm.image.get(block).is_none() {
                            continue;
                        }
                        match trial_minor(st, block, ctr.major, ctr.minors[slot as usize] as u64, trials) {
                            Some(m) => SplitCounterBlock::set_minor(&mut b, slot as usize, m as u8),
                            None => unrecovered += 1,
                        }
                    }
                }
                b
            } else {
                t.node_from_nvm_children(st, level, index)
            };
            recomputed.push((addr, line));
        }
        rep.stale_restored = recomputed.len() as u64;
        // 3. Write Hash + the recomputed lines must be Read Hash (4.5).
        let (Some(h), Some(regs)) = (st.mset.clone(), st.chip.mset) else {
            rep.scheme_failure = Some("the multiset-hash registers are missing".into());
            return;
        };
        let mut write = regs.write;
        for (a, b) in &recomputed {
            h.add(&mut write, *a, b);
        }
        if write != regs.read || unrecovered > 0 {
            rep.scheme_failure = Some(format!(
                "multiset hash: Write Hash with the {} recomputed lines {} Read Hash{}: an attack, or a line lost",
                recomputed.len(),
                if write == regs.read { "matches" } else { "does not match" },
                if unrecovered > 0 { format!(" ({unrecovered} block(s) matched no counter candidate)") } else { String::new() }
            ));
            return;
        }
        // 4. The cache holds again what it held: the registers already
        // count these lines, so they go back unlogged.
        let (hasher, fills) = (st.mset.take(), std::mem::replace(&mut st.track_fills, false));
        let mut ways: BTreeMap<u64, u64> = BTreeMap::new();
        for (a, b) in recomputed {
            st.install(a, b, true);
            if let Some(w) = st.caches.for_addr(&layout, a).way_of(a) {
                ways.insert(w as u64, a);
            }
        }
        st.mset = hasher;
        st.track_fills = fills;
        // A line may come back to another way than the one listing it: the
        // table is rewritten where it differs, so that a later fill of a
        // way replaces the entry of the line it evicts.
        let listed_ways: BTreeMap<u64, u64> = table.into_iter().collect();
        for w in listed_ways.keys().chain(ways.keys()).copied().collect::<std::collections::BTreeSet<u64>>() {
            if listed_ways.get(&w) != ways.get(&w) {
                st.write_tracking_entry(w as usize, ways.get(&w).copied());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::load_preset;
    use crate::machine::System;
    use crate::workload::Event;

    /// mset's machine in 64 MiB, with a 4 KiB cache so that lines are
    /// evicted (and written back through the tree) within a few writes.
    fn machine(preset: &str) -> System {
        let sets =
            ["memory.capacity_bytes=67108864", "metadata_cache.organization={type=\"unified\",unified={capacity_bytes=4096,ways=4}}"];
        System::new(&load_preset(preset, &sets.map(String::from)).unwrap(), 5)
    }

    fn writes(s: &mut System, n: u64) {
        for i in 0..n {
            // Blocks on many pages (counter blocks and tree paths evicted),
            // block 0 again and again (its counter past the stop-loss).
            let block = if i % 3 == 0 { 0 } else { (i * 977) % 16384 };
            s.apply(&Event::store(block * 64, 8, i + 1, false)).unwrap();
        }
    }

    #[test]
    fn registers_track_the_cache_and_recovery_restores_it() {
        for preset in ["mset", "mset-eadr"] {
            let mut s = machine(preset);
            writes(&mut s, 300);
            assert_eq!(s.mc.st.multiset_consistent(), Some(true), "{preset}");
            let want = s.mc.read(0).unwrap();
            s.power_fail();
            let r = s.recover();
            assert!(r.ok(), "{preset}: {r:?}");
            assert!(r.stale_restored > 0, "{preset}: the tracked lines came back");
            assert_eq!(s.mc.st.multiset_consistent(), Some(true), "{preset}: after recovery");
            assert_eq!(s.mc.read(0).unwrap(), want, "{preset}");
            // And the machine runs on.
            writes(&mut s, 30);
            assert_eq!(s.mc.st.multiset_consistent(), Some(true), "{preset}");
        }
    }

    #[test]
    fn a_second_crash_after_a_recovery_recovers_too() {
        for preset in ["mset", "mset-eadr"] {
            let mut s = machine(preset);
            writes(&mut s, 300);
            s.power_fail();
            assert!(s.recover().ok(), "{preset}: the first recovery");
            // The recovered lines are cached again; new fills evict some.
            writes(&mut s, 200);
            assert_eq!(s.mc.st.multiset_consistent(), Some(true), "{preset}");
            s.power_fail();
            let r = s.recover();
            assert!(r.ok(), "{preset}: the second recovery: {r:?}");
        }
    }

    #[test]
    fn an_orderly_shutdown_leaves_registers_and_table_for_an_empty_cache() {
        let mut s = machine("mset");
        writes(&mut s, 300);
        s.shutdown_clean().unwrap();
        assert!(s.mc.st.read_tracking_table().is_empty(), "the table says the cache is empty");
        // Power on, fill a few ways, crash: recovery must not count the
        // lines cached before the shutdown.
        writes(&mut s, 5);
        s.power_fail();
        let r = s.recover();
        assert!(r.ok(), "{r:?}");
    }

    #[test]
    fn a_replayed_line_or_a_skipped_write_hash_is_an_attack_at_recovery() {
        // Roll block 0 (its data with its MAC) back to an earlier write:
        // Osiris then finds an older counter, and the recomputed counter
        // block differs from the cached one the registers logged.
        let mut s = machine("mset");
        writes(&mut s, 12);
        let mac = s.mc.st.layout.mac_line_of(0).0;
        let earlier: Vec<(u64, [u8; 64])> = [0, mac].iter().map(|&a| (a, s.mc.st.nvm.peek(a).unwrap())).collect();
        writes(&mut s, 3);
        s.power_fail();
        for (a, b) in earlier {
            s.mc.st.nvm.image.put(a, b);
        }
        let r = s.recover();
        assert!(!r.ok() && r.scheme_failure.as_deref().is_some_and(|f| f.contains("multiset")), "{r:?}");
        // The control: evictions never reach Write Hash.
        let mut s = machine("mset-no-write-hash");
        writes(&mut s, 300);
        s.power_fail();
        let r = s.recover();
        assert!(r.scheme_failure.as_deref().is_some_and(|f| f.contains("does not match")), "{r:?}");
    }
}
