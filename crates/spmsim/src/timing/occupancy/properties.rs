//! Random sequences of bookings, moves and prunes, with every query asked
//! of both the block-structured `Occupancy` and the reference model of
//! two sorted lists: the answers must be the same.

use super::reference;
use super::Occupancy;
use crate::util::rng::SplitMix64;

/// How often the queries met the cases worth testing: a queue full inside
/// a range (not at its start), a range that fits, a wait for a later
/// departure, two departures at once.
#[derive(Default, Debug)]
struct Seen {
    full_inside: u64,
    fits: u64,
    waits: u64,
    departures_at_once: u64,
}

impl Seen {
    fn add(&mut self, o: Seen) {
        self.full_inside += o.full_inside;
        self.fits += o.fits;
        self.waits += o.waits;
        self.departures_at_once += o.departures_at_once;
    }

    /// Each case met at least once in `per` queries.
    fn assert_each_at_least(&self, queries: u64, per: u64) {
        let least = queries / per;
        let Seen { full_inside, fits, waits, departures_at_once } = *self;
        assert!([full_inside, fits, waits, departures_at_once].iter().all(|&n| n >= least), "{self:?} of {queries}");
    }
}

/// The queue under test and the reference, driven alike.
struct Pair {
    fast: Occupancy,
    slow: reference::Occupancy,
    /// The intervals booked and not yet gone by the horizon, as
    /// `(arrival, departure)`; `departure == arrival` for one that left as
    /// it arrived (never booked).
    live: Vec<(u64, u64)>,
    horizon: u64,
}

impl Pair {
    fn new(entries: usize) -> Pair {
        Pair { fast: Occupancy::new(entries), slow: reference::Occupancy::new(entries), live: Vec::new(), horizon: 0 }
    }

    fn book(&mut self, a: u64, d: u64) {
        self.fast.book(a, d);
        self.slow.book(a, d);
        if d >= a {
            self.live.push((a, d.max(a)));
        }
    }

    /// Move a live interval's departure to `to`, as the controller moves a
    /// write's issue back (and forth, undoing it).
    fn move_departure(&mut self, k: usize, to: u64) {
        let (a, from) = self.live[k];
        self.fast.move_departure(a, from, to);
        self.slow.move_departure(a, from, to);
        self.live[k] = (a, to.max(a));
    }

    fn prune(&mut self, h: u64) {
        self.horizon = self.horizon.max(h);
        self.fast.prune(self.horizon);
        self.slow.prune(self.horizon);
        let h = self.horizon;
        self.live.retain(|&(a, d)| d > h || (d == a && a >= h));
    }

    fn note_peak(&mut self, a: u64, d: u64) {
        self.fast.note_peak(a, d);
        self.slow.note_peak(a, d);
    }

    /// Ask both every query around `t`.
    fn check(&self, rng: &mut SplitMix64, t: u64, span: u64) -> Seen {
        let (f, s) = (&self.fast, &self.slow);
        let d = t + rng.below(span + 1);
        assert_eq!(f.held_at(t), s.held_at(t), "held at {t}");
        assert_eq!(f.arrivals_in(t, d), s.arrivals_in(t, d), "arrivals in [{t}, {d})");
        assert_eq!(f.arrivals_in(d, t), s.arrivals_in(d, t), "arrivals in [{d}, {t})");
        assert_eq!(f.first_full(t, d), s.first_full(t, d), "first full in [{t}, {d})");
        assert_eq!(f.free_after(t), s.free_after(t), "free after {t}");
        assert_eq!(f.last_full(t, d), last_full(s, t, d), "last full in [{t}, {d})");
        let fast = f.all_departures_held_from(t);
        let slow: Vec<(u64, usize)> = s.departures_from(t).iter().map(|&x| (x, s.held_at(x))).collect();
        assert_eq!(fast, slow, "departures from {t}");
        assert_eq!(f.peak, s.peak, "peak");
        assert!(f.index_holds(), "the blocks' index");
        let full = f.first_full(t, d);
        Seen {
            full_inside: full.is_some_and(|x| x > t) as u64,
            fits: full.is_none() as u64,
            waits: (f.free_after(t) > t + 1) as u64,
            departures_at_once: fast.windows(2).any(|w| w[0].0 == w[1].0) as u64,
        }
    }
}

