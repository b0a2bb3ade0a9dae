//! The arrivals and departures of a queue's entries as one list of events
//! sorted by time, merged per time, kept in blocks of up to sixteen events
//! with a tree of the blocks' summaries above them. A count over a time
//! range, or the first moment of a range at which the entries held reach
//! a limit, costs a walk of two blocks and a descent of the tree, not a
//! walk of every event in the range.

use super::event::Event;
use super::summary::{Summary, Tree};

/// How a walk through a block's events ended.
enum Walk {
    /// At an event whose count hit.
    Hit(u64),
    /// At an event at or after the end of the range.
    Past,
    /// At the block's end.
    Through,
}

/// Walk `events` from `held`, stopping at the first at or after `end` (if
/// any) or the first at which the count `hit`s.
fn walk(events: &[Event], held: &mut i64, end: Option<u64>, mut hit: impl FnMut(i64) -> bool) -> Walk {
    for e in events {
        if end.is_some_and(|end| e.t >= end) {
            return Walk::Past;
        }
        *held += e.change();
        if hit(*held) {
            return Walk::Hit(e.t);
        }
    }
    Walk::Through
}

/// The index of the last of `events` at which `limit` or more entries are
/// held, from `held` before the first.
fn last_hit(events: &[Event], mut held: i64, limit: i64) -> Option<usize> {
    let mut last = None;
    for (i, e) in events.iter().enumerate() {
        held += e.change();
        if held >= limit {
            last = Some(i);
        }
    }
    last
}

/// A queue's arrivals and departures, merged per time.
#[derive(Clone, Debug, Default)]
pub(super) struct Timeline {
    /// Sorted by time, no time twice (within a block or across blocks),
    /// no block empty, no event with neither arrivals nor departures
    /// (`edits.rs` keeps them so).
    pub(super) blocks: Vec<Vec<Event>>,
    /// Each block's first time and summary, side by side for the searches.
    pub(super) firsts: Vec<u64>,
    pub(super) sums: Vec<Summary>,
    pub(super) tree: Tree,
    /// No departure is earlier (a bound, not always the first departure's
    /// time: taking departures away leaves it where it was).
    pub(super) no_departure_before: u64,
}

impl Timeline {
    /// The block that holds `t` if any event does: the last to start at
    /// or before it (block 0 if none does).
    pub(super) fn block_of(&self, t: u64) -> usize {
        self.firsts.partition_point(|&f| f <= t).saturating_sub(1)
    }

    /// Where the events after `t` start: a block and an index in it (the
    /// events before it are those at or before `t`).
    fn after(&self, t: u64) -> (usize, usize) {
        let b = self.block_of(t);
        (b, self.blocks.get(b).map_or(0, |e| e.partition_point(|e| e.t <= t)))
    }

    /// The entries held after the events before position `(b, i)`.
    fn held_before(&self, (b, i): (usize, usize)) -> i64 {
        let inside: i64 = self.blocks.get(b).map_or(0, |e| e[..i].iter().map(Event::change).sum());
        self.tree.change_before(b) + inside
    }

    /// The most entries held at any event (`i64::MIN` if none).
    pub fn highest(&self) -> i64 {
        self.tree.total().highest
    }

    /// Entries held at `t`: arrivals by `t` less departures by `t`.
    pub fn held_at(&self, t: u64) -> i64 {
        self.held_before(self.after(t))
    }

    /// Arrivals by `t`, and departures by `t`.
    pub fn by(&self, t: u64) -> (u64, u64) {
        let (b, i) = self.after(t);
        let inside = self.blocks.get(b).map_or(Summary::NONE, |e| Summary::of(&e[..i]));
        let s = self.tree.range(0, b).then(inside);
        (s.arrivals, s.departures)
    }

    /// The first event of `(a, d)` at which `limit` or more entries are
    /// held.
    pub fn first_reaching(&self, a: u64, d: u64, limit: i64) -> Option<u64> {
        self.first_where(a, Some(d), |held| held >= limit, &|held, s| held.saturating_add(s.highest) >= limit)
    }

    /// The first event after `x` at which fewer than `limit` entries are
    /// held.
    pub fn first_below(&self, x: u64, limit: i64) -> Option<u64> {
        self.first_where(x, None, |held| held < limit, &|held, s| held.saturating_add(s.lowest) < limit)
    }

    /// The first event after `a` (and before `d`, if given) whose count
    /// `hit`s; `block_hits` tells whether a block's does, from the count
    /// before it.
    fn first_where(
        &self,
        a: u64,
        d: Option<u64>,
        hit: impl Fn(i64) -> bool + Copy,
        block_hits: &impl Fn(i64, &Summary) -> bool,
    ) -> Option<u64> {
        let (b, i) = self.after(a);
        let first = self.blocks.get(b)?;
        let mut held = self.held_before((b, i));
        match walk(&first[i..], &mut held, d, hit) {
            Walk::Hit(t) => return Some(t),
            Walk::Past => return None,
            Walk::Through => {}
        }
        let (b, mut held) = self.tree.find(b + 1, held, block_hits)?;
        match walk(&self.blocks[b], &mut held, d, hit) {
            Walk::Hit(t) => Some(t),
            _ => None,
        }
    }

