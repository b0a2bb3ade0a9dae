//! The summary of a run of a queue's events, and a tree of the summaries
//! of consecutive blocks of them, to count over many blocks at once and to
//! find the first or last block at which the count reaches a limit.

use super::event::Event;

/// A run of consecutive events: the change in entries held over it, the
/// highest and lowest count reached at its events (relative to the count
/// before it), and its arrivals and departures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Summary {
    pub change: i64,
    pub highest: i64,
    pub lowest: i64,
    pub arrivals: u64,
    pub departures: u64,
}

impl Summary {
    /// The summary of no events.
    pub const NONE: Summary = Summary { change: 0, highest: i64::MIN, lowest: i64::MAX, arrivals: 0, departures: 0 };

    pub fn of(events: &[Event]) -> Summary {
        events.iter().fold(Summary::NONE, |s, e| {
            let held = s.change + e.change();
            Summary {
                change: held,
                highest: s.highest.max(held),
                lowest: s.lowest.min(held),
                arrivals: s.arrivals + e.arrivals as u64,
                departures: s.departures + e.departures as u64,
            }
        })
    }

    /// The summary of `self`'s events followed by `next`'s.
    pub fn then(self, next: Summary) -> Summary {
        Summary {
            change: self.change + next.change,
            highest: self.highest.max(self.change.saturating_add(next.highest)),
            lowest: self.lowest.min(self.change.saturating_add(next.lowest)),
            arrivals: self.arrivals + next.arrivals,
            departures: self.departures + next.departures,
        }
    }
}

/// The blocks' summaries in a complete binary tree: leaf `i` is block
/// `i`'s, each inner node the summary of its two children in order.
#[derive(Clone, Debug, Default)]
pub(super) struct Tree {
    leaves: usize,
    nodes: Vec<Summary>,
}

impl Tree {
    pub fn build(sums: &[Summary]) -> Tree {
        let leaves = sums.len().next_power_of_two();
        let mut nodes = vec![Summary::NONE; 2 * leaves];
        nodes[leaves..leaves + sums.len()].copy_from_slice(sums);
        for i in (1..leaves).rev() {
            nodes[i] = nodes[2 * i].then(nodes[2 * i + 1]);
        }
        Tree { leaves, nodes }
    }

    /// The blocks from `from` on changed (`sums` holds every block's, and
    /// `before` blocks were held): set their leaves and the nodes above.
    pub fn refill(&mut self, sums: &[Summary], from: usize, before: usize) {
        if sums.len() > self.leaves || sums.len() < self.leaves / 4 {
            *self = Tree::build(sums);
            return;
        }
        let to = sums.len().max(before);
        if from >= to {
            return;
        }
        for i in from..to {
            self.nodes[self.leaves + i] = sums.get(i).copied().unwrap_or(Summary::NONE);
        }
        let (mut lo, mut hi) = (self.leaves + from, self.leaves + to - 1);
        while lo > 1 {
            lo /= 2;
            hi /= 2;
            for i in lo..=hi {
                self.nodes[i] = self.nodes[2 * i].then(self.nodes[2 * i + 1]);
            }
        }
    }

    pub fn set(&mut self, block: usize, s: Summary) {
        let mut i = self.leaves + block;
        self.nodes[i] = s;
        while i > 1 {
            i /= 2;
            self.nodes[i] = self.nodes[2 * i].then(self.nodes[2 * i + 1]);
        }
    }

    /// The summary of every block.
    pub fn total(&self) -> Summary {
        self.nodes.get(1).copied().unwrap_or(Summary::NONE)
    }

    /// The change in entries held over blocks `[0, to)`.
    pub fn change_before(&self, to: usize) -> i64 {
        if to == 0 {
            return 0;
        }
        if to >= self.leaves {
            return self.nodes[1].change;
        }
        // Climbing from leaf `to`, each left sibling is a run of blocks
        // before it.
        let (mut i, mut change) = (self.leaves + to, 0);
        while i > 1 {
            if i & 1 == 1 {
                change += self.nodes[i - 1].change;
            }
            i /= 2;
        }
        change
    }

    /// The summary of blocks `[from, to)`.
    pub fn range(&self, from: usize, to: usize) -> Summary {
        let (mut l, mut r) = (from + self.leaves, to + self.leaves);
        let (mut left, mut right) = (Summary::NONE, Summary::NONE);
        while l < r {
            if l & 1 == 1 {
                left = left.then(self.nodes[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                right = self.nodes[r].then(right);
            }
            l /= 2;
            r /= 2;
        }
        left.then(right)
    }

    /// The first block from `from` on for which `hit(held before it,
    /// its summary)` holds, and the entries held before it, given `held`
    /// before block `from`. `hit` must hold for a run of blocks if it
    /// holds for one of them at the count before it (true of "reaches a
    /// limit" and "falls below one").
    pub fn find(&self, from: usize, held: i64, hit: &impl Fn(i64, &Summary) -> bool) -> Option<(usize, i64)> {
        let mut held = held;
        self.descend(1, 0, self.leaves, from, &mut held, hit).map(|b| (b, held))
    }

    /// The last block before `to` for which `hit(held before it, its
    /// summary)` holds, and the entries held before it (`hit` as for
    /// `find`).
    pub fn find_last(&self, to: usize, hit: &impl Fn(i64, &Summary) -> bool) -> Option<(usize, i64)> {
        self.descend_last(1, 0, self.leaves, to, 0, hit)
    }

    fn descend_last(
        &self,
        node: usize,
        lo: usize,
        hi: usize,
        to: usize,
        held: i64,
        hit: &impl Fn(i64, &Summary) -> bool,
    ) -> Option<(usize, i64)> {
        if lo >= to || (hi <= to && !hit(held, &self.nodes[node])) {
            return None;
        }
        if hi - lo == 1 {
            return Some((lo, held));
        }
        let mid = (lo + hi) / 2;
        let left = self.nodes[2 * node].change;
        self.descend_last(2 * node + 1, mid, hi, to, held + left, hit).or_else(|| self.descend_last(2 * node, lo, mid, to, held, hit))
    }

    fn descend(
        &self,
        node: usize,
        lo: usize,
        hi: usize,
        from: usize,
        held: &mut i64,
        hit: &impl Fn(i64, &Summary) -> bool,
    ) -> Option<usize> {
        if hi <= from {
            return None;
        }
        let s = &self.nodes[node];
        if lo >= from && !hit(*held, s) {
            *held += s.change;
            return None;
        }
        if hi - lo == 1 {
            return Some(lo);
        }
        let mid = (lo + hi) / 2;
        self.descend(2 * node, lo, mid, from, held, hit).or_else(|| self.descend(2 * node + 1, mid, hi, from, held, hit))
    }
}
