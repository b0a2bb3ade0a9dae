//! gem5's memory controller (`src/mem/mem_ctrl.cc`) in front of its NVM
//! interface (`src/mem/nvm_interface.cc`), on the timing model's
//! calendars (`memory_controller.model = "gem5"`).
//!
//! ```text
//!  write(t) -> WPQ entry (ADR: persistent from here)
//!           -front end, data secured, a write-queue entry free-> write queue
//!           -bank free for t_write-> bank, busy t_write; its row is left open
//!  read(t)  -front end-> read-queue entry
//!           -> write drain at t? wait for its end and its writes at the bank
//!           -> bank: row open? hit (bank held a burst) : miss (bank held t_read)
//!           -> data: t_hit or t_read, then a burst -> back end
//! ```
//! With `memory_controller.wpq = "write-queue"` (Secon's machine) the WPQ is
//! the write queue: an entry is held from the write's arrival to its issue.
//!
//! gem5's controller runs on events in time order; requests reach this
//! model out of it (docs/timing-order.md), so each is booked by calendar
//! when it is offered:
//! - a queue entry is taken only where the queue has a free entry over the
//!   whole time it is held (`Occupancy`);
//! - a write issues at the first time its bank is free of booked reads and
//!   writes for its whole `t_write` (NVMain's tWP, gem5's `tWRITE`, which
//!   `actAllowedAt` makes the bank wait out); gem5 keeps a write in its
//!   queue until a drain and then in the interface's buffer until its bank
//!   is free, and the calendar books it at the latter at once;
//! - the controller drains writes at `t` when the write queue holds more
//!   than the high threshold then (and at least `min_reads_per_switch`
//!   reads came since the last drain, or none is waiting), or more than
//!   the low threshold with no read waiting (`processNextReqEvent`). A
//!   read that arrives in a drain waits until `min_writes_per_switch`
//!   writes have issued from its arrival on, or the queue falls below the
//!   low threshold by that many, or empties; then for the writes its bank
//!   took before that (gem5's `actAllowedAt`). Outside a drain a read waits
//!   only for the write in service at its bank, and goes ahead of writes
//!   booked to start later (they are still in the write queue), which move
//!   back behind it, if the queue has room for their longer wait and holds
//!   no more than the high threshold (above it gem5 sends writes to the
//!   banks between short runs of reads); else it waits for them;
//! - FR-FCFS: each request takes the first time it can be served; a read
//!   that hits the open row needs its bank for a burst only, so it goes
//!   through gaps a row miss cannot use. The open row at a moment is the
//!   row of the last read or write booked to start at or before it.

use super::queued::QueuedWrites;
use super::slots::{first_free_of_both, Access, Pos, Slots};
use super::{kinds_of, MemoryStats, PcmStats};
use crate::config::BankMap;
use crate::engine::layout::{Layout, RegionKind};
use crate::engine::nvm::ByKind;
use crate::timing::occupancy::{Occupancy, QueueReport};
use serde::Serialize;

/// The controller's and device's shape, in core cycles.
#[derive(Clone, Debug)]
pub struct Params {
    pub banks: usize,
    pub bank_map: BankMap,
    /// Blocks in a bank's row buffer.
    pub row_blocks: u64,
    /// A read that misses the open row, and one that hits it.
    pub read_miss: u64,
    pub read_hit: u64,
    /// A block on the channel.
    pub burst: u64,
    /// A write's time in its bank.
    pub write: u64,
    pub frontend: u64,
    pub backend: u64,
    pub read_queue: usize,
    /// The write queue's entries (the WPQ's, when it is the write queue).
    pub write_queue: usize,
    /// The WPQ in front of the write queue, if it is not the write queue.
    pub wpq: Option<usize>,
    /// Drain thresholds, in entries of the write queue.
    pub high: usize,
    pub low: usize,
    pub min_writes: usize,
    pub min_reads: usize,
}

/// A bank's reads and writes, each list sorted and disjoint, and no read
/// overlapping a write.
#[derive(Clone, Debug, Default)]
struct Bank {
    reads: Slots,
    writes: Slots,
    /// The last access pruned: its start and row (the open row before the
    /// first access kept).
    pruned: Option<(u64, u64)>,
    /// Cycles of reads and writes booked so far.
    busy: u64,
    writes_taken: u64,
}

