//! A file of entries each held over a stretch of time: a data cache's
//! MSHRs (a miss holds one from its issue until its fill), its write
//! buffer (a dirty victim holds one until the next level took it), and
//! the stretches a cache is blocked by an MSHR that holds all its targets.
//!
//! ```text
//!  held: [start, end) per entry, sorted by end (for the merges by block)
//!  steps: the occupancy as a step function, (time, entries held from then)
//!        sorted by time; both drop what ended by the horizon (no request
//!        comes before it)
//!  occupancy(x)   entries with start <= x < end
//!  first_below(x) the first time from x at which fewer than `cap` are held
//!  grant(x)       the first time from x from which fewer than `cap` are
//!                 held at every later time: an entry taken then, however
//!                 long it is held, never makes the file hold more than `cap`
//! ```
//!
//! Requests reach a file out of time order (the `ooo` core issues a load
//! when its address is known, so a later load may miss before an earlier
//! one; the cores share L3). A miss's end (its fill) is known only once
//! the levels below have priced it, so a gap between entries booked for
//! later times cannot be used without knowing whether the miss fits in
//! it: `grant` takes an entry only where no later time is full, which
//! keeps the file within its size whatever the miss's length
//! (docs/timing-order.md).

/// One entry: held over `[start, end)` for `block`, with `targets`
/// accesses (the miss and those merged into it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Entry {
    pub start: u64,
    pub end: u64,
    pub block: u64,
    pub targets: u32,
}

/// What a file counted since it was built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct EntryCounts {
    pub allocations: u64,
    /// Entry-cycles booked (all of them, the run's end not known yet).
    pub busy: u64,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Entries {
    /// Sorted by `end`.
    held: Vec<Entry>,
    /// The occupancy from each time on, until the next step; sorted by
    /// time, none after the last (where it is 0).
    steps: Vec<(u64, u64)>,
    horizon: u64,
    /// The occupancy at which the file is full (its blocking size), and
    /// the end of the last stretch that held that many (0: none): a query
    /// at this size after it needs no search.
    cap: u64,
    full_until: u64,
    pub counts: EntryCounts,
    /// The most entries held at once.
    pub peak: u64,
}

/// What ended by the horizon is dropped once more than this many are kept.
const KEEP: usize = 64;

impl Entries {
    /// An empty file, full at `cap` entries.
    pub fn new(cap: u64) -> Self {
        Entries { cap, ..Entries::default() }
    }

    /// No request comes before `t` from now on.
    pub fn set_horizon(&mut self, t: u64) {
        self.horizon = self.horizon.max(t);
    }

    /// Whether no entry is held at or after `x` (the last step, where
    /// the occupancy falls to 0, is at or before it).
    #[inline]
    fn idle_from(&self, x: u64) -> bool {
        self.steps.last().is_none_or(|&(t, _)| t <= x)
    }

    /// The index of the step in force at `x` plus one (0: before every step).
    #[inline]
    fn step_after(&self, x: u64) -> usize {
        self.steps.partition_point(|&(t, _)| t <= x)
    }

    /// Entries held at `x`.
    #[inline]
    pub fn occupancy(&self, x: u64) -> u64 {
        match self.step_after(x) {
            0 => 0,
            i => self.steps[i - 1].1,
        }
    }

    /// The first time at or after `x` at which fewer than `cap` entries
    /// are held.
    pub fn first_below(&self, x: u64, cap: u64) -> u64 {
        if self.idle_from(x) || (cap == self.cap && x >= self.full_until) {
            return x;
        }
        let i = self.step_after(x);
        if i == 0 || self.steps[i - 1].1 < cap {
            return x;
        }
        self.steps[i..].iter().find(|&&(_, n)| n < cap).map(|&(t, _)| t).expect("the last step holds none")
    }

    /// The first time at or after `x` from which fewer than `cap` entries
    /// are held at every later time: the end of the last stretch that
    /// holds `cap`.
    pub fn grant(&self, x: u64, cap: u64) -> u64 {
        if cap == self.cap {
            return x.max(self.full_until);
        }
        if self.idle_from(x) {
            return x;
        }
        let i = self.step_after(x).saturating_sub(1);
        match self.steps[i..].iter().rposition(|&(_, n)| n >= cap) {
            Some(j) => self.steps[i + j + 1].0.max(x),
            None => x,
        }
    }

    /// Make a step at `t` (the occupancy it had); returns its index.
    fn step_at(&mut self, t: u64) -> usize {
        let i = self.steps.partition_point(|&(s, _)| s < t);
        if self.steps.get(i).is_none_or(|&(s, _)| s != t) {
            let before = if i == 0 { 0 } else { self.steps[i - 1].1 };
            self.steps.insert(i, (t, before));
        }
        i
    }

    /// Hold an entry over `[start, end)` (`end` at least a cycle later).
    pub fn hold(&mut self, start: u64, end: u64, block: u64) {
        let end = end.max(start + 1);
        self.drop_past();
        let at = self.held.partition_point(|e| e.end <= end);
        self.held.insert(at, Entry { start, end, block, targets: 1 });
        let i = self.step_at(start);
        let j = self.step_at(end);
        let mut most = 0;
        let mut last_full = None;
        for (k, (_, n)) in self.steps[i..j].iter_mut().enumerate() {
            *n += 1;
            most = most.max(*n);
            if *n >= self.cap {
                last_full = Some(i + k);
            }
        }
        // Only the steps of this entry changed: a full stretch through
        // them ends at the first step after them below the size (a full
        // stretch later than that was already counted).
        if let Some(f) = last_full {
            let cap = self.cap;
            let end_of_full = self.steps[f..].iter().find(|&&(_, n)| n < cap).map_or(end, |&(t, _)| t);
            self.full_until = self.full_until.max(end_of_full);
        }
        self.counts.allocations += 1;
        self.counts.busy += end - start;
        self.peak = self.peak.max(most);
    }

