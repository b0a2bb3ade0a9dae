//! The timing model: trace-driven, in cycles of the core clock, driven by
//! the functional model (which decides every hit, miss and NVM access).
//!
//! ```text
//!  event --(gap instrs)--> core: dispatch at issue width, ROB window, in-order retire
//!    load  -> L1D/L2/L3 tags -> MC read (data || counter -> OTP)         [timing: latency]
//!    store -> retire -> store buffer -> release in order -> persist path  [timing: unblock]
//!  persist path:
//!    SecPB (BBB, NoGap..COBCM): 2-cycle access + early work -> unblock;
//!        high watermark -> drain oldest -> MC late work -> WPQ slot frees the entry
//!    SP: every store's full memory tuple at the MC before the next store persists
//! ```
//! Each parameter stands for a structure of SecPB Table I (see the config
//! docs); nothing is fitted to the paper's results.

mod branch;
mod core;
mod ooo;
mod pcm;
mod persist;
mod stats;
mod tags;
mod work;

pub use ooo::OooStats;
pub use stats::{Roi, RunStats, WarmupStats};

use crate::config::{PersistPoint, SimConfig};
use crate::store::CheckFailure;
use crate::system::System;
use crate::workload::{Event, Op, Warmup};
use core::Core;
use pcm::Pcm;
use persist::{Ctx, PersistPath, ReleasedStore};
use stats::Counters;
use std::sync::atomic::{AtomicBool, Ordering};
use tags::TagCache;
use work::WorkRecord;

pub struct Latencies {
    pub l1: u64,
    pub l2: u64,
    pub l3: u64,
    pub nvm_read: u64,
    pub mdc: u64,
    pub mac: u64,
    /// Cycles between the starts of two pipelined BMT updates.
    pub hash_interval: u64,
    pub aes: u64,
    pub pb_access: u64,
}

pub struct TimingSim {
    pub sys: System,
    core: Core,
    l1: TagCache,
    l2: TagCache,
    l3: TagCache,
    pcm: Pcm,
    path: PersistPath,
    lat: Latencies,
    /// A store whose later pieces may still come (see [`OpenStore`]).
    open_store: Option<OpenStore>,
    pub stats: RunStats,
    /// The warm-up before the region of interest, if the run has one.
    warmup: Option<Warmup>,
    /// The components' counters when the region of interest began (zero
    /// without a warm-up).
    roi_start: Counters,
    /// The record of the operation being priced (buffers reused).
    rec: Option<Box<WorkRecord>>,
    /// The `ooo` model's counts when the region of interest began.
    ooo_start: Option<OooStats>,
}

/// A store to one block that has entered the store buffer but not yet the
/// persist path. A trace splits a wide store (a 32-byte vector store) into
/// 8-byte pieces flagged `same_instruction`; in hardware it is one store,
/// one store-buffer entry and one write into the SecPB entry (SecPB IV-A
/// counts persists per store, not per byte), so the pieces that continue
/// it in the same block are folded in before it persists.
struct OpenStore {
    block: u64,
    /// To volatile memory: it goes to L1 only, not down the persist path.
    volatile: bool,
    off: usize,
    len: usize,
    /// The stored bytes, at their offsets in the block.
    bytes: [u8; 64],
    release: u64,
    data_ready: u64,
}

fn cycles(ns: f64, ghz: f64) -> u64 {
    (ns * ghz).round().max(1.0) as u64
}

impl TimingSim {
    /// A timed machine, or why the configuration cannot be timed (a
    /// scheme whose mechanism the timing model has no pricing rule for).
    pub fn new(cfg: &SimConfig, seed: u64) -> Result<Self, String> {
        let path = PersistPath::new(cfg)?;
        let mut sys = System::new(cfg, seed);
        sys.mc.st.nvm.log_writes = true;
        let ghz = cfg.core.frequency_ghz;
        let c = &cfg.caches;
        let lat = Latencies {
            l1: c.l1d.latency_cycles as u64,
            l2: c.l2.latency_cycles as u64,
            l3: c.l3.latency_cycles as u64,
            nvm_read: cycles(cfg.nvm.read_latency_ns, ghz),
            mdc: cfg.security.metadata_cache_latency_cycles as u64,
            mac: cfg.security.mac_latency_cycles as u64,
            hash_interval: cfg.security.hash_pipeline_interval_cycles as u64,
            aes: cfg.security.aes_latency_cycles as u64,
            pb_access: match &cfg.persistence.point {
                PersistPoint::PersistBuffer { access_latency_cycles, .. } => *access_latency_cycles as u64,
                _ => 0,
            },
        };
        Ok(TimingSim {
            core: Core::new(&cfg.core),
            l1: TagCache::new(c.l1d.capacity_bytes, c.l1d.ways),
            l2: TagCache::new(c.l2.capacity_bytes, c.l2.ways),
            l3: TagCache::new(c.l3.capacity_bytes, c.l3.ways),
            pcm: Pcm::with_model(
                cfg.nvm.write_model,
                cfg.nvm.banks,
                cycles(cfg.nvm.read_latency_ns, ghz),
                cycles(cfg.nvm.write_latency_ns, ghz),
                cfg.persistence.wpq_entries,
                cycles(cfg.nvm.burst_ns, ghz),
                cfg.nvm.write_queue_entries,
            ),
            path,
            lat,
            open_store: None,
            stats: RunStats::new(cfg),
            sys,
            warmup: None,
            roi_start: Counters::default(),
            rec: Some(Box::default()),
            ooo_start: None,
        })
    }

