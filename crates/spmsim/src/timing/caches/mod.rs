//! A data cache's miss handling as gem5's classic caches have it
//! (`src/mem/cache/base.cc`): resources that accesses occupy, not
//! latencies in series.
//!
//! ```text
//!  access at x --> blocked? (MSHR file full, an MSHR with all its targets,
//!                  write buffer full: gem5 refuses every request, hits too,
//!                  until the cause clears) --> wait
//!    hit, block not in flight  -> done after the level's latency
//!    hit, block's miss in flight -> merged into its MSHR as a target: done
//!                  at its fill; the MSHR's last target blocks the cache
//!                  until the fill
//!    miss -> an MSHR from its issue to its fill (the levels below price it)
//!  fill's dirty victim -> a write-buffer entry until the next level (or the
//!                  write queue) took it; full at `write_buffers`, with one
//!                  more per MSHR for the fills already in flight
//! ```
//! `caches.mshrs = "unbounded"` builds none of this (the model before it).

mod entries;

use crate::config::CacheLevel;
use entries::{Entries, EntryCounts};
use serde::Serialize;

/// One cache's MSHRs and write buffer.
#[derive(Clone, Debug)]
pub struct MissBuffers {
    mshrs: Entries,
    mshr_entries: u64,
    targets_per_mshr: u32,
    write_buffer: Entries,
    write_buffers: u64,
    /// Stretches during which an MSHR held all its targets.
    target_blocks: Entries,
    counts: BufferCounts,
    /// The counts when the region of interest began.
    start: Option<(BufferCounts, EntryCounts, EntryCounts)>,
}

/// What a cache's buffers counted besides their entries.
#[derive(Clone, Copy, Debug, Default)]
struct BufferCounts {
    merged: u64,
    mshr_waits: u64,
    mshr_wait_cycles: u64,
    write_buffer_waits: u64,
    write_buffer_wait_cycles: u64,
}

impl MissBuffers {
    pub fn new(level: &CacheLevel) -> Self {
        MissBuffers {
            mshrs: Entries::new(level.mshrs.max(1) as u64),
            mshr_entries: level.mshrs.max(1) as u64,
            targets_per_mshr: level.targets_per_mshr.max(1),
            write_buffer: Entries::new(level.write_buffers.max(1) as u64),
            write_buffers: level.write_buffers.max(1) as u64,
            target_blocks: Entries::new(1),
            counts: BufferCounts::default(),
            start: None,
        }
    }

    /// No request comes before `t` from now on.
    pub fn set_horizon(&mut self, t: u64) {
        self.mshrs.set_horizon(t);
        self.write_buffer.set_horizon(t);
        self.target_blocks.set_horizon(t);
    }

    /// When an access that reaches the cache at `x` is taken: once no
    /// cause blocks the cache (gem5 `setBlocked`: a full MSHR file, an
    /// MSHR with all its targets, a full write buffer).
    pub fn ready(&mut self, x: u64) -> u64 {
        let (y, by_mshrs, by_writes) = self.unblocked(x);
        self.count_wait(by_mshrs, by_writes);
        y
    }

    /// [`Self::ready`] uncounted: the time, and the cycles waited for the
    /// MSHRs and for the write buffer.
    fn unblocked(&self, x: u64) -> (u64, u64, u64) {
        let mut y = x;
        let (mut by_mshrs, mut by_writes) = (0, 0);
        loop {
            let a = self.mshrs.first_below(y, self.mshr_entries);
            let b = self.target_blocks.first_below(a, 1);
            let c = self.write_buffer.first_below(b, self.write_buffers);
            by_mshrs += b - y;
            by_writes += c - b;
            if c == y {
                return (y, by_mshrs, by_writes);
            }
            y = c;
        }
    }

    fn count_wait(&mut self, by_mshrs: u64, by_writes: u64) {
        if by_mshrs > 0 {
            self.counts.mshr_waits += 1;
            self.counts.mshr_wait_cycles += by_mshrs;
        }
        if by_writes > 0 {
            self.counts.write_buffer_waits += 1;
            self.counts.write_buffer_wait_cycles += by_writes;
        }
    }

