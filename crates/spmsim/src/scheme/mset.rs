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

use super::params::{in_range, one, yes, Completion, HashRegisters, MetadataPolicy, Need, ParamError, SchemeParams, SchemeWork, TreeType, WritePolicy};
use super::{Registered, Role};
use super::osiris::{default_stop_loss, stop_loss_due, stop_loss_in_range, trial_minor};
use super::tracking;
use crate::config::SimConfig;
use crate::engine::chip::{ChipState, SchemeNv};
use crate::engine::counter::{bmt_set_slot, SplitCounterBlock};
use crate::engine::crypto::{MultisetHash, MultisetHasher};
use crate::engine::hooks::{CacheInstall, NvChange, NvRegister, OwnState, RecoveryAttack, RecoveryReport, Scheme};
use crate::engine::layout::Layout;
use crate::engine::nvm::NvmImage;
use crate::engine::rules::Rules;
use crate::engine::shape::SchemeShape;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::IntegrityTree;
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::BTreeMap;

/// The multiset-hash scheme: Read/Write Hash registers over a write-back
/// metadata cache (Kubo et al.).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mset {
    /// eADR (4.6): the battery writes the metadata cache back at a crash,
    /// and recovery needs no Osiris.
    #[serde(default)]
    pub eadr: bool,
    /// Osiris's stop-loss N (ADR only; see `Osiris`).
    #[serde(default = "default_stop_loss")]
    pub stop_loss: u32,
    /// Evictions are added to Write Hash (false: the control
    /// `mset-no-write-hash`).
    #[serde(default = "yes")]
    pub write_hash: bool,
    /// How each register's unit takes its increments: pipelined (the
    /// default), or one at a time, each holding the unit for the whole
    /// hash latency (Table 1's 160 cycles).
    #[serde(default)]
    pub register_unit: RegisterUnit,
    /// The pipelined hash unit's initiation interval, in cycles.
    #[serde(default = "default_mset_hash_interval")]
    pub hash_interval_cycles: u32,
    /// The accumulate's cycles: one addition into the register.
    #[serde(default = "one")]
    pub accumulate_cycles: u32,
}

/// How the multiset-hash registers' units take their increments. Table 1
/// gives 160 cycles "to compute or increment" a multiset hash and says
/// nothing of throughput. MSet-Add-Hash (Clarke et al., 4.2) hashes each
/// element on its own and adds the hashes modulo 2^m: hardware of its kind
/// pipelines the hash, and only the addition into the register, which
/// needs the sum before it, is serial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RegisterUnit {
    /// A pipelined MD5 unit, a new element every `hash_interval_cycles`,
    /// then the element's hash added into the register in
    /// `accumulate_cycles`, one addition at a time.
    #[default]
    Pipelined,
    /// Each increment holds the register's unit for the whole hash
    /// latency, one after another.
    OneAtATime,
}

/// The pipelined unit's initiation interval, from the hash the paper uses
/// (4.2: "one MD5 operation" per element, [28]): an element is a 64 B line
/// and its address, two 64-byte MD5 blocks of 64 steps each, so 128 steps
/// in Table 1's 160 cycles, 1.25 cycles a step; a fully unrolled MD5 core,
/// a pipeline stage per step, takes a new element every stage: 2 cycles,
/// rounded up to whole cycles. The accumulate's 1 cycle is one 128-bit
/// addition (MSet-Add-Hash's sum modulo 2^128).
fn default_mset_hash_interval() -> u32 {
    2
}

impl Default for Mset {
    fn default() -> Self {
        Mset {
            eadr: false,
            stop_loss: default_stop_loss(),
            write_hash: true,
            register_unit: RegisterUnit::default(),
            hash_interval_cycles: default_mset_hash_interval(),
            accumulate_cycles: one(),
        }
    }
}

