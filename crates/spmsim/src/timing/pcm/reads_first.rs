//! The reads-first controller (`memory_controller.model = "reads-first"`):
//! the PCM and its write pending queue as spmsim modelled them before the
//! gem5-like controller (`gem5.rs`), kept so that the two can be compared
//! side by side (SecPB Table I: read 55 ns, write 150 ns, write queue 128;
//! WPQ 32 entries in the ADR domain).
//!
//! ```text
//!  write -> WPQ slot (wait if all 32 are held at its arrival) -> device accepts it:
//!             posted:      bank's channel free for a burst, < 128 writes in flight;
//!                          the write completes t_write later in the background
//!             bank-serial: bank free; the bank is busy for t_write
//!  read  -> bank free of reads (and of the burst or write in service) -> t_read
//! ```
//! A write to a block that already holds a WPQ slot whose write has not
//! yet issued merges into that slot (it is in the ADR domain either way),
//! as memory controllers' write queues do (gem5's too). Banks are
//! interleaved by a hash of the block address. Reads go ahead of
//! queued writes, as memory controllers schedule them: a read waits for the
//! other reads of its bank and for the write in service there, not for the
//! whole write queue.
//!
//! Writes reach the model out of time order: with several cores, under a
//! relaxed persistency model (a line goes to the MC at a later ACK while
//! the core runs on), and with one core under strict persistency too (a
//! drained SecPB entry's block takes its WPQ slot now and issues once the
//! memory controller has finished its tuple, its metadata lines arrive
//! then). So writes are booked by calendar: a write takes the first free
//! bank slot at or after it is ready, and holds its WPQ slot from its
//! arrival to its issue, so only the writes queued at a moment count
//! against the entries then. A write waits for a slot only if every slot
//! is held at its arrival, and then until one is free; a read waits for
//! the write in service at its bank, and goes ahead of one booked to start
//! just then.

use super::{first_gap, MemoryStats, PcmStats};
use crate::engine::nvm::ByKind;
use rustc_hash::FxHashMap;

use crate::config::PcmWriteModel;

#[derive(Clone, Debug)]
pub struct ReadsFirst {
    /// How long a write holds its bank: one burst (posted) or the whole
    /// write (bank-serial).
    bank_busy: u64,
    /// Writes in flight at once, at most (unbounded for bank-serial, where
    /// the banks alone limit writes).
    max_in_flight: usize,
    /// When each bank's last read ends.
    read_free: Vec<u64>,
    /// Each bank's reads as busy intervals `(start, end)`, sorted and
    /// disjoint, when reads are scheduled by calendar (`None`: by the
    /// frontier `read_free`). See `config::ReadScheduling`.
    read_calendar: Option<Vec<Vec<(u64, u64)>>>,
    /// No read will be asked for before this cycle (the earliest core's
    /// clock): older calendar intervals can go.
    horizon: u64,
    read_cycles: u64,
    write_cycles: u64,
    /// The writes' bookings: banks, the device's writes in flight, the WPQ.
    writes: WriteCalendar,
    /// Device writes each bank took.
    bank_writes: Vec<u64>,
    wpq_entries: usize,
    pub stats: PcmStats,
    /// When the last write booked so far is done in its bank: writes the
    /// region of interest queued may drain after the core's last cycle.
    pub last_write_done: u64,
    /// The layout that tells an address's kind (for the counts by kind
    /// and the merge rule), and the kinds whose writes never merge.
    kinds: Option<(crate::engine::layout::Layout, Vec<crate::engine::layout::RegionKind>)>,
}