impl Bank {
    /// The row open for a read at `t`: the last read's to start by then or
    /// write's to start before (a write booked to start at `t` is still
    /// queued; the read goes first).
    fn open_row(&self, t: u64) -> Option<u64> {
        let r = self.reads.last_started(t).map(|a| (a.start, a.row));
        let w = self.writes.last_started(t.saturating_sub(1)).filter(|a| a.start < t).map(|a| (a.start, a.row));
        let pruned = self.pruned.filter(|&(s, _)| s <= t);
        [r, w, pruned].into_iter().flatten().max_by_key(|&(s, _)| s).map(|(_, row)| row)
    }

    /// `t`, or the end of the write in service at `t` (started before it).
    fn after_write_in_service(&self, t: u64) -> u64 {
        match self.writes.last_started(t.saturating_sub(1)) {
            Some(w) if w.start < t && w.end > t => w.end,
            _ => t,
        }
    }

    /// `t`, or the end of the writes the bank took by `t` (a drain that
    /// ends at `t` issued its last write then).
    fn after_writes_begun_by(&self, t: u64) -> u64 {
        self.writes.last_started(t).map_or(t, |w| w.end.max(t))
    }

    /// The first start at or after `from` at which the bank is free of its
    /// reads and writes for `len` cycles.
    fn free_for(&self, from: u64, len: u64) -> u64 {
        first_free_of_both(&self.writes, &self.reads, from, len)
    }

    /// Forget the accesses that ended by `horizon`, keeping the open row.
    fn prune(&mut self, horizon: u64) {
        for list in [&mut self.reads, &mut self.writes] {
            if let Some(last) = list.prune(horizon) {
                if self.pruned.is_none_or(|(s, _)| s <= last.start) {
                    self.pruned = Some((last.start, last.row));
                }
            }
        }
    }
}

/// The controller's counts (cumulative; a region's are differences).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub row_hits: u64,
    pub row_misses: u64,
    /// Write drains reads found, reads that waited for one, and the cycles
    /// they waited for the drain (not for their bank after it).
    pub drains: u64,
    pub drain_waits: u64,
    pub drain_wait_cycles: u64,
    /// Reads booked over part of a write booked before them to start later.
    pub reads_ahead_of_writes: u64,
    /// Reads that arrived while their bank was writing, and the cycles
    /// until that write ended.
    pub reads_behind_writes: u64,
    pub write_in_service_wait_cycles: u64,
    /// Requests that found the write queue (when the WPQ is in front of it)
    /// or the read queue full, and the cycles they waited for an entry.
    pub write_queue_full_waits: u64,
    pub write_queue_wait_cycles: u64,
    pub read_queue_full_waits: u64,
    pub read_queue_wait_cycles: u64,
}

impl Counts {
    pub fn since(&self, b: &Counts) -> Counts {
        Counts {
            row_hits: self.row_hits - b.row_hits,
            row_misses: self.row_misses - b.row_misses,
            drains: self.drains - b.drains,
            drain_waits: self.drain_waits - b.drain_waits,
            drain_wait_cycles: self.drain_wait_cycles - b.drain_wait_cycles,
            reads_ahead_of_writes: self.reads_ahead_of_writes - b.reads_ahead_of_writes,
            reads_behind_writes: self.reads_behind_writes - b.reads_behind_writes,
            write_in_service_wait_cycles: self.write_in_service_wait_cycles - b.write_in_service_wait_cycles,
            write_queue_full_waits: self.write_queue_full_waits - b.write_queue_full_waits,
            write_queue_wait_cycles: self.write_queue_wait_cycles - b.write_queue_wait_cycles,
            read_queue_full_waits: self.read_queue_full_waits - b.read_queue_full_waits,
            read_queue_wait_cycles: self.read_queue_wait_cycles - b.read_queue_wait_cycles,
        }
    }
}

/// The gem5 controller as the stats tree shows it (`roi.memory.controller`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ControllerStats {
    pub read_queue: QueueReport,
    pub write_queue: QueueReport,
    /// The WPQ in front of the write queue (absent when it is the write
    /// queue); its waits are `roi.memory.wpq_full_waits`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wpq: Option<QueueReport>,
    pub row_hits: u64,
    pub row_misses: u64,
    pub row_hit_rate: f64,
    pub drains: u64,
    pub reads_waiting_for_drains: u64,
    pub drain_wait_cycles: u64,
    /// Reads that went ahead of a write booked before them, overlapping it
    /// in their bank (docs/timing-order.md).
    pub reads_ahead_of_booked_writes: u64,
    /// Reads that arrived while their bank was writing, and the cycles
    /// they waited for that write to end (a write in service is never
    /// preempted).
    pub reads_behind_writes_in_service: u64,
    pub write_in_service_wait_cycles: u64,
    /// Share of the write span the bank booked longest (reads and writes)
    /// was booked.
    pub busiest_bank_utilisation: f64,
}