impl SchemeParams for Mset {
    fn name(&self) -> &'static str {
        "mset"
    }
    /// Everything written back (4.3); with eADR the battery flushes it.
    /// 4.3: a write updates its counter in the cache and leaves the tree
    /// alone (a cached line acts as a root): complete with its data and
    /// MAC; write-backs and register increments run in the background.
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteBack), self.eadr, false).completing(Completion::Tuple)
    }
    fn validate(&self) -> Result<(), ParamError> {
        stop_loss_in_range(self.stop_loss)?;
        in_range("scheme.hash_interval_cycles", self.hash_interval_cycles as u64, 1, 1 << 16)?;
        in_range("scheme.accumulate_cycles", self.accumulate_cycles as u64, 1, 1 << 16)
    }
    /// Read Hash and Write Hash (4.2), each with its own unit.
    fn hash_registers(&self) -> Option<HashRegisters> {
        Some(match self.register_unit {
            RegisterUnit::Pipelined => HashRegisters::Pipelined { interval: self.hash_interval_cycles, accumulate: self.accumulate_cycles },
            RegisterUnit::OneAtATime => HashRegisters::OneAtATime,
        })
    }
    fn needs(&self) -> Vec<Need> {
        vec![
            Need::Tree { tree: TreeType::Bmt, no_onchip_levels: true, why: "updates a Bonsai Merkle tree lazily" },
            Need::UnifiedMetadataCache { why: "tracks one unified metadata cache" },
            Need::MacInDataLine { why: "keeps data MACs with the data (Osiris's trials read them)" },
        ]
    }
}

impl Registered for Mset {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
    fn build(&self, _cfg: &SimConfig, seed: u64) -> Box<dyn Scheme> {
        Box::new(MsetRuntime::new(*self, seed))
    }
    /// The tracking table, one entry per way of the unified cache; every
    /// line entering, changing in or leaving the cache is logged into the
    /// registers (4.2, the cache hooks); the tree is updated lazily (4.3).
    fn shape(&self, _tree: &Layout, cfg: &SimConfig) -> SchemeShape {
        let reserved_recovery_lines = super::unified_metadata_cache_lines(cfg);
        SchemeShape { reserved_recovery_lines, write_back_hashes_into_parent: true, calls_cache_hooks: true, ..SchemeShape::default() }
    }
}

/// Read Hash: every line that entered the metadata cache or a new value a
/// cached line took; Write Hash: every line that left it or an old value a
/// cached line gave up. Their difference is the cache's contents (4.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MsetRegisters {
    pub read: MultisetHash,
    pub write: MultisetHash,
}

/// The scheme's non-volatile state: the two on-chip registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MsetNv {
    pub registers: MsetRegisters,
}

/// The registers of `chip`, if a scheme keeps them.
pub fn registers(chip: &ChipState) -> Option<MsetRegisters> {
    chip.scheme.get::<MsetNv>().map(|n| n.registers)
}

/// The registers' check (4.2): every cached line added to Write Hash gives
/// Read Hash. None when no scheme of `st` keeps the registers.
pub fn registers_consistent(st: &MetaStore) -> Option<bool> {
    let r = registers(&st.chip)?;
    let h = MultisetHasher::derive(st.chip.seed);
    let mut cached = r.write;
    for (_, c) in st.caches.all() {
        for (a, l) in c.entries() {
            h.add(&mut cached, a, &l.bytes);
        }
    }
    Some(cached == r.read)
}

/// Every line that enters, changes in or leaves the metadata caches,
/// logged into Read Hash and Write Hash under the chip's multiset key, and
/// every fill written to its way's tracking entry. The scheme's runtime
/// holds one; on its own it is a runtime that does nothing else, which
/// the tests run beside any write-back scheme's rules.
#[derive(Clone, Debug)]
pub struct MultisetLog {
    hasher: MultisetHasher,
    /// Lines leaving a cache are added to Write Hash (false: the control
    /// `mset-no-write-hash`).
    log_evictions: bool,
    /// Fills write the way's tracking entry.
    track_fills: bool,
    /// Logging is on (off while recovery puts back lines the registers
    /// already count, and once no recovery follows).
    on: Cell<bool>,
}

impl MultisetLog {
    pub fn new(seed: u64, log_evictions: bool, track_fills: bool) -> Self {
        MultisetLog { hasher: MultisetHasher::derive(seed), log_evictions, track_fills, on: Cell::new(true) }
    }

    fn log(&self, st: &mut MetaStore, read: bool, addr: u64, bytes: &[u8; 64]) {
        if !self.on.get() {
            return;
        }
        let regs = &mut st.chip.scheme.get_mut::<MsetNv>().registers;
        match read {
            true => {
                self.hasher.add(&mut regs.read, addr, bytes);
                st.crypto.work.read_hash_adds += 1;
            }
            false => {
                self.hasher.add(&mut regs.write, addr, bytes);
                st.crypto.work.write_hash_adds += 1;
            }
        }
    }

    fn install(&self, st: &mut MetaStore, ev: &CacheInstall) {
        if let Some(old) = ev.replaced {
            self.log(st, false, ev.addr, &old);
        }
        if let Some((v, b, _)) = ev.evicted {
            if self.log_evictions {
                self.log(st, false, v, &b);
            }
        }
        self.log(st, true, ev.addr, &ev.bytes);
        if let (Some(w), true, true) = (ev.filled_way, self.track_fills, self.on.get()) {
            tracking::write_entry(st, w, Some(ev.addr));
        }
    }