/// The write path's bookings as intervals, so that a write ready earlier
/// than one booked before it takes the free slot before it.
#[derive(Clone, Debug, Default)]
struct WriteCalendar {
    /// Each bank's writes `(start, start + bank_busy)`, sorted, disjoint.
    banks: Vec<Vec<(u64, u64)>>,
    /// Issue times of the writes in flight, each for `write_cycles`,
    /// sorted (the posted model's `max_in_flight` limit).
    in_flight: Vec<u64>,
    /// A queued write holds its WPQ slot over `[arrival, issue)`, so one
    /// booked to arrive later takes no slot before then. Arrivals and
    /// issues are kept sorted each on its own: the slots held at `t` are
    /// the arrivals by `t` less the issues by `t` (no write issues before
    /// it arrives).
    arrivals: Vec<u64>,
    issues: Vec<u64>,
    /// Block -> `(arrival, issue)` of its queued writes, for merging.
    queued: FxHashMap<u64, Vec<(u64, u64)>>,
    /// `queued` is swept of issued writes when it grows past this.
    sweep_at: usize,
}

impl WriteCalendar {
    /// When a write offered at `t` takes a WPQ slot: at `t` unless every
    /// slot is held then (by writes that have arrived by `t` and not yet
    /// issued), else at the first issue after which one is free.
    fn take_slot(&self, mut t: u64, entries: usize) -> u64 {
        let mut arrived = self.arrivals.partition_point(|&a| a <= t);
        let mut issued = self.issues.partition_point(|&i| i <= t);
        while arrived.saturating_sub(issued) >= entries {
            // Slots free only when their writes issue: the next issue.
            t = self.issues[issued];
            while issued < self.issues.len() && self.issues[issued] <= t {
                issued += 1;
            }
            while arrived < self.arrivals.len() && self.arrivals[arrived] <= t {
                arrived += 1;
            }
        }
        t
    }

    /// Whether a write of `block` whose data is ready at `ready` merges at
    /// `t` into a queued write of that block: one that holds its slot at
    /// `t` (it has arrived and not yet issued) and issues no earlier than
    /// `ready`.
    fn merges_at(&self, t: u64, ready: u64, block: u64) -> bool {
        self.queued.get(&block).is_some_and(|v| v.iter().any(|&(a, i)| a <= t && t < i && i >= ready))
    }

    /// Forget what ended by `horizon` (of the banks, bank `b`'s).
    fn prune(&mut self, horizon: u64, write_cycles: u64, b: usize) {
        // The slots freed by `horizon` count once among the arrivals and
        // once among the issues by any later `t`: drop as many of each.
        let k = self.issues.partition_point(|&i| i <= horizon);
        self.issues.drain(..k);
        self.arrivals.drain(..k);
        self.in_flight.drain(..self.in_flight.partition_point(|&a| a + write_cycles <= horizon));
        let bank = &mut self.banks[b];
        bank.drain(..bank.partition_point(|&(_, e)| e <= horizon));
        if self.queued.len() > self.sweep_at {
            self.queued.retain(|_, v| {
                v.retain(|&(_, i)| i > horizon);
                !v.is_empty()
            });
            self.sweep_at = 2 * self.queued.len().max(1024);
        }
    }
}

/// The first start at or after `start` at which a write can be in flight
/// for `w` cycles with fewer than `k` other writes in flight throughout;
/// `starts` are the issue times of the writes in flight (each for `w`),
/// sorted.
fn first_in_flight_slot(starts: &[u64], w: u64, k: usize, mut start: u64) -> u64 {
    loop {
        // In flight at `x`: the writes issued in `(x - w, x]`, i.e. those
        // from `lo` (the first not done by `x`) up to `hi` (the first not
        // yet issued). The count only rises at an issue, so checking
        // `start` and every issue in `(start, start + w)` covers the window.
        let mut lo = starts.partition_point(|&a| a + w <= start);
        let mut hi = starts.partition_point(|&a| a <= start);
        let full_at = loop {
            if hi - lo >= k {
                break Some(lo);
            }
            if hi == starts.len() || starts[hi] >= start + w {
                break None;
            }
            let x = starts[hi];
            while hi < starts.len() && starts[hi] <= x {
                hi += 1;
            }
            while lo < hi && starts[lo] + w <= x {
                lo += 1;
            }
        };
        match full_at {
            // The first write in flight then completes.
            Some(lo) => start = starts[lo] + w,
            None => return start,
        }
    }
}

