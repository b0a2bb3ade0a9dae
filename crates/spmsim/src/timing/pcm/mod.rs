//! The PCM behind its memory controller, one file per controller
//! (`memory_controller.model`): `gem5.rs`, gem5's `MemCtrl` with its NVM
//! interface (the default), and `reads_first.rs`, spmsim's earlier model,
//! kept so that results can be compared with it. Both book requests on
//! calendars, because requests reach them out of time order
//! (docs/timing-order.md).
//!
//! ```text
//!  read(t, block)                 -> when its data is back at the core's side
//!  write_when_ready(t, ready, b)  -> when it holds a WPQ entry (persistent)
//!  set_horizon(h)                 no request will come before h
//! ```

mod gem5;
mod queued;
mod reads_first;
mod slots;

use crate::config::{ControllerModel, SimConfig, WpqPlacement};
use crate::engine::layout::{Layout, RegionKind};
use crate::engine::nvm::ByKind;
use serde::Serialize;

pub use gem5::ControllerStats;

/// The PCM and the controller that schedules it.
#[derive(Clone, Debug)]
pub enum Pcm {
    ReadsFirst(Box<reads_first::ReadsFirst>),
    Gem5(Box<gem5::Gem5>),
}

/// What the PCM and its write queue counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcmStats {
    /// Writes that found every WPQ slot taken.
    pub wpq_full_waits: u64,
    /// Writes that merged into a queued write to the same block.
    pub merged_writes: u64,
    /// Writes the device performed (after merging).
    pub device_writes: u64,
    /// The same, by the kind of block written (when the layout is known).
    pub device_writes_by_kind: ByKind,
    /// Cycles writes waited for a free WPQ slot.
    pub wpq_wait_cycles: u64,
    /// Reads, and the cycles they waited for their bank (other reads, the
    /// write in service, a write drain) before they started.
    pub reads: u64,
    pub read_wait_cycles: u64,
    /// The gem5 controller's own counts (zero under reads-first).
    pub controller: gem5::Counts,
}

/// The memory's counts as the stats tree shows them (`roi.memory`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct MemoryStats {
    /// NVM blocks read, by region.
    pub reads: ByKind,
    /// NVM blocks written (queued to the WPQ), by region.
    pub writes: ByKind,
    /// Writes the PCM device performed, by region: `writes` less those
    /// merged in the WPQ (the write traffic Secon's Figs. 10 and 12 count).
    pub device_writes: ByKind,
    pub wpq_full_waits: u64,
    /// Writes merged into a queued write to the same block (counted in
    /// `writes` but taking no device time).
    pub wpq_merged_writes: u64,
    /// Share of the PCM banks' time spent writing (near 1: the run is
    /// bound by PCM write bandwidth).
    pub write_utilisation: f64,
    /// Share of the same span the bank with the most writes held them (a
    /// burst each when posted, the whole write when bank-serial): near 1
    /// with a low `write_utilisation`, writes pile onto one bank.
    pub busiest_bank_write_utilisation: f64,
    /// The gem5 controller's queues, drains, row buffers and banks
    /// (absent under the reads-first controller).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<ControllerStats>,
}

impl PcmStats {
    /// What happened between `before` and `self`.
    pub fn since(&self, before: &PcmStats) -> PcmStats {
        PcmStats {
            wpq_full_waits: self.wpq_full_waits - before.wpq_full_waits,
            merged_writes: self.merged_writes - before.merged_writes,
            device_writes: self.device_writes - before.device_writes,
            device_writes_by_kind: self.device_writes_by_kind.since(&before.device_writes_by_kind),
            wpq_wait_cycles: self.wpq_wait_cycles - before.wpq_wait_cycles,
            reads: self.reads - before.reads,
            read_wait_cycles: self.read_wait_cycles - before.read_wait_cycles,
            controller: self.controller.since(&before.controller),
        }
    }
}

/// The first start at or after `start` of `len` cycles that overlaps none
/// of the sorted, disjoint intervals `slots`.
fn first_gap(slots: &[(u64, u64)], mut start: u64, len: u64) -> u64 {
    // The first interval ending after `start` (ends are sorted too); past
    // one that overlaps, the next is the next in the list.
    let mut i = slots.partition_point(|&(_, e)| e <= start);
    while i < slots.len() && slots[i].0 < start + len {
        start = start.max(slots[i].1);
        i += 1;
    }
    start
}

impl Pcm {
    /// A reads-first, bank-serial device (the unit tests' simple case).
    #[cfg(test)]
    pub fn new(banks: u32, read_cycles: u64, write_cycles: u64, wpq_entries: u32) -> Self {
        Pcm::ReadsFirst(Box::new(reads_first::ReadsFirst::new(banks, read_cycles, write_cycles, wpq_entries)))
    }

