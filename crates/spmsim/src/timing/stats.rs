//! Run statistics, in a ChampSim-like shape: one `roi` object with an
//! object per component of the model, each the component's own stats type
//! (core, caches, persist path, metadata caches, tree, crypto, memory).

use super::core::CoreStats;
use super::pcm::{MemoryStats, Pcm, PcmStats};
use super::persist::{BufferStats, PersistPathStats};
use super::tags::TagCache;
use crate::engine::crypto::CryptoWork;
use crate::engine::hooks::DrainWork;
use crate::engine::metacache::CacheStats;
use crate::engine::nvm::ByKind;
use crate::engine::tree::TreeStats;
use crate::machine::System;
use crate::persist::CoherenceStats;
use crate::persist::FrontEnd;
use crate::util::set_assoc::CacheReport;
use serde::Serialize;
use std::collections::BTreeMap;

/// The region of interest: one object per component, each the
/// component's own stats type (`serde` gives the JSON tree; the text
/// printer `output::stats_text` walks the same tree).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Roi {
    pub core: CoreStats,
    /// The data caches by level (`l1d`, `l2`, `l3`): tags, and the
    /// level's MSHRs and write buffer.
    pub caches: BTreeMap<String, DataCacheReport>,
    pub persist_path: PersistPathStats,
    /// The metadata caches by name (`counter`, `mac`, `tree` or `unified`).
    pub metadata_caches: BTreeMap<String, CacheReport>,
    pub tree: TreeStats,
    /// The scheme's own counters, as its runtime gives them
    /// (`Scheme::stats`; STAR's bitmap lines, STAR Fig. 10, Table II).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheme: Option<serde_json::Value>,
    /// Pads, MACs and tree hashes the security engine computed.
    pub crypto: CryptoWork,
    /// The security engine's units and background queue: how long each
    /// was busy and how full the queue got.
    pub engine: super::engine::EngineResources,
    pub memory: MemoryStats,
    /// Each core's own counts, with more than one core. `core` above is
    /// then their sum; its cycles run from the end of the last core's
    /// warm-up (the start, without one) to the end of the run, and its IPC
    /// is the machine's: all instructions over those cycles. Each core's
    /// cycles run from the end of its own warm-up.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cores: Vec<PerCoreStats>,
    /// What only a machine of several cores has: throughput, the shared
    /// security engine's load, the coherence of the SecPBs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multicore: Option<MulticoreStats>,
}

impl Roi {
    /// The scheme's counters under `key` of `roi.scheme`, as type `T`
    /// (STAR's `bitmap_lines` as `BitmapStats`), if it reported them.
    pub fn scheme_stats<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        serde_json::from_value(self.scheme.as_ref()?.get(key)?.clone()).ok()
    }
}

/// A data cache level's counts: its tags' hits and misses, and its
/// MSHRs and write buffer (absent under `caches.mshrs = "unbounded"` and
/// for a level the machine does not have).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DataCacheReport {
    #[serde(flatten)]
    pub tags: CacheReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mshrs: Option<super::caches::MshrStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_buffer: Option<super::caches::WriteBufferStats>,
}

/// One core of a multi-core run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PerCoreStats {
    pub instructions: u64,
    /// Instructions it ran on after its region of interest, until the
    /// last core's ended (`schedule.rs`); not in its counts.
    #[serde(skip_serializing_if = "is_zero")]
    pub instructions_run_on: u64,
    /// From this core's region of interest's start to its last retired
    /// instruction or persisted store.
    pub cycles: u64,
    pub ipc: f64,
    pub loads: u64,
    pub stores: u64,
    pub volatile_stores: u64,
    /// Transactions committed (TxCommit markers).
    pub transactions: u64,
    pub store_buffer_stall_cycles: u64,
    pub persist_path: PersistPathStats,
}