/// A read as it would be served if it arrived at a given time.
struct ReadPlan {
    start: u64,
    /// Cycles it holds its bank.
    hold: u64,
    /// When its data has crossed the channel.
    data: u64,
    hit: bool,
    /// The drain it waits for: `(start, end, new)`.
    drain: Option<(u64, u64, bool)>,
    /// It overlaps a write booked to start while it holds its bank (it
    /// went ahead of that write, which stays where it was booked).
    ahead: bool,
}

#[derive(Clone, Debug)]
pub struct Gem5 {
    p: Params,
    banks: Vec<Bank>,
    wpq: Option<Occupancy>,
    write_queue: Occupancy,
    read_queue: Occupancy,
    /// Write drains, `(start, end)`, sorted and disjoint; and the end of
    /// the last one pruned.
    drains: Vec<(u64, u64)>,
    pruned_drain_end: Option<u64>,
    /// The queued writes of each block, for merging.
    queued: QueuedWrites,
    horizon: u64,
    kinds: Option<(Layout, Vec<RegionKind>)>,
    pub stats: PcmStats,
    pub last_write_done: u64,
    bank_writes: Vec<u64>,
}

impl Gem5 {
    pub fn new(p: Params) -> Self {
        Gem5 {
            banks: vec![Bank::default(); p.banks.max(1)],
            wpq: p.wpq.map(Occupancy::new),
            write_queue: Occupancy::new(p.write_queue),
            read_queue: Occupancy::new(p.read_queue),
            drains: Vec::new(),
            pruned_drain_end: None,
            queued: QueuedWrites::default(),
            horizon: 0,
            kinds: None,
            stats: PcmStats::default(),
            last_write_done: 0,
            bank_writes: vec![0; p.banks.max(1)],
            p,
        }
    }

    /// Count device writes by kind under `layout`; writes of the kinds not
    /// in `coalesce` never merge into a queued write of the same block.
    pub fn with_kinds(mut self, layout: &Layout, coalesce: &[RegionKind]) -> Self {
        self.kinds = Some(kinds_of(layout, coalesce));
        self
    }

