//! A whole simulated machine for the functional model: a front end over a
//! secure memory controller, with crash, drain and recovery.
//!
//! ```text
//!  apply(event) -> front end -> memory controller -> NVM
//!  power_fail(): front end drains (battery) -> metadata flush (battery)
//!                -> WPQ drains (ADR) -> volatile state lost
//!  recover():    tree rebuild where needed, compared with the root registers
//! ```

use crate::config::{BatteryDomain, SimConfig};
use crate::engine::controller::MemoryController;
use crate::engine::crypto::CryptoWork;
use crate::engine::hooks::{DrainWork, RecoveryReport};
use crate::engine::nvm::ByKind;
use crate::engine::store::CheckFailure;
use crate::persist::{Coherence, FrontEnd, Handover};
use crate::trace::event::{Event, Op};

#[derive(Clone, Debug)]
pub struct System {
    pub cfg: SimConfig,
    /// One front end per core (`core.count`), kept coherent by `coherence`.
    pub fronts: Vec<FrontEnd>,
    /// Which core's front end holds a block (SecPB IV-C c), with more than
    /// one core.
    pub coherence: Coherence,
    pub mc: MemoryController,
    pub events: u64,
    /// Volatile memory's contents (blocks stored by volatile stores): held
    /// by the cache hierarchy and lost on power failure, never ordered
    /// with the persistent stores nor checked by the crash oracle.
    pub volatile: rustc_hash::FxHashMap<u64, [u8; 64]>,
    /// Volatile stores reach NVM: memory has non-persistent regions
    /// (Triad-NVM), and the functional model writes each volatile store's
    /// block there at once, as if the caches evicted it, so that a crash
    /// finds non-persistent data and counters in every state the metadata
    /// caches leave them. The timing model keeps volatile lines in its
    /// caches instead.
    pub volatile_reaches_nvm: bool,
}