    /// A hit taken at `x` (see [`Self::ready`]) on a cache whose latency
    /// from this access's arrival is `latency`: when its data is there.
    /// A block whose miss is in flight is not there before its fill: the
    /// access merges into that miss's MSHR (up to its targets). One taken
    /// before the miss's own issue (the requests are priced in program
    /// order, which is not always time order) would have been the miss:
    /// it takes a miss's time from its own arrival.
    pub fn hit(&mut self, x: u64, block: u64, latency: u64) -> u64 {
        let own = x + latency;
        let targets = self.targets_per_mshr;
        let Some(m) = self.mshrs.find_mut(block, x) else { return own };
        if m.start > x {
            return own.max(x + (m.end - m.start));
        }
        m.targets += 1;
        let fill = m.end;
        let last = m.targets >= targets;
        self.counts.merged += 1;
        if last {
            // gem5 `Blocked_NoTargets`: no request until this MSHR is done.
            self.target_blocks.hold(x, fill, block);
        }
        own.max(fill)
    }

    /// When a miss that reaches the cache at `x` takes an MSHR: once the
    /// cache takes it and an entry is free from then on.
    pub fn allocate(&mut self, x: u64) -> u64 {
        let (mut s, mut by_mshrs, mut by_writes) = (x, 0, 0);
        loop {
            let (r, m, w) = self.unblocked(s);
            let g = self.mshrs.grant(r, self.mshr_entries);
            by_mshrs += m + (g - r);
            by_writes += w;
            if g == s {
                self.count_wait(by_mshrs, by_writes);
                return s;
            }
            s = g;
        }
    }

    /// The miss for `block` taken at `start` (from [`Self::allocate`]) is
    /// filled at `fill`: its MSHR is held until then.
    pub fn hold_miss(&mut self, start: u64, fill: u64, block: u64) {
        self.mshrs.hold(start, fill, block);
    }

    /// A dirty victim leaves at `at`: when it takes a write-buffer entry.
    /// The file may hold `write_buffers` plus one per MSHR (gem5 reserves
    /// those for the fills in flight when it blocks the cache).
    pub fn victim(&self, at: u64) -> u64 {
        self.write_buffer.grant(at, self.write_buffers + self.mshr_entries)
    }

    /// The victim in the write buffer from `start` (from [`Self::victim`])
    /// until the next level took it at `taken`.
    pub fn hold_victim(&mut self, start: u64, taken: u64, block: u64) {
        self.write_buffer.hold(start, taken, block);
    }

    /// The region of interest starts at `t`: later reports count from
    /// here, the entries' busy cycles from `t` on.
    pub fn mark_roi_start(&mut self, t: u64) {
        let until = |f: &Entries| EntryCounts { busy: f.counts.busy - f.booked_from(t), ..f.counts };
        self.start = Some((self.counts, until(&self.mshrs), until(&self.write_buffer)));
    }