/// Shared resources of a multi-core run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MulticoreStats {
    pub cores: usize,
    /// Transactions committed on all cores, and per second of simulated
    /// time (the machine's cycles at the core clock).
    pub transactions: u64,
    pub transactions_per_second: f64,
    /// Cycles cores waited for the ticket lock of shared data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock_wait_cycles: Option<u64>,
    /// SecPB entries migrated and flushed between cores (SecPB IV-C c).
    pub coherence: CoherenceStats,
    pub security_engine: EngineStats,
    pub memory_controller: QueueStats,
}

/// Queueing at the memory controller, shared by the cores.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueStats {
    /// Writes that found the WPQ full, and the cycles they waited for a slot.
    pub wpq_full_waits: u64,
    pub wpq_wait_cycles: u64,
    /// Mean wait of a write for a WPQ slot, over all writes offered.
    pub mean_wpq_wait_cycles: f64,
    /// Mean wait of a read for its bank before it started.
    pub mean_read_wait_cycles: f64,
}

impl QueueStats {
    pub(super) fn of(d: &PcmStats, writes_offered: u64) -> Self {
        QueueStats {
            wpq_full_waits: d.wpq_full_waits,
            wpq_wait_cycles: d.wpq_wait_cycles,
            mean_wpq_wait_cycles: d.wpq_wait_cycles as f64 / writes_offered.max(1) as f64,
            mean_read_wait_cycles: d.read_wait_cycles as f64 / d.reads.max(1) as f64,
        }
    }
}

/// The memory controller's security engine, shared by the cores.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EngineStats {
    /// Tree updates (eager BMT updates, SIT node MACs) it ran.
    pub tree_updates: u64,
    /// Cycles its tree unit was taken (a pipelined update for one stage).
    pub busy_cycles: u64,
    /// busy_cycles over the run's cycles (near 1: the engine bounds the
    /// machine's throughput).
    pub utilisation: f64,
}

impl CoreStats {
    /// Add another core's counts (rates are computed afterwards).
    pub(super) fn add(&mut self, o: &CoreStats) {
        self.instructions += o.instructions;
        self.loads += o.loads;
        self.stores += o.stores;
        self.volatile_stores += o.volatile_stores;
        self.volatile_write_backs += o.volatile_write_backs;
        self.store_buffer_stall_cycles += o.store_buffer_stall_cycles;
        if let Some(t) = &o.tep {
            self.tep.get_or_insert_with(Default::default).add(t);
        }
    }
}

impl PersistPathStats {
    /// Add another core's counts.
    pub(super) fn add(&mut self, o: &PersistPathStats) {
        self.cycles += o.cycles;
        self.unpriced_metadata_writes += o.unpriced_metadata_writes;
        if let Some(b) = &o.buffer {
            let t: &mut BufferStats = self.buffer_mut();
            t.allocations += b.allocations;
            t.drains += b.drains;
            t.full_stall_cycles += b.full_stall_cycles;
            t.migrated_in += b.migrated_in;
        }
        if let Some(d) = &o.deferred_roots {
            let t = self.deferred_roots.get_or_insert_with(Default::default);
            t.updates += d.updates;
            t.queue_full_waits += d.queue_full_waits;
            t.same_block_waits += d.same_block_waits;
            t.wait_cycles += d.wait_cycles;
            t.ack_lag_cycles += d.ack_lag_cycles;
        }
    }
}

/// The warm-up of a run, as ChampSim reports it when the warm-up completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WarmupStats {
    /// Instructions the warm-up ran: the count asked for, up to the end of
    /// the instruction that reached it.
    pub instructions: u64,
    /// The cycle the region of interest began at.
    pub cycles: u64,
    /// Several cores whose warm-ups end at different times: the warm-up
    /// instructions cores ran after the machine's region of interest
    /// began (with the first core's), which the shared components' counts
    /// (PCM, engine, L3) cover.
    #[serde(skip_serializing_if = "is_zero")]
    pub instructions_in_region: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunStats {
    pub scheme: String,
    pub workload: String,
    pub seed: u64,
    pub crypto_mode: String,
    /// The warm-up before the region of interest (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup: Option<WarmupStats>,
    pub roi: Roi,
    /// The work a battery pays for if power fails at the end of the run.
    pub crash_at_end: Option<DrainWork>,
    /// How the workload's events were obtained (trace source, derived
    /// values, a trace shorter than asked for).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workload_notes: Vec<String>,
}