impl ReadsFirst {
    /// A bank-serial device (the unit tests' simple case).
    #[cfg(test)]
    pub fn new(banks: u32, read_cycles: u64, write_cycles: u64, wpq_entries: u32) -> Self {
        Self::with_model(PcmWriteModel::BankSerial, banks, read_cycles, write_cycles, wpq_entries, write_cycles, 1)
    }

    pub fn with_model(
        model: PcmWriteModel,
        banks: u32,
        read_cycles: u64,
        write_cycles: u64,
        wpq_entries: u32,
        burst_cycles: u64,
        max_in_flight: u32,
    ) -> Self {
        let (bank_busy, max_in_flight) = match model {
            PcmWriteModel::BankSerial => (write_cycles, usize::MAX),
            PcmWriteModel::Posted => (burst_cycles.max(1), max_in_flight.max(1) as usize),
        };
        ReadsFirst {
            bank_busy,
            max_in_flight,
            read_free: vec![0; banks as usize],
            read_calendar: None,
            horizon: 0,
            read_cycles,
            write_cycles,
            writes: WriteCalendar { banks: vec![Vec::new(); banks as usize], ..WriteCalendar::default() },
            bank_writes: vec![0; banks as usize],
            wpq_entries: wpq_entries as usize,
            kinds: None,
            stats: PcmStats::default(),
            last_write_done: 0,
        }
    }

