//! A bank's booked reads or writes: a list of accesses sorted by start
//! and disjoint, kept in blocks of a few dozen, each block with the widest
//! idle time between two of its accesses. The first idle time of a given
//! length from a moment on skips the blocks that have none, so a bank with
//! thousands of writes booked back to back answers in a walk of its
//! blocks, not of its writes.

#[cfg(test)]
mod properties;
#[cfg(test)]
pub(super) mod reference;

/// Accesses a block holds at most: one more splits it in two. Small under
/// test, so that short sequences of bookings cross many blocks.
const MOST: usize = if cfg!(test) { 8 } else { 64 };
/// Accesses under which a block is merged with its neighbour.
const FEWEST: usize = MOST / 8;

/// A bank's booked read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Access {
    pub start: u64,
    pub end: u64,
    pub row: u64,
    /// A write's block and when it entered the queue its issue frees (the
    /// write queue, or the WPQ when that is the write queue); 0 for reads.
    pub block: u64,
    pub queued: u64,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Block {
    accesses: Vec<Access>,
    /// The longest time from one access's end to the next one's start in
    /// the block.
    widest: u64,
    /// Its first access's start, its last one's start and end (beside the
    /// block, for the searches).
    first_start: u64,
    last_start: u64,
    last_end: u64,
}

impl Block {
    fn new(accesses: Vec<Access>) -> Block {
        let mut b = Block { accesses, ..Block::default() };
        b.measure();
        b
    }

    fn measure(&mut self) {
        self.widest = self.accesses.windows(2).map(|w| w[1].start.saturating_sub(w[0].end)).max().unwrap_or(0);
        self.first_start = self.first().start;
        self.last_start = self.last().start;
        self.last_end = self.last().end;
    }

    /// `measure` after the access at `at` was inserted: only the idle
    /// times beside it are new, and only the one it split is gone (which
    /// needs a new measure if it may have been the widest), unless it went
    /// first.
    fn measure_insert(&mut self, at: usize) {
        let a = &self.accesses;
        let Some(prev) = at.checked_sub(1).map(|i| a[i]) else { return self.measure() };
        let before = a[at].start.saturating_sub(prev.end);
        match a.get(at + 1) {
            Some(next) if next.start.saturating_sub(prev.end) < self.widest => {
                self.widest = self.widest.max(before).max(next.start.saturating_sub(a[at].end));
            }
            Some(_) => self.measure(),
            None => {
                self.widest = self.widest.max(before);
                self.last_start = a[at].start;
                self.last_end = a[at].end;
            }
        }
    }

    fn first(&self) -> &Access {
        &self.accesses[0]
    }

    fn last(&self) -> &Access {
        &self.accesses[self.accesses.len() - 1]
    }
}

/// Where an access is: its block and its index in the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Pos {
    block: usize,
    at: usize,
}

/// Sorted by start and disjoint (so sorted by end too); no block empty.
#[derive(Clone, Debug, Default)]
pub(super) struct Slots {
    blocks: Vec<Block>,
}

