//! Adding and taking away a timeline's arrivals and departures, and
//! forgetting what left by a horizon, keeping its blocks between `FEWEST`
//! and `MOST` events (but for a lone block) and their index (first times,
//! summaries, tree) up to date. A block out of bounds shares its events
//! with a neighbour where it can: a split or a merge moves every later
//! block's place in the tree, a share only indexes the two anew.

use super::event::Event;
use super::summary::{Summary, Tree};
use super::timeline::Timeline;

/// Events a block holds at most: one more shares or splits it. Small under
/// test, so that short sequences of bookings cross many blocks.
const MOST: usize = if cfg!(test) { 8 } else { 16 };
/// Events under which a block is merged with its neighbour.
const FEWEST: usize = MOST / 8;
/// Events up to which a block takes some of a full neighbour's instead of
/// that one splitting.
const ROOMY: usize = MOST * 3 / 4;

impl Timeline {
    /// Block `b`'s events changed, not its place: index it anew.
    fn refresh(&mut self, b: usize) {
        self.firsts[b] = self.blocks[b][0].t;
        self.sums[b] = Summary::of(&self.blocks[b]);
        self.tree.set(b, self.sums[b]);
    }

    /// Put `with` in place of blocks `[at, at + n)`, indexing the blocks
    /// from `at` on anew (those before keep their places; fewer at the
    /// front leave those after theirs).
    fn splice(&mut self, at: usize, n: usize, with: Vec<Vec<Event>>) {
        let (before, changed) = (self.blocks.len(), with.len());
        self.firsts.splice(at..at + n, with.iter().map(|e| e[0].t));
        self.sums.splice(at..at + n, with.iter().map(|e| Summary::of(e)));
        self.blocks.splice(at..at + n, with);
        if at == 0 && changed < n {
            self.tree.drop_front(&self.sums, n - changed, changed);
        } else {
            self.tree.refill(&self.sums, at, before);
        }
    }

    /// An arrival (`arrivals` 1) or a departure (`departures` 1) at `t`.
    pub fn add(&mut self, t: u64, arrivals: u32, departures: u32) {
        if self.blocks.is_empty() {
            self.note_departures(t, departures);
            self.blocks.push(vec![Event { t, arrivals, departures }]);
            self.firsts.push(t);
            self.sums.push(Summary::of(&self.blocks[0]));
            self.tree = Tree::build(&self.sums);
            return;
        }
        let b = self.block_of(t);
        let e = Event { t, arrivals, departures };
        if self.add_in(b, e) && (FEWEST..=MOST).contains(&self.blocks[b].len()) {
            // Appended to a block that keeps its size: its summary is the
            // old one then the event's, its first time stays.
            self.sums[b] = self.sums[b].then(Summary::of(&[e]));
            self.tree.set(b, self.sums[b]);
        } else {
            self.settle(b);
        }
    }

    /// Keep the bound on the departures' times below `t` if any leave then.
    fn note_departures(&mut self, t: u64, departures: u32) {
        if departures > 0 {
            self.no_departure_before = self.no_departure_before.min(t);
        }
    }

    /// `add` event `e` into block `b`, the block of its time, leaving the
    /// block to be settled; returns whether it went after the block's last
    /// event as a new one.
    fn add_in(&mut self, b: usize, e: Event) -> bool {
        self.note_departures(e.t, e.departures);
        let events = &mut self.blocks[b];
        if events.last().is_some_and(|l| l.t < e.t) {
            events.push(e);
            return true;
        }
        match events.binary_search_by_key(&e.t, |x| x.t) {
            Ok(i) => {
                events[i].arrivals += e.arrivals;
                events[i].departures += e.departures;
            }
            Err(i) => events.insert(i, e),
        }
        false
    }

    /// Take away one arrival (`arrival`) or one departure (else) at the
    /// first time at or after `t` that has one. Panics if none has.
    pub fn remove_from(&mut self, t: u64, arrival: bool) {
        let b = self.take_from(t, arrival);
        self.settle(b);
    }

    /// `remove_from`, leaving the block it took from to be settled; returns
    /// that block.
    fn take_from(&mut self, t: u64, arrival: bool) -> usize {
        let has = |e: &Event| if arrival { e.arrivals > 0 } else { e.departures > 0 };
        let mut b = self.firsts.partition_point(|&f| f < t).saturating_sub(1);
        let mut i = self.blocks[b].partition_point(|e| e.t < t);
        loop {
            let s = &self.sums[b];
            if (if arrival { s.arrivals } else { s.departures }) > 0 {
                if let Some(k) = self.blocks[b][i..].iter().position(has) {
                    i += k;
                    break;
                }
            }
            b += 1;
            i = 0;
            assert!(b < self.blocks.len(), "an event at or after {t} to take away");
        }
        let events = &mut self.blocks[b];
        let e = &mut events[i];
        if arrival {
            e.arrivals -= 1;
        } else {
            e.departures -= 1;
        }
        if e.arrivals == 0 && e.departures == 0 {
            events.remove(i);
        }
        b
    }