    /// A timed machine for `workload`: under `core.model = "ooo"` its core
    /// schedules the instruction stream beside the workload's trace (an
    /// error if it has none).
    pub fn for_workload(cfg: &SimConfig, seed: u64, workload: &crate::workload::WorkloadKind) -> Result<Self, String> {
        let mut sim = TimingSim::new(cfg, seed)?;
        if cfg.core.model == crate::config::CoreModel::Ooo {
            let path = workload.instruction_stream()?;
            let reader = crate::trace::insn::InsnReader::open(&path).map_err(|e| e.to_string())?;
            let borrowed = matches!(workload, crate::workload::WorkloadKind::Synthetic(_));
            sim.core.set_ooo(ooo::Ooo::new(&cfg.core, reader, borrowed));
        }
        Ok(sim)
    }

    /// Run the first `instructions` (at least; up to the end of the
    /// instruction that reaches them) as a warm-up: through the whole
    /// model, outside the statistics ([`Warmup`]).
    pub fn with_warmup(mut self, instructions: u64) -> Self {
        self.warmup = (instructions > 0).then(|| Warmup::new(instructions));
        self
    }

    /// The cycle the run has reached: every instruction so far retired and
    /// every store so far persistent.
    fn now(&self) -> u64 {
        self.core.end_time().max(self.path.last_persist())
    }

    fn counters(&self, time: u64) -> Counters {
        Counters::of(time, &self.sys, [&self.l1, &self.l2, &self.l3], &self.pcm)
    }

    /// The warm-up is over: its last store goes down the persist path, the
    /// components' counters are read, and the run loop's own counts
    /// restart, so the statistics cover the region of interest alone.
    fn end_warmup(&mut self) -> Result<(), CheckFailure> {
        self.close_store()?;
        let now = self.now();
        self.roi_start = self.counters(now);
        self.ooo_start = self.core.ooo_stats();
        let warm = std::mem::take(&mut self.stats.roi);
        self.stats.warmup = Some(WarmupStats { instructions: warm.core.instructions, cycles: now });
        Ok(())
    }

    /// The warm-up asked for, if the events so far did not complete it.
    pub fn unfinished_warmup(&self) -> Option<u64> {
        self.warmup.filter(|w| !w.is_over()).map(|w| w.instructions())
    }

    /// Latency of bringing `block` to L1 at time `t` (filling every level).
    fn fetch(&mut self, t: u64, block: u64) -> Result<u64, CheckFailure> {
        if self.l1.access(block) {
            return Ok(self.lat.l1);
        }
        if self.l2.access(block) {
            return Ok(self.lat.l2);
        }
        if self.l3.access(block) {
            return Ok(self.lat.l3);
        }
        // Memory: the data read and the counter fetch run in parallel; the
        // OTP follows the counter; MAC and tree checks are speculative
        // (SecPB V-A), so they cost bandwidth but not latency.
        let mark = WorkRecord::start(&mut self.sys.mc);
        let value = self.sys.mc.read(block)?;
        debug_assert_eq!(value, self.sys.mc.peek_plaintext(block), "a read and a peek of memory disagree");
        let mut rec = self.rec.take().unwrap_or_default();
        rec.fill(&mut self.sys.mc, mark, block);
        let t0 = t + self.lat.l3;
        // Dirty metadata the read evicted is written back in the background
        // (with its tree work: a lazy SIT write-back MACs the node).
        PersistPath::queue_writes(&mut self.pcm, t0, &rec.writes);
        self.path.background_tree_work(&self.lat, t0, &rec);
        let data = self.pcm.read(t0, block);
        let mut done = data;
        if self.sys.mc.secure {
            // The counter fetch runs beside the data read; its tree checks
            // are speculative, as are the MAC line reads.
            let mut ctr = t0 + self.lat.mdc;
            for &a in &rec.counter_reads {
                ctr = ctr.max(self.pcm.read(t0, a));
            }
            for &a in rec.mac_reads.iter().chain(&rec.tree_reads) {
                self.pcm.read(t0, a);
            }
            done = done.max(ctr + self.lat.aes) + 1;
        }
        self.rec = Some(rec);
        Ok(done - t)
    }