impl RunStats {
    pub fn new(cfg: &crate::config::SimConfig) -> Self {
        RunStats {
            scheme: cfg.name.clone(),
            workload: String::new(),
            seed: 0,
            // The config's own spelling (`real`, `timing-only`).
            crypto_mode: serde_json::to_value(cfg.security.crypto).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
            warmup: None,
            roi: Roi::default(),
            crash_at_end: None,
            workload_notes: Vec::new(),
        }
    }

    /// Fill the region of interest from the counters at its end and at
    /// its start (all zero without a warm-up): each count is the
    /// difference, each rate is computed from the differences.
    pub(super) fn finalize(&mut self, end: &Counters, start: &Counters, pcm: &Pcm) {
        let d = end.since(start);
        let r = &mut self.roi;
        let c = &mut r.core;
        c.cycles = d.time.max(1);
        c.ipc = c.instructions as f64 / c.cycles as f64;
        c.ppti = 1000.0 * c.stores as f64 / c.instructions.max(1) as f64;
        if let Some((stores, allocations, stale)) = d.persist_buffer {
            let b = r.persist_path.buffer_mut();
            b.nwpe = stores as f64 / allocations.max(1) as f64;
            b.stale_early_counters = stale;
        }
        r.tree = TreeStats { root_updates: d.root_updates };
        r.scheme = d.scheme;
        let write_span = c.cycles.max(pcm.last_write_done().saturating_sub(start.time));
        let busiest_bank = d.bank_writes.iter().copied().max().unwrap_or(0);
        r.memory = pcm.report(&d.pcm, d.nvm_reads, d.nvm_writes, busiest_bank, &d.bank_busy, write_span);
        r.crypto = d.crypto;
        for (name, c) in ["l1d", "l2", "l3"].iter().zip(d.caches) {
            r.caches.insert(name.to_string(), DataCacheReport { tags: c.report(), ..Default::default() });
        }
        for (name, c) in &d.metadata_caches {
            r.metadata_caches.insert(name.to_string(), c.report());
        }
    }
}

/// A tree of counts minus the same tree at an earlier moment, leaf by
/// leaf (a leaf the earlier tree lacks counts from zero; a leaf that is
/// not a count is taken as it is now).
fn counts_since(now: &serde_json::Value, before: Option<&serde_json::Value>) -> serde_json::Value {
    use serde_json::Value;
    match (now, before) {
        (Value::Object(m), b) => Value::Object(m.iter().map(|(k, v)| (k.clone(), counts_since(v, b.and_then(|b| b.get(k))))).collect()),
        (Value::Number(n), Some(Value::Number(b))) => match (n.as_u64(), b.as_u64()) {
            (Some(n), Some(b)) => Value::from(n - b),
            _ => now.clone(),
        },
        _ => now.clone(),
    }
}