    /// This cache's counts over a run of `cycles` ending at `end`.
    pub fn report(&self, cycles: u64, end: u64) -> BufferReport {
        let (c0, m0, w0) = self.start.unwrap_or_default();
        let c = &self.counts;
        let busy = |f: &Entries, before: &EntryCounts| {
            let beyond = f.booked_from(end);
            ((f.counts.busy - beyond).saturating_sub(before.busy), beyond)
        };
        let (mb, mbl) = busy(&self.mshrs, &m0);
        let (wb, wbl) = busy(&self.write_buffer, &w0);
        BufferReport {
            mshrs: MshrStats {
                entries: self.mshr_entries,
                targets_per_mshr: self.targets_per_mshr as u64,
                caches: 1,
                misses: self.mshrs.counts.allocations - m0.allocations,
                merged: c.merged - c0.merged,
                peak_occupancy: self.mshrs.peak,
                held_at_end: self.mshrs.occupancy(end),
                busy_cycles: mb,
                backlog_cycles: mbl,
                utilisation: mb as f64 / (cycles.max(1) * self.mshr_entries) as f64,
                blocked_waits: c.mshr_waits - c0.mshr_waits,
                blocked_cycles: c.mshr_wait_cycles - c0.mshr_wait_cycles,
            },
            write_buffer: WriteBufferStats {
                entries: self.write_buffers,
                caches: 1,
                writes: self.write_buffer.counts.allocations - w0.allocations,
                peak_occupancy: self.write_buffer.peak,
                held_at_end: self.write_buffer.occupancy(end),
                busy_cycles: wb,
                backlog_cycles: wbl,
                utilisation: wb as f64 / (cycles.max(1) * self.write_buffers) as f64,
                blocked_waits: c.write_buffer_waits - c0.write_buffer_waits,
                blocked_cycles: c.write_buffer_wait_cycles - c0.write_buffer_wait_cycles,
            },
        }
    }
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

/// A cache level's MSHRs as the stats tree shows them
/// (`roi.caches.<level>.mshrs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct MshrStats {
    /// MSHRs of one cache, and accesses one of them holds.
    pub entries: u64,
    pub targets_per_mshr: u64,
    /// Caches of this level summed here (each core's own L1D and L2).
    #[serde(skip_serializing_if = "is_one")]
    pub caches: u64,
    /// MSHRs allocated (misses sent to the next level), and accesses
    /// merged into one in flight.
    pub misses: u64,
    pub merged: u64,
    /// The most MSHRs one cache held at once (over the whole run): at most
    /// `entries`.
    pub peak_occupancy: u64,
    /// MSHRs held at the run's last cycle.
    pub held_at_end: u64,
    /// Entry-cycles held within the run, and booked past its end.
    pub busy_cycles: u64,
    pub backlog_cycles: u64,
    /// busy_cycles over the run's cycles times every cache's entries.
    pub utilisation: f64,
    /// Accesses that found the cache blocked by its MSHRs (the file full,
    /// or an MSHR holding all its targets), and the cycles they waited,
    /// summed over those accesses: accesses that wait through the same
    /// blocked stretch each count it, so `blocked_cycles` may exceed the
    /// run's cycles and `busy_cycles` (gem5's `blocked_cycles` is instead
    /// the time the cache is blocked, counted once).
    pub blocked_waits: u64,
    pub blocked_cycles: u64,
}

/// A cache level's write buffer as the stats tree shows it
/// (`roi.caches.<level>.write_buffer`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct WriteBufferStats {
    pub entries: u64,
    #[serde(skip_serializing_if = "is_one")]
    pub caches: u64,
    /// Dirty victims that went through it.
    pub writes: u64,
    /// The most victims one cache held at once: at most `entries` plus
    /// one per MSHR.
    pub peak_occupancy: u64,
    pub held_at_end: u64,
    pub busy_cycles: u64,
    pub backlog_cycles: u64,
    pub utilisation: f64,
    /// Accesses that found the cache blocked by a full write buffer, and
    /// the cycles they waited, summed over those accesses as the MSHRs'
    /// are.
    pub blocked_waits: u64,
    pub blocked_cycles: u64,
}

/// One cache level's buffers, summed over the caches of the level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct BufferReport {
    pub mshrs: MshrStats,
    pub write_buffer: WriteBufferStats,
}

