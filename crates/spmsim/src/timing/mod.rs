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
//!
//! This file builds the machine ([`TimingSim::new`]) and closes a run
//! ([`TimingSim::finish`]); `run.rs` takes a run from its request to its
//! statistics (resolve, build, run), `schedule.rs` hands the cores their
//! events, `hierarchy.rs` prices a core's accesses to memory through the
//! caches' MSHRs and write buffers (`caches/`), `stores.rs`
//! a store's way to the persist path, and `persist.rs` that path itself;
//! `occupancy.rs` is the calendar of a queue's entries booked out of time
//! order, which the memory controller's queues and the engine's background
//! queue share.

mod branch;
mod caches;
mod core;
mod engine;
mod epoch;
mod frontend;
mod hierarchy;
mod occupancy;
mod ooo;
mod pcm;
mod persist;
mod run;
mod schedule;
mod stats;
mod stores;
mod tags;
mod tep;
mod work;

pub use caches::{BufferReport, MshrStats, WriteBufferStats};
pub use frontend::FrontEndStats;
pub use ooo::OooStats;
pub use run::{simulate, simulate_after_warmup, simulate_until, BuiltRun, ResolvedRun, SimError, STOP_CHECK_EVENTS};
pub use stats::{DataCacheReport, Roi, RunStats, WarmupStats};

use crate::config::{CacheLevel, MshrBounds, PersistPoint, SimConfig};
use crate::machine::System;
use crate::workload::Warmup;
use caches::MissBuffers;
use core::Core;
use core::CoreStats;
pub use engine::{BackgroundQueueStats, EngineResources, UnitStats};
use engine::{Engine, EngineShape};
use pcm::Pcm;
use persist::{PersistPath, PersistPathStats};
use schedule::TicketLock;
use stats::{Counters, EngineStats, MulticoreStats, PerCoreStats, QueueStats};
use stores::OpenStore;
use tags::TagCache;
use work::WorkRecord;

pub struct Latencies {
    pub l1: u64,
    /// An L1I hit, fetch to fetch buffer (`caches.l1i.latency_cycles`).
    pub l1i: u64,
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
    /// One multiset hash, computed or incremented (the hash registers'
    /// hash latency).
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
    /// L3's MSHRs and write buffer (none when unbounded or absent).
    l3b: Option<MissBuffers>,
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
    /// How far before the earliest core's clock a memory request may be
    /// stamped: 0 for the interval core (its requests are at or after its
    /// clock), [`HORIZON_MARGIN_CYCLES`] under `ooo`.
    horizon_margin: u64,
    /// The latest horizon given to the calendars and buffers (each keeps
    /// the latest it was given, so an earlier or equal one changes none).
    horizon: u64,
}

/// One core and what is private to it.
struct CoreUnit {
    core: Core,
    l1: TagCache,
    l2: TagCache,
    /// L1D's and L2's MSHRs and write buffers (none when unbounded or,
    /// for L2, absent).
    l1b: Option<MissBuffers>,
    l2b: Option<MissBuffers>,
    /// The `ooo` core's instruction cache and its MSHRs (buffers only
    /// when bounded and the core fetches through it).
    l1i: TagCache,
    l1ib: Option<MissBuffers>,
    /// L1I's hits and misses when the region of interest began.
    l1i_start: crate::util::set_assoc::CacheStats,
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
    /// The warm-up instructions this core had run when the machine's
    /// region of interest began, if it was still warming up then.
    warm_at_machine_roi: Option<u64>,
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
    /// Its counts when its region of interest ended, if it then ran on
    /// until the last core's ended (ChampSim's rule; `schedule.rs`).
    frozen: Option<FrozenCore>,
}

/// A core's counts at the end of its region of interest.
struct FrozenCore {
    stats: CoreStats,
    persist: PersistPathStats,
    /// The cycle its region of interest ended at.
    end: u64,
    ooo: Option<OooStats>,
    tx_committed: u64,
}

impl CoreUnit {
    #[inline]
    fn may_hold(&self, block: u64) -> bool {
        (self.lo..=self.hi).contains(&block)
    }

    /// The cycle this core's work has reached: its last retirement or
    /// persist.
    fn end_time(&self) -> u64 {
        self.core.end_time().max(self.path.last_persist())
    }

    /// What the multi-core scheduler orders cores by: the core's own key,
    /// or, when later, the time its persist path has offered work up to
    /// (under a relaxed persistency model the path sends lines at later
    /// ACKs while the core runs on, so its requests to the shared memory
    /// controller run ahead of its clock).
    fn schedule_key(&self) -> u64 {
        self.core.schedule_key().max(self.path.last_persist())
    }

    /// Where its region of interest ended (or has reached, if it runs).
    fn roi_end(&self) -> u64 {
        self.frozen.as_ref().map_or_else(|| self.end_time(), |f| f.end)
    }

