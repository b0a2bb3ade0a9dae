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
mod epoch;
mod ooo;
mod pcm;
mod persist;
mod run;
mod stats;
mod tags;
mod tep;
mod work;

pub use ooo::OooStats;
pub use run::{simulate, simulate_after_warmup, simulate_until, BuiltRun, ResolvedRun, SimError, STOP_CHECK_EVENTS};
pub use stats::{Roi, RunStats, WarmupStats};

use crate::config::{PersistPoint, SimConfig};
use crate::engine::store::CheckFailure;
use crate::machine::System;
use crate::persist::Handover;
use crate::workload::{Event, Op, Warmup};
use core::Core;
use core::CoreStats;
use pcm::Pcm;
use persist::{Ctx, Engine, PersistPath, PersistPathStats, ReleasedStore};
use stats::{Counters, EngineStats, MulticoreStats, PerCoreStats, QueueStats};
use std::sync::atomic::{AtomicBool, Ordering};
use tags::{Lookup, TagCache};
use work::WorkRecord;

pub struct Latencies {
    pub l1: u64,
    pub l2: u64,
    pub l3: u64,
    pub nvm_read: u64,
    pub mdc: u64,
    pub mac: u64,
    /// One integrity-tree hash (`security.tree_hash_latency_cycles`, else
    /// the MAC's).
    pub hash: u64,
    /// Cycles between the starts of two pipelined BMT updates.
    pub hash_interval: u64,
    /// One increment of a multiset-hash register.
    pub mset_hash: u64,
    pub aes: u64,
    pub pb_access: u64,
}

pub struct TimingSim {
    pub sys: System,
    /// The cores: private pipeline, L1D, L2 and persist path each.
    units: Vec<CoreUnit>,
    /// Shared by every core: the last-level cache, the PCM with its WPQ,
    /// and the memory controller's security engine.
    l3: TagCache,
    pcm: Pcm,
    engine: Engine,
    lat: Latencies,
    pub stats: RunStats,
    /// The components' counters when the region of interest began (zero
    /// without a warm-up).
    roi_start: Counters,
    /// The record of the operation being priced (buffers reused).
    rec: Option<Box<WorkRecord>>,
    /// The ticket lock of a shared-data multi-threaded workload.
    lock: Option<TicketLock>,
    /// Cores whose warm-up has not ended yet.
    warming: usize,
    /// How far before the earliest core's clock a memory request may be
    /// stamped: 0 for the interval core (its requests are at or after its
    /// clock), [`HORIZON_MARGIN_CYCLES`] under `ooo`.
    horizon_margin: u64,
}

/// One core and what is private to it.
struct CoreUnit {
    core: Core,
    l1: TagCache,
    l2: TagCache,
    path: PersistPath,
    /// Stores waiting in L1D for a barrier (epoch persistency, TEP).
    epoch: epoch::EpochLines,
    /// A store whose later pieces may still come (see [`OpenStore`]).
    open_store: Option<OpenStore>,
    /// This core's counts (they restart when its warm-up ends).
    stats: CoreStats,
    persist: PersistPathStats,
    /// The warm-up before this core's region of interest, if any.
    warmup: Option<Warmup>,
    /// The cycle this core's region of interest began at.
    roi_began: u64,
    /// The `ooo` model's counts when the region of interest began.
    ooo_start: Option<OooStats>,
    /// Transactions this core has begun and committed (ticket lock).
    tx_begun: u64,
    tx_committed: u64,
    /// The lowest and highest block this core ever fetched: a block
    /// outside them is in none of its private levels nor its SecPB, so
    /// the coherence of the other cores' accesses may skip it.
    lo: u64,
    hi: u64,
}

impl CoreUnit {
    #[inline]
    fn may_hold(&self, block: u64) -> bool {
        (self.lo..=self.hi).contains(&block)
    }
}

/// Shared data (`data=shared`): thread `t`'s `k`-th transaction holds
/// ticket `k * threads + t` and begins once the transaction before it in
/// ticket order committed, so the threads' transactions run in the order
/// the workload generated them in and the persistent state is well defined.
struct TicketLock {
    threads: u64,
    /// The ticket whose transaction may begin.
    next: u64,
    /// When the lock was last released (a commit).
    free_at: u64,
    /// Threads whose streams ended: their tickets are skipped.
    finished: Vec<bool>,
    /// Cycles cores waited for the lock.
    wait_cycles: u64,
}

impl TicketLock {
    /// The transaction holding the lock ended (committed, or was cut off
    /// with its thread's stream) at `at`: the next ticket may begin.
    fn release(&mut self, at: u64) {
        self.free_at = self.free_at.max(at);
        self.next += 1;
        self.skip_finished();
    }