    /// Drop what ended by the horizon, once it is half of what is kept
    /// (so that each entry and step is moved a bounded number of times).
    fn drop_past(&mut self) {
        let h = self.horizon;
        if self.held.len() > KEEP {
            let old = self.held.partition_point(|e| e.end <= h);
            if 2 * old >= self.held.len() {
                self.held.drain(..old);
            }
        }
        if self.steps.len() > KEEP {
            // The step in force at the horizon stays (it gives the
            // occupancy there); those before it go.
            let old = self.step_after(h).saturating_sub(1);
            if 2 * old >= self.steps.len() {
                self.steps.drain(..old);
            }
        }
    }

    /// The entry held for `block` that ends after `x` and started first,
    /// if any.
    pub fn find_mut(&mut self, block: u64, x: u64) -> Option<&mut Entry> {
        if self.idle_from(x) {
            return None;
        }
        let i = self.held.partition_point(|e| e.end <= x);
        self.held[i..].iter_mut().filter(|e| e.block == block).min_by_key(|e| e.start)
    }

    /// Entry-cycles booked at or after `t`.
    pub fn booked_from(&self, t: u64) -> u64 {
        let i = self.step_after(t).saturating_sub(1);
        self.steps[i..].windows(2).map(|w| w[0].1 * (w[1].0 - w[0].0.max(t).min(w[1].0))).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_file_frees_an_entry_when_its_first_holder_releases_it() {
        let mut f = Entries::new(2);
        f.hold(0, 100, 1);
        f.hold(10, 50, 2);
        assert_eq!(f.occupancy(20), 2);
        assert_eq!(f.first_below(20, 2), 50, "the entry held to 50 frees first");
        assert_eq!(f.first_below(20, 3), 20);
        assert_eq!(f.grant(20, 2), 50);
        assert_eq!(f.occupancy(100), 0, "an entry is free in the cycle its holder releases it");
    }

    #[test]
    fn an_entry_is_granted_only_where_no_later_time_is_full() {
        let mut f = Entries::new(2);
        // Two entries booked for later times, by requests priced earlier.
        f.hold(500, 800, 1);
        f.hold(600, 900, 2);
        assert_eq!(f.first_below(0, 2), 0, "nothing is held at 0");
        assert_eq!(f.grant(0, 2), 800, "a miss taken at 0 might still be in flight at 600");
        assert_eq!(f.grant(0, 3), 0);
        f.hold(f.grant(0, 2), 1000, 3);
        assert_eq!(f.peak, 2);
    }

    #[test]
    fn the_same_blocks_entry_is_found_while_it_is_held() {
        let mut f = Entries::new(4);
        f.hold(0, 100, 7);
        assert!(f.find_mut(7, 50).is_some());
        assert!(f.find_mut(7, 100).is_none(), "released at its fill");
        assert!(f.find_mut(8, 50).is_none());
        assert_eq!(f.booked_from(40), 60);
    }

    #[test]
    fn past_entries_are_dropped_at_the_horizon_without_changing_an_answer() {
        let mut f = Entries::new(3);
        for k in 0..200u64 {
            f.hold(10 * k, 10 * k + 35, k);
        }
        let before = (f.occupancy(1990), f.grant(1985, 3), f.first_below(1985, 4));
        f.set_horizon(1900);
        f.hold(1995, 2100, 999);
        assert!(f.held.len() < 20 && f.steps.len() < 40, "{} entries, {} steps kept", f.held.len(), f.steps.len());
        assert_eq!(f.occupancy(1990), before.0);
        assert_eq!(f.first_below(1985, 4), before.2);
        assert!(f.grant(1985, 3) >= before.1);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

        /// `first_below` and `grant` are their definitions, checked cycle
        /// by cycle on entries booked in any order.
        #[test]
        fn first_below_and_grant_are_their_definitions(
            booked in proptest::collection::vec((0u64..300, 1u64..120), 0..24),
            x in 0u64..400,
            cap in 1u64..5,
        ) {
            // Asked at the size it is full at (the kept end of its last
            // full stretch) and at another (the search).
            let (mut f, mut g) = (Entries::new(cap), Entries::new(cap + 1));
            for (s, len) in booked {
                f.hold(s, s + len, 0);
                g.hold(s, s + len, 0);
            }
            let last = 500;
            let below = (x..=last).find(|&y| f.occupancy(y) < cap).unwrap();
            let granted = (x..=last).find(|&y| (y..=last).all(|z| f.occupancy(z) < cap)).unwrap();
            for file in [&f, &g] {
                proptest::prop_assert_eq!(file.first_below(x, cap), below);
                proptest::prop_assert_eq!(file.grant(x, cap), granted);
            }
        }

        /// Entries taken where `grant` says, for any length, out of time
        /// order, never make the file hold more than its size.
        #[test]
        fn granted_entries_never_hold_more_than_the_size(
            reqs in proptest::collection::vec((0u64..2000, 1u64..400), 1..80),
            cap in 1u64..6,
        ) {
            let mut f = Entries::new(cap);
            for (x, len) in reqs {
                let s = f.grant(x, cap);
                proptest::prop_assert!(s >= x);
                f.hold(s, s + len, 0);
                proptest::prop_assert!(f.peak <= cap, "peak {} over {}", f.peak, cap);
            }
            for t in (0..5000).step_by(7) {
                proptest::prop_assert!(f.occupancy(t) <= cap);
            }
        }
    }
}