impl<'a> IntoIterator for &'a Slots {
    type Item = &'a Access;
    type IntoIter = std::iter::FlatMap<std::slice::Iter<'a, Block>, &'a [Access], fn(&'a Block) -> &'a [Access]>;

    fn into_iter(self) -> Self::IntoIter {
        let accesses: fn(&'a Block) -> &'a [Access] = |b| &b.accesses;
        self.blocks.iter().flat_map(accesses)
    }
}

impl Slots {
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = &Access> {
        self.into_iter()
    }

    /// Whether every block's measure is the one taken afresh from its
    /// accesses (those kept as accesses come are checked against it).
    #[cfg(test)]
    pub fn measures_hold(&self) -> bool {
        self.blocks.iter().all(|b| {
            let fresh = Block::new(b.accesses.clone());
            (b.widest, b.first_start, b.last_start, b.last_end) == (fresh.widest, fresh.first_start, fresh.last_start, fresh.last_end)
        })
    }

    /// The first start at or after `from` of `len` cycles that overlaps
    /// none of the accesses.
    pub fn gap(&self, from: u64, len: u64) -> u64 {
        // The first access to end after `from`; past one that overlaps,
        // the gap to look at is the one after it.
        let b = self.blocks.partition_point(|b| b.last_end <= from);
        let Some(block) = self.blocks.get(b) else { return from };
        let i = block.accesses.partition_point(|a| a.end <= from);
        let first = &block.accesses[i];
        if first.start >= from + len {
            return from;
        }
        let mut end = first.end.max(from);
        for a in &block.accesses[i + 1..] {
            if a.start >= end + len {
                return end;
            }
            end = end.max(a.end);
        }
        for block in &self.blocks[b + 1..] {
            if block.first_start >= end + len {
                return end;
            }
            if block.widest < len {
                end = end.max(block.last_end);
                continue;
            }
            for a in &block.accesses {
                if a.start >= end + len {
                    return end;
                }
                end = end.max(a.end);
            }
        }
        end
    }

    /// The last access to start at or before `t`.
    pub fn last_started(&self, t: u64) -> Option<&Access> {
        let b = self.blocks.partition_point(|b| b.first_start <= t).checked_sub(1)?;
        let a = &self.blocks[b].accesses;
        Some(&a[a.partition_point(|a| a.start <= t) - 1])
    }

    /// Where the first access to start at or after `s` is (or the end).
    pub fn first_starting_from(&self, s: u64) -> Pos {
        let block = self.blocks.partition_point(|b| b.last_start < s);
        let at = self.blocks.get(block).map_or(0, |b| b.accesses.partition_point(|a| a.start < s));
        Pos { block, at }
    }

    /// The accesses from `p` on, with where each is, given to `stop` in
    /// order until it answers true.
    pub fn each_from(&self, p: Pos, mut stop: impl FnMut(Pos, &Access) -> bool) {
        let mut from = p.at;
        for (block, b) in self.blocks.iter().enumerate().skip(p.block) {
            for (at, a) in b.accesses.iter().enumerate().skip(from) {
                if stop(Pos { block, at }, a) {
                    return;
                }
            }
            from = 0;
        }
    }

    /// The accesses from `p` on, with where each is.
    #[cfg(test)]
    pub fn all_from(&self, p: Pos) -> Vec<(Pos, Access)> {
        let mut v = Vec::new();
        self.each_from(p, |pos, a| {
            v.push((pos, *a));
            false
        });
        v
    }

    pub fn get(&self, p: Pos) -> &Access {
        &self.blocks[p.block].accesses[p.at]
    }

    /// Move the accesses at `moves` to start at their new times, each for
    /// `len` cycles; their order and the list's stay as they were.
    pub fn reschedule(&mut self, moves: &[(Pos, u64)], len: u64) {
        for &(p, start) in moves {
            let a = &mut self.blocks[p.block].accesses[p.at];
            a.start = start;
            a.end = start + len;
        }
        let mut last = None;
        for &(p, _) in moves {
            if last != Some(p.block) {
                self.blocks[p.block].measure();
                last = Some(p.block);
            }
        }
    }

    /// Book `a`, before any access that starts when it does.
    pub fn insert(&mut self, a: Access) {
        if self.blocks.is_empty() {
            self.blocks.push(Block::new(vec![a]));
            return;
        }
        // The last block to start before `a` (else the first).
        let b = self.blocks.partition_point(|b| b.first_start < a.start).saturating_sub(1);
        let block = &mut self.blocks[b];
        let at = block.accesses.partition_point(|x| x.start < a.start);
        block.accesses.insert(at, a);
        if block.accesses.len() > MOST {
            let upper = block.accesses.split_off(block.accesses.len() / 2);
            block.measure();
            self.blocks.insert(b + 1, Block::new(upper));
        } else {
            block.measure_insert(at);
        }
    }

    /// Forget the accesses that ended by `horizon`; returns the last of
    /// them.
    pub fn prune(&mut self, horizon: u64) -> Option<Access> {
        if self.blocks.first().is_none_or(|b| b.first().end > horizon) {
            return None;
        }
        let whole = self.blocks.partition_point(|b| b.last_end <= horizon);
        let mut last = whole.checked_sub(1).map(|b| *self.blocks[b].last());
        self.blocks.drain(..whole);
        // The first block left ends after `horizon`: it keeps an access.
        if let Some(block) = self.blocks.first_mut() {
            let k = block.accesses.partition_point(|a| a.end <= horizon);
            if k > 0 {
                last = Some(block.accesses[k - 1]);
                block.accesses.drain(..k);
                block.measure();
            }
        }
        if self.blocks.len() > 1 && self.blocks[0].accesses.len() < FEWEST {
            let next = self.blocks.remove(1);
            let mut merged = std::mem::take(&mut self.blocks[0].accesses);
            merged.extend(next.accesses);
            if merged.len() > MOST {
                let upper = merged.split_off(merged.len() / 2);
                self.blocks.insert(1, Block::new(upper));
            }
            self.blocks[0] = Block::new(merged);
        }
        last
    }
}

/// The first start at or after `from` at which `len` cycles overlap none
/// of the accesses of `a` and `b`: the first free of each in turn until
/// one is free of both.
pub(super) fn first_free_of_both(a: &Slots, b: &Slots, mut from: u64, len: u64) -> u64 {
    loop {
        let s = b.gap(a.gap(from, len), len);
        if s == from {
            return s;
        }
        from = s;
    }
}