    fn update(&self, st: &mut MetaStore, addr: u64, old: &[u8; 64], new: &[u8; 64]) {
        self.log(st, false, addr, old);
        self.log(st, true, addr, new);
    }
}

impl Scheme for MultisetLog {
    fn on_cache_install(&self, st: &mut MetaStore, ev: &CacheInstall) {
        self.install(st, ev);
    }
    fn on_cache_update(&self, st: &mut MetaStore, addr: u64, old: &[u8; 64], new: &[u8; 64]) {
        self.update(st, addr, old, new);
    }
    fn on_cache_remove(&self, st: &mut MetaStore, addr: u64, bytes: &[u8; 64]) {
        self.log(st, false, addr, bytes);
    }
    /// The registers exist from power-on (empty on a new chip).
    fn adopt(&self, chip: &mut ChipState) -> Result<(), String> {
        chip.scheme.adopt::<MsetNv>()?;
        chip.scheme.get_mut::<MsetNv>();
        Ok(())
    }
}

/// The scheme's runtime: its parameters and its registers' logging.
#[derive(Clone, Debug)]
pub struct MsetRuntime {
    p: Mset,
    log: MultisetLog,
}

fn bmt(tree: &IntegrityTree) -> &crate::engine::tree::BonsaiMerkleTree {
    tree.as_bmt().expect("the multiset-hash scheme's configuration requires a BMT")
}

impl MsetRuntime {
    pub fn new(p: Mset, seed: u64) -> Self {
        MsetRuntime { p, log: MultisetLog::new(seed, p.write_hash, true) }
    }

    /// Write `bytes` of line `addr` to NVM and hash it into its parent (in
    /// the cache, fetched and verified if need be) or its root register.
    fn write_back(&self, r: &Rules, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        st.nvm.write(&st.layout, addr, bytes);
        let Some((level, index)) = st.layout.meta_pos(addr) else { return Ok(()) };
        let t = bmt(&r.tree);
        let h = st.crypto.bmt_hash(&bytes);
        match st.layout.parent_of(level, index) {
            None => {
                st.chip.roots.set(index, h);
                st.root_updates += 1;
            }
            Some((pl, pi, slot)) => {
                let pa = st.layout.meta_addr(pl, pi);
                let e = t.entry_for(level, h);
                st.update(r, pa, |p| bmt_set_slot(p, slot, e))?;
                st.metadata_dirtied(r, pa)?;
            }
        }
        Ok(())
    }
}

impl Scheme for MsetRuntime {
    /// The registers exist from power-on (empty on a new chip).
    fn adopt(&self, chip: &mut ChipState) -> Result<(), String> {
        chip.scheme.adopt::<MsetNv>()?;
        chip.scheme.get_mut::<MsetNv>();
        Ok(())
    }

    fn on_cache_install(&self, st: &mut MetaStore, ev: &CacheInstall) {
        self.log.install(st, ev);
    }

    fn on_cache_update(&self, st: &mut MetaStore, addr: u64, old: &[u8; 64], new: &[u8; 64]) {
        self.log.update(st, addr, old, new);
    }

    fn on_cache_remove(&self, st: &mut MetaStore, addr: u64, bytes: &[u8; 64]) {
        self.log.log(st, false, addr, bytes);
    }

    /// The oracle's reads after a recovery are followed by no other: the
    /// registers need not log the lines they cache (reads do not depend on
    /// them).
    fn no_recovery_follows(&self) {
        self.log.on.set(false);
    }

    /// The registers are read by recovery alone.
    fn nv_change(&self, _st: &MetaStore, _before: &SchemeNv, _after: &SchemeNv) -> NvChange {
        NvChange::Unseen
    }