    /// The PCM and controller `cfg` describes, counting device writes by
    /// kind under `layout`; `cycles` turns nanoseconds into core cycles.
    pub fn from_config(cfg: &SimConfig, layout: &Layout, cycles: impl Fn(f64) -> u64) -> Self {
        let n = &cfg.nvm;
        let c = &cfg.memory_controller;
        match c.model {
            ControllerModel::ReadsFirst => {
                let mut p = reads_first::ReadsFirst::with_model(
                    n.write_model,
                    n.banks,
                    cycles(n.read_latency_ns),
                    cycles(n.write_latency_ns),
                    cfg.persistence.wpq_entries,
                    cycles(n.burst_ns),
                    n.write_queue_entries,
                );
                if n.read_scheduling.calendar(cfg.core.count) {
                    p = p.with_read_calendar();
                }
                Pcm::ReadsFirst(Box::new(p.with_kinds(layout, &cfg.persistence.wpq_coalesce)))
            }
            ControllerModel::Gem5 => {
                let in_front = c.wpq == WpqPlacement::InFront;
                // The queue the drain thresholds are a share of.
                let drained = if in_front { n.write_queue_entries } else { cfg.persistence.wpq_entries } as u64;
                // gem5 `mem_ctrl.cc`: `writeBufferSize * perc / 100.0`, truncated.
                let share = |perc: u32| (drained * perc as u64 / 100) as usize;
                let zero_or_cycles = |ns: f64| if ns > 0.0 { cycles(ns) } else { 0 };
                let p = gem5::Params {
                    banks: n.banks as usize,
                    bank_map: n.bank_map,
                    row_blocks: n.row_buffer_bytes / 64,
                    read_miss: cycles(n.read_latency_ns),
                    read_hit: cycles(n.row_hit_latency_ns),
                    burst: cycles(n.burst_ns),
                    write: cycles(n.write_latency_ns),
                    frontend: zero_or_cycles(c.frontend_latency_ns),
                    backend: zero_or_cycles(c.backend_latency_ns),
                    read_queue: n.read_queue_entries as usize,
                    write_queue: drained as usize,
                    wpq: in_front.then_some(cfg.persistence.wpq_entries as usize),
                    high: share(c.write_high_thresh_perc),
                    low: share(c.write_low_thresh_perc),
                    min_writes: c.min_writes_per_switch as usize,
                    min_reads: c.min_reads_per_switch as usize,
                };
                Pcm::Gem5(Box::new(gem5::Gem5::new(p).with_kinds(layout, &cfg.persistence.wpq_coalesce)))
            }
        }
    }

    /// A read issued at `t`; returns when its data is back.
    pub fn read(&mut self, t: u64, addr: u64) -> u64 {
        match self {
            Pcm::ReadsFirst(p) => p.read(t, addr),
            Pcm::Gem5(p) => p.read(t, addr),
        }
    }

    /// A write of `block` offered to the WPQ at `t`; returns when it holds
    /// a slot (from then on it is persistent).
    pub fn write(&mut self, t: u64, block: u64) -> u64 {
        self.write_when_ready(t, t, block)
    }

    /// A write that takes its WPQ slot at `t` (or when one frees) but may
    /// reach the device only from `ready`, when the memory controller has
    /// finished securing it; returns when it holds the slot. A queued write
    /// to the same block that issues after this one's data is ready takes
    /// the new data instead (if its kind merges).
    pub fn write_when_ready(&mut self, t: u64, ready: u64, block: u64) -> u64 {
        match self {
            Pcm::ReadsFirst(p) => p.write_when_ready(t, ready, block),
            Pcm::Gem5(p) => p.write_when_ready(t, ready, block),
        }
    }

    /// No read or write will be asked for before `t` from now on.
    pub fn set_horizon(&mut self, t: u64) {
        match self {
            Pcm::ReadsFirst(p) => p.set_horizon(t),
            Pcm::Gem5(p) => p.set_horizon(t),
        }
    }

    pub fn stats(&self) -> PcmStats {
        match self {
            Pcm::ReadsFirst(p) => p.stats,
            Pcm::Gem5(p) => p.stats,
        }
    }

    /// When the last write booked so far is done in its bank: writes the
    /// region of interest queued may drain after the core's last cycle.
    pub fn last_write_done(&self) -> u64 {
        match self {
            Pcm::ReadsFirst(p) => p.last_write_done,
            Pcm::Gem5(p) => p.last_write_done,
        }
    }

    /// Device writes each bank took so far.
    pub fn bank_writes(&self) -> &[u64] {
        match self {
            Pcm::ReadsFirst(p) => p.bank_writes(),
            Pcm::Gem5(p) => p.bank_writes(),
        }
    }

    /// Cycles each bank was booked for (reads and writes) so far; empty
    /// under reads-first, which does not count them.
    pub fn bank_busy(&self) -> Vec<u64> {
        match self {
            Pcm::ReadsFirst(_) => Vec::new(),
            Pcm::Gem5(p) => p.bank_busy(),
        }
    }

    /// The stats tree's view of the memory over `write_span` cycles (from
    /// the region's start until its last write was done), from what the
    /// PCM counted (`d`), the blocks the functional NVM read and wrote,
    /// the most device writes one bank took and each bank's booked cycles
    /// (`bank_busy`).
    pub fn report(
        &self,
        d: &PcmStats,
        reads: ByKind,
        writes: ByKind,
        busiest_bank_writes: u64,
        bank_busy: &[u64],
        write_span: u64,
    ) -> MemoryStats {
        match self {
            Pcm::ReadsFirst(p) => p.report(d, reads, writes, busiest_bank_writes, write_span),
            Pcm::Gem5(p) => p.report(d, reads, writes, busiest_bank_writes, bank_busy, write_span),
        }
    }
}

/// The layout that tells an address's kind (for the counts by kind and
/// the merge rule), and the kinds whose writes never merge.
fn kinds_of(layout: &Layout, coalesce: &[RegionKind]) -> (Layout, Vec<RegionKind>) {
    let never: Vec<_> = RegionKind::ALL.into_iter().filter(|k| !coalesce.contains(k)).collect();
    (layout.clone(), never)
}