    /// Its counts over its region of interest: core, persist path,
    /// transactions committed.
    fn roi_counts(&self) -> (&CoreStats, &PersistPathStats, u64) {
        match &self.frozen {
            Some(f) => (&f.stats, &f.persist, f.tx_committed),
            None => (&self.stats, &self.persist, self.tx_committed),
        }
    }

    /// Its region of interest is over; it runs on from here, its counts
    /// kept as they are now.
    fn freeze(&mut self) {
        self.frozen = Some(FrozenCore {
            stats: self.stats.clone(),
            persist: self.persist.clone(),
            end: self.end_time(),
            ooo: self.core.ooo_stats(),
            tx_committed: self.tx_committed,
        });
        self.core.run_on();
    }
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
            l1i: c.l1i.latency_cycles as u64,
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
        let buffers = |l: &CacheLevel| (c.mshrs == MshrBounds::Bounded && l.capacity_bytes > 0).then(|| MissBuffers::new(l));
        // Only the `ooo` core with its fetch front end reads L1I.
        let fetches = cfg.core.model == crate::config::CoreModel::Ooo && cfg.core.ooo.front_end == crate::config::FrontEnd::Fetch;
        let units = (0..cfg.core.count.max(1) as usize)
            .map(|i| {
                Ok(CoreUnit {
                    core: Core::new(&cfg.core),
                    l1: TagCache::new(c.l1d.capacity_bytes, c.l1d.ways),
                    l2: TagCache::new(c.l2.capacity_bytes, c.l2.ways),
                    l1b: buffers(&c.l1d),
                    l2b: buffers(&c.l2),
                    l1i: TagCache::new(if fetches { c.l1i.capacity_bytes } else { 0 }, c.l1i.ways),
                    l1ib: if fetches { buffers(&c.l1i) } else { None },
                    l1i_start: Default::default(),
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
                    warm_at_machine_roi: None,
                    ooo_start: None,
                    tx_begun: 0,
                    tx_committed: 0,
                    lo: u64::MAX,
                    hi: 0,
                    frozen: None,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let pcm = Pcm::from_config(cfg, sys.mc.layout(), |ns| cycles(ns, ghz));
        Ok(TimingSim {
            units,
            l3: TagCache::new(c.l3.capacity_bytes, c.l3.ways),
            l3b: buffers(&c.l3),
            pcm,
            engine: Engine::new(EngineShape {
                aes: (cfg.security.aes_units, lat.aes, cfg.security.aes_interval_cycles as u64),
                mac: (cfg.security.mac_units, lat.mac, cfg.security.mac_interval_cycles as u64),
                hash: (cfg.security.hash_units, lat.hash, lat.hash_interval),
                registers: (
                    lat.mset_hash,
                    cfg.scheme.params().hash_registers().unwrap_or(crate::scheme::params::HashRegisters::OneAtATime),
                ),
                background_entries: cfg.security.background_queue_entries(),
                metadata_cache: (cfg.security.metadata_cache_ports, lat.mdc, cfg.security.metadata_cache_mshrs),
            }),
            lat,
            stats: RunStats::new(cfg),
            sys,
            roi_start: Counters::default(),
            rec: Some(Box::default()),
            lock: None,
            horizon_margin: if cfg.core.model == crate::config::CoreModel::Ooo { HORIZON_MARGIN_CYCLES } else { 0 },
            horizon: 0,
        })
    }

    /// Run the first `instructions` (at least; up to the end of the
    /// instruction that reaches them) as a warm-up: through the whole
    /// model, outside the statistics ([`Warmup`]). With several cores,
    /// each core warms up on its own first `instructions`, and the
    /// machine's region of interest begins with the first core's
    /// (`end_warmup`).
    pub fn with_warmup(self, instructions: u64) -> Self {
        let n = self.units.len();
        self.with_warmups(&vec![instructions; n])
    }

    /// [`Self::with_warmup`] with each core's own count (a mix whose
    /// parts warm up as they do alone); a core beyond the list has none.
    pub fn with_warmups(mut self, instructions: &[u64]) -> Self {
        let cold = (0..self.units.len()).any(|c| instructions.get(c).is_none_or(|&w| w == 0));
        for (c, u) in self.units.iter_mut().enumerate() {
            let w = instructions.get(c).copied().unwrap_or(0);
            u.warmup = (w > 0).then(|| Warmup::new(w));
            // A core with none begins the machine's region at cycle 0:
            // every warm-up instruction is inside it.
            u.warm_at_machine_roi = (w > 0 && cold).then_some(0);
        }
        self
    }

    /// No memory request comes before `t` from now on: the shared
    /// structures' calendars and the caches' buffers drop what ended.
    fn set_horizon(&mut self, t: u64) {
        if t <= self.horizon {
            return;
        }
        self.horizon = t;
        self.pcm.set_horizon(t);
        self.engine.set_horizon(t);
        self.each_buffer_mut(|b| b.set_horizon(t));
    }

    /// `f` on every cache's MSHRs and write buffer: each core's L1I, L1D
    /// and L2, the L3. A plain loop: it runs at every event.
    fn each_buffer_mut(&mut self, mut f: impl FnMut(&mut MissBuffers)) {
        for u in &mut self.units {
            if let Some(b) = &mut u.l1ib {
                f(b);
            }
            if let Some(b) = &mut u.l1b {
                f(b);
            }
            if let Some(b) = &mut u.l2b {
                f(b);
            }
        }
        if let Some(b) = &mut self.l3b {
            f(b);
        }
    }

    /// The caches' buffers count from `t` on (the region of interest's start).
    fn mark_buffers_roi_start(&mut self, t: u64) {
        self.each_buffer_mut(|b| b.mark_roi_start(t));
    }

    /// Each cache level's buffers over a run of `cycles` ending at `end`,
    /// the private levels summed over the cores.
    fn buffer_reports(&self, cycles: u64, end: u64) -> [Option<BufferReport>; 4] {
        let sum = |it: &mut dyn Iterator<Item = &MissBuffers>| {
            it.map(|b| b.report(cycles, end)).reduce(|mut a, b| {
                a.add(&b);
                a
            })
        };
        [
            sum(&mut self.units.iter().filter_map(|u| u.l1ib.as_ref())),
            sum(&mut self.units.iter().filter_map(|u| u.l1b.as_ref())),
            sum(&mut self.units.iter().filter_map(|u| u.l2b.as_ref())),
            self.l3b.as_ref().map(|b| b.report(cycles, end)),
        ]
    }

    /// The end of the machine's region of interest: its last core's (each
    /// core's: every instruction of its region retired and every store
    /// persistent).
    fn now(&self) -> u64 {
        self.units.iter().map(CoreUnit::roi_end).max().unwrap_or(0)
    }

    fn counters(&self, time: u64) -> Counters {
        Counters::of(time, &self.sys, self.units.iter().map(|u| [&u.l1, &u.l2]), &self.l3, &self.pcm)
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
                    let cycles = u.roi_end().saturating_sub(u.roi_began).max(1);
                    let (stats, persist, tx) = u.roi_counts();
                    PerCoreStats {
                        instructions: stats.instructions,
                        instructions_run_on: u.stats.instructions - stats.instructions,
                        cycles,
                        ipc: stats.instructions as f64 / cycles as f64,
                        loads: stats.loads,
                        stores: stats.stores,
                        volatile_stores: stats.volatile_stores,
                        transactions: tx,
                        store_buffer_stall_cycles: stats.store_buffer_stall_cycles,
                        persist_path: persist.clone(),
                    }
                })
                .collect();
        }
        for u in &self.units {
            let (stats, persist, _) = u.roi_counts();
            s.roi.core.add(stats);
            s.roi.persist_path.add(persist);
        }
        s.finalize(&end, &self.roi_start, &self.pcm);
        s.roi.engine = self.engine.report(s.roi.core.cycles, now);
        let [l1i, rest @ ..] = self.buffer_reports(s.roi.core.cycles, now);
        if let Some(r) = l1i {
            // L1I's tags count from the region of interest's start.
            let mut tags = crate::util::set_assoc::CacheStats::default();
            for u in &self.units {
                let (now, then) = (u.l1i.stats(), u.l1i_start);
                tags.hits += now.hits - then.hits;
                tags.misses += now.misses - then.misses;
            }
            let level = DataCacheReport { tags: tags.report(), mshrs: Some(r.mshrs), write_buffer: None };
            s.roi.caches.insert("l1i".to_string(), level);
        }
        for (name, r) in ["l1d", "l2", "l3"].iter().zip(rest) {
            if let (Some(level), Some(r)) = (s.roi.caches.get_mut(*name), r) {
                level.mshrs = Some(r.mshrs);
                level.write_buffer = Some(r.write_buffer);
            }
        }
        let u0 = &self.units[0];
        let ooo = u0.frozen.as_ref().map_or_else(|| u0.core.ooo_stats(), |f| f.ooo);
        s.roi.core.ooo = ooo.map(|o| o.minus(&u0.ooo_start.unwrap_or_default()));
        if multi {
            let cycles = s.roi.core.cycles;
            let seconds = cycles as f64 / (self.sys.cfg.core.frequency_ghz * 1e9);
            let transactions: u64 = self.units.iter().map(|u| u.roi_counts().2).sum();
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
                security_engine: {
                    let hash = self.engine.report(cycles, now).hash;
                    EngineStats { tree_updates: self.engine.tree_updates, busy_cycles: hash.busy_cycles, utilisation: hash.utilisation }
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