impl BufferReport {
    /// Another cache of the same level (another core's) added: counts
    /// summed, peaks the higher, utilisation over all their entries.
    pub fn add(&mut self, o: &BufferReport) {
        let m = &mut self.mshrs;
        let (mu, wu) = (m.utilisation * m.caches as f64, self.write_buffer.utilisation * self.write_buffer.caches as f64);
        m.caches += o.mshrs.caches;
        m.misses += o.mshrs.misses;
        m.merged += o.mshrs.merged;
        m.peak_occupancy = m.peak_occupancy.max(o.mshrs.peak_occupancy);
        m.held_at_end += o.mshrs.held_at_end;
        m.busy_cycles += o.mshrs.busy_cycles;
        m.backlog_cycles += o.mshrs.backlog_cycles;
        m.utilisation = (mu + o.mshrs.utilisation * o.mshrs.caches as f64) / m.caches as f64;
        m.blocked_waits += o.mshrs.blocked_waits;
        m.blocked_cycles += o.mshrs.blocked_cycles;
        let w = &mut self.write_buffer;
        w.caches += o.write_buffer.caches;
        w.writes += o.write_buffer.writes;
        w.peak_occupancy = w.peak_occupancy.max(o.write_buffer.peak_occupancy);
        w.held_at_end += o.write_buffer.held_at_end;
        w.busy_cycles += o.write_buffer.busy_cycles;
        w.backlog_cycles += o.write_buffer.backlog_cycles;
        w.utilisation = (wu + o.write_buffer.utilisation * o.write_buffer.caches as f64) / w.caches as f64;
        w.blocked_waits += o.write_buffer.blocked_waits;
        w.blocked_cycles += o.write_buffer.blocked_cycles;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(mshrs: u32, targets: u32, write_buffers: u32) -> CacheLevel {
        CacheLevel { mshrs, targets_per_mshr: targets, write_buffers, ..CacheLevel::default() }
    }

    #[test]
    fn a_full_mshr_file_blocks_misses_and_hits_until_an_entry_frees() {
        let mut b = MissBuffers::new(&level(2, 20, 8));
        for (block, fill) in [(1, 300), (2, 200)] {
            let s = b.allocate(0);
            assert_eq!(s, 0);
            b.hold_miss(s, fill, block);
        }
        assert_eq!(b.allocate(10), 200, "the third miss waits for the first fill");
        assert_eq!(b.ready(10), 200, "a hit waits too: gem5 blocks the whole cache");
        let r = b.report(400, 400);
        assert_eq!((r.mshrs.misses, r.mshrs.peak_occupancy, r.mshrs.blocked_waits), (2, 2, 2));
        assert_eq!(r.mshrs.busy_cycles, 500);
    }

    #[test]
    fn blocked_cycles_sum_the_waits_of_every_access_blocked_by_one_stretch() {
        let mut b = MissBuffers::new(&level(1, 20, 8));
        let s = b.allocate(0);
        b.hold_miss(s, 100, 1);
        assert_eq!(b.ready(10), 100, "a hit waits for the only MSHR");
        assert_eq!(b.ready(20), 100);
        assert_eq!(b.allocate(30), 100, "a miss waits too");
        let m = b.report(200, 200).mshrs;
        assert_eq!((m.blocked_waits, m.blocked_cycles), (3, 90 + 80 + 70));
        assert_eq!(m.busy_cycles, 100, "the file was full for 100 cycles, fewer than the accesses waited");
    }

    #[test]
    fn an_access_to_a_block_in_flight_merges_and_its_last_target_blocks_the_cache() {
        let mut b = MissBuffers::new(&level(4, 3, 8));
        b.hold_miss(0, 300, 7);
        assert_eq!(b.hit(10, 7, 2), 300, "served at the fill");
        assert_eq!(b.ready(20), 20);
        assert_eq!(b.hit(20, 7, 2), 300, "the third target");
        assert_eq!(b.ready(30), 300, "an MSHR holding all its targets blocks the cache until its fill");
        assert_eq!(b.hit(400, 7, 2), 402, "filled: a plain hit");
        assert_eq!(b.report(500, 500).mshrs.merged, 2);
    }

    #[test]
    fn a_full_write_buffer_blocks_the_cache_and_the_fills_in_flight_may_overflow_it() {
        let mut b = MissBuffers::new(&level(2, 20, 1));
        let w = b.victim(100);
        assert_eq!(w, 100);
        b.hold_victim(w, 400, 9);
        assert_eq!(b.ready(150), 400, "one victim fills a write buffer of one entry");
        let w2 = b.victim(150);
        assert_eq!(w2, 150, "a fill already in flight takes a reserved entry");
        b.hold_victim(w2, 500, 10);
        b.hold_victim(b.victim(160), 500, 11);
        assert_eq!(b.victim(170), 400, "one entry and a reserve of two MSHRs' are full");
        assert_eq!(b.report(600, 600).write_buffer.peak_occupancy, 3);
    }
}