/// The last moment of `[a, d)` at which the reference queue is full: the
/// count changes only at events, so the moment is `d - 1` or the moment
/// before a departure.
fn last_full(s: &reference::Occupancy, a: u64, d: u64) -> Option<u64> {
    let d = d.max(a + 1);
    let before_departures = s.departures_from(a).iter().filter(|&&x| x > a && x < d).map(|&x| x - 1);
    let mut moments: Vec<u64> = before_departures.chain([d - 1]).collect();
    moments.sort_unstable();
    moments.into_iter().rev().find(|&t| s.held_at(t) >= s.entries)
}

/// One random sequence of `ops` operations over times in `[0, span)` from
/// the horizon, which moves on at one operation in `10 * rarity` or so.
fn run(seed: u64, ops: usize, span: u64, rarity: u64) -> Seen {
    let mut rng = SplitMix64::new(seed);
    let entries = if rng.below(2) == 0 { 1 + rng.below(6) } else { 1 + rng.below(100) };
    let mut p = Pair::new(entries as usize);
    let mut seen = Seen::default();
    let len = 1 + rng.below(span / 4 + 1);
    for _ in 0..ops {
        // Requests come from the horizon on, a little before it at times.
        let t = p.horizon.saturating_sub(rng.below(3)) + rng.below(span);
        match rng.below(10) {
            0..=3 => {
                // Fitting or not: the queries must agree either way.
                let d = if rng.below(8) == 0 { t } else { t + 1 + rng.below(len) };
                if rng.below(2) == 0 || p.fast.first_full(t, d).is_none() {
                    p.book(t, d);
                }
            }
            4..=5 if !p.live.is_empty() => {
                let k = rng.below(p.live.len() as u64) as usize;
                let (a, from) = p.live[k];
                // As the controller moves an issue: later, back to where it
                // was, or to the arrival (the entry leaves as it arrives);
                // never before the horizon (a prune may have taken the
                // arrival of an entry that arrived before it).
                let h = p.horizon;
                let to = match rng.below(4) {
                    0 if a > h || from == a => a,
                    0 | 1 => from + 1 + rng.below(len),
                    2 => (a + 1).max(h) + rng.below(from.saturating_sub(a.max(h)) + 1),
                    _ => from.saturating_sub(rng.below(len)).max(a + 1).max(h),
                };
                p.move_departure(k, to);
            }
            6 if rng.below(rarity) == 0 => p.prune(p.horizon + rng.below(span / 8 + 1)),
            7 => p.note_peak(t, t + rng.below(len + 1)),
            _ => {}
        }
        seen.add(p.check(&mut rng, t, len));
        let anywhere = rng.below(p.horizon + span);
        seen.add(p.check(&mut rng, anywhere, 3 * len));
    }
    seen
}

#[test]
fn every_query_answers_as_the_reference_model_does() {
    let mut seen = Seen::default();
    for seed in 0..3000 {
        // Short spans crowd arrivals and departures onto equal times.
        let span = [8, 40, 300, 3000][seed as usize % 4];
        seen.add(run(seed, 300, span, 1));
    }
    seen.assert_each_at_least(3000 * 300 * 2, 50);
}

#[test]
fn long_sequences_answer_as_the_reference_model_does() {
    let mut seen = Seen::default();
    for seed in 0..10 {
        seen.add(run(1_000_000 + seed, 5000, 20_000, 20));
    }
    seen.assert_each_at_least(10 * 5000 * 2, 50);
}