    /// The bank and row of a block: the blocks of a row buffer are
    /// consecutive (gem5's `RoRaBaCoCh` with one rank and one channel);
    /// the row buffers go to banks in turn (`BankMap::BitSlice`, gem5's)
    /// or by a hash of their index (`BankMap::Hash`). A row is named by
    /// its row buffer's index.
    fn map(&self, block: u64) -> (usize, u64) {
        let buffer = block / self.p.row_blocks;
        let banks = self.banks.len() as u64;
        let bank = match self.p.bank_map {
            BankMap::BitSlice => buffer % banks,
            BankMap::Hash => (buffer.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % banks,
        };
        (bank as usize, buffer)
    }

    pub fn set_horizon(&mut self, t: u64) {
        self.horizon = self.horizon.max(t);
    }

    fn prune(&mut self, b: usize) {
        let h = self.horizon;
        self.banks[b].prune(h);
        for q in [Some(&mut self.write_queue), Some(&mut self.read_queue), self.wpq.as_mut()].into_iter().flatten() {
            q.prune(h);
        }
        let k = self.drains.partition_point(|&(_, e)| e <= h);
        if k > 0 {
            self.pruned_drain_end = Some(self.drains[k - 1].1);
            self.drains.drain(..k);
        }
        self.queued.sweep(h);
    }

    /// The write drain a read arriving at `a` finds: one already under way,
    /// or one the write queue's occupancy starts then; `(start, end, new)`.
    fn drain_at(&self, a: u64) -> Option<(u64, u64, bool)> {
        if let Some(&(s, e)) = self.drains[..self.drains.partition_point(|&(s, _)| s <= a)].last() {
            if e > a {
                return Some((s, e, false));
            }
        }
        let p = &self.p;
        let queued = self.write_queue.held_at(a);
        let no_read_waits = self.read_queue.held_at(a) == 0;
        // Reads served since the last drain ended (gem5 switches to writes
        // at the high threshold only after `min_reads_per_switch` of them,
        // or with no read waiting).
        let last_end = self.drains[..self.drains.partition_point(|&(_, e)| e <= a)].last().map(|&(_, e)| e).or(self.pruned_drain_end);
        let reads_done = last_end.is_none_or(|e| self.read_queue.arrivals_in(e, a) >= p.min_reads);
        let drain = (queued > p.high && (reads_done || no_read_waits)) || (no_read_waits && queued > p.low);
        if !drain {
            return None;
        }
        // gem5 turns back to reads after `min_writes_per_switch` writes with
        // reads waiting, or once the queue is below the low threshold by
        // that many, or empty.
        let (mut end, mut sent) = (a, 0);
        self.write_queue.departures_held_from(a, |x, left| {
            end = x;
            sent += 1;
            sent >= p.min_writes || left + p.min_writes < p.low || left == 0
        });
        (end > a).then_some((a, end, true))
    }

    /// Where a read of `row` at bank `b` arriving at `a` would be served.
    /// `ahead`: it may go ahead of writes booked to start while it holds the
    /// bank (they would be moved back); otherwise it takes a time the bank
    /// is free of reads and writes alike.
    fn plan_read(&self, a: u64, b: usize, row: u64, ahead: bool) -> ReadPlan {
        let drain = self.drain_at(a);
        let bank = &self.banks[b];
        let mut start = match drain {
            Some((_, end, _)) => bank.after_writes_begun_by(end),
            None => a,
        };
        loop {
            let s0 = start;
            start = bank.after_write_in_service(start);
            let hit = bank.open_row(start) == Some(row);
            let hold = if hit { self.p.burst } else { self.p.read_miss };
            start = if ahead { bank.reads.gap(start, hold) } else { bank.free_for(start, hold) };
            if start == s0 {
                let latency = if hit { self.p.read_hit } else { self.p.read_miss };
                let ahead = bank.writes.gap(start, hold) != start;
                return ReadPlan { start, hold, data: start + latency + self.p.burst, hit, drain, ahead };
            }
        }
    }

    /// A read of block `addr` issued at `t`; returns when its data is back.
    pub fn read(&mut self, t: u64, addr: u64) -> u64 {
        let (b, row) = self.map(addr);
        self.prune(b);
        let arrive = t + self.p.frontend;
        let in_service = self.banks[b].after_write_in_service(arrive) - arrive;
        let mut a = arrive;
        let plan = loop {
            // Above the high threshold gem5 keeps sending writes to the
            // banks between short runs of reads, so a read finds its bank's
            // writes already issued; below it they wait in the queue.
            let ahead = self.write_queue.held_at(a) <= self.p.high;
            let mut plan = self.plan_read(a, b, row, ahead);
            if let Some(x) = self.read_queue.first_full(a, plan.data) {
                a = self.read_queue.free_after(x);
                continue;
            }
            // Going ahead of booked writes moves them back, which the
            // queue holding them must have room for; else the read waits
            // for them.
            if plan.ahead && !self.try_push_writes(b, plan.start, plan.start + plan.hold) {
                plan = self.plan_read(a, b, row, false);
                if let Some(x) = self.read_queue.first_full(a, plan.data) {
                    a = self.read_queue.free_after(x);
                    continue;
                }
            }
            break plan;
        };
        if let Some((s, e, true)) = plan.drain {
            self.stats.controller.drains += 1;
            self.record_drain(s, e);
        }
        let c = &mut self.stats.controller;
        if a > arrive {
            c.read_queue_full_waits += 1;
            c.read_queue_wait_cycles += a - arrive;
        }
        if let Some((_, e, _)) = plan.drain {
            c.drain_waits += 1;
            c.drain_wait_cycles += e - a;
        }
        c.reads_ahead_of_writes += plan.ahead as u64;
        if in_service > 0 {
            c.reads_behind_writes += 1;
            c.write_in_service_wait_cycles += in_service;
        }
        if plan.hit {
            c.row_hits += 1;
        } else {
            c.row_misses += 1;
        }
        let bank = &mut self.banks[b];
        bank.reads.insert(Access { start: plan.start, end: plan.start + plan.hold, row, block: 0, queued: 0 });
        bank.busy += plan.hold;
        self.read_queue.book(a, plan.data);
        self.stats.reads += 1;
        self.stats.read_wait_cycles += plan.start - arrive;
        plan.data + self.p.backend
    }

    /// The moves `try_push_writes` would make for a read holding bank `b`
    /// over `[s, e)`: each write's index, old start and new start.
    fn planned_pushes(&self, b: usize, s: u64, e: u64) -> Vec<(Pos, u64, u64)> {
        let w = self.p.write;
        let bank = &self.banks[b];
        let mut moves = Vec::new();
        let mut cur = e;
        bank.writes.each_from(bank.writes.first_starting_from(s), |i, x| {
            let mut to = x.start.max(cur);
            loop {
                let t0 = to;
                to = bank.reads.gap(to, w);
                if to < e && to + w > s {
                    to = e;
                }
                if to == t0 {
                    break;
                }
            }
            if to == x.start {
                return true;
            }
            moves.push((i, x.start, to));
            cur = to + w;
            false
        });
        moves
    }

    /// Move the writes of bank `b` booked to start while a read holds it
    /// over `[s, e)` back, each to the first time after the read and the
    /// writes moved before it that the bank is free of reads, if the queue
    /// each is held in has an entry for it over the longer wait. Returns
    /// whether they moved (none does otherwise).
    fn try_push_writes(&mut self, b: usize, s: u64, e: u64) -> bool {
        let w = self.p.write;
        let moves = self.planned_pushes(b, s, e);
        // Each write holds its entry over `[old, new)` too, which the
        // queue must have room for with the writes before it moved: the
        // most it held there.
        let queue = &mut self.write_queue;
        let mut most = Vec::with_capacity(moves.len());
        for (k, &(i, old, new)) in moves.iter().enumerate() {
            let held = queue.most_in(old, new);
            if held >= queue.entries {
                for &(j, old, new) in moves[..k].iter().rev() {
                    queue.move_departure(self.banks[b].writes.get(j).queued, new, old);
                }
                return false;
            }
            queue.move_departure(self.banks[b].writes.get(i).queued, old, new);
            most.push(held);
        }
        for (k, &(i, old, new)) in moves.iter().enumerate() {
            // The moves start in order, so none after the next overlaps
            // `[old, new)` unless the next does; none does: the queue
            // holds there what it held before, and this write.
            match moves.get(k + 1) {
                Some(&(_, next, _)) if next < new => self.write_queue.note_peak(old, new),
                _ => self.write_queue.note_held(most[k] + 1),
            }
            self.queued.reissue(self.banks[b].writes.get(i).block, old, new);
            self.last_write_done = self.last_write_done.max(new + w);
        }
        let starts: Vec<_> = moves.iter().map(|&(i, _, new)| (i, new)).collect();
        self.banks[b].writes.reschedule(&starts, w);
        true
    }

    /// Add the drain `[s, e)`; `s` is in no drain, a later one it reaches
    /// joins it.
    fn record_drain(&mut self, s: u64, mut e: u64) {
        let at = self.drains.partition_point(|&(x, _)| x < s);
        let mut k = at;
        while k < self.drains.len() && self.drains[k].0 <= e {
            e = e.max(self.drains[k].1);
            k += 1;
        }
        self.drains.splice(at..k, [(s, e)]);
    }

    /// Whether a write of `block` whose data is ready at `ready` merges at
    /// `t` into a queued write of that block: one that holds its entry at
    /// `t` and issues no earlier than `ready`.
    fn merges_at(&self, t: u64, ready: u64, block: u64) -> bool {
        self.queued.merges_at(block, t, ready)
    }

    /// When a write offered at `t` whose data is ready at `ready` takes its
    /// WPQ entry (`a`), enters the write queue (`e`) and issues to bank `b`
    /// (`s`), each entry held only where its queue has one free throughout:
    /// the first `a` from `t` on at which it is.
    ///
    /// An entry taken later is held until no earlier a time (the write
    /// queue's entry, the bank's free time), so no `a` at or before the last
    /// moment its span finds the queue full fits either, nor any moment up
    /// to when an entry frees after that one (each is full itself): the
    /// next to try is that. Each try skips the whole span, not one full
    /// stretch of it.
    fn place_write(&self, t: u64, ready: u64, b: usize) -> (u64, u64, u64) {
        let mut a = t;
        loop {
            let from = a.max(ready);
            let (e, s, q) = match &self.wpq {
                Some(wpq) => {
                    let (e, s) = self.enter_write_queue(self.write_queue_from(a, ready), b);
                    (e, s, wpq.last_full(a, e).map(|x| wpq.free_after(x)))
                }
                None => {
                    let s = self.banks[b].free_for(from, self.p.write);
                    (a, s, self.write_queue.last_full(a, s).map(|x| self.write_queue.free_after(x)))
                }
            };
            match q {
                Some(later) => a = later,
                None => return (a, e, s),
            }
        }
    }

    /// With the WPQ in front: the earliest a write that took its WPQ entry
    /// at `a` can enter the write queue, past gem5's front end.
    fn write_queue_from(&self, a: u64, ready: u64) -> u64 {
        (a + self.p.frontend).max(ready)
    }

    /// With the WPQ in front: when a write ready from `from` enters the
    /// write queue (the first time from `from` on at which it has an entry
    /// free until the write issues), and when it issues to bank `b`. The
    /// bank is free no earlier for a later entry, so the tries skip as
    /// `place_write`'s do.
    fn enter_write_queue(&self, from: u64, b: usize) -> (u64, u64) {
        let mut e = from;
        loop {
            let s = self.banks[b].free_for(e, self.p.write);
            match self.write_queue.last_full(e, s) {
                Some(x) => e = self.write_queue.free_after(x),
                None => return (e, s),
            }
        }
    }

    /// A write whose data is ready when it is offered.
    #[cfg(test)]
    fn write(&mut self, t: u64, block: u64) -> u64 {
        self.write_when_ready(t, t, block)
    }

    /// A write that takes its WPQ entry at `t` or when one frees, and
    /// reaches the device from `ready` on; returns when it holds the entry.
    /// The WPQ is the security engine's side of gem5's controller: a write
    /// takes gem5's front end after it, on its way to the write queue, or
    /// before it when the WPQ is the write queue.
    pub fn write_when_ready(&mut self, t: u64, ready: u64, block: u64) -> u64 {
        let kind = self.kinds.as_ref().map(|(layout, never)| (layout.kind_of(block), never));
        let merges = kind.is_none_or(|(k, never)| !never.contains(&k));
        let kind = kind.map(|(k, _)| k);
        let (b, row) = self.map(block);
        self.prune(b);
        let t = if self.wpq.is_some() { t } else { t + self.p.frontend };
        if merges && self.merges_at(t, ready, block) {
            self.stats.merged_writes += 1;
            return t;
        }
        let (a, e, s) = self.place_write(t, ready, b);
        if a > t {
            self.stats.wpq_full_waits += 1;
            self.stats.wpq_wait_cycles += a - t;
            if merges && self.merges_at(a, ready, block) {
                self.stats.merged_writes += 1;
                return a;
            }
        }
        match self.wpq.as_mut() {
            Some(wpq) => {
                wpq.book(a, e);
                self.write_queue.book(e, s);
                let from = self.write_queue_from(a, ready);
                let c = &mut self.stats.controller;
                if e > from {
                    c.write_queue_full_waits += 1;
                    c.write_queue_wait_cycles += e - from;
                }
            }
            None => self.write_queue.book(a, s),
        }
        let w = self.p.write;
        let bank = &mut self.banks[b];
        let queued = if self.wpq.is_some() { e } else { a };
        bank.writes.insert(Access { start: s, end: s + w, row, block, queued });
        bank.busy += w;
        bank.writes_taken += 1;
        if s > a {
            self.queued.add(block, a, s);
        }
        self.stats.device_writes += 1;
        self.bank_writes[b] += 1;
        if let Some(k) = kind {
            self.stats.device_writes_by_kind.bump(k);
        }
        self.last_write_done = self.last_write_done.max(s + w);
        a
    }

    pub fn bank_writes(&self) -> &[u64] {
        &self.bank_writes
    }

    pub fn bank_busy(&self) -> Vec<u64> {
        self.banks.iter().map(|b| b.busy).collect()
    }

    pub fn report(
        &self,
        d: &PcmStats,
        reads: ByKind,
        writes: ByKind,
        busiest_bank_writes: u64,
        bank_busy: &[u64],
        span: u64,
    ) -> MemoryStats {
        let span = span.max(1);
        let c = &d.controller;
        let lookups = (c.row_hits + c.row_misses).max(1);
        // The banks write one block per `write` cycles each.
        let capacity = self.banks.len() as f64 / self.p.write as f64;
        MemoryStats {
            reads,
            writes,
            device_writes: d.device_writes_by_kind,
            wpq_full_waits: d.wpq_full_waits,
            wpq_merged_writes: d.merged_writes,
            write_utilisation: d.device_writes as f64 / (capacity * span as f64),
            busiest_bank_write_utilisation: (busiest_bank_writes * self.p.write) as f64 / span as f64,
            controller: Some(ControllerStats {
                read_queue: self.read_queue.report(c.read_queue_full_waits, c.read_queue_wait_cycles),
                write_queue: match &self.wpq {
                    Some(_) => self.write_queue.report(c.write_queue_full_waits, c.write_queue_wait_cycles),
                    None => self.write_queue.report(d.wpq_full_waits, d.wpq_wait_cycles),
                },
                wpq: self.wpq.as_ref().map(|w| w.report(d.wpq_full_waits, d.wpq_wait_cycles)),
                row_hits: c.row_hits,
                row_misses: c.row_misses,
                row_hit_rate: c.row_hits as f64 / lookups as f64,
                drains: c.drains,
                reads_waiting_for_drains: c.drain_waits,
                drain_wait_cycles: c.drain_wait_cycles,
                reads_ahead_of_booked_writes: c.reads_ahead_of_writes,
                reads_behind_writes_in_service: c.reads_behind_writes,
                write_in_service_wait_cycles: c.write_in_service_wait_cycles,
                busiest_bank_utilisation: bank_busy.iter().copied().max().unwrap_or(0) as f64 / span as f64,
            }),
        }
    }
}

#[cfg(test)]
mod stepwise;

#[cfg(test)]
mod tests {
    use super::*;

