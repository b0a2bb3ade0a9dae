//! A queue of a fixed number of entries, each held over an interval
//! `[arrival, departure)`, booked out of time order: the entries held at a
//! moment are those that arrived by then and had not left. An interval is
//! booked only where it keeps the queue within its entries throughout, so
//! no moment ever holds more (an interval booked later may start before
//! one booked earlier; checking its arrival alone would let it overfill
//! the queue at that one's arrival).

use serde::Serialize;

#[derive(Clone, Debug)]
pub(super) struct Occupancy {
    pub entries: usize,
    /// Arrivals and departures, each sorted on its own (an interval's
    /// arrival never follows its departure, so the entries held at `t`
    /// are the arrivals by `t` less the departures by `t`).
    arrivals: Vec<u64>,
    departures: Vec<u64>,
    /// The most entries held at any moment so far.
    pub peak: usize,
}

/// A queue's size and use, as the stats tree shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct QueueReport {
    pub entries: usize,
    /// The most entries held at one moment of the whole run (warm-up
    /// included).
    pub peak_occupancy: usize,
    /// Requests of the region that found it full, and the cycles they
    /// waited for an entry.
    pub full_waits: u64,
    pub wait_cycles: u64,
}

impl Occupancy {
    pub fn new(entries: usize) -> Self {
        Occupancy { entries: entries.max(1), arrivals: Vec::new(), departures: Vec::new(), peak: 0 }
    }

    /// Entries held at `t`.
    pub fn held_at(&self, t: u64) -> usize {
        self.arrivals.partition_point(|&a| a <= t) - self.departures.partition_point(|&d| d <= t)
    }

    /// Entries that arrived in `[from, to)`.
    pub fn arrivals_in(&self, from: u64, to: u64) -> usize {
        self.arrivals.partition_point(|&a| a < to).saturating_sub(self.arrivals.partition_point(|&a| a < from))
    }

    /// Departures at or after `t`, in order.
    pub fn departures_from(&self, t: u64) -> &[u64] {
        &self.departures[self.departures.partition_point(|&d| d < t)..]
    }

    /// The most entries held at a moment of `[a, d)`, and the first moment
    /// at which `limit` or more are held, if any. The count changes only
    /// at arrivals and departures, so the moments to look at are `a` and
    /// each arrival in `(a, d)`.
    fn scan(&self, a: u64, d: u64, limit: usize) -> (usize, Option<u64>) {
        let mut held = self.held_at(a);
        let mut most = held;
        let mut first = (held >= limit).then_some(a);
        let mut i = self.arrivals.partition_point(|&x| x <= a);
        let mut j = self.departures.partition_point(|&x| x <= a);
        while i < self.arrivals.len() && self.arrivals[i] < d {
            let x = self.arrivals[i];
            // Departures at or before `x` count first (an entry that leaves
            // at `x` is not held at `x`).
            while j < self.departures.len() && self.departures[j] <= x {
                held -= 1;
                j += 1;
            }
            while i < self.arrivals.len() && self.arrivals[i] == x {
                held += 1;
                i += 1;
            }
            most = most.max(held);
            if first.is_none() && held >= limit {
                first = Some(x);
            }
        }
        (most, first)
    }

    /// The first moment of `[a, d)` at which every entry is held, if any:
    /// an interval `[a, d)` fits only if there is none. A request that
    /// leaves as it arrives still needs an entry free at its arrival.
    pub fn first_full(&self, a: u64, d: u64) -> Option<u64> {
        self.scan(a, d.max(a + 1), self.entries).1
    }

    /// The first moment after `x` at which an entry is free.
    pub fn free_after(&self, x: u64) -> u64 {
        let mut t = x;
        let mut j = self.departures.partition_point(|&d| d <= x);
        while self.held_at(t) >= self.entries {
            // Entries free only at departures: the next one.
            match self.departures.get(j) {
                Some(&d) => {
                    t = d;
                    j += 1;
                }
                None => return t.max(x + 1),
            }
        }
        t.max(x + 1)
    }

