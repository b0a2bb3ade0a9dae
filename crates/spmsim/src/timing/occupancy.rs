//! A queue of a fixed number of entries, each held over an interval
//! `[arrival, departure)`, booked out of time order: the entries held at a
//! moment are those that arrived by then and had not left. An interval is
//! booked only where it keeps the queue within its entries throughout, so
//! no moment ever holds more (an interval booked later may start before
//! one booked earlier; checking its arrival alone would let it overfill
//! the queue at that one's arrival).
//!
//! The arrivals and departures are one timeline of events (`timeline.rs`,
//! kept by `edits.rs`) in blocks under a tree of their summaries
//! (`summary.rs`), so that a query costs a walk of a block or two and a
//! descent of the tree, however many intervals are booked and however far
//! ahead of the present they reach.

mod edits;
mod event;
mod summary;
mod timeline;

#[cfg(test)]
mod properties;
#[cfg(test)]
mod reference;

use serde::Serialize;
use timeline::Timeline;

#[derive(Clone, Debug)]
pub(crate) struct Occupancy {
    pub entries: usize,
    /// Arrivals and departures, merged per time (an interval's arrival
    /// never follows its departure, so the entries held at `t` are the
    /// arrivals by `t` less the departures by `t`).
    events: Timeline,
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
        Occupancy { entries: entries.max(1), events: Timeline::default(), peak: 0 }
    }

    /// Entries held at `t`.
    pub fn held_at(&self, t: u64) -> usize {
        self.events.held_at(t) as usize
    }

    /// Arrivals before `t`.
    fn arrivals_before(&self, t: u64) -> u64 {
        t.checked_sub(1).map_or(0, |t| self.events.by(t).0)
    }

    /// Entries that arrived in `[from, to)`.
    pub fn arrivals_in(&self, from: u64, to: u64) -> usize {
        self.arrivals_before(to).saturating_sub(self.arrivals_before(from)) as usize
    }

    /// Departures at or after `t`, in order, one a departing entry (two
    /// that leave at once come twice), each with the entries held at its
    /// time, given to `stop` until it answers true.
    pub fn departures_held_from(&self, t: u64, mut stop: impl FnMut(u64, usize) -> bool) {
        self.events.departures_from(t, |x, held| stop(x, held as usize));
    }

    /// Departures at or after `t`, in order, each with the entries held
    /// at its time.
    #[cfg(test)]
    pub fn all_departures_held_from(&self, t: u64) -> Vec<(u64, usize)> {
        let mut v = Vec::new();
        self.departures_held_from(t, |x, held| {
            v.push((x, held));
            false
        });
        v
    }

    /// Departures at or after `t`, in order.
    #[cfg(test)]
    pub fn departures_from(&self, t: u64) -> Vec<u64> {
        self.all_departures_held_from(t).into_iter().map(|(x, _)| x).collect()
    }

    /// The most entries held at a moment of `[a, d)`. The count changes
    /// only at arrivals and departures, so the moments to look at are `a`
    /// and each event in `(a, d)`.
    pub fn most_in(&self, a: u64, d: u64) -> usize {
        (self.events.held_at(a).max(self.events.highest_in(a, d))) as usize
    }

    /// The first moment of `[a, d)` at which every entry is held, if any:
    /// an interval `[a, d)` fits only if there is none. A request that
    /// leaves as it arrives still needs an entry free at its arrival. The
    /// count rises only at arrivals, so the moment is `a` or an arrival.
    pub fn first_full(&self, a: u64, d: u64) -> Option<u64> {
        let full = self.entries as i64;
        if self.events.held_at(a) >= full {
            return Some(a);
        }
        self.events.first_reaching(a, d.max(a + 1), full)
    }

    /// The last moment of `[a, d)` at which every entry is held, if any
    /// (over the same moments as `first_full`). The queue is full from an
    /// event at which it is until the next event, a departure.
    pub fn last_full(&self, a: u64, d: u64) -> Option<u64> {
        let d = d.max(a + 1);
        let full = self.entries as i64;
        match self.events.last_reaching(a, d, full) {
            Some((_, next)) => Some(next.map_or(d, |n| n.min(d)) - 1),
            // No event of `(a, d)` finds the queue full: it is full from
            // `a` to the next event, or not at all.
            _ => (self.events.held_at(a) >= full).then(|| self.events.first_after(a).map_or(d, |n| n.min(d)) - 1),
        }
    }

    /// The first moment after `x` at which an entry is free. The count
    /// falls only at departures, so the moment is `x + 1` (an entry is
    /// free at `x`) or a departure; with none to come, the last.
    pub fn free_after(&self, x: u64) -> u64 {
        let full = self.entries as i64;
        if self.events.held_at(x) < full {
            return x + 1;
        }
        match self.events.first_below(x, full) {
            Some(t) => t,
            None => self.events.last_departure().map_or(x, |d| d.max(x)).max(x + 1),
        }
    }

    /// Hold an entry over `[a, d)` (nothing if it is empty). The caller has
    /// checked that it fits.
    pub fn book(&mut self, a: u64, d: u64) {
        if d <= a {
            return;
        }
        self.events.add(a, 1, 0);
        self.events.add(d, 0, 1);
        // The last interval booked over a moment sees that moment's final
        // count, so the peak over every booking is the peak of the run.
        self.note_peak(a, d);
    }

    /// An entry that arrived at `arrival` leaves at `to` instead of `from`
    /// (an entry that left as it arrived, `from == arrival`, was never
    /// booked: it is now). The caller has checked that it fits.
    pub fn move_departure(&mut self, arrival: u64, from: u64, to: u64) {
        match (from > arrival, to > arrival) {
            (true, true) => self.events.move_departure(from, to),
            (true, false) => {
                self.events.remove_from(from, false);
                self.events.remove_from(arrival, true);
            }
            (false, true) => {
                self.events.add(arrival, 1, 0);
                self.events.add(to, 0, 1);
            }
            (false, false) => {
                self.events.add(arrival, 1, 0);
                self.events.remove_from(arrival, true);
            }
        }
    }

    /// Count the moments of `[a, d)` towards the peak.
    pub fn note_peak(&mut self, a: u64, d: u64) {
        // No moment holds more than the most held at any (or none, before
        // the first event): the peak may be reached already.
        if d > a && self.events.highest().max(0) as usize > self.peak {
            self.peak = self.peak.max(self.most_in(a, d));
        }
    }

    /// Count `held` entries, held at some moment, towards the peak.
    pub fn note_held(&mut self, held: usize) {
        self.peak = self.peak.max(held);
    }

    /// Forget what left by `horizon` (no request comes before it).
    pub fn prune(&mut self, horizon: u64) {
        // The entries gone by `horizon` count once among the arrivals and
        // once among the departures by any later moment: drop as many of
        // each (the earliest arrivals are theirs or others' by then).
        self.events.prune(horizon);
    }

    /// Whether its events' index is the one taken afresh from them.
    #[cfg(test)]
    pub fn index_holds(&self) -> bool {
        self.events.index_holds()
    }

    /// Its events, `(time, arrivals, departures)`, and its peak.
    #[cfg(test)]
    pub fn snapshot(&self) -> (Vec<(u64, u32, u32)>, usize) {
        (self.events.events().collect(), self.peak)
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