    /// One bank of 4-block rows: misses of 100, hits of 10, bursts of 5,
    /// writes of 300; no front or back end; queues of `wq` writes and 8
    /// reads; WPQ in front with `wpq` entries (or none: it is the write
    /// queue).
    fn ctl(banks: usize, wq: usize, wpq: Option<usize>) -> Gem5 {
        Gem5::new(Params {
            banks,
            bank_map: BankMap::BitSlice,
            row_blocks: 4,
            read_miss: 100,
            read_hit: 10,
            burst: 5,
            write: 300,
            frontend: 0,
            backend: 0,
            read_queue: 8,
            write_queue: wq,
            wpq,
            high: wq * 85 / 100,
            low: wq / 2,
            min_writes: 2,
            min_reads: 2,
        })
    }

    #[test]
    fn a_read_that_hits_the_open_row_skips_the_array_read() {
        let mut p = ctl(2, 16, Some(4));
        assert_eq!(p.read(0, 0), 105, "a miss: read, then the burst");
        assert_eq!(p.read(200, 1), 215, "the same row buffer: a hit");
        assert_eq!(p.read(300, 4), 405, "the next row buffer is in the other bank: a miss");
        assert_eq!(p.read(500, 8), 605, "bank 0 again, another row: a miss");
        assert_eq!((p.stats.controller.row_hits, p.stats.controller.row_misses), (1, 3));
    }

