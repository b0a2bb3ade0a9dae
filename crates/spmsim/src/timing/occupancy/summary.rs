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

/// The blocks' summaries in a complete binary tree: leaf `base + i` is
/// block `i`'s, each inner node the summary of its two children in order.
/// The leaves before `base` are those of blocks dropped from the front,
/// left empty (the summary of no events), so that a drop moves no later
/// block's leaf; the leaves after the last block are empty too, room for
/// the front to move on into before the tree is built anew.
#[derive(Clone, Debug, Default)]
pub(super) struct Tree {
    leaves: usize,
    base: usize,
    nodes: Vec<Summary>,
}

impl Tree {
    pub fn build(sums: &[Summary]) -> Tree {
        let leaves = (sums.len() + sums.len() / 4 + 1).next_power_of_two();
        let mut nodes = vec![Summary::NONE; 2 * leaves];
        nodes[leaves..leaves + sums.len()].copy_from_slice(sums);
        for i in (1..leaves).rev() {
            nodes[i] = nodes[2 * i].then(nodes[2 * i + 1]);
        }
        Tree { leaves, base: 0, nodes }
    }

    /// Whether `blocks` blocks, from leaf `base` on, want the tree built
    /// anew: they no longer fit, or fill little of it.
    fn outgrown(&self, base: usize, blocks: usize) -> bool {
        base + blocks > self.leaves || blocks < self.leaves / 4
    }

    /// Set leaves `[from, to)` (leaf indices, not blocks) to `leaf` of
    /// each, and the nodes above them.
    fn set_leaves(&mut self, from: usize, to: usize, leaf: impl Fn(usize) -> Summary) {
        if from >= to {
            return;
        }
        for j in from..to {
            self.nodes[self.leaves + j] = leaf(j);
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

    /// The blocks from `from` on changed (`sums` holds every block's, and
    /// `before` blocks were held): set their leaves and the nodes above.
    pub fn refill(&mut self, sums: &[Summary], from: usize, before: usize) {
        if self.outgrown(self.base, sums.len()) {
            *self = Tree::build(sums);
            return;
        }
        let base = self.base;
        self.set_leaves(base + from, base + sums.len().max(before), |j| sums.get(j - base).copied().unwrap_or(Summary::NONE));
    }

    /// The first `gone` blocks were dropped and the `changed` after them
    /// are new (`sums` holds every block's now): the rest keep their
    /// leaves, those dropped are left empty and the new ones take the
    /// leaves before the rest.
    pub fn drop_front(&mut self, sums: &[Summary], gone: usize, changed: usize) {
        let base = self.base + gone;
        if self.outgrown(base, sums.len()) {
            *self = Tree::build(sums);
            return;
        }
        self.set_leaves(self.base, base + changed, |j| if j < base { Summary::NONE } else { sums[j - base] });
        self.base = base;
    }

    pub fn set(&mut self, block: usize, s: Summary) {
        let mut i = self.leaves + self.base + block;
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

    /// The change in entries held over blocks `[0, to)` (the leaves before
    /// `base` are empty: over leaves `[0, base + to)`).
    pub fn change_before(&self, to: usize) -> i64 {
        let to = self.base + to;
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
        let (mut l, mut r) = (self.base + from + self.leaves, self.base + to + self.leaves);
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
        self.descend(1, 0, self.leaves, self.base + from, &mut held, hit).map(|leaf| (leaf - self.base, held))
    }

    /// The last block of `[from, to)` for which `hit(held before it, its
    /// summary)` holds, and the entries held before it, given `held`
    /// before block `to` (`hit` as for `find`). Climbing from leaf `to`,
    /// each left sibling is the run of blocks just before those passed;
    /// the climb stops at the first that hits or once it is past `from`.
    pub fn find_last(&self, from: usize, to: usize, held: i64, hit: &impl Fn(i64, &Summary) -> bool) -> Option<(usize, i64)> {
        let (from, to) = (self.base + from, self.base + to);
        let in_range = |(leaf, held): (usize, i64)| (leaf >= from).then_some((leaf - self.base, held));
        if to >= self.leaves {
            let held = held - self.total().change;
            return if to > 0 && hit(held, &self.nodes[1]) { in_range(self.last_leaf(1, held, hit)) } else { None };
        }
        // Leaves `[start, to)` passed; each level's nodes span `size`.
        let (mut i, mut held, mut start, mut size) = (self.leaves + to, held, to, 1);
        while i > 1 && start > from {
            if i & 1 == 1 {
                let s = &self.nodes[i - 1];
                held -= s.change;
                start -= size;
                if hit(held, s) {
                    return in_range(self.last_leaf(i - 1, held, hit));
                }
            }
            i /= 2;
            size *= 2;
        }
        None
    }

    /// The last leaf under `node`, whose summary `hit`s from `held` before
    /// it, for which `hit` holds, and the entries held before it: the right
    /// child if it hits, else the left (one of them does).
    fn last_leaf(&self, mut node: usize, mut held: i64, hit: &impl Fn(i64, &Summary) -> bool) -> (usize, i64) {
        while node < self.leaves {
            let left = 2 * node;
            let right_held = held + self.nodes[left].change;
            if hit(right_held, &self.nodes[left + 1]) {
                (node, held) = (left + 1, right_held);
            } else {
                node = left;
            }
        }
        (node - self.leaves, held)
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
