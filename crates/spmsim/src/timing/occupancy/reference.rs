//! The queue occupancy as it was first written: two sorted lists, every
//! query a walk of them. The tests hold the block-structured `Occupancy`
//! to the same answers.

#[derive(Clone, Debug)]
pub struct Occupancy {
    pub entries: usize,
    /// Arrivals and departures, each sorted on its own (an interval's
    /// arrival never follows its departure, so the entries held at `t`
    /// are the arrivals by `t` less the departures by `t`).
    arrivals: Vec<u64>,
    departures: Vec<u64>,
    /// The most entries held at any moment so far.
    pub peak: usize,
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
}