    #[test]
    fn a_write_holds_its_bank_for_its_whole_time_and_opens_its_row() {
        let mut p = ctl(1, 16, Some(4));
        assert_eq!(p.write(0, 0), 0);
        assert_eq!(p.write(0, 8), 0, "a free WPQ entry: persistent at once");
        assert_eq!(p.banks[0].writes.iter().map(|a| (a.start, a.end)).collect::<Vec<_>>(), [(0, 300), (300, 600)]);
        assert_eq!(p.last_write_done, 600);
        // Outside a drain, a read waits for the write in service only, then
        // finds the row that write left open (block 0's: a hit) and goes
        // ahead of the write booked next, which moves back by its burst.
        assert_eq!(p.read(100, 1), 300 + 10 + 5);
        assert_eq!(p.stats.read_wait_cycles, 200);
        assert_eq!(p.banks[0].writes.iter().map(|a| (a.start, a.end)).collect::<Vec<_>>(), [(0, 300), (305, 605)]);
        // A read of another row after both: a miss.
        assert_eq!(p.read(700, 4), 700 + 100 + 5);
        assert_eq!((p.stats.controller.row_hits, p.stats.controller.row_misses), (1, 1));
        // The first read arrived 200 cycles before the write in service
        // ended; the second found its bank idle.
        let c = p.stats.controller;
        assert_eq!((c.reads_behind_writes, c.write_in_service_wait_cycles), (1, 200));
    }