    /// The open store, if any, goes down the persist path.
    fn close_store(&mut self) -> Result<(), CheckFailure> {
        let Some(o) = self.open_store.take() else { return Ok(()) };
        if o.volatile {
            // Volatile memory (issue 13): the store buffer writes the store
            // into L1 once the line is owned (write-allocate), one store a
            // cycle; no persist buffer entry, no tuple, no persist order.
            // The line's later write-back from L3 is not priced: counted
            // on the 14 suite programs' quick points (cm, heap policy), no
            // dirty volatile line left L3 in any of them (the stack stays
            // far below L3's capacity), so it would move no result.
            self.sys.store_volatile(o.block, o.off, &o.bytes[o.off..o.off + o.len])?;
            self.core.store_released(o.release, o.release.max(o.data_ready) + 1);
            self.stats.roi.core.volatile_stores += 1;
            return Ok(());
        }
        // The rest of the block comes from memory only when the persist
        // path takes a whole block (a new SecPB entry, an SP write).
        let mut fill = if self.path.needs_whole_block(&self.sys, o.block) { self.sys.mc.peek_plaintext(o.block) } else { [0; 64] };
        fill[o.off..o.off + o.len].copy_from_slice(&o.bytes[o.off..o.off + o.len]);
        let cx = Ctx { pcm: &mut self.pcm, lat: &self.lat, stats: &mut self.stats };
        let store = ReleasedStore { release: o.release, data_ready: o.data_ready, block: o.block, bytes: o.off..o.off + o.len, fill };
        let unblock = self.path.store(&mut self.sys, cx, store)?;
        self.core.store_released(o.release, unblock);
        self.stats.roi.core.stores += 1;
        Ok(())
    }

    fn apply(&mut self, ev: &Event) -> Result<(), CheckFailure> {
        let (block, off, size) = (ev.block(), (ev.addr % 64) as usize, ev.size as usize);
        if ev.op == Op::Store && ev.same_instruction {
            if let Some(o) = &mut self.open_store {
                if o.block == block && o.off + o.len == off && o.volatile == ev.volatile {
                    // The next piece of the open store: its bytes only.
                    o.len += size;
                    o.bytes[off..off + size].copy_from_slice(&ev.value.to_le_bytes()[..size]);
                    self.stats.roi.core.instructions += ev.instructions();
                    return Ok(());
                }
            }
        }
        self.close_store()?;
        let t_disp = self.core.dispatch(ev.gap, ev.instructions());
        match ev.op {
            Op::Load => {
                let lat = self.fetch(t_disp, block)?;
                self.core.complete_memop(t_disp, lat);
                self.stats.roi.core.loads += 1;
            }
            Op::Store => {
                // The fetch for ownership starts at dispatch (address known).
                let fetch = self.fetch(t_disp, block)?;
                let data_ready = t_disp + fetch;
                let retire = self.core.retire_store(t_disp, &mut self.stats);
                let release = self.core.release_time(retire);
                let mut bytes = [0; 64];
                bytes[off..off + size].copy_from_slice(&ev.value.to_le_bytes()[..size]);
                self.open_store = Some(OpenStore { block, volatile: ev.volatile, off, len: size, bytes, release, data_ready });
            }
            Op::Fence | Op::Epoch => {
                let persisted = self.path.persist_barrier();
                self.core.fence(t_disp, persisted);
            }
            Op::TxBegin | Op::TxCommit | Op::Compute => {}
        }
        self.stats.roi.core.instructions += ev.instructions();
        Ok(())
    }

    /// Run a stream of events to its end.
    pub fn run<I: IntoIterator<Item = Event>>(&mut self, events: I) -> Result<(), String> {
        self.run_until(events, &AtomicBool::new(false)).map_err(|e| e.to_string())
    }