/// The counters the components of the model keep, read at one moment (the
/// end of a warm-up, the end of the run). The run loop's own counts (in
/// [`Roi`]) restart at the warm-up's end instead.
#[derive(Clone, Debug, Default)]
pub(super) struct Counters {
    /// The cycle the moment is at.
    pub time: u64,
    /// L1D, L2, L3.
    caches: [CacheStats; 3],
    metadata_caches: Vec<(&'static str, CacheStats)>,
    pcm: PcmStats,
    /// Device writes per PCM bank, and the cycles each was booked for.
    bank_writes: Vec<u64>,
    bank_busy: Vec<u64>,
    /// (stores, allocations, stale early counters) of the persist buffer.
    persist_buffer: Option<(u64, u64, u64)>,
    root_updates: u64,
    /// The scheme's counters (a JSON tree of counts).
    scheme: Option<serde_json::Value>,
    nvm_reads: ByKind,
    nvm_writes: ByKind,
    crypto: CryptoWork,
}

impl Counters {
    /// The counters at `time`; each core's private levels (`[L1D, L2]`)
    /// and persist buffer summed over the cores.
    pub(super) fn of<'a>(time: u64, sys: &System, private: impl Iterator<Item = [&'a TagCache; 2]>, l3: &TagCache, pcm: &Pcm) -> Self {
        let mut caches = [CacheStats::default(), CacheStats::default(), l3.stats()];
        for p in private {
            for (sum, c) in caches.iter_mut().zip(p) {
                let s = c.stats();
                sum.hits += s.hits;
                sum.misses += s.misses;
                sum.writebacks += s.writebacks;
            }
        }
        let mut persist_buffer = None;
        for f in &sys.fronts {
            if let FrontEnd::PersistBuffer(pb) = f {
                let (s, a, st) = persist_buffer.get_or_insert((0, 0, 0));
                *s += pb.stats.stores;
                *a += pb.stats.allocations;
                *st += pb.stats.stale_early_counters;
            }
        }
        Counters {
            time,
            caches,
            metadata_caches: sys.mc.st.caches.all().into_iter().map(|(n, c)| (n, c.stats)).collect(),
            pcm: pcm.stats(),
            bank_writes: pcm.bank_writes().to_vec(),
            bank_busy: pcm.bank_busy(),
            persist_buffer,
            root_updates: sys.mc.st.root_updates,
            scheme: sys.mc.rules.scheme.stats(&sys.mc.st),
            nvm_reads: sys.mc.st.nvm.reads,
            nvm_writes: sys.mc.st.nvm.enqueued,
            crypto: sys.mc.st.crypto.work,
        }
    }

    /// The PCM's counts between `before` and `self`, and the writes
    /// offered to the WPQ meanwhile.
    pub(super) fn pcm_since(&self, before: &Counters) -> (PcmStats, u64) {
        (self.pcm.since(&before.pcm), self.nvm_writes.since(&before.nvm_writes).total())
    }

    /// What happened between `before` and `self` (`before` all zero: all
    /// of it).
    fn since(&self, before: &Counters) -> Counters {
        let cache = |i: usize| self.caches[i].since(&before.caches[i]);
        let metadata_caches = self
            .metadata_caches
            .iter()
            .map(|(n, c)| match before.metadata_caches.iter().find(|(m, _)| m == n) {
                Some((_, b)) => (*n, c.since(b)),
                None => (*n, *c),
            })
            .collect();
        let persist_buffer = self.persist_buffer.map(|p| match before.persist_buffer {
            Some(b) => (p.0 - b.0, p.1 - b.1, p.2 - b.2),
            None => p,
        });
        Counters {
            time: self.time - before.time,
            caches: [0, 1, 2].map(cache),
            metadata_caches,
            pcm: self.pcm.since(&before.pcm),
            bank_writes: self.bank_writes.iter().zip(before.bank_writes.iter().chain(std::iter::repeat(&0))).map(|(a, b)| a - b).collect(),
            bank_busy: self.bank_busy.iter().zip(before.bank_busy.iter().chain(std::iter::repeat(&0))).map(|(a, b)| a - b).collect(),
            persist_buffer,
            root_updates: self.root_updates - before.root_updates,
            scheme: self.scheme.as_ref().map(|s| counts_since(s, before.scheme.as_ref())),
            nvm_reads: self.nvm_reads.since(&before.nvm_reads),
            nvm_writes: self.nvm_writes.since(&before.nvm_writes),
            crypto: self.crypto.since(&before.crypto),
        }
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}
