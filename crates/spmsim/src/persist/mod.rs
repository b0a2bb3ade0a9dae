//! Front ends: where a store becomes persistent (its PoP) and what sits
//! between the core and the memory controller.
//!
//! ```text
//!  Direct:         store --(flush+fence)--> MC secure write --> WPQ     (PoP = SPoP = MC)
//!  PersistBuffer:  store --> PB beside L1D --(watermark drain)--> MC    (PoP = PB; BBB, SecPB)
//!  CacheHierarchy: store --> write-back caches --(eviction)--> MC       (PoP = L1D; eADR)
//!  Tep:            store --> volatile L1D lines --(TEP order)--> MC     (PoP = MC; Secon 3.3)
//! ```
//!
//! The persistency model (`persistence.model`) picks between the first and
//! the last at the memory controller: `strict` and `epoch` send each store
//! straight on (`Direct`; `System::barrier` waits for the ACKs), `tep` keeps
//! lines in the L1D until transaction-specific epoch persistency lets them
//! go ([`tep`]).

mod coherence;
mod data_cache;
mod persist_buffer;
pub mod tep;

pub use coherence::{Coherence, CoherenceStats, Handover};
pub use data_cache::DataCache;
pub use persist_buffer::{Entry, PersistBuffer, StoreOutcome};
pub use tep::{TepFront, TepStats};

use crate::config::{BatteryDomain, PersistPoint, PersistenceConfig, PersistencyModel};
use crate::engine::controller::MemoryController;
use crate::engine::store::CheckFailure;
use crate::scheme::params::{FrontDrain, SchemeWork};

#[derive(Clone, Debug)]
pub enum FrontEnd {
    Direct,
    PersistBuffer(PersistBuffer),
    CacheHierarchy(DataCache),
    /// Transaction-specific epoch persistency's L1D and manager (Secon 3.3).
    Tep(TepFront),
}

impl FrontEnd {
    /// The front end of core `core` for a persistence configuration
    /// (`seed` draws TEP's flush order).
    pub fn for_core(p: &PersistenceConfig, work: &SchemeWork, core: usize, seed: u64) -> Self {
        match (p.model, &p.point) {
            (PersistencyModel::Tep, PersistPoint::MemoryController) => {
                let mut t = TepFront::new(&p.tep, seed ^ (core as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                // The workloads' convention (workload::pheap, threads): thread
                // t's undo log is [t * LOG_BYTES, (t + 1) * LOG_BYTES).
                let (start, end) = crate::trace::event::log_region_of_thread(core);
                t.set_log_region(start, end);
                FrontEnd::Tep(t)
            }
            _ => FrontEnd::new(&p.point, work),
        }
    }

    pub fn new(p: &PersistPoint, work: &SchemeWork) -> Self {
        match p {
            PersistPoint::MemoryController => FrontEnd::Direct,
            PersistPoint::PersistBuffer { entries, high_watermark_pct, low_watermark_pct, coalesce_metadata, .. } => {
                FrontEnd::PersistBuffer(PersistBuffer::new(*entries, *high_watermark_pct, *low_watermark_pct, work, *coalesce_metadata))
            }
            PersistPoint::CacheHierarchy { cache } => FrontEnd::CacheHierarchy(DataCache::new(cache.capacity_bytes, cache.ways)),
        }
    }

    /// Apply a store of `bytes` at `offset` within `block`.
    pub fn store(&mut self, mc: &mut MemoryController, block: u64, offset: usize, bytes: &[u8]) -> Result<(), CheckFailure> {
        self.store_inner(mc, block, offset, bytes)
    }

    fn store_inner(&mut self, mc: &mut MemoryController, block: u64, offset: usize, bytes: &[u8]) -> Result<(), CheckFailure> {
        match self {
            FrontEnd::Direct => {
                let mut b = mc.read(block)?;
                b[offset..offset + bytes.len()].copy_from_slice(bytes);
                mc.write(block, &b)
            }
            FrontEnd::PersistBuffer(pb) => {
                pb.store(mc, block, offset, bytes)?;
                for _ in 0..pb.watermark_drains() {
                    pb.drain_oldest(mc)?;
                }
                Ok(())
            }
            FrontEnd::CacheHierarchy(c) => c.store(mc, block, offset, bytes),
            FrontEnd::Tep(t) => t.store(mc, block, offset, bytes),
        }
    }

    pub fn load(&mut self, mc: &mut MemoryController, block: u64) -> Result<[u8; 64], CheckFailure> {
        match self {
            FrontEnd::Direct => mc.read(block),
            FrontEnd::PersistBuffer(pb) => pb.load(mc, block),
            FrontEnd::CacheHierarchy(c) => c.load(mc, block),
            FrontEnd::Tep(t) => t.load(mc, block),
        }
    }

    /// Whether it holds nothing the battery would have to drain.
    pub fn is_empty(&self) -> bool {
        match self {
            FrontEnd::Direct => true,
            FrontEnd::PersistBuffer(pb) => pb.occupancy() == 0,
            FrontEnd::CacheHierarchy(c) => c.dirty_count() == 0,
            FrontEnd::Tep(t) => t.occupancy() == 0,
        }
    }

    /// Power failure: drain what the battery backs, lose the rest. Returns
    /// the lines moved.
    pub fn crash_drain(&mut self, mc: &mut MemoryController, battery: &BatteryDomain, how: FrontDrain) -> Result<u64, CheckFailure> {
        match self {
            FrontEnd::Direct => Ok(0),
            FrontEnd::Tep(t) => {
                // The L1D is not in the battery domain: its lines are lost.
                t.discard();
                Ok(0)
            }
            FrontEnd::PersistBuffer(pb) => {
                if !battery.persist_buffer {
                    pb.discard();
                    return Ok(0);
                }
                pb.crash_drain(mc)
            }
            FrontEnd::CacheHierarchy(c) => {
                let dirty = c.take_dirty();
                if !battery.caches {
                    return Ok(0);
                }
                for (b, data) in &dirty {
                    match how {
                        FrontDrain::Secured => mc.write(*b, data)?,
                        FrontDrain::Unsecured => mc.write_unsecured(*b, data),
                    }
                }
                Ok(dirty.len() as u64)
            }
        }
    }

    /// Orderly shutdown: everything drains through the security engine.
    pub fn flush_clean(&mut self, mc: &mut MemoryController) -> Result<u64, CheckFailure> {
        let lines = match self {
            FrontEnd::Direct => Vec::new(),
            FrontEnd::PersistBuffer(pb) => return pb.flush(mc),
            FrontEnd::CacheHierarchy(c) => c.take_dirty(),
            FrontEnd::Tep(t) => {
                let n = t.stats.lines_flushed;
                t.flush_all(mc)?;
                return Ok(t.stats.lines_flushed - n);
            }
        };
        for (b, data) in &lines {
            mc.write(*b, data)?;
        }
        Ok(lines.len() as u64)
    }
}
