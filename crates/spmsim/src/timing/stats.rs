//! Run statistics, in a ChampSim-like shape: one `roi` object with the
//! counters of the region of interest.

use super::pcm::{Pcm, PcmStats};
use super::tags::TagCache;
use crate::crypto::CryptoWork;
use crate::metacache::CacheStats;
use crate::nvm::ByKind;
use crate::persist::FrontEnd;
use crate::system::{DrainWork, System};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, Serialize)]
pub struct Roi {
    pub cycles: u64,
    pub instructions: u64,
    pub ipc: f64,
    /// Load accesses after splitting at 64 B blocks: a load that straddles
    /// two blocks counts twice. Not instructions, and not the trace's load
    /// records (`spmsim trace info` counts those).
    pub loads: u64,
    /// Block stores that persisted: the pieces of one store instruction in
    /// one block count once, one straddling two blocks counts twice. Not
    /// the trace's store records.
    pub stores: u64,
    /// Block stores to volatile memory, counted as `stores` are: they took
    /// the write-back path, not the persist path.
    pub volatile_stores: u64,
    /// SecPB persists (stores entering the buffer) per 1000 instructions.
    pub ppti: f64,
    /// Stores per SecPB entry allocation.
    pub nwpe: f64,
    pub bmt_root_updates: u64,
    pub store_buffer_stall_cycles: u64,
    pub secpb_full_stall_cycles: u64,
    /// Cycles from a store's release to the unblocking of the next (access
    /// and early metadata work; for SP the whole tuple).
    pub persist_path_cycles: u64,
    pub secpb_allocations: u64,
    pub secpb_drains: u64,
    /// Early counters found stale at drain (page re-encrypted meanwhile).
    pub stale_early_counters: u64,
    pub wpq_full_waits: u64,
    /// NVM writes merged into a queued write to the same block (they are
    /// counted in `nvm_writes` but took no device time).
    pub wpq_merged_writes: u64,
    /// Share of the PCM banks' time spent writing (near 1: the run is
    /// bound by PCM write bandwidth).
    pub pcm_write_utilisation: f64,
    pub nvm_reads: ByKind,
    pub nvm_writes: ByKind,
    pub cache_hit_rate: BTreeMap<String, f64>,
    pub metadata_cache_hit_rate: BTreeMap<String, f64>,
    pub crypto: CryptoWork,
}

/// The warm-up of a run, as ChampSim reports it when the warm-up completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WarmupStats {
    /// Instructions the warm-up ran: the count asked for, up to the end of
    /// the instruction that reached it.
    pub instructions: u64,
    /// The cycle the region of interest began at.
    pub cycles: u64,
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
    #[serde(skip)]
    pub loads: u64,
    /// Stores that persisted: the pieces of one wide store instruction in
    /// one block count once (they are one write into the SecPB entry).
    #[serde(skip)]
    pub stores: u64,
    #[serde(skip)]
    pub volatile_stores: u64,
}

fn rate(h: u64, m: u64) -> f64 {
    if h + m == 0 {
        0.0
    } else {
        h as f64 / (h + m) as f64
    }
}

impl RunStats {
    pub fn new(cfg: &crate::config::SimConfig) -> Self {
        RunStats {
            scheme: cfg.name.clone(),
            workload: String::new(),
            seed: 0,
            crypto_mode: format!("{:?}", cfg.security.crypto).to_lowercase(),
            warmup: None,
            roi: Roi::default(),
            crash_at_end: None,
            workload_notes: Vec::new(),
            loads: 0,
            stores: 0,
            volatile_stores: 0,
        }
    }

    /// Fill the region of interest from the counters at its end and at
    /// its start (all zero without a warm-up): each count is the
    /// difference, each rate is computed from the differences.
    pub(super) fn finalize(&mut self, end: &Counters, start: &Counters, pcm: &Pcm) {
        let d = end.since(start);
        let r = &mut self.roi;
        r.cycles = d.time.max(1);
        r.loads = self.loads;
        r.stores = self.stores;
        r.volatile_stores = self.volatile_stores;
        r.ipc = r.instructions as f64 / r.cycles as f64;
        r.ppti = 1000.0 * r.stores as f64 / r.instructions.max(1) as f64;
        if let Some((stores, allocations, stale)) = d.persist_buffer {
            r.nwpe = stores as f64 / allocations.max(1) as f64;
            r.stale_early_counters = stale;
        }
        r.bmt_root_updates = d.root_updates;
        r.nvm_reads = d.nvm_reads;
        r.nvm_writes = d.nvm_writes;
        r.wpq_full_waits = d.pcm.wpq_full_waits;
        r.wpq_merged_writes = d.pcm.merged_writes;
        r.pcm_write_utilisation = pcm.write_utilisation(d.pcm.device_writes, r.cycles);
        r.crypto = d.crypto;
        for (name, c) in ["l1d", "l2", "l3"].iter().zip(d.caches) {
            r.cache_hit_rate.insert(name.to_string(), rate(c.0, c.1));
        }
        for (name, c) in &d.metadata_caches {
            r.metadata_cache_hit_rate.insert(name.to_string(), rate(c.hits, c.misses));
        }
    }
}

/// The counters the components of the model keep, read at one moment (the
/// end of a warm-up, the end of the run). The run loop's own counts (in
/// [`Roi`]) restart at the warm-up's end instead.
#[derive(Clone, Debug, Default)]
pub(super) struct Counters {
    /// The cycle the moment is at.
    pub time: u64,
    /// (hits, misses) of L1D, L2, L3.
    caches: [(u64, u64); 3],
    metadata_caches: Vec<(&'static str, CacheStats)>,
    pcm: PcmStats,
    /// (stores, allocations, stale early counters) of the persist buffer.
    persist_buffer: Option<(u64, u64, u64)>,
    root_updates: u64,
    nvm_reads: ByKind,
    nvm_writes: ByKind,
    crypto: CryptoWork,
}

impl Counters {
    pub(super) fn of(time: u64, sys: &System, caches: [&TagCache; 3], pcm: &Pcm) -> Self {
        Counters {
            time,
            caches: caches.map(|c| (c.stats().hits, c.stats().misses)),
            metadata_caches: sys.mc.st.caches.all().into_iter().map(|(n, c)| (n, c.stats)).collect(),
            pcm: pcm.stats,
            persist_buffer: match &sys.front {
                FrontEnd::PersistBuffer(pb) => Some((pb.stats.stores, pb.stats.allocations, pb.stats.stale_early_counters)),
                _ => None,
            },
            root_updates: sys.mc.st.root_updates,
            nvm_reads: sys.mc.st.nvm.reads,
            nvm_writes: sys.mc.st.nvm.enqueued,
            crypto: sys.mc.st.crypto.work,
        }
    }

    /// What happened between `before` and `self` (`before` all zero: all
    /// of it).
    fn since(&self, before: &Counters) -> Counters {
        let cache = |i: usize| match before.caches.get(i) {
            Some(b) => (self.caches[i].0 - b.0, self.caches[i].1 - b.1),
            None => self.caches[i],
        };
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
            persist_buffer,
            root_updates: self.root_updates - before.root_updates,
            nvm_reads: self.nvm_reads.since(&before.nvm_reads),
            nvm_writes: self.nvm_writes.since(&before.nvm_writes),
            crypto: self.crypto.since(&before.crypto),
        }
    }
}
