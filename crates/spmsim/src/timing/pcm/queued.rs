//! The writes still queued for each block, for merging a later write of
//! the block into one of them: each as `(issue, arrival)`, a block's
//! sorted by issue, so that a write's issue moving back finds it by a
//! binary search, and the writes issued long ago, which can merge nothing,
//! are skipped by one.

#[cfg(test)]
mod properties;

use rustc_hash::FxHashMap;

#[derive(Clone, Debug)]
pub(super) struct QueuedWrites {
    blocks: FxHashMap<u64, Vec<(u64, u64)>>,
    /// The blocks held at which the writes issued by the horizon are swept.
    sweep_at: usize,
}

impl Default for QueuedWrites {
    fn default() -> Self {
        QueuedWrites { blocks: FxHashMap::default(), sweep_at: 1024 }
    }
}

impl QueuedWrites {
    /// A write of `block` that holds its queue entry from `arrival` until it
    /// issues at `issue`.
    pub fn add(&mut self, block: u64, arrival: u64, issue: u64) {
        let v = self.blocks.entry(block).or_default();
        let at = v.partition_point(|&(i, _)| i <= issue);
        v.insert(at, (issue, arrival));
    }

    /// Whether a write of `block` holds its entry at `t` and issues no
    /// earlier than `ready`.
    pub fn merges_at(&self, block: u64, t: u64, ready: u64) -> bool {
        // Those that issue after `t` and at or after `ready`.
        let from = ready.max(t + 1);
        self.blocks.get(&block).is_some_and(|v| v[v.partition_point(|&(i, _)| i < from)..].iter().any(|&(_, a)| a <= t))
    }

    /// Every write of `block` that issued at `old` issues at `new`.
    pub fn reissue(&mut self, block: u64, old: u64, new: u64) {
        let Some(v) = self.blocks.get_mut(&block) else { return };
        let lo = v.partition_point(|&(i, _)| i < old);
        let hi = v.partition_point(|&(i, _)| i <= old);
        let n = hi - lo;
        if n == 0 || new == old {
            return;
        }
        // Past the writes issuing between the two times, the moved ones
        // keep the list sorted.
        let at = if new > old {
            let end = v.partition_point(|&(i, _)| i <= new);
            v[lo..end].rotate_left(n);
            end - n
        } else {
            let start = v.partition_point(|&(i, _)| i < new);
            v[start..hi].rotate_right(n);
            start
        };
        for q in &mut v[at..at + n] {
            q.0 = new;
        }
    }

    /// Once more blocks than the last sweep left hold writes, drop the
    /// writes issued by `horizon` (and the blocks left with none).
    pub fn sweep(&mut self, horizon: u64) {
        if self.blocks.len() > self.sweep_at {
            self.blocks.retain(|_, v| {
                v.retain(|&(i, _)| i > horizon);
                !v.is_empty()
            });
            self.sweep_at = 2 * self.blocks.len().max(1024);
        }
    }

    /// Each block's writes, `(issue, arrival)`, blocks in order.
    #[cfg(test)]
    pub fn snapshot(&self) -> Vec<(u64, Vec<(u64, u64)>)> {
        let mut v: Vec<_> = self.blocks.iter().map(|(&b, w)| (b, w.clone())).collect();
        v.sort_unstable();
        v
    }
}