    fn bank(&self, addr: u64) -> usize {
        (addr.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize % self.read_free.len()
    }

    /// Count device writes by kind under `layout`; writes of the kinds not
    /// in `coalesce` never merge into a queued write of the same block
    /// (`persistence.wpq_coalesce`).
    pub fn with_kinds(mut self, layout: &crate::engine::layout::Layout, coalesce: &[crate::engine::layout::RegionKind]) -> Self {
        let never: Vec<_> = crate::engine::layout::RegionKind::ALL.into_iter().filter(|k| !coalesce.contains(k)).collect();
        self.kinds = Some((layout.clone(), never));
        self
    }

    /// Schedule reads by calendar (several cores).
    pub fn with_read_calendar(mut self) -> Self {
        self.read_calendar = Some(vec![Vec::new(); self.read_free.len()]);
        self
    }

    /// No read or write will be asked for before `t` from now on.
    pub fn set_horizon(&mut self, t: u64) {
        self.horizon = self.horizon.max(t);
    }

    /// When a read of bank `b` that could start at `start` does start: the
    /// write in service there ends first. The write that began before
    /// `start`; one booked to begin at `start` itself is still queued, and
    /// the read goes ahead of it (else a read would wait out every write
    /// booked back to back).
    fn after_write_in_service(&self, b: usize, start: u64) -> u64 {
        let slots = &self.writes.banks[b];
        let i = slots.partition_point(|&(_, e)| e <= start);
        if i < slots.len() && slots[i].0 < start {
            slots[i].1
        } else {
            start
        }
    }

    /// A read issued at `t`; returns when its data is back.
    pub fn read(&mut self, t: u64, addr: u64) -> u64 {
        let b = self.bank(addr);
        if self.read_calendar.is_some() {
            return self.read_by_calendar(t, b);
        }
        // The rest of the write in service (writes not yet started wait
        // behind the read).
        let start = self.after_write_in_service(b, t.max(self.read_free[b]));
        self.stats.reads += 1;
        self.stats.read_wait_cycles += start - t;
        self.read_free[b] = start + self.read_cycles;
        start + self.read_cycles
    }

    /// A read of bank `b` at `t` in the first free slot of the bank's
    /// calendar that is also clear of the write in service.
    fn read_by_calendar(&mut self, t: u64, b: usize) -> u64 {
        let rc = self.read_cycles;
        let horizon = self.horizon;
        let mut start = t;
        loop {
            let s0 = start;
            start = self.after_write_in_service(b, start);
            let slots = &self.read_calendar.as_ref().expect("calendar scheduling")[b];
            // The first interval ending after `start` (ends are sorted too).
            let i = slots.partition_point(|&(_, e)| e <= start);
            if i < slots.len() && slots[i].0 < start + rc {
                start = slots[i].1;
            }
            if start == s0 {
                break;
            }
        }
        let slots = &mut self.read_calendar.as_mut().expect("calendar scheduling")[b];
        let old = slots.partition_point(|&(_, e)| e <= horizon);
        slots.drain(..old);
        let at = slots.partition_point(|&(s, _)| s < start);
        slots.insert(at, (start, start + rc));
        self.stats.reads += 1;
        self.stats.read_wait_cycles += start - t;
        start + rc
    }

    /// Share of the device's write capacity that `writes` device writes
    /// used over `cycles`: bank time (bank-serial) or write slots (posted),
    /// whichever binds.
    /// The stats tree's view of the memory over `cycles`, from what the
    /// PCM counted (`d`) and the blocks the functional NVM read and wrote;
    /// the write utilisation is over `write_span`, the cycles from the
    /// region's start until its last write was done (the WPQ drains after
    /// the core's last cycle).
    /// `busiest_bank_writes` is the most device writes one bank took.
    pub fn report(&self, d: &PcmStats, reads: ByKind, writes: ByKind, busiest_bank_writes: u64, write_span: u64) -> MemoryStats {
        MemoryStats {
            reads,
            writes,
            device_writes: d.device_writes_by_kind,
            wpq_full_waits: d.wpq_full_waits,
            wpq_merged_writes: d.merged_writes,
            write_utilisation: self.write_utilisation(d.device_writes, write_span),
            busiest_bank_write_utilisation: (busiest_bank_writes * self.bank_busy) as f64 / write_span.max(1) as f64,
            controller: None,
        }
    }

    /// Device writes each bank took so far.
    pub fn bank_writes(&self) -> &[u64] {
        &self.bank_writes
    }

    pub fn write_utilisation(&self, writes: u64, cycles: u64) -> f64 {
        let capacity = (self.max_in_flight as f64 / self.write_cycles as f64).min(self.read_free.len() as f64 / self.bank_busy as f64);
        writes as f64 / (capacity * cycles.max(1) as f64)
    }

    /// A write of `block` offered to the WPQ at `t`; returns when it holds
    /// a slot (from then on it is persistent).
    #[cfg(test)]
    pub fn write(&mut self, t: u64, block: u64) -> u64 {
        self.write_when_ready(t, t, block)
    }

    /// A write that takes its WPQ slot at `t` (or when one frees) but may
    /// reach the device only from `ready`, when the memory controller has
    /// finished securing it; returns when it holds the slot. A queued write
    /// to the same block that issues after this one's data is ready takes
    /// the new data instead (if its kind merges).
    pub fn write_when_ready(&mut self, t: u64, ready: u64, block: u64) -> u64 {
        let kind = self.kinds.as_ref().map(|(layout, never)| (layout.kind_of(block), never));
        let merges = kind.is_none_or(|(k, never)| !never.contains(&k));
        let kind = kind.map(|(k, _)| k);
        self.write_by_calendar(t, ready, block, merges, kind)
    }

    /// [`Self::write_when_ready`]: the write waits for a WPQ slot only if
    /// every slot is held at `t` (by writes that have arrived by `t` and
    /// not yet issued), then issues at the first time from `ready` on that
    /// its bank is free and the device has room.
    fn write_by_calendar(&mut self, t: u64, ready: u64, block: u64, merges: bool, kind: Option<crate::engine::layout::RegionKind>) -> u64 {
        let (entries, busy, wc, max_in_flight) = (self.wpq_entries, self.bank_busy, self.write_cycles, self.max_in_flight);
        let b = self.bank(block);
        let w = &mut self.writes;
        w.prune(self.horizon, wc, b);
        if merges && w.merges_at(t, ready, block) {
            self.stats.merged_writes += 1;
            return t;
        }
        let at = w.take_slot(t, entries);
        if at > t {
            self.stats.wpq_full_waits += 1;
            self.stats.wpq_wait_cycles += at - t;
            if merges && w.merges_at(at, ready, block) {
                self.stats.merged_writes += 1;
                return at;
            }
        }
        // Unbounded for bank-serial writes: the banks alone limit them.
        let limited = max_in_flight < usize::MAX;
        let mut issue = at.max(ready);
        loop {
            let s0 = issue;
            issue = first_gap(&w.banks[b], issue, busy);
            if limited {
                issue = first_in_flight_slot(&w.in_flight, wc, max_in_flight, issue);
            }
            if issue == s0 {
                break;
            }
        }
        let bank = &mut w.banks[b];
        bank.insert(bank.partition_point(|&(s, _)| s < issue), (issue, issue + busy));
        if limited {
            w.in_flight.insert(w.in_flight.partition_point(|&a| a <= issue), issue);
        }
        if issue > at {
            w.arrivals.insert(w.arrivals.partition_point(|&a| a <= at), at);
            w.issues.insert(w.issues.partition_point(|&i| i <= issue), issue);
            w.queued.entry(block).or_default().push((at, issue));
        }
        self.stats.device_writes += 1;
        self.bank_writes[b] += 1;
        if let Some(k) = kind {
            self.stats.device_writes_by_kind.bump(k);
        }
        self.last_write_done = self.last_write_done.max(issue + self.write_cycles.max(self.bank_busy));
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bank `b`'s booked write slots.
    fn bank(p: &ReadsFirst, b: usize) -> &[(u64, u64)] {
        &p.writes.banks[b]
    }

    #[test]
    fn a_full_wpq_makes_writers_wait() {
        let mut p = ReadsFirst::new(1, 10, 100, 2);
        assert_eq!(p.write(0, 1), 0, "issues at once: holds no slot");
        assert_eq!(p.write(0, 2), 0, "waits for the bank: holds a slot until it issues at 100");
        assert_eq!(p.write(0, 3), 0, "holds the second slot until 200");
        assert_eq!(p.write(0, 4), 100, "both slots held: waits for the first to issue");
        assert_eq!((p.stats.wpq_full_waits, p.stats.wpq_wait_cycles), (1, 100));
        // A read waits for the write in service, not the whole queue.
        assert_eq!(p.read(50, 5), 110, "after the write at 0..100, ahead of the one at 100");
        let mut q = ReadsFirst::new(1, 10, 100, 4);
        q.write(500, 9);
        assert_eq!(q.read(50, 8), 60, "a write that has not started does not delay a read");
    }

    #[test]
    fn a_write_waiting_for_its_data_holds_its_slot() {
        let mut p = ReadsFirst::new(4, 10, 100, 1);
        assert_eq!(p.write_when_ready(0, 500, 1), 0, "the slot is free now");
        assert_eq!(p.write(10, 2), 500, "the only slot is held until the first write issues at 500");
    }

    #[test]
    fn a_write_offered_ahead_of_time_frees_no_slot_held_before_it() {
        // Two entries, each held by a block waiting for its tuple until
        // 5000; a metadata line offered at 6000 (once its tuple is done)
        // takes a slot then, and a write offered now still finds none.
        let mut p = ReadsFirst::new(4, 10, 100, 2);
        p.write_when_ready(0, 5000, 1);
        p.write_when_ready(0, 5000, 2);
        assert_eq!(p.write(6000, 3), 6000);
        assert_eq!(p.write(10, 4), 5000, "both slots held until their writes issue at 5000");
    }

    #[test]
    fn posted_writes_overlap_up_to_the_device_limit() {
        // One bank, 10-cycle bursts, 100-cycle writes, 3 in flight.
        let mut p = ReadsFirst::with_model(PcmWriteModel::Posted, 1, 10, 100, 8, 10, 3);
        for a in 0..3 {
            p.write(0, a);
        }
        assert_eq!(bank(&p, 0), [(0, 10), (10, 20), (20, 30)], "three bursts back to back");
        p.write(0, 3);
        assert_eq!(bank(&p, 0).last(), Some(&(100, 110)), "the fourth waits for the first write to complete");
        assert_eq!(p.read(105, 9), 110 + 10, "a read waits for the burst in service, not the media writes");
        assert!((p.write_utilisation(p.stats.device_writes, 110) - 4.0 / (3.0 / 100.0 * 110.0)).abs() < 1e-9);
    }

    #[test]
    fn a_write_to_a_queued_block_merges_until_it_issues() {
        let mut p = ReadsFirst::new(1, 10, 100, 4);
        p.write(0, 1); // issues at 0
        p.write(0, 2); // waits for the bank: issues at 100
        assert_eq!(p.write(50, 2), 50);
        assert_eq!(p.stats.merged_writes, 1, "block 2 still waits in the WPQ");
        assert_eq!(p.write(50, 3), 50);
        assert_eq!(bank(&p, 0).last(), Some(&(200, 300)), "the merged write took no bank time");
        p.write(150, 2); // block 2 issued at 100: a new write
        assert_eq!(p.stats.merged_writes, 1);
        assert_eq!(bank(&p, 0).last(), Some(&(300, 400)));
    }

    #[test]
    fn only_the_kinds_that_coalesce_merge_and_device_writes_are_counted_by_kind() {
        use crate::engine::counter::CounterFormat;
        use crate::engine::layout::{Layout, RegionKind};
        let layout = Layout::new(64 << 20, CounterFormat::Split, 8, None);
        let node = layout.meta_addr(1, 0);
        let offer = |coalesce: &[RegionKind]| {
            let mut p = ReadsFirst::new(1, 10, 100, 8).with_kinds(&layout, coalesce);
            // Block 9 takes the bank; the rest queue behind it, unissued.
            for b in [9, 5, 5, node, node, node] {
                p.write(0, b);
            }
            p.stats
        };
        let all = offer(&RegionKind::ALL);
        assert_eq!((all.merged_writes, all.device_writes), (3, 3));
        assert_eq!((all.device_writes_by_kind.data, all.device_writes_by_kind.tree), (2, 1));
        // Secon's WT: tree nodes do not merge; the data still does.
        let wt = offer(&[RegionKind::Data, RegionKind::Mac]);
        assert_eq!((wt.merged_writes, wt.device_writes_by_kind.data, wt.device_writes_by_kind.tree), (1, 2, 3));
    }

    #[test]
    fn a_write_ready_earlier_takes_the_free_slot_before_a_later_booked_write() {
        // One bank, 100-cycle writes. A write booked at 1000 (another
        // core's, or a line sent at a future ACK) does not hold back a
        // write ready at 0: it issues at once, into the bank's idle time.
        let mut p = ReadsFirst::new(1, 10, 100, 8);
        assert_eq!(p.write(1000, 1), 1000);
        assert_eq!(p.write(0, 2), 0);
        assert_eq!(bank(&p, 0), [(0, 100), (1000, 1100)]);
        p.write(50, 3);
        assert_eq!(bank(&p, 0), [(0, 100), (100, 200), (1000, 1100)]);
        // A write that would overlap a booked one takes the gap after it.
        p.write(950, 4);
        assert_eq!(bank(&p, 0).last(), Some(&(1100, 1200)));
        assert_eq!(p.stats.device_writes, 4);
        // Reads wait for the write in service, not for the writes booked
        // back to back after it.
        let mut reads = ReadsFirst::new(1, 10, 100, 8).with_read_calendar();
        reads.write(0, 1);
        reads.write(0, 2);
        assert_eq!(reads.read(50, 9), 110, "after the write at 0..100, ahead of the one at 100");
        assert_eq!(reads.read(0, 8), 10, "a read goes ahead of a write that starts with it");
    }

    #[test]
    fn wpq_occupancy_counts_only_writes_that_have_arrived() {
        // One bank, 100-cycle writes, two WPQ entries. Three writes booked
        // to arrive at 1000: the first issues at once, the other two hold
        // both slots over [1000, 1100) and [1000, 1200).
        let mut p = ReadsFirst::new(1, 10, 100, 2);
        for b in 1..=3 {
            assert_eq!(p.write(1000, b), 1000);
        }
        // A write at 0: the queue is empty then.
        assert_eq!(p.write(0, 4), 0);
        assert_eq!(p.stats.wpq_full_waits, 0);
        // At 1000 both slots are held; the next write waits until the
        // first of them issues (1100), and only that long.
        assert_eq!(p.write(1000, 5), 1100);
        assert_eq!((p.stats.wpq_full_waits, p.stats.wpq_wait_cycles), (1, 100));
        // Writes to other blocks that arrive while a slot is free take it.
        assert_eq!(p.write(999, 6), 999, "one slot held at 999 (block 5 arrives later)");
    }

    #[test]
    fn a_write_merges_only_into_a_queued_write_that_has_arrived() {
        let mut p = ReadsFirst::new(1, 10, 100, 8);
        p.write(1000, 1); // issues at 1000
        p.write(1000, 2); // queued over [1000, 1100)
        assert_eq!(p.write(500, 2), 500);
        assert_eq!(p.stats.merged_writes, 0, "block 2's queued write arrives only at 1000");
        assert_eq!(p.write(1050, 2), 1050);
        assert_eq!(p.stats.merged_writes, 1, "block 2's write of 1000 waits until 1100");
        assert_eq!(p.write(1150, 2), 1150);
        assert_eq!(p.stats.merged_writes, 1, "it issued at 1100: a new write");
        assert_eq!(p.stats.device_writes, 4);
    }

    #[test]
    fn posted_writes_keep_the_device_limit_over_their_whole_flight() {
        // One bank, 10-cycle bursts, 100-cycle writes, 3 in flight.
        let mut p = ReadsFirst::with_model(PcmWriteModel::Posted, 1, 10, 100, 8, 10, 3);
        for a in 0..3 {
            p.write(1000, a); // bursts at 1000, 1010, 1020
        }
        p.write(0, 3);
        p.write(950, 4);
        assert_eq!(p.writes.in_flight, vec![0, 1000, 1010, 1020, 1100]);
        assert_eq!(bank(&p, 0)[0], (0, 10), "the write at 0 is clear of the others' flight");
        // Issued at 950 it would be the fourth in flight at 1020: it waits
        // for the first of the three to complete.
        assert_eq!(bank(&p, 0).last(), Some(&(1100, 1110)));
        assert_eq!(first_in_flight_slot(&[0, 10, 20], 100, 3, 5), 100);
        assert_eq!(first_in_flight_slot(&[0, 10, 20], 100, 4, 5), 5);
        assert_eq!(first_in_flight_slot(&[200, 210, 220], 100, 3, 50), 50, "done before the first starts");
        assert_eq!(first_in_flight_slot(&[200, 210, 220], 100, 3, 150), 300);
    }

    #[test]
    fn a_calendar_read_takes_the_free_slot_before_a_later_booked_read() {
        // One bank, reads of 10 cycles. A read booked at 1000 (another
        // core's, or a store's metadata read ahead of the loads) ...
        let mut frontier = ReadsFirst::new(1, 10, 100, 8);
        let mut calendar = ReadsFirst::new(1, 10, 100, 8).with_read_calendar();
        for p in [&mut frontier, &mut calendar] {
            assert_eq!(p.read(1000, 1), 1010);
        }
        // ... holds a read asked for at 0 back to 1010 with one frontier,
        // not with a calendar, where it fits before.
        assert_eq!(frontier.read(0, 2), 1020);
        assert_eq!(calendar.read(0, 2), 10);
        // A read that would overlap a booked one starts after it.
        assert_eq!(calendar.read(995, 3), 1020);
        assert_eq!(calendar.read(5, 4), 20);
        assert_eq!(calendar.stats.reads, 4);
        // Waits: 15 (995 to 1010) and 5 (5 to 10).
        assert_eq!(calendar.stats.read_wait_cycles, 15 + 5, "{:?}", calendar.stats);
    }
}