    #[test]
    fn the_wpq_in_front_frees_its_entry_when_the_write_queue_takes_the_write() {
        // A WPQ of 1 in front of a write queue of 4: writes waiting for
        // their data hold the WPQ entry, then the write queue's.
        let mut p = ctl(1, 4, Some(1));
        assert_eq!(p.write_when_ready(0, 1000, 0), 0);
        assert_eq!(p.write(10, 8), 1000, "the only WPQ entry is held until the first write's data is secured");
        assert_eq!(p.stats.wpq_full_waits, 1);
        // As the write queue: each entry is held until its write issues.
        let mut q = ctl(1, 2, None);
        for blk in [0, 8, 16] {
            q.write(0, blk);
        }
        assert_eq!(q.write(0, 24), 300, "writes 2 and 3 hold both entries until the second issues at 300");
        assert!(q.write_queue.peak <= 2);
    }

    #[test]
    fn no_queue_ever_holds_more_than_its_entries_whatever_the_order_of_offers() {
        // Writes offered late but stamped early must not overfill the
        // queue at the arrivals of writes booked before them.
        let mut p = ctl(1, 2, None);
        for t in [1000, 1000, 1000, 0, 500, 999, 10, 2000, 1500] {
            p.write(t, 8 * t);
        }
        assert!(p.write_queue.peak <= 2, "peak {}", p.write_queue.peak);
        let mut r = ctl(4, 8, Some(4));
        for i in 0..200u64 {
            r.read((i * 7919) % 3000, i * 13);
        }
        assert!(r.read_queue.peak <= 8, "peak {}", r.read_queue.peak);
        assert!(r.stats.controller.read_queue_full_waits > 0, "eight reads of 105+ cycles every 15 cycles fill the queue");
    }

