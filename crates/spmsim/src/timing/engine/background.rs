//! The background queue: metadata work a persist leaves running (lazy tree
//! updates, write-backs of metadata, register increments), each job
//! holding an entry from when it is handed over until its work is done.

use crate::timing::occupancy::Occupancy;
use serde::Serialize;

/// Metadata work left running after a persist, in a queue of `entries`
/// jobs. Jobs may be offered out of time order (several cores, a relaxed
/// persistency model), and a job's end is known only once it got its
/// entry, so a job offered at `t` is admitted at the first time from `t`
/// on after which the jobs already booked never hold every entry: it fits
/// however long it runs, and a lagging offer is not held back by entries
/// that later jobs take only later. The jobs held at any time never
/// outnumber the entries (an interval graph colours with as many colours
/// as its largest clique), so no entry ever holds two jobs.
#[derive(Clone, Debug)]
pub struct BackgroundQueue {
    /// The jobs booked, each over `[start, end)`.
    jobs: Occupancy,
    horizon: u64,
    counts: QueueCounts,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct QueueCounts {
    jobs: u64,
    full_waits: u64,
    wait_cycles: u64,
}

impl BackgroundQueue {
    pub fn new(entries: u32) -> Self {
        BackgroundQueue { jobs: Occupancy::new(entries.max(1) as usize), horizon: 0, counts: QueueCounts::default() }
    }

    /// No job will be offered before `t`: what is done by then is dropped.
    pub fn set_horizon(&mut self, t: u64) {
        if t > self.horizon {
            self.horizon = t;
            self.jobs.prune(t);
        }
    }

    /// The first time from `t` after which the booked jobs never hold
    /// every entry: `t`, or the first moment an entry is free after the
    /// last moment they all are.
    fn first_room(&self, t: u64) -> u64 {
        match self.jobs.last_full(t, u64::MAX) {
            Some(x) => self.jobs.free_after(x),
            None => t,
        }
    }

    /// When a job offered at `t` gets an entry: at `t`, or once the jobs
    /// booked leave an entry free for good (the offerer waits:
    /// back-pressure).
    pub fn admit(&mut self, t: u64) -> u64 {
        let at = self.first_room(t);
        if at > t {
            self.counts.full_waits += 1;
            self.counts.wait_cycles += at - t;
        }
        at
    }

    /// A job admitted at `start` (see [`Self::admit`]) that is done at
    /// `end`.
    pub fn push(&mut self, start: u64, end: u64) {
        if end <= start {
            return;
        }
        self.counts.jobs += 1;
        self.jobs.book(start, end);
        debug_assert!(self.jobs.peak <= self.jobs.entries, "a queue of {} entries holds {} jobs", self.jobs.entries, self.jobs.peak);
    }

    pub fn counts(&self) -> QueueCounts {
        self.counts
    }

    /// The queue's counts since `before`, for a run ending at `end`.
    pub fn report(&self, before: &QueueCounts, end: u64) -> BackgroundQueueStats {
        BackgroundQueueStats {
            entries: self.jobs.entries as u64,
            jobs: self.counts.jobs - before.jobs,
            peak_occupancy: self.jobs.peak as u64,
            held_at_end: self.jobs.held_at(end) as u64,
            full_waits: self.counts.full_waits - before.full_waits,
            wait_cycles: self.counts.wait_cycles - before.wait_cycles,
        }
    }
}

/// A queue's counts as the stats tree shows them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BackgroundQueueStats {
    pub entries: u64,
    pub jobs: u64,
    /// The most jobs it held at once (over the whole run): at most
    /// `entries`.
    pub peak_occupancy: u64,
    /// Jobs still holding an entry at the run's last cycle (their work is
    /// the units' backlog).
    pub held_at_end: u64,
    /// Jobs offered to a full queue, and the cycles their offerers waited.
    pub full_waits: u64,
    pub wait_cycles: u64,
}

#[cfg(test)]
mod reference;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_makes_its_offerer_wait_for_the_oldest_job() {
        let mut q = BackgroundQueue::new(2);
        for (s, e) in [(0, 100), (10, 50)] {
            let at = q.admit(s);
            q.push(at, e);
        }
        let at = q.admit(20);
        assert_eq!(at, 50, "the job done first frees its entry");
        q.push(at, 70);
        let r = q.report(&QueueCounts::default(), 200);
        assert_eq!((r.peak_occupancy, r.full_waits, r.wait_cycles), (2, 1, 30));
    }

    #[test]
    fn a_lagging_offer_waits_only_for_entries_held_from_its_time_on() {
        let mut q = BackgroundQueue::new(2);
        for (s, e) in [(0, 100), (200, 300), (310, 400)] {
            let at = q.admit(s);
            assert_eq!(at, s);
            q.push(at, e);
        }
        assert_eq!(q.admit(50), 50, "one job at a time is booked after 50: an entry is free for good");
        q.push(50, 350);
        // Now two jobs are held over 310..350: an offer at 60 fits only
        // after that, whatever its length.
        assert_eq!(q.admit(60), 350);
        q.push(350, 500);
        let r = q.report(&QueueCounts::default(), 1000);
        assert_eq!((r.peak_occupancy, r.full_waits, r.wait_cycles), (2, 1, 290));
    }
    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, ..Default::default() })]

        /// Offers out of time order (each a lag behind a horizon that moves
        /// on), each admitted and run for a while: the queue admits, counts
        /// its peak and what it holds as the list of its jobs does.
        #[test]
        fn the_queue_admits_as_a_scan_of_its_jobs_does(
            entries in 1u32..5,
            offers in proptest::collection::vec((0u64..60, 0u64..120, 0u64..30), 1..150),
        ) {
            let mut q = BackgroundQueue::new(entries);
            let mut list = reference::Jobs::new(entries as usize);
            let mut horizon = 0;
            for (lag, len, step) in offers {
                horizon += step;
                q.set_horizon(horizon);
                let t = horizon + lag;
                let at = q.admit(t);
                proptest::prop_assert_eq!(at, list.first_room(t), "offer at {}", t);
                q.push(at, at + len);
                list.push(at, at + len);
                proptest::prop_assert_eq!(q.jobs.peak, list.peak);
                proptest::prop_assert!(q.jobs.peak <= entries as usize);
                proptest::prop_assert_eq!(q.jobs.held_at(horizon + 50), list.held_at(horizon + 50));
            }
        }
    }
}