    /// Run a stream of events to its end, or until `stop` is set (by
    /// another thread: a Ctrl-C handler, a front end that gave up). The
    /// flag is read once every [`STOP_CHECK_EVENTS`] events, so the check
    /// costs nothing beside an event's crypto, yet a stop lands within
    /// milliseconds.
    pub fn run_until<I: IntoIterator<Item = Event>>(&mut self, events: I, stop: &AtomicBool) -> Result<(), SimError> {
        for (i, ev) in events.into_iter().enumerate() {
            if i % STOP_CHECK_EVENTS == 0 && stop.load(Ordering::Relaxed) {
                return Err(SimError::Cancelled);
            }
            if self.warmup.as_mut().is_some_and(|w| !w.is_over() && !w.takes(&ev)) {
                self.end_warmup().map_err(|e| SimError::Failed(format!("the last store of the warm-up: integrity check failed: {e}")))?;
            }
            self.apply(&ev).map_err(|e| SimError::Failed(format!("event {} ({}): integrity check failed: {e}", i + 1, ev.describe())))?;
            if self.core.ooo_exhausted() {
                // A synthetic profile's borrowed stream ran out: the run
                // ends here (simulate_after_warmup notes it).
                break;
            }
        }
        if let Some(e) = self.core.ooo_error() {
            return Err(SimError::Invalid(format!("core.model = \"ooo\": {e}")));
        }
        self.close_store().map_err(|e| SimError::Failed(format!("the last store: integrity check failed: {e}")))
    }

    /// Close the run: final cycle count, rates, the drain work of a crash
    /// at the end.
    pub fn finish(mut self) -> RunStats {
        let end = self.counters(self.now());
        let mut s = std::mem::replace(&mut self.stats, RunStats::new(&self.sys.cfg));
        s.finalize(&end, &self.roi_start, &self.pcm);
        s.roi.core.ooo = self.core.ooo_stats().map(|o| o.minus(&self.ooo_start.unwrap_or_default()));
        // The run is over, so the crash happens to the system itself rather
        // than to a copy (a copy of a large image costs more than the run's
        // tail).
        let mut crashed = self.sys;
        s.crash_at_end = Some(crashed.power_fail());
        s
    }
}

/// Events between two reads of a run's stop flag.
pub const STOP_CHECK_EVENTS: usize = 4096;

/// Why a timed run ended without statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// Bad input, not a simulator fault: a preset, key or value, a
    /// workload that cannot be opened or read (bad trace, an address beyond
    /// the memory).
    Invalid(String),
    /// The simulation itself failed (an integrity check on the way).
    Failed(String),
    /// The stop flag was set.
    Cancelled,
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Invalid(m) | SimError::Failed(m) => f.write_str(m),
            SimError::Cancelled => f.write_str("cancelled"),
        }
    }
}

impl std::error::Error for SimError {}

/// Convenience: simulate `instructions` of a workload.
pub fn simulate(cfg: &SimConfig, workload: &crate::workload::WorkloadKind, instructions: u64, seed: u64) -> Result<RunStats, String> {
    simulate_until(cfg, workload, instructions, seed, &AtomicBool::new(false)).map_err(|e| e.to_string())
}

/// [`simulate`], stopping early with [`SimError::Cancelled`] once `stop`
/// is set.
pub fn simulate_until(
    cfg: &SimConfig,
    workload: &crate::workload::WorkloadKind,
    instructions: u64,
    seed: u64,
    stop: &AtomicBool,
) -> Result<RunStats, SimError> {
    simulate_after_warmup(cfg, workload, 0, instructions, seed, stop)
}

/// [`simulate_until`] after a warm-up of `warmup` instructions (0: none):
/// the warm-up runs through the whole model, the statistics cover the
/// `instructions` after it (ChampSim's `--warmup-instructions`).
pub fn simulate_after_warmup(
    cfg: &SimConfig,
    workload: &crate::workload::WorkloadKind,
    warmup: u64,
    instructions: u64,
    seed: u64,
    stop: &AtomicBool,
) -> Result<RunStats, SimError> {
    let mut stream = workload.stream_after_warmup(seed, warmup, instructions, cfg.memory.capacity_bytes).map_err(SimError::Invalid)?;
    let mut sim = TimingSim::for_workload(cfg, seed, workload).map_err(SimError::Invalid)?.with_warmup(warmup);
    sim.run_until(&mut stream, stop)?;
    stream.finish().map_err(SimError::Invalid)?;
    if let Some(ran) = sim.unfinished_warmup() {
        return Err(SimError::Invalid(format!(
            "the workload ended after {ran} instructions, within the warm-up of {warmup} (--warmup-instructions); no region of interest is left"
        )));
    }
    let exhausted = sim.core.ooo_exhausted();
    let mut s = sim.finish();
    s.workload_notes = stream.notes();
    if exhausted {
        s.workload_notes.push(format!(
            "the borrowed instruction stream (insns=) ended after {} instructions, so the run stopped there, short of the {instructions} asked for",
            s.roi.core.instructions
        ));
    }
    s.workload = workload.name();
    s.seed = seed;
    Ok(s)
}