    /// Take away one departure at the first time at or after `from` that
    /// has one, and add one at `to`: `remove_from` then `add`, with the
    /// block indexed once when both fall in one block.
    pub fn move_departure(&mut self, from: u64, to: u64) {
        let b = self.take_from(from, false);
        let events = &self.blocks[b];
        // The block of `to` once `from`'s departure is gone: `b` if `to`
        // is past its first event (or past its first time, which is still
        // at or before that event) and before the next block's.
        let here =
            !events.is_empty() && events.len() < MOST && (to >= self.firsts[b] || b == 0) && self.firsts.get(b + 1).is_none_or(|&f| to < f);
        if here {
            self.add_in(b, Event { t: to, arrivals: 0, departures: 1 });
            self.settle(b);
        } else {
            self.settle(b);
            self.add(to, 0, 1);
        }
    }

    /// Block `b`'s events changed: drop it if empty, split it if large,
    /// merge it with a neighbour if small, and index what changed.
    fn settle(&mut self, b: usize) {
        let n = self.blocks[b].len();
        let roomy = |i: usize| self.blocks.get(i).is_some_and(|e| e.len() <= ROOMY);
        if n == 0 {
            self.splice(b, 1, Vec::new());
        } else if n > MOST && roomy(b + 1) {
            self.share(b);
        } else if n > MOST && b > 0 && roomy(b - 1) {
            self.share(b - 1);
        } else if n > MOST {
            let upper = self.blocks[b].split_off(n / 2);
            let lower = std::mem::take(&mut self.blocks[b]);
            self.splice(b, 1, vec![lower, upper]);
        } else if n < FEWEST && self.blocks.len() > 1 {
            let b = if b + 1 < self.blocks.len() { b } else { b - 1 };
            if self.blocks[b].len() + self.blocks[b + 1].len() > MOST {
                self.share(b);
            } else {
                let mut merged = std::mem::take(&mut self.blocks[b]);
                merged.append(&mut self.blocks[b + 1]);
                self.splice(b, 2, vec![merged]);
            }
        } else {
            self.refresh(b);
        }
    }

    /// Share the events of blocks `b` and `b + 1` evenly between them
    /// (both keep their places).
    fn share(&mut self, b: usize) {
        let mut upper = std::mem::take(&mut self.blocks[b + 1]);
        let lower = &mut self.blocks[b];
        let half = (lower.len() + upper.len()) / 2;
        if lower.len() > half {
            let moved = lower.split_off(half);
            upper.splice(0..0, moved);
        } else {
            lower.extend(upper.drain(..half - lower.len()));
        }
        self.blocks[b + 1] = upper;
        self.refresh(b);
        self.refresh(b + 1);
    }

    /// Take away every departure by `horizon` and as many of the earliest
    /// arrivals (all by `horizon` too, when every entry arrives before
    /// it leaves).
    pub fn prune(&mut self, horizon: u64) {
        // No departure by `horizon`: nothing left by then.
        if horizon < self.no_departure_before {
            return;
        }
        // None is left by `horizon` once this prune is over.
        self.no_departure_before = horizon.saturating_add(1);
        if self.firsts.first().is_none_or(|&f| f > horizon) {
            return;
        }
        let (_, gone) = self.by(horizon);
        if gone == 0 {
            return;
        }
        let (mut arrivals, mut departures) = (gone, gone);
        let mut b = 0;
        let mut emptied = 0;
        while (arrivals > 0 || departures > 0) && b < self.blocks.len() {
            // Past the arrivals to take, only blocks with departures
            // matter.
            if arrivals > 0 || self.sums[b].departures > 0 {
                for e in self.blocks[b].iter_mut() {
                    if arrivals == 0 && departures == 0 {
                        break;
                    }
                    if e.t <= horizon {
                        departures -= e.departures as u64;
                        e.departures = 0;
                    }
                    let take = arrivals.min(e.arrivals as u64);
                    e.arrivals -= take as u32;
                    arrivals -= take;
                }
                self.blocks[b].retain(|e| e.arrivals > 0 || e.departures > 0);
                if self.blocks[b].is_empty() {
                    emptied = b + 1;
                } else {
                    self.refresh(b);
                }
            }
            b += 1;
        }
        // Blocks emptied lie among the first `emptied`.
        if emptied > 0 {
            let kept: Vec<Vec<Event>> = self.blocks[..emptied].iter_mut().map(std::mem::take).filter(|e| !e.is_empty()).collect();
            self.splice(0, emptied, kept);
        }
        if !self.blocks.is_empty() {
            self.settle(0);
        }
    }
}