    /// The last event of `(a, d)` at which `limit` or more entries are
    /// held, if any, and the time of the event after it, if any.
    pub fn last_reaching(&self, a: u64, d: u64, limit: i64) -> Option<(u64, Option<u64>)> {
        let hits = |held: i64, s: &Summary| held.saturating_add(s.highest) >= limit;
        // The block of the last event before `d`, then the blocks before
        // it, down to the block of `a` (those before it hold no event
        // after `a`).
        let b = self.firsts.partition_point(|&f| f < d).checked_sub(1)?;
        let before = self.tree.change_before(b);
        let upto = self.blocks[b].partition_point(|e| e.t < d);
        let (b, at) = match last_hit(&self.blocks[b][..upto], before, limit) {
            Some(at) => (b, at),
            None => {
                let (b, before) = self.tree.find_last(self.block_of(a), b, before, &hits)?;
                (b, last_hit(&self.blocks[b], before, limit)?)
            }
        };
        let next = self.blocks[b].get(at + 1).or_else(|| self.blocks.get(b + 1).map(|e| &e[0]));
        let t = self.blocks[b][at].t;
        (t > a).then_some((t, next.map(|e| e.t)))
    }

    /// The first event after `t`, if any.
    pub fn first_after(&self, t: u64) -> Option<u64> {
        let (b, i) = self.after(t);
        let block = self.blocks.get(b)?;
        block.get(i).or_else(|| self.blocks.get(b + 1).map(|e| &e[0])).map(|e| e.t)
    }

    /// The most entries held at an event of `(a, d)` (`i64::MIN` if none
    /// is in it).
    pub fn highest_in(&self, a: u64, d: u64) -> i64 {
        let (b, i) = self.after(a);
        let Some(first) = self.blocks.get(b) else { return i64::MIN };
        let mut held = self.held_before((b, i));
        let mut most = i64::MIN;
        let mut note = |held: i64| {
            most = most.max(held);
            false
        };
        if let Walk::Past = walk(&first[i..], &mut held, Some(d), &mut note) {
            return most;
        }
        // Blocks after `b` that start before `d`: all but the last lie
        // wholly before it.
        let last = self.firsts.partition_point(|&f| f < d);
        if last > b + 1 {
            let whole = self.tree.range(b + 1, last - 1);
            most = most.max(held.saturating_add(whole.highest));
            held += whole.change;
            walk(&self.blocks[last - 1], &mut held, Some(d), |h| {
                most = most.max(h);
                false
            });
        }
        most
    }

    /// Each departure at or after `t`, in order (one a departing entry),
    /// with the entries held at its time, given to `stop` until it
    /// answers true.
    pub fn departures_from(&self, t: u64, mut stop: impl FnMut(u64, i64) -> bool) {
        let b = self.firsts.partition_point(|&f| f < t).saturating_sub(1);
        let Some(first) = self.blocks.get(b) else { return };
        let mut from = first.partition_point(|e| e.t < t);
        let mut held = self.held_before((b, from));
        for events in &self.blocks[b..] {
            for e in &events[from..] {
                held += e.change();
                for _ in 0..e.departures {
                    if stop(e.t, held) {
                        return;
                    }
                }
            }
            from = 0;
        }
    }

    /// Whether each block's first time, summary and leaf, and the tree's
    /// total, are the ones taken afresh from its events (those kept as
    /// events come are checked against them).
    #[cfg(test)]
    pub fn index_holds(&self) -> bool {
        let fresh: Vec<Summary> = self.blocks.iter().map(|e| Summary::of(e)).collect();
        let each = self.blocks.iter().zip(&self.firsts).all(|(e, &f)| e[0].t == f);
        let leaves = (0..fresh.len()).all(|b| self.tree.range(b, b + 1) == fresh[b]);
        let total = fresh.iter().fold(Summary::NONE, |s, &x| s.then(x));
        each && fresh == self.sums && leaves && (fresh.is_empty() || self.tree.total() == total)
    }

    /// Every event, `(time, arrivals, departures)`.
    #[cfg(test)]
    pub fn events(&self) -> impl Iterator<Item = (u64, u32, u32)> + '_ {
        self.blocks.iter().flatten().map(|e| (e.t, e.arrivals, e.departures))
    }

    /// The last departure, if any.
    pub fn last_departure(&self) -> Option<u64> {
        for (b, s) in self.blocks.iter().zip(&self.sums).rev() {
            if s.departures > 0 {
                return b.iter().rev().find(|e| e.departures > 0).map(|e| e.t);
            }
        }
        None
    }
}