    #[test]
    fn a_read_going_ahead_of_a_booked_write_moves_it_back_if_its_queue_has_room() {
        let writes = |p: &Gem5| p.banks[0].writes.iter().map(|a| (a.start, a.end)).collect::<Vec<_>>();
        // One bank; writes at 0..300 and, ready later, 1000..1300.
        let mut p = ctl(1, 8, Some(8));
        p.write(0, 0);
        p.write_when_ready(0, 1000, 8);
        // A read at 950 goes first; the write issues after it.
        assert_eq!(p.read(950, 16), 950 + 100 + 5);
        assert_eq!(writes(&p), [(0, 300), (1050, 1350)]);
        assert_eq!(p.stats.controller.reads_ahead_of_writes, 1);
        assert_eq!(p.last_write_done, 1350);
        // A write queue of 1: the second write of two ready at 1000 holds it
        // over [1000, 1300), so the first cannot wait in it behind a read at
        // 990; the read waits for both.
        let mut q = ctl(1, 1, Some(8));
        q.write(0, 0);
        q.write_when_ready(0, 1000, 8);
        assert_eq!(writes(&q), [(0, 300), (1000, 1300)]);
        q.write_when_ready(0, 1000, 16);
        assert_eq!(writes(&q), [(0, 300), (1000, 1300), (1300, 1600)]);
        assert_eq!(q.read(990, 24), 1600 + 100 + 5, "no room to move both writes back: the read waits for them");
        assert_eq!(q.stats.controller.reads_ahead_of_writes, 0);
        let booked = |p: &Gem5| p.banks[0].reads.iter().chain(&p.banks[0].writes).map(|a| a.end - a.start).sum::<u64>();
        assert_eq!(booked(&q), 3 * 300 + 100, "no read overlaps a write");
    }

    #[test]
    fn a_read_waits_for_a_drain_and_for_the_writes_its_bank_took_in_it() {
        // Two banks, a write queue of 4: high threshold 3, low 2, drains of
        // at least 2 writes. Six writes to bank 0 at once: the first issues,
        // four fill the write queue, the sixth waits in the WPQ.
        let mut p = ctl(2, 4, Some(8));
        for i in 0..6u64 {
            p.write(0, 8 * i);
        }
        assert!(p.write_queue.held_at(10) > 3, "{}", p.write_queue.held_at(10));
        // A read of bank 1 at 10 finds the drain: it waits until two writes
        // have issued from 10 on (at 300 and 600), though its bank is free.
        let done = p.read(10, 4);
        assert_eq!(p.stats.controller.drains, 1);
        assert_eq!(done, 600 + 100 + 5);
        // A read of bank 0 waits for the drain and then for bank 0's booked
        // writes: the WPQ behind the write queue refills it, so it holds
        // more than its high threshold until the last write enters, and
        // writes a controller would be sending to the banks are not moved
        // back for a read (docs/timing-order.md): the sixth ends at 1800.
        assert_eq!(p.read(20, 1), 1800 + 100 + 5);
        assert_eq!(p.stats.controller.drain_waits, 2);
    }
}