    /// Past the tickets of threads that will never take them.
    fn skip_finished(&mut self) {
        while self.finished.iter().any(|f| !f) && self.finished[(self.next % self.threads) as usize] {
            self.next += 1;
        }
    }
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
    /// The store writes the undo log.
    log: bool,
}

fn cycles(ns: f64, ghz: f64) -> u64 {
    (ns * ghz).round().max(1.0) as u64
}

impl TimingSim {
    /// A timed machine, or why the configuration cannot be timed (a
    /// scheme whose mechanism the timing model has no pricing rule for).
    pub fn new(cfg: &SimConfig, seed: u64) -> Result<Self, String> {
        let mut sys = System::new(cfg, seed);
        // Volatile lines stay in the modelled caches (see `close_store`).
        sys.volatile_reaches_nvm = false;
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
            hash: cfg.security.tree_hash_latency_cycles.unwrap_or(cfg.security.mac_latency_cycles) as u64,
            hash_interval: cfg.security.hash_pipeline_interval_cycles as u64,
            mset_hash: cfg.security.multiset_hash_latency_cycles.unwrap_or(160) as u64,
            aes: cfg.security.aes_latency_cycles as u64,
            pb_access: match &cfg.persistence.point {
                PersistPoint::PersistBuffer { access_latency_cycles, .. } => *access_latency_cycles as u64,
                _ => 0,
            },
        };
        let units = (0..cfg.core.count.max(1) as usize)
            .map(|i| {
                Ok(CoreUnit {
                    core: Core::new(&cfg.core),
                    l1: TagCache::new(c.l1d.capacity_bytes, c.l1d.ways),
                    l2: TagCache::new(c.l2.capacity_bytes, c.l2.ways),
                    path: PersistPath::new(cfg, i)?,
                    // The relaxed models order lines an L1 controller sends
                    // to the MC; a persist buffer orders its own entries.
                    epoch: epoch::EpochLines::new(
                        match cfg.persistence.point {
                            PersistPoint::MemoryController => cfg.persistence.model,
                            _ => crate::config::PersistencyModel::Strict,
                        },
                        (c.l1d.capacity_bytes / 64) as usize,
                    ),
                    open_store: None,
                    // TEP's counts exist under TEP only (at the MC).
                    stats: CoreStats {
                        tep: (cfg.persistence.model == crate::config::PersistencyModel::Tep
                            && cfg.persistence.point == PersistPoint::MemoryController)
                            .then(tep::TepTimingStats::default),
                        ..CoreStats::default()
                    },
                    persist: PersistPathStats::default(),
                    warmup: None,
                    roi_began: 0,
                    ooo_start: None,
                    tx_begun: 0,
                    tx_committed: 0,
                    lo: u64::MAX,
                    hi: 0,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        // Updates reach the tree unit, and writes the PCM, out of time order
        // with several cores, and with one core under a relaxed persistency
        // model, whose lines go to the MC at a later ACK while the core runs
        // on: `auto` scheduling takes the calendar in both cases.
        let streams = if cfg.persistence.model == crate::config::PersistencyModel::Strict { cfg.core.count } else { cfg.core.count.max(2) };
        let mut pcm = Pcm::with_model(
            cfg.nvm.write_model,
            cfg.nvm.banks,
            cycles(cfg.nvm.read_latency_ns, ghz),
            cycles(cfg.nvm.write_latency_ns, ghz),
            cfg.persistence.wpq_entries,
            cycles(cfg.nvm.burst_ns, ghz),
            cfg.nvm.write_queue_entries,
        );
        if cfg.nvm.read_scheduling.calendar(cfg.core.count) {
            pcm = pcm.with_read_calendar();
        }
        if cfg.nvm.write_scheduling.calendar(streams) {
            pcm = pcm.with_write_calendar();
        }
        pcm = pcm.with_kinds(sys.mc.layout(), &cfg.persistence.wpq_coalesce);
        Ok(TimingSim {
            units,
            l3: TagCache::new(c.l3.capacity_bytes, c.l3.ways),
            pcm,
            engine: if cfg.security.tree_scheduling.calendar(streams) { Engine::default().with_tree_calendar() } else { Engine::default() },
            lat,
            stats: RunStats::new(cfg),
            sys,
            roi_start: Counters::default(),
            rec: Some(Box::default()),
            lock: None,
            warming: 0,
            horizon_margin: if cfg.core.model == crate::config::CoreModel::Ooo { HORIZON_MARGIN_CYCLES } else { 0 },
        })
    }

    /// Run the first `instructions` (at least; up to the end of the
    /// instruction that reaches them) as a warm-up: through the whole
    /// model, outside the statistics ([`Warmup`]). With several cores,
    /// each core warms up on its own first `instructions`.
    pub fn with_warmup(mut self, instructions: u64) -> Self {
        for u in &mut self.units {
            u.warmup = (instructions > 0).then(|| Warmup::new(instructions));
        }
        self.warming = if instructions > 0 { self.units.len() } else { 0 };
        self
    }

    /// The cycle the run has reached: every instruction so far retired and
    /// every store so far persistent.
    fn now(&self) -> u64 {
        self.units.iter().map(|u| u.core.end_time().max(u.path.last_persist())).max().unwrap_or(0)
    }

    fn counters(&self, time: u64) -> Counters {
        Counters::of(time, &self.sys, self.units.iter().map(|u| [&u.l1, &u.l2]), &self.l3, &self.pcm)
    }

    /// Core `c`'s warm-up is over: its last store goes down the persist
    /// path and its own counts restart; once every core's is over, the
    /// shared components' counters are read, so the statistics cover the
    /// region of interest alone.
    fn end_warmup(&mut self, c: usize) -> Result<(), CheckFailure> {
        self.close_store(c)?;
        let u = &mut self.units[c];
        u.ooo_start = u.core.ooo_stats();
        u.roi_began = u.core.end_time().max(u.path.last_persist());
        let fresh = CoreStats { tep: u.stats.tep.map(|_| Default::default()), ..CoreStats::default() };
        let warm = std::mem::replace(&mut u.stats, fresh);
        u.persist = PersistPathStats::default();
        let w = self.stats.warmup.get_or_insert(WarmupStats { instructions: 0, cycles: 0 });
        w.instructions += warm.instructions;
        self.warming -= 1;
        if self.warming == 0 {
            let now = self.now();
            self.roi_start = self.counters(now);
            if let Some(w) = &mut self.stats.warmup {
                w.cycles = now;
            }
        }
        Ok(())
    }

    /// The warm-up asked for, if the events so far did not complete it.
    pub fn unfinished_warmup(&self) -> Option<u64> {
        self.units.iter().find_map(|u| u.warmup.filter(|w| !w.is_over()).map(|w| w.instructions()))
    }

    /// Latency of bringing `block` to core `c`'s L1 at time `t` (filling
    /// every level). Another core's copy in its private caches is dropped
    /// on a write (invalidation); another core's SecPB entry for it is
    /// flushed to memory on a read, beside the data's delivery (SecPB IV-C c).
    fn fetch(&mut self, c: usize, t: u64, block: u64, write: bool) -> Result<u64, CheckFailure> {
        if self.units.len() > 1 {
            self.share(c, t, block, write)?;
            let u = &mut self.units[c];
            u.lo = u.lo.min(block);
            u.hi = u.hi.max(block);
        }
        let u = &mut self.units[c];
        let Lookup::Miss { dirty_victim: v1 } = u.l1.lookup(block) else { return Ok(self.lat.l1) };
        let (l2, l3) = match u.l2.lookup(block) {
            Lookup::Hit => (Lookup::Hit, Lookup::Hit),
            l2 => (l2, self.l3.lookup(block)),
        };
        let v2 = match l2 {
            Lookup::Miss { dirty_victim } => dirty_victim,
            Lookup::Hit => None,
        };
        let v3 = match l3 {
            Lookup::Miss { dirty_victim } => dirty_victim,
            Lookup::Hit => None,
        };
        // Each dirty victim goes down to the next level that holds its
        // block, or back to memory from the last (no level allocates for
        // a victim, so the hits and misses are those of the clean model).
        let mut victim_out = t;
        if v1.is_some() || v2.is_some() || v3.is_some() {
            let at = t + self.lat.l3;
            let u = &mut self.units[c];
            let to_memory: Vec<u64> =
                [v1.filter(|&v| !u.l2.mark_dirty(v)), v2].into_iter().flatten().filter(|&v| !self.l3.mark_dirty(v)).chain(v3).collect();
            for v in to_memory {
                victim_out = victim_out.max(self.write_back(c, at, v)?);
            }
        }
        if l2 == Lookup::Hit {
            return Ok(self.lat.l2);
        }
        if l3 == Lookup::Hit {
            return Ok(self.lat.l3.max(victim_out - t));
        }
        // Memory: the data read and the counter fetch run in parallel; the
        // OTP follows the counter; MAC and tree checks are speculative
        // (SecPB V-A), so they cost bandwidth but not latency.
        let mark = WorkRecord::start(&mut self.sys.mc);
        let value = self.sys.mc.read(block)?;
        debug_assert_eq!(value, self.sys.mc.peek_plaintext(block), "a read and a peek of memory disagree");
        let mut rec = self.rec.take().unwrap_or_default();
        rec.fill(&mut self.sys.mc, mark, block);
        let u = &mut self.units[c];
        u.path.drop_unpriced(&self.sys.mc.st.layout, &mut rec, &mut u.persist);
        let t0 = t + self.lat.l3;
        // Dirty metadata the read evicted is written back in the background
        // (with its tree work: a lazy SIT write-back MACs the node).
        PersistPath::queue_writes(&mut self.pcm, t0, &rec.writes);
        if !self.units[c].path.ideal_metadata() {
            PersistPath::background_tree_work(&mut self.engine, &self.lat, t0, &rec);
        }
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
        // The fill waits for its dirty victim's slot in the write queue.
        Ok(done.max(victim_out) - t)
    }

    /// A dirty volatile line leaves core `c`'s last cache level that holds
    /// it at `t`: the memory controller encrypts it under a fresh counter,
    /// MACs it and updates the tree under the scheme's rule for its region
    /// (write-back metadata for non-persistent memory under Triad-NVM,
    /// every level under strict persistence), in the background. Returns
    /// when the line holds a write-queue slot: a full queue stalls the
    /// fill that evicted it.
    fn write_back(&mut self, c: usize, t: u64, block: u64) -> Result<u64, CheckFailure> {
        let mark = WorkRecord::start(&mut self.sys.mc);
        self.sys.write_back_volatile(block)?;
        let mut rec = self.rec.take().unwrap_or_default();
        rec.fill(&mut self.sys.mc, mark, block);
        let u = &mut self.units[c];
        u.stats.volatile_write_backs += 1;
        u.path.drop_unpriced(&self.sys.mc.st.layout, &mut rec, &mut u.persist);
        let mut ready = t;
        if self.sys.mc.secure {
            let (ctr, tree_extra) = PersistPath::metadata_reads(&mut self.pcm, &self.lat, t, &rec);
            ready = ctr + self.lat.aes + 1 + self.lat.mac;
            if !self.units[c].path.ideal_metadata() {
                PersistPath::background_tree_work(&mut self.engine, &self.lat, ctr + tree_extra, &rec);
            }
        }
        // The data's own write takes its slot now, the metadata's once
        // the controller has made them.
        let mut slot = t;
        for &w in rec.writes.iter().filter(|&&w| w == block) {
            slot = slot.max(self.pcm.write_when_ready(t, ready, w));
        }
        for &w in rec.writes.iter().filter(|&&w| w != block) {
            self.pcm.write(ready, w);
        }
        self.rec = Some(rec);
        Ok(slot)
    }

    /// Coherence of the private levels between cores: a write drops the
    /// other cores' copies; a read of a block in another core's SecPB
    /// flushes that entry, its tuple completed by the shared engine and
    /// queued in the background while the data is served.
    fn share(&mut self, c: usize, t: u64, block: u64, write: bool) -> Result<(), CheckFailure> {
        if write {
            for (i, u) in self.units.iter_mut().enumerate() {
                if i != c && u.may_hold(block) {
                    u.l1.invalidate(block);
                    u.l2.invalidate(block);
                }
            }
            return Ok(());
        }
        if !self.units.iter().enumerate().any(|(i, u)| i != c && u.may_hold(block)) {
            return Ok(());
        }
        let mark = WorkRecord::start(&mut self.sys.mc);
        if self.sys.claim_for_load(c, block)? == Handover::Flushed {
            let mut rec = self.rec.take().unwrap_or_default();
            rec.fill(&mut self.sys.mc, mark, block);
            let t0 = t + self.lat.l3;
            PersistPath::background_tree_work(&mut self.engine, &self.lat, t0, &rec);
            PersistPath::queue_writes(&mut self.pcm, t0 + self.lat.aes + 1 + self.lat.mac, &rec.writes);
            self.rec = Some(rec);
        }
        Ok(())
    }

    /// Core `c`'s open store, if any, goes down the persist path.
    fn close_store(&mut self, c: usize) -> Result<(), CheckFailure> {
        let u = &mut self.units[c];
        let Some(o) = u.open_store.take() else { return Ok(()) };
        if o.volatile {
            // Volatile memory (issue 13): the store buffer writes the store
            // into L1 once the line is owned (write-allocate), one store a
            // cycle; no persist buffer entry, no tuple, no persist order.
            // The line is dirty from now on; its write-back, when it
            // leaves the caches, is priced by `write_back`.
            self.sys.store_volatile(c, o.block, o.off, &o.bytes[o.off..o.off + o.len])?;
            // The ownership fetch left the line in L1 (this event's).
            u.l1.mark_dirty(o.block);
            u.core.store_released(o.release, o.release.max(o.data_ready) + 1);
            u.stats.volatile_stores += 1;
            return Ok(());
        }
        if u.epoch.buffers() {
            // Epoch persistency and TEP: the store stays in L1D, coalescing
            // with the epoch's other stores to its line, until a barrier.
            u.epoch.store(o.block, o.off, &o.bytes[o.off..o.off + o.len], o.release, o.data_ready, o.log);
            u.core.store_released(o.release, o.release.max(o.data_ready) + 1);
            u.stats.stores += 1;
            let all_ack = u.path.last_ack();
            if let Some(sent) = u.epoch.overflow(o.release, all_ack) {
                self.send_lines(c, vec![sent])?;
            }
            return Ok(());
        }
        // The rest of the block comes from memory only when the persist
        // path takes a whole block (a new SecPB entry, an SP write).
        let mut fill = if u.path.needs_whole_block(&self.sys, o.block) { self.sys.mc.peek_plaintext(o.block) } else { [0; 64] };
        fill[o.off..o.off + o.len].copy_from_slice(&o.bytes[o.off..o.off + o.len]);
        let cx = Ctx { pcm: &mut self.pcm, lat: &self.lat, engine: &mut self.engine, stats: &mut u.persist };
        let store = ReleasedStore { release: o.release, data_ready: o.data_ready, block: o.block, bytes: o.off..o.off + o.len, fill };
        let unblock = u.path.store(&mut self.sys, cx, store)?;
        u.core.store_released(o.release, unblock);
        u.stats.stores += 1;
        Ok(())
    }

    /// A barrier of core `c` at `t` under epoch persistency or TEP: the
    /// epoch's lines go to the memory controller, each when its order
    /// allows ([`epoch::EpochLines::barrier`]); returns whether the core
    /// waits for every ACK.
    fn send_epoch(&mut self, c: usize, t: u64) -> Result<bool, CheckFailure> {
        let u = &mut self.units[c];
        let flush = u.epoch.barrier(t, u.path.last_ack());
        if let Some(s) = &mut u.stats.tep {
            if flush.wait_for_acks {
                s.regular_barriers += 1;
            } else {
                s.paired_barriers += 1;
            }
            for (line, at) in flush.sends.iter().filter(|(l, _)| !l.log) {
                if *at > line.release.max(t) {
                    s.log_ack_waits += 1;
                    s.log_ack_wait_cycles += at - line.release.max(t);
                }
            }
        }
        self.send_lines(c, flush.sends)?;
        Ok(flush.wait_for_acks)
    }

    /// Lines of core `c` to the memory controller, each from its time.
    fn send_lines(&mut self, c: usize, sends: Vec<(epoch::EpochLine, u64)>) -> Result<(), CheckFailure> {
        for (line, at) in sends {
            let mut fill = self.sys.mc.peek_plaintext(line.block);
            for (i, b) in fill.iter_mut().enumerate() {
                if line.mask >> i & 1 == 1 {
                    *b = line.bytes[i];
                }
            }
            let u = &mut self.units[c];
            let cx = Ctx { pcm: &mut self.pcm, lat: &self.lat, engine: &mut self.engine, stats: &mut u.persist };
            let store = ReleasedStore { release: at, data_ready: line.data_ready, block: line.block, bytes: 0..64, fill };
            u.path.store(&mut self.sys, cx, store)?;
            if line.log {
                // TEP's log state table: the data of the next pair waits
                // for these log lines' ACKs.
                u.epoch.log_ack = u.epoch.log_ack.max(u.path.last_ack());
            }
        }
        Ok(())
    }

    fn apply(&mut self, c: usize, ev: &Event) -> Result<(), CheckFailure> {
        let (block, off, size) = (ev.block(), (ev.addr % 64) as usize, ev.size as usize);
        if ev.op == Op::Store && ev.same_instruction {
            let u = &mut self.units[c];
            if let Some(o) = &mut u.open_store {
                if o.block == block && o.off + o.len == off && o.volatile == ev.volatile {
                    // The next piece of the open store: its bytes only.
                    o.len += size;
                    o.bytes[off..off + size].copy_from_slice(&ev.value.to_le_bytes()[..size]);
                    u.stats.instructions += ev.instructions();
                    return Ok(());
                }
            }
        }
        self.close_store(c)?;
        let t_disp = self.units[c].core.dispatch(ev.gap, ev.instructions());
        match ev.op {
            Op::Load => {
                let lat = self.fetch(c, t_disp, block, false)?;
                let u = &mut self.units[c];
                u.core.complete_memop(t_disp, lat);
                u.stats.loads += 1;
            }
            Op::Store => {
                if ev.log && !ev.volatile {
                    self.sys.note_log_store(ev.addr);
                }
                // The fetch for ownership starts at dispatch (address known).
                let fetch = self.fetch(c, t_disp, block, true)?;
                let data_ready = t_disp + fetch;
                let u = &mut self.units[c];
                let retire = u.core.retire_store(t_disp, &mut u.stats);
                let release = u.core.release_time(retire);
                let mut bytes = [0; 64];
                bytes[off..off + size].copy_from_slice(&ev.value.to_le_bytes()[..size]);
                u.open_store = Some(OpenStore { block, volatile: ev.volatile, off, len: size, bytes, release, data_ready, log: ev.log });
            }
            Op::Fence | Op::Epoch if self.units[c].epoch.buffers() => {
                let wait = self.send_epoch(c, t_disp)?;
                self.sys.mc.await_all_acks()?;
                let u = &mut self.units[c];
                let persisted = if wait { u.path.persist_barrier() } else { 0 };
                u.core.fence(t_disp, persisted);
            }
            Op::Fence | Op::Epoch => {
                // The functional model waits for the same ACKs (whatever a
                // scheme deferred completes here; a no-op for most).
                self.sys.mc.await_all_acks()?;
                let u = &mut self.units[c];
                let persisted = u.path.persist_barrier();
                u.core.fence(t_disp, persisted);
            }
            Op::TxBegin => {
                if let Some(l) = &mut self.lock {
                    // The ticket is this core's (the scheduler ran it only
                    // then): nothing of the transaction before the release.
                    let u = &mut self.units[c];
                    let at = u.core.clock();
                    if l.free_at > at {
                        l.wait_cycles += l.free_at - at;
                        u.core.stall_until(l.free_at);
                    }
                }
                self.units[c].tx_begun += 1;
            }
            Op::TxCommit => {
                let u = &mut self.units[c];
                u.tx_committed += 1;
                if let Some(l) = &mut self.lock {
                    l.release(u.core.clock());
                }
            }
            Op::Compute => {}
        }
        self.units[c].stats.instructions += ev.instructions();
        Ok(())
    }

    /// Whether core `c` must wait before `ev`: a transaction whose ticket
    /// is not the lock's next.
    fn blocked(&self, c: usize, ev: &Event) -> bool {
        match &self.lock {
            Some(l) if ev.op == Op::TxBegin => self.units[c].tx_begun * l.threads + c as u64 != l.next,
            _ => false,
        }
    }

    /// Core `c`'s stream ended: its last store goes down the persist path
    /// and its tickets are given up (a transaction cut off by the
    /// instruction limit releases the lock).
    fn finish_core(&mut self, c: usize) -> Result<(), CheckFailure> {
        self.close_store(c)?;
        if self.units[c].epoch.buffers() {
            let t = self.units[c].core.clock();
            self.send_epoch(c, t)?;
        }
        let u = &self.units[c];
        if let Some(l) = &mut self.lock {
            l.finished[c] = true;
            if u.tx_begun > u.tx_committed {
                l.release(u.core.clock());
            } else {
                l.skip_finished();
            }
        }
        Ok(())
    }

    /// Run a stream of events to its end.
    pub fn run<I: IntoIterator<Item = Event>>(&mut self, events: I) -> Result<(), String> {
        self.run_until(events, &AtomicBool::new(false)).map_err(|e| e.to_string())
    }

    /// One event of core `c`, with its warm-up check.
    fn step(&mut self, c: usize, i: usize, ev: &Event) -> Result<(), SimError> {
        if ev.thread as usize != c {
            return Err(SimError::Invalid(format!(
                "event {} ({}) of thread {} is in the stream of core {c}: each core runs its own thread's events (core.count = threads)",
                i + 1,
                ev.describe(),
                ev.thread
            )));
        }
        if self.units[c].warmup.as_mut().is_some_and(|w| !w.is_over() && !w.takes(ev)) {
            self.end_warmup(c).map_err(|e| SimError::Failed(format!("the last store of the warm-up: integrity check failed: {e}")))?;
        }
        self.apply(c, ev).map_err(|e| match e {
            CheckFailure::NoCore { .. } => SimError::Invalid(format!("event {} ({}): {e}", i + 1, ev.describe())),
            e => SimError::Failed(format!("event {} ({}): integrity check failed: {e}", i + 1, ev.describe())),
        })
    }

    /// Run a stream of events to its end, or until `stop` is set (by
    /// another thread: a Ctrl-C handler, a front end that gave up). The
    /// flag is read once every [`STOP_CHECK_EVENTS`] events, so the check
    /// costs nothing beside an event's crypto, yet a stop lands within
    /// milliseconds.
    pub fn run_until<I: IntoIterator<Item = Event>>(&mut self, events: I, stop: &AtomicBool) -> Result<(), SimError> {
        if self.units.len() > 1 {
            return Err(SimError::Invalid(format!(
                "a machine of {} cores runs one event stream per core (run_threads), not one merged stream",
                self.units.len()
            )));
        }
        for (i, ev) in events.into_iter().enumerate() {
            if i % STOP_CHECK_EVENTS == 0 && stop.load(Ordering::Relaxed) {
                return Err(SimError::Cancelled);
            }
            // As the cores' loop of `run_threads` does: the calendars
            // (a relaxed model's writes and tree updates) drop what ends
            // before the core's clock.
            let horizon = self.units[0].core.clock().saturating_sub(self.horizon_margin);
            self.pcm.set_horizon(horizon);
            self.engine.set_horizon(horizon);
            self.step(0, i, &ev)?;
            if self.units[0].core.ooo_exhausted() {
                // A synthetic profile's borrowed stream ran out: the run
                // ends here (simulate_after_warmup notes it).
                break;
            }
        }
        if let Some(e) = self.units[0].core.ooo_error() {
            return Err(SimError::Invalid(format!("core.model = \"ooo\": {e}")));
        }
        self.close_store(0).map_err(|e| SimError::Failed(format!("the last store: integrity check failed: {e}")))
    }

    /// Run one event stream per core to their ends (or until `stop`):
    /// the core that has reached the earliest cycle (`Core::schedule_key`)
    /// goes next, ties to the lowest core id, so a run depends only on its seed and configuration.
    /// With one core this is [`Self::run_until`].
    pub fn run_threads<I: Iterator<Item = Event>>(&mut self, streams: &mut [I], stop: &AtomicBool) -> Result<(), SimError> {
        let n = self.units.len();
        if streams.len() != n {
            return Err(SimError::Invalid(format!("{} event streams for {n} cores", streams.len())));
        }
        if n == 1 {
            return self.run_until(&mut streams[0], stop);
        }
        let mut next: Vec<Option<Event>> = streams.iter_mut().map(|s| s.next()).collect();
        for c in (0..n).filter(|&c| next[c].is_none()) {
            self.finish_core(c).map_err(|e| SimError::Failed(format!("core {c}: {e}")))?;
        }
        let mut i = 0usize;
        // Each core's clock and key; only the core that ran changes its own.
        let mut clocks: Vec<u64> = self.units.iter().map(|u| u.core.clock()).collect();
        let mut keys: Vec<u64> = self.units.iter().map(|u| u.core.schedule_key()).collect();
        loop {
            // The runnable core with the earliest key (ties to the lowest
            // id), and the one after it.
            let mut best: Option<(u64, usize)> = None;
            let mut second: Option<(u64, usize)> = None;
            let mut earliest = u64::MAX;
            for (c, ev) in next.iter().enumerate() {
                let Some(ev) = ev else { continue };
                earliest = earliest.min(clocks[c]);
                if self.blocked(c, ev) {
                    continue;
                }
                let k = (keys[c], c);
                if best.is_none_or(|b| k < b) {
                    second = best;
                    best = Some(k);
                } else if second.is_none_or(|b| k < b) {
                    second = Some(k);
                }
            }
            let Some((_, c)) = best else {
                if next.iter().all(Option::is_none) {
                    break;
                }
                let waiting: Vec<String> =
                    (0..n).filter(|&c| next[c].is_some()).map(|c| format!("core {c} (ticket {})", self.units[c].tx_begun)).collect();
                return Err(SimError::Failed(format!(
                    "the ticket lock is out of step: every core waits ({}) for ticket {}; a shared-data workload must give each operation exactly one transaction",
                    waiting.join(", "),
                    self.lock.as_ref().map_or(0, |l| l.next)
                )));
            };
            // No core asks the memory for anything before its clock (less a
            // margin for the `ooo` core's memory operations, which may issue
            // a little before it).
            self.pcm.set_horizon(earliest.saturating_sub(self.horizon_margin));
            self.engine.set_horizon(earliest.saturating_sub(self.horizon_margin));
            // Core `c` runs while it stays the earliest: the others' keys
            // stand still meanwhile, and which of them may run changes only
            // when `c` releases the lock or ends, so this is the same order
            // as choosing anew before every event.
            loop {
                if i.is_multiple_of(STOP_CHECK_EVENTS) && stop.load(Ordering::Relaxed) {
                    return Err(SimError::Cancelled);
                }
                let ev = next[c].take().expect("chosen cores have an event");
                self.step(c, i, &ev).map_err(|e| match e {
                    SimError::Failed(m) => SimError::Failed(format!("core {c}: {m}")),
                    other => other,
                })?;
                i += 1;
                next[c] = if self.units[c].core.ooo_exhausted() { None } else { streams[c].next() };
                let Some(following) = &next[c] else {
                    self.finish_core(c).map_err(|e| SimError::Failed(format!("core {c}: the last store: integrity check failed: {e}")))?;
                    break;
                };
                let released = ev.op == Op::TxCommit && self.lock.is_some();
                if released || self.blocked(c, following) || second.is_some_and(|b| (self.units[c].core.schedule_key(), c) > b) {
                    break;
                }
            }
            clocks[c] = self.units[c].core.clock();
            keys[c] = self.units[c].core.schedule_key();
        }
        for u in &self.units {
            if let Some(e) = u.core.ooo_error() {
                return Err(SimError::Invalid(format!("core.model = \"ooo\": {e}")));
            }
        }
        Ok(())
    }

    /// Whether a core's borrowed instruction stream ran out.
    fn ooo_exhausted(&self) -> bool {
        self.units.iter().any(|u| u.core.ooo_exhausted())
    }

    /// Close the run: final cycle count, rates, the drain work of a crash
    /// at the end.
    pub fn finish(mut self) -> RunStats {
        let now = self.now();
        let end = self.counters(now);
        let mut s = std::mem::replace(&mut self.stats, RunStats::new(&self.sys.cfg));
        let multi = self.units.len() > 1 || self.sys.cfg.core.multicore_stats;
        if multi {
            s.roi.cores = self
                .units
                .iter()
                .map(|u| {
                    let end_c = u.core.end_time().max(u.path.last_persist());
                    let cycles = end_c.saturating_sub(u.roi_began).max(1);
                    PerCoreStats {
                        instructions: u.stats.instructions,
                        cycles,
                        ipc: u.stats.instructions as f64 / cycles as f64,
                        loads: u.stats.loads,
                        stores: u.stats.stores,
                        volatile_stores: u.stats.volatile_stores,
                        transactions: u.tx_committed,
                        store_buffer_stall_cycles: u.stats.store_buffer_stall_cycles,
                        persist_path: u.persist.clone(),
                    }
                })
                .collect();
        }
        for u in &self.units {
            s.roi.core.add(&u.stats);
            s.roi.persist_path.add(&u.persist);
        }
        s.finalize(&end, &self.roi_start, &self.pcm);
        s.roi.core.ooo = self.units[0].core.ooo_stats().map(|o| o.minus(&self.units[0].ooo_start.unwrap_or_default()));
        if multi {
            let cycles = s.roi.core.cycles;
            let seconds = cycles as f64 / (self.sys.cfg.core.frequency_ghz * 1e9);
            let transactions: u64 = self.units.iter().map(|u| u.tx_committed).sum();
            s.roi.multicore = Some(MulticoreStats {
                cores: self.units.len(),
                transactions,
                transactions_per_second: transactions as f64 / seconds,
                lock_wait_cycles: self.lock.as_ref().map(|l| l.wait_cycles),
                coherence: self.sys.coherence.stats,
                memory_controller: {
                    let (d, offered) = end.pcm_since(&self.roi_start);
                    QueueStats::of(&d, offered)
                },
                security_engine: EngineStats {
                    tree_updates: self.engine.tree_updates,
                    busy_cycles: self.engine.busy_cycles,
                    utilisation: self.engine.busy_cycles as f64 / cycles as f64,
                },
            });
        }
        // The run is over, so the crash happens to the system itself rather
        // than to a copy (a copy of a large image costs more than the run's
        // tail).
        let mut crashed = self.sys;
        s.crash_at_end = Some(crashed.power_fail());
        s
    }
}

/// How far before the earliest core's clock a memory request may still be
/// stamped (the `ooo` core issues a memory operation when its operands are
/// ready, which may be before the instructions dispatched after it).
const HORIZON_MARGIN_CYCLES: u64 = 1 << 16;
