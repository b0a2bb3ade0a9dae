//! Run statistics, in a ChampSim-like shape: one `roi` object with the
//! counters of the region of interest.

use super::core::Core;
use super::pcm::Pcm;
use super::tags::TagCache;
use crate::crypto::CryptoWork;
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
    /// SecPB persists (stores entering the buffer) per 1000 instructions.
    pub ppti: f64,
    /// Stores per SecPB entry allocation.
    pub nwpe: f64,
    pub bmt_root_updates: u64,
    pub store_buffer_stall_cycles: u64,
    pub secpb_full_stall_cycles: u64,
    /// Cycles from a store's release to the unblocking of the next (access
    /// and early metadata work; for SP the whole tuple).
    pub secpb_early_cycles: u64,
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

#[derive(Clone, Debug, Serialize)]
pub struct RunStats {
    pub scheme: String,
    pub workload: String,
    pub seed: u64,
    pub crypto_mode: String,
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
            roi: Roi::default(),
            crash_at_end: None,
            workload_notes: Vec::new(),
            loads: 0,
            stores: 0,
        }
    }

    pub(super) fn finalize(&mut self, sys: &System, _core: &Core, caches: [&TagCache; 3], pcm: &Pcm, _cap: usize) {
        let r = &mut self.roi;
        r.loads = self.loads;
        r.stores = self.stores;
        r.ipc = r.instructions as f64 / r.cycles as f64;
        r.ppti = 1000.0 * r.stores as f64 / r.instructions.max(1) as f64;
        if let FrontEnd::PersistBuffer(pb) = &sys.front {
            r.nwpe = pb.stats.stores as f64 / pb.stats.allocations.max(1) as f64;
            r.stale_early_counters = pb.stats.stale_early_counters;
        }
        r.bmt_root_updates = sys.mc.st.root_updates;
        r.nvm_reads = sys.mc.st.nvm.reads;
        r.nvm_writes = sys.mc.st.nvm.enqueued;
        r.wpq_full_waits = pcm.wpq_full_waits;
        r.wpq_merged_writes = pcm.merged_writes;
        r.pcm_write_utilisation = pcm.write_utilisation(r.cycles);
        r.crypto = sys.mc.st.crypto.work;
        for (name, c) in ["l1d", "l2", "l3"].iter().zip(caches) {
            r.cache_hit_rate.insert(name.to_string(), c.hit_rate());
        }
        for (name, c) in sys.mc.st.caches.all() {
            r.metadata_cache_hit_rate.insert(name.to_string(), rate(c.stats.hits, c.stats.misses));
        }
    }
}