impl System {
    pub fn new(cfg: &SimConfig, seed: u64) -> Self {
        let mut s = System::with_controller(cfg, crate::scheme::controller(cfg, seed));
        for (core, f) in s.fronts.iter_mut().enumerate() {
            if let FrontEnd::Tep(t) = f {
                t.reseed(seed ^ (core as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            }
        }
        s
    }

    /// A machine around an existing memory controller (one powered on from
    /// a saved image), with an empty front end.
    pub fn with_controller(cfg: &SimConfig, mc: MemoryController) -> Self {
        System {
            cfg: cfg.clone(),
            fronts: (0..cfg.core.count.max(1) as usize).map(|c| FrontEnd::for_core(&cfg.persistence, &cfg.scheme.work(), c, 0)).collect(),
            coherence: Coherence::default(),
            mc,
            events: 0,
            volatile: Default::default(),
            volatile_reaches_nvm: !cfg.memory.persistent_regions.is_empty(),
        }
    }

    /// The core that issues `ev`: its thread, which must have a core.
    fn core_of(&self, ev: &Event) -> Result<usize, CheckFailure> {
        let c = ev.thread as usize;
        if c >= self.fronts.len() {
            return Err(CheckFailure::NoCore { thread: ev.thread, cores: self.fronts.len() });
        }
        Ok(c)
    }

    pub fn apply(&mut self, ev: &Event) -> Result<(), CheckFailure> {
        self.events += 1;
        let core = self.core_of(ev)?;
        match ev.op {
            Op::Store if ev.volatile => {
                let bytes = ev.value.to_le_bytes();
                self.store_volatile(core, ev.block(), (ev.addr % 64) as usize, &bytes[..ev.size as usize])
            }
            Op::Store => {
                let bytes = ev.value.to_le_bytes();
                if ev.log {
                    self.note_log_store(ev.addr);
                }
                self.claim_for_store(core, ev.block())?;
                self.fronts[core].store(&mut self.mc, ev.block(), (ev.addr % 64) as usize, &bytes[..ev.size as usize])
            }
            Op::Load if ev.volatile => self.read_volatile(core, ev.block()).map(|_| ()),
            Op::Load => self.read_on(core, ev.block()).map(|_| ()),
            Op::Fence | Op::Epoch => self.barrier(core, ev),
            Op::TxBegin | Op::TxCommit | Op::Compute => Ok(()),
        }
    }

    /// A persist barrier (fence or epoch boundary) of `core`. Under strict
    /// and epoch persistency the stores after it persist after every store
    /// before it, ACKed by the memory controller, so whatever a scheme
    /// deferred past those stores (Secon's background root updates)
    /// completes here; a persist point at or before the MC needs nothing
    /// more. Under TEP (Secon 3.3) the barrier only ends an epoch: the TEP
    /// manager waits for the ACKs its pairs and regular epochs need.
    fn barrier(&mut self, core: usize, _ev: &Event) -> Result<(), CheckFailure> {
        match &mut self.fronts[core] {
            FrontEnd::Tep(t) => t.barrier(&mut self.mc),
            _ => self.mc.await_all_acks(),
        }
    }

    /// A log store at `addr`. Software declares its undo log with
    /// `set_log_region` before its first transaction (Secon 3.3); the
    /// workloads' first log store is their log's header, at the region's
    /// start, so a log store outside every declared region declares
    /// `[addr, addr + LOG_BYTES)` (as `workload::log_regions_of` reads
    /// them), to the memory controller when its scheme uses it (Secon's
    /// counter-log colocation, 3.4.1).
    pub fn note_log_store(&mut self, addr: u64) {
        self.mc.note_log_store(addr, addr + crate::trace::event::LOG_BYTES);
    }

    /// Secon 3.3's `set_log_region(start, end)` for the thread on `core`:
    /// its TEP manager tells log writes by this region. Nothing to do
    /// under another persistency model.
    pub fn set_log_region(&mut self, core: usize, start: u64, end: u64) {
        if let Some(FrontEnd::Tep(t)) = self.fronts.get_mut(core) {
            t.set_log_region(start, end);
        }
    }

    /// What the cores' TEP managers did, summed (None without TEP).
    pub fn tep_stats(&self) -> Option<crate::persist::TepStats> {
        let mut any = None;
        for f in &self.fronts {
            if let FrontEnd::Tep(t) = f {
                any.get_or_insert_with(crate::persist::TepStats::default).add(&t.stats);
            }
        }
        any
    }

    /// Read `block` as core 0 sees it.
    pub fn read(&mut self, block: u64) -> Result<[u8; 64], CheckFailure> {
        self.read_on(0, block)
    }

    /// Read `block` as `core` sees it: if another core's front end holds
    /// it, that copy goes to memory first (SecPB IV-C c).
    pub fn read_on(&mut self, core: usize, block: u64) -> Result<[u8; 64], CheckFailure> {
        self.claim_for_load(core, block)?;
        self.fronts[core].load(&mut self.mc, block)
    }

    /// `core` is about to store to `block`: another core's persist-buffer
    /// entry for it migrates here, another core's dirty eADR line is
    /// written back (SecPB IV-C c). Nothing happens with one core.
    pub fn claim_for_store(&mut self, core: usize, block: u64) -> Result<Handover, CheckFailure> {
        if self.fronts.len() == 1 {
            return Ok(Handover::None);
        }
        self.coherence.claim(&mut self.fronts, &mut self.mc, core, block, true)
    }

    /// `core` is about to load `block`: another core's entry or dirty line
    /// for it is flushed to memory, which serves the data.
    pub fn claim_for_load(&mut self, core: usize, block: u64) -> Result<Handover, CheckFailure> {
        if self.fronts.len() == 1 {
            return Ok(Handover::None);
        }
        self.coherence.claim(&mut self.fronts, &mut self.mc, core, block, false)
    }

    /// A volatile store: into the block's volatile copy, which starts as
    /// memory's (a secure read) the first time the block is written.
    /// Volatile memory is one for all cores (shared, coherent).
    pub fn store_volatile(&mut self, core: usize, block: u64, offset: usize, bytes: &[u8]) -> Result<(), CheckFailure> {
        if !self.volatile.contains_key(&block) {
            let b = match self.read_on(core, block) {
                // Non-persistent memory a recovery started afresh reads as
                // unwritten (Triad-NVM III-C): the program's first store
                // finds a zeroed line, as the OS hands out zeroed pages.
                Err(CheckFailure::Unwritten { .. }) if !self.mc.layout().is_persistent(block) => [0; 64],
                r => r?,
            };
            self.volatile.insert(block, b);
        }
        let line = self.volatile.get_mut(&block).expect("inserted above");
        line[offset..offset + bytes.len()].copy_from_slice(bytes);
        if self.volatile_reaches_nvm {
            let line = *line;
            self.mc.write(block, &line)?;
        }
        Ok(())
    }

    /// The caches write a dirty volatile block back (the timing model's
    /// eviction): memory takes the block's volatile copy, which stays
    /// the one loads see.
    pub fn write_back_volatile(&mut self, block: u64) -> Result<(), CheckFailure> {
        match self.volatile.get(&block) {
            Some(&line) => self.mc.write(block, &line),
            None => Ok(()),
        }
    }

    /// A volatile load: the volatile copy if the block has one, else memory.
    pub fn read_volatile(&mut self, core: usize, block: u64) -> Result<[u8; 64], CheckFailure> {
        match self.volatile.get(&block) {
            Some(b) => Ok(*b),
            None => self.read_on(core, block),
        }
    }

    fn snapshot(&self) -> (CryptoWork, ByKind, ByKind) {
        (self.mc.st.crypto.work, self.mc.st.nvm.reads, self.mc.st.nvm.writes)
    }

    /// Run `f` on this machine as it is now but crashable: a copy of
    /// everything but the NVM image, which is lent to the copy under a
    /// journal and rolled back afterwards, so a crash point costs the
    /// blocks its drain and recovery change, not a copy of the image.
    pub fn at_crash<R>(&mut self, f: impl FnOnce(&mut System) -> R) -> R {
        let mut image = std::mem::take(&mut self.mc.st.nvm.image);
        let changes = image.pause_changes();
        let mut crashed = self.clone();
        crashed.mc.st.nvm.image = image;
        crashed.mc.st.nvm.image.begin_journal();
        let r = f(&mut crashed);
        crashed.mc.st.nvm.image.rollback();
        self.mc.st.nvm.image = std::mem::take(&mut crashed.mc.st.nvm.image);
        self.mc.st.nvm.image.resume_changes(changes);
        r
    }

    /// The power-fail work every scheme shares: the battery drains the
    /// front ends as `front_drain` says, and the metadata caches if
    /// `battery_flushes_metadata`.
    fn drain_front_and_metadata(&mut self, work: &mut DrainWork) {
        let w = self.mc.rules.work;
        let battery = self.cfg.persistence.battery.clone();
        // Every core's front end drains, in core order (SecPB IV-C c keeps
        // a block in one of them only, so the order moves no value).
        for f in &mut self.fronts {
            match f.crash_drain(&mut self.mc, &battery, w.front_drain) {
                Ok(n) => work.front_lines += n,
                Err(e) => work.failed(e),
            }
        }
        if w.battery_flushes_metadata {
            match self.mc.flush_metadata() {
                Ok(n) => work.metadata_lines = n,
                Err(e) => work.failed(e),
            }
        }
    }

    /// Power fails: volatile state is lost, battery-backed state drains.
    pub fn power_fail(&mut self) -> DrainWork {
        self.power_fail_observed(|_| {})
    }

    /// [`Self::power_fail`], with `drained` shown the machine once the
    /// battery has drained the front ends into the engine and before the
    /// volatile state is lost (what the crash loses is what is dirty then).
    pub fn power_fail_observed(&mut self, drained: impl FnOnce(&System)) -> DrainWork {
        let battery: BatteryDomain = self.cfg.persistence.battery.clone();
        let (c0, r0, w0) = self.snapshot();
        let mut work = DrainWork::default();
        // The battery drains the front ends as the scheme's description
        // says, and the metadata caches if it flushes them; then the
        // scheme deals with battery-backed state of its own.
        self.drain_front_and_metadata(&mut work);
        drained(self);
        self.mc.rules.scheme.on_power_fail(&self.mc.rules, &mut self.mc.st, &mut work);
        self.volatile.clear();
        self.mc.drop_volatile();
        if battery.wpq {
            work.wpq_entries = self.mc.st.nvm.drain_wpq(&self.mc.st.layout);
        } else {
            self.mc.st.nvm.discard_wpq();
        }
        if !battery.nv_registers {
            self.mc.st.chip.roots.clear();
        }
        self.mc.st.chip.crashed = true;
        let (c1, r1, w1) = self.snapshot();
        work.crypto = c1.since(&c0);
        work.nvm_reads = r1.since(&r0);
        work.nvm_writes = w1.since(&w0);
        work
    }

    /// Orderly shutdown: every buffered line is secured and written.
    pub fn shutdown_clean(&mut self) -> Result<(), CheckFailure> {
        for f in &mut self.fronts {
            f.flush_clean(&mut self.mc)?;
        }
        self.mc.flush_metadata()?;
        self.mc.rules.scheme.on_shutdown(&mut self.mc.st);
        self.volatile.clear();
        self.mc.drop_volatile();
        self.mc.st.nvm.drain_wpq(&self.mc.st.layout);
        self.mc.st.chip.crashed = false;
        Ok(())
    }

    /// The scheme's recovery procedure, after `power_fail`.
    pub fn recover(&mut self) -> RecoveryReport {
        let (c0, r0, w0) = self.snapshot();
        let mut rep = RecoveryReport { root_registers_lost: !self.cfg.persistence.battery.nv_registers, ..Default::default() };
        self.mc.rules.scheme.recover(&self.mc.rules, &mut self.mc.st, &mut rep);
        let (c1, r1, w1) = self.snapshot();
        rep.crypto = c1.since(&c0);
        rep.nvm_reads = r1.since(&r0);
        rep.nvm_writes = w1.since(&w0);
        rep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_preset;
    use crate::persist::FrontEnd;

    fn machine(preset: &str, battery: &str) -> System {
        let cfg = load_preset(preset, &["memory.capacity_bytes=67108864".into(), format!("persistence.battery.{battery}")]).unwrap();
        System::new(&cfg, 1)
    }

    /// Store `block + 1` into the first 8 bytes of each block.
    fn store_blocks(s: &mut System, blocks: impl Iterator<Item = u64>) {
        for b in blocks {
            s.apply(&Event::store(b * 64, 8, b + 1, false)).unwrap();
        }
    }

    fn holds_its_store(s: &mut System, b: u64) -> bool {
        s.mc.read(b).unwrap()[..8] == (b + 1).to_le_bytes()
    }

    #[test]
    fn the_persist_buffer_drains_only_when_battery_backed() {
        for backed in [true, false] {
            let mut s = machine("cobcm", &format!("persist_buffer={backed}"));
            // Ten stores stay below the 75 % watermark of 32 entries.
            store_blocks(&mut s, 0..10);
            let FrontEnd::PersistBuffer(pb) = &s.fronts[0] else { panic!("cobcm has a persist buffer") };
            assert_eq!(pb.occupancy(), 10);
            let d = s.power_fail();
            assert_eq!((d.front_lines, d.nvm_writes.data), if backed { (10, 10) } else { (0, 0) }, "backed: {backed}");
            assert_eq!(d.metadata_lines, 0, "cobcm's metadata caches are not battery-backed");
            assert!(s.recover().ok());
            for b in 0..10 {
                assert_eq!(holds_its_store(&mut s, b), backed, "block {b}, backed: {backed}");
            }
        }
    }

    #[test]
    fn metadata_caches_drain_only_when_battery_backed() {
        for backed in [true, false] {
            // Whether the metadata caches are battery-backed is the scheme's
            // rule: the battery-backed write-back scheme or its control.
            let mut s = machine(if backed { "secure-wb-battery" } else { "secure-wb-nobattery" }, "wpq=true");
            // One block in each of 20 pages: 20 dirty counter blocks.
            store_blocks(&mut s, (0..20).map(|p| p * 64));
            let dirty = s.mc.st.caches.dirty_lines().len() as u64;
            assert!(dirty >= 20, "{dirty} dirty metadata lines");
            let d = s.power_fail();
            assert_eq!((d.metadata_lines, d.nvm_writes.counter), if backed { (dirty, 20) } else { (0, 0) }, "backed: {backed}");
            assert!(s.mc.st.caches.dirty_lines().is_empty(), "the caches are lost after the drain");
            // Unbacked, the rebuilt tree disagrees with the root register.
            assert_eq!(s.recover().ok(), backed);
        }
    }

    #[test]
    fn volatile_stores_are_readable_but_lost_on_power_failure() {
        let mut s = machine("cobcm", "persist_buffer=true");
        let volatile = |b: u64| Event { volatile: true, ..Event::store(b * 64, 8, b + 1, false) };
        for b in 0..4 {
            s.apply(&volatile(b)).unwrap();
        }
        store_blocks(&mut s, 4..6);
        assert_eq!(s.read_volatile(0, 2).unwrap()[..8], 3u64.to_le_bytes(), "a volatile load sees the volatile store");
        let FrontEnd::PersistBuffer(pb) = &s.fronts[0] else { panic!("cobcm has a persist buffer") };
        assert_eq!(pb.occupancy(), 2, "only the persistent stores took buffer entries");
        let d = s.power_fail();
        assert_eq!(d.front_lines, 2);
        assert!(s.recover().ok());
        assert!(s.volatile.is_empty(), "volatile memory is gone after the power failure");
        assert_eq!(s.read_volatile(0, 2).unwrap(), [0; 64], "nothing of it reached NVM");
        assert!(holds_its_store(&mut s, 5));
    }

    #[test]
    fn the_wpq_drains_only_under_adr() {
        for backed in [true, false] {
            let mut s = machine("sp", &format!("wpq={backed}"));
            store_blocks(&mut s, 0..3);
            let queued = s.mc.st.nvm.wpq_len() as u64;
            assert!(queued >= 6, "data, counter and MAC writes are queued: {queued}");
            let image = s.mc.st.nvm.image.len();
            let d = s.power_fail();
            assert_eq!((d.wpq_entries, d.nvm_writes.total()), if backed { (queued, queued) } else { (0, 0) }, "backed: {backed}");
            assert_eq!((d.front_lines, d.metadata_lines), (0, 0));
            assert_eq!(s.mc.st.nvm.wpq_len(), 0);
            assert_eq!(s.mc.st.nvm.image.len() > image, backed);
        }
    }

    #[test]
    fn eadr_drains_every_dirty_cache_line_only_when_battery_backed() {
        for backed in [true, false] {
            let mut s = machine("secure-eadr", &format!("caches={backed}"));
            store_blocks(&mut s, 0..12);
            let d = s.power_fail();
            assert_eq!((d.front_lines, d.crypto.macs >= 12), (if backed { 12 } else { 0 }, backed), "backed: {backed}");
            assert!(s.recover().ok());
            for b in 0..12 {
                assert_eq!(holds_its_store(&mut s, b), backed, "block {b}, backed: {backed}");
            }
        }
    }

    #[test]
    fn root_registers_survive_only_when_non_volatile() {
        for backed in [true, false] {
            let mut s = machine("secure-wb-battery", &format!("nv_registers={backed}"));
            store_blocks(&mut s, 0..3);
            assert!(!s.mc.st.chip.roots.is_empty());
            s.power_fail();
            assert_eq!(s.mc.st.chip.roots.is_empty(), !backed);
            let rec = s.recover();
            assert_eq!((rec.root_registers_lost, rec.ok()), (!backed, backed));
        }
    }

    fn occupancy(s: &System, core: usize) -> usize {
        match &s.fronts[core] {
            FrontEnd::PersistBuffer(pb) => pb.occupancy(),
            f => panic!("not a persist buffer: {f:?}"),
        }
    }

    #[test]
    fn a_write_from_another_core_migrates_the_secpb_entry_and_a_read_flushes_it() {
        // SecPB IV-C c with two cores.
        let cfg = load_preset("cm", &["memory.capacity_bytes=67108864".into(), "core.count=2".into()]).unwrap();
        let mut s = System::new(&cfg, 1);
        assert_eq!(s.fronts.len(), 2);
        let on = |t: u8, b: u64, v: u64| Event::store(b * 64, 8, v, false).on_thread(t);
        s.apply(&on(0, 5, 1)).unwrap();
        let ctr_before = s.mc.st.crypto.work;
        // Core 1 writes the block core 0 holds: the entry moves, with its
        // early counter, pad and tree update (no new ones are made).
        s.apply(&on(1, 5, 2)).unwrap();
        assert_eq!((occupancy(&s, 0), occupancy(&s, 1)), (0, 1));
        assert_eq!(s.coherence.stats.migrations, 1);
        let w = s.mc.st.crypto.work.since(&ctr_before);
        assert_eq!((w.aes_blocks, w.tree_hashes), (0, 0), "the migrated entry keeps its value-independent metadata: {w:?}");
        // Core 0 reads it: core 1's entry goes to memory, and the read sees
        // the newest value.
        let got = s.read_on(0, 5).unwrap();
        assert_eq!(got[..8], 2u64.to_le_bytes());
        assert_eq!((occupancy(&s, 1), s.coherence.stats.flushes), (0, 1));
        assert_eq!(s.mc.read(5).unwrap()[..8], 2u64.to_le_bytes(), "the flush wrote the whole tuple to memory");
        // A crash drains every core's buffer: both cores' blocks survive.
        s.apply(&on(0, 6, 3)).unwrap();
        s.apply(&on(1, 7, 4)).unwrap();
        let d = s.power_fail();
        assert_eq!(d.front_lines, 2);
        assert!(s.recover().ok());
        assert_eq!(s.mc.read(6).unwrap()[..8], 3u64.to_le_bytes());
        assert_eq!(s.mc.read(7).unwrap()[..8], 4u64.to_le_bytes());
    }

    #[test]
    fn an_event_of_a_thread_without_a_core_is_an_error_not_a_panic() {
        let mut s = machine("cobcm", "persist_buffer=true");
        let e = s.apply(&Event::store(64, 8, 1, false).on_thread(3)).unwrap_err();
        assert_eq!(e.name(), "no-core");
        assert!(e.to_string().contains("core.count"), "{e}");
    }
}