    /// Hold an entry over `[a, d)` (nothing if it is empty). The caller has
    /// checked that it fits.
    pub fn book(&mut self, a: u64, d: u64) {
        if d <= a {
            return;
        }
        self.arrivals.insert(self.arrivals.partition_point(|&x| x <= a), a);
        self.departures.insert(self.departures.partition_point(|&x| x <= d), d);
        // The last interval booked over a moment sees that moment's final
        // count, so the peak over every booking is the peak of the run.
        self.peak = self.peak.max(self.scan(a, d, usize::MAX).0);
    }

    /// An entry that arrived at `arrival` leaves at `to` instead of `from`
    /// (an entry that left as it arrived, `from == arrival`, was never
    /// booked: it is now). The caller has checked that it fits.
    pub fn move_departure(&mut self, arrival: u64, from: u64, to: u64) {
        if from > arrival {
            let i = self.departures.partition_point(|&x| x < from);
            debug_assert_eq!(self.departures.get(i), Some(&from), "a departure to move");
            self.departures.remove(i);
        } else {
            self.arrivals.insert(self.arrivals.partition_point(|&x| x <= arrival), arrival);
        }
        if to > arrival {
            self.departures.insert(self.departures.partition_point(|&x| x <= to), to);
        } else {
            let i = self.arrivals.partition_point(|&x| x < arrival);
            self.arrivals.remove(i);
        }
    }

    /// Count the moments of `[a, d)` towards the peak.
    pub fn note_peak(&mut self, a: u64, d: u64) {
        if d > a {
            self.peak = self.peak.max(self.scan(a, d, usize::MAX).0);
        }
    }

    /// Forget what left by `horizon` (no request comes before it).
    pub fn prune(&mut self, horizon: u64) {
        // The entries gone by `horizon` count once among the arrivals and
        // once among the departures by any later moment: drop as many of
        // each (the earliest arrivals are theirs or others' by then).
        let k = self.departures.partition_point(|&d| d <= horizon);
        if k > 0 {
            self.departures.drain(..k);
            self.arrivals.drain(..k);
        }
    }

    /// Its size and peak, with the waits counted over a region.
    pub fn report(&self, full_waits: u64, wait_cycles: u64) -> QueueReport {
        QueueReport { entries: self.entries, peak_occupancy: self.peak, full_waits, wait_cycles }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_fits_only_if_no_moment_of_it_is_full() {
        let mut q = Occupancy::new(1);
        q.book(100, 200);
        assert_eq!(q.first_full(0, 50), None, "before the booked entry");
        assert_eq!(q.first_full(50, 150), Some(100), "it would overfill the queue at 100");
        assert_eq!(q.first_full(200, 300), None, "the entry left at 200");
        assert_eq!(q.free_after(100), 200);
        q.book(200, 300);
        assert_eq!(q.peak, 1);
        let mut two = Occupancy::new(2);
        two.book(100, 200);
        two.book(50, 150);
        assert_eq!((two.peak, two.held_at(120), two.held_at(170)), (2, 2, 1));
        assert_eq!(two.first_full(0, 101), Some(100));
        assert_eq!(two.free_after(120), 150);
    }

    #[test]
    fn pruning_keeps_the_counts_after_the_horizon() {
        let mut q = Occupancy::new(4);
        for (a, d) in [(0, 10), (5, 50), (20, 30), (40, 60)] {
            q.book(a, d);
        }
        let before: Vec<usize> = (30..70).map(|t| q.held_at(t)).collect();
        q.prune(30);
        let after: Vec<usize> = (30..70).map(|t| q.held_at(t)).collect();
        assert_eq!(before, after);
        assert_eq!(q.arrivals_in(30, 70), 1);
        assert_eq!(q.departures_from(45), [50, 60]);
    }
}