    fn recovery_attack_names(&self) -> &'static [&'static str] {
        tracking::MSET
    }

    /// A dirty counter block in the cache: recovery then recomputes it by
    /// Osiris's trials, and its parent from NVM.
    fn recovery_state_pending(&self, st: &MetaStore, _volatile_data: bool) -> bool {
        let layout = &st.layout;
        st.caches.dirty_lines().iter().any(|(a, _)| matches!(layout.meta_pos(*a), Some((0, _))))
    }

    fn recovery_attacks(&self, _r: &Rules, st: &MetaStore, earlier: &NvmImage) -> Vec<RecoveryAttack> {
        tracking::attacks(st, earlier, tracking::MSET)
    }

    fn own_state(&self) -> Vec<OwnState> {
        vec![OwnState::OnChip {
            name: "multiset-registers-tamper",
            why: "Read Hash and Write Hash are on-chip non-volatile registers (Kubo et al. 4.2)",
        }]
    }

    fn on_counter_update(&self, r: &Rules, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let addr = st.layout.meta_addr(0, index);
        st.install(r, addr, bytes, true);
        st.metadata_dirtied(r, addr)?;
        // Osiris's stop-loss (ADR), Osiris's own rule: the block goes to
        // NVM, hashed into its parent like any write-back, once a minor
        // crossed a multiple of N since NVM's copy.
        let n = self.p.stop_loss as u64;
        if self.p.eadr || n == 0 {
            return Ok(());
        }
        if stop_loss_due(st, addr, &bytes, n) {
            let layout = &st.layout;
            if let Some(b) = st.caches.for_addr(layout, addr).take_dirty(addr) {
                self.write_back(r, st, addr, b)?;
            }
        }
        Ok(())
    }

    fn on_metadata_evict(&self, r: &Rules, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        self.write_back(r, st, addr, bytes)
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
            if self.p.write_hash {
                self.log.log(st, false, a, &b);
            }
            if let Some(w) = st.caches.for_addr(&layout, a).way_of(a) {
                tracking::write_entry(st, w, None);
            }
        }
    }

    /// 4.2: Read Hash and Write Hash, 128 bits each, beside the root.
    fn onchip_nv_registers(&self) -> Vec<NvRegister> {
        vec![NvRegister { what: "Read Hash and Write Hash (128 bits each)", bytes: 32 }]
    }

    fn recover(&self, r: &Rules, st: &mut MetaStore, rep: &mut RecoveryReport) {
        if !r.secure {
            return;
        }
        let t = bmt(&r.tree);
        let layout = st.layout.clone();
        // 1. The tracking table: what the cache held (AGIT).
        let table = tracking::read_table(st);
        let listed: BTreeMap<(u32, u64), u64> =
            table.iter().map(|&(_, a)| (layout.meta_pos(a).expect("listed lines are metadata"), a)).collect();
        // 2. Recompute each listed line, lowest level first: counters by
        // Osiris (ADR), nodes from their children as NVM holds them.
        let per = layout.blocks_per_counter_block();
        let trials = match self.p.stop_loss {
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
                if !self.p.eadr {
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
        rep.add_count("stale_restored", recomputed.len() as u64);
        // 3. Write Hash + the recomputed lines must be Read Hash (4.5).
        let regs = st.chip.scheme.get_mut::<MsetNv>().registers;
        let mut write = regs.write;
        for (a, b) in &recomputed {
            self.log.hasher.add(&mut write, *a, b);
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
        let logging = self.log.on.replace(false);
        let mut ways: BTreeMap<u64, u64> = BTreeMap::new();
        for (a, b) in recomputed {
            st.install(r, a, b, true);
            if let Some(w) = st.caches.for_addr(&layout, a).way_of(a) {
                ways.insert(w as u64, a);
            }
        }
        self.log.on.set(logging);
        // A line may come back to another way than the one listing it: the
        // table is rewritten where it differs, so that a later fill of a
        // way replaces the entry of the line it evicts.
        let listed_ways: BTreeMap<u64, u64> = table.into_iter().collect();
        for w in listed_ways.keys().chain(ways.keys()).copied().collect::<std::collections::BTreeSet<u64>>() {
            if listed_ways.get(&w) != ways.get(&w) {
                tracking::write_entry(st, w as usize, ways.get(&w).copied());
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
            assert_eq!(super::registers_consistent(&s.mc.st), Some(true), "{preset}");
            let want = s.mc.read(0).unwrap();
            s.power_fail();
            let r = s.recover();
            assert!(r.ok(), "{preset}: {r:?}");
            assert!(r.count("stale_restored") > 0, "{preset}: the tracked lines came back");
            assert_eq!(super::registers_consistent(&s.mc.st), Some(true), "{preset}: after recovery");
            assert_eq!(s.mc.read(0).unwrap(), want, "{preset}");
            // And the machine runs on.
            writes(&mut s, 30);
            assert_eq!(super::registers_consistent(&s.mc.st), Some(true), "{preset}");
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
            assert_eq!(super::registers_consistent(&s.mc.st), Some(true), "{preset}");
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
        assert!(super::tracking::read_table(&mut s.mc.st).is_empty(), "the table says the cache is empty");
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
