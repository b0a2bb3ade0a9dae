//! A set-associative cache of 64 B lines with true LRU replacement and
//! dirty bits. Used for metadata caches and for the eADR data cache.

use serde::Serialize;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub writebacks: u64,
}

impl CacheStats {
    /// What happened between `before` and `self`.
    pub fn since(&self, before: &CacheStats) -> CacheStats {
        CacheStats { hits: self.hits - before.hits, misses: self.misses - before.misses, writebacks: self.writebacks - before.writebacks }
    }
}

/// Tag of an empty way.
const EMPTY: u64 = u64::MAX;

/// Ways are stored flat, set after set, with the tags apart from the data
/// so that a lookup reads one host cache line of tags.
#[derive(Clone, Debug)]
pub struct SetAssocCache {
    tags: Vec<u64>,
    data: Vec<[u8; 64]>,
    last_use: Vec<u64>,
    dirty: Vec<bool>,
    ways: usize,
    nsets: u64,
    clock: u64,
    pub stats: CacheStats,
}

impl SetAssocCache {
    /// `lines` total lines; `ways` per set (validated by the config layer).
    pub fn new(lines: u64, ways: u32) -> Self {
        let ways = ways.max(1) as usize;
        let nsets = ((lines as usize) / ways).max(1);
        let n = nsets * ways;
        SetAssocCache {
            tags: vec![EMPTY; n],
            data: vec![[0; 64]; n],
            last_use: vec![0; n],
            dirty: vec![false; n],
            ways,
            nsets: nsets as u64,
            clock: 0,
            stats: CacheStats::default(),
        }
    }

    /// First way of `addr`'s set.
    fn base(&self, addr: u64) -> usize {
        // Mix the address so that metadata regions with power-of-two strides
        // do not all land in a few sets.
        let h = addr.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20;
        // A mask when the set count allows (it always does in the presets):
        // the same set as the remainder, without a 64-bit division.
        let set = if self.nsets.is_power_of_two() { h & (self.nsets - 1) } else { h % self.nsets };
        set as usize * self.ways
    }

    /// The way holding `addr`, if resident.
    fn find(&self, addr: u64) -> Option<usize> {
        let b = self.base(addr);
        self.tags[b..b + self.ways].iter().position(|&t| t == addr).map(|i| b + i)
    }

    /// Look up and mark used; counts a hit or miss.
    pub fn get(&mut self, addr: u64) -> Option<[u8; 64]> {
        self.clock += 1;
        match self.find(addr) {
            Some(i) => {
                self.last_use[i] = self.clock;
                self.stats.hits += 1;
                Some(self.data[i])
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }

    /// A resident line to change: counts and recency exactly as a `get`
    /// hit followed by a dirty `put` of the changed bytes, in one lookup.
    /// On a miss, counts the `get` miss and returns None.
    pub fn update(&mut self, addr: u64) -> Option<&mut [u8; 64]> {
        self.clock += 1;
        let Some(i) = self.find(addr) else {
            self.stats.misses += 1;
            return None;
        };
        self.stats.hits += 1;
        self.clock += 1;
        self.dirty[i] = true;
        self.last_use[i] = self.clock;
        Some(&mut self.data[i])
    }

    /// A resident dirty line's bytes, now marked clean (`peek` then
    /// `mark_clean`, in one lookup).
    pub fn take_dirty(&mut self, addr: u64) -> Option<[u8; 64]> {
        let i = self.find(addr)?;
        std::mem::take(&mut self.dirty[i]).then_some(self.data[i])
    }

    /// Look up without touching LRU state or statistics.
    pub fn peek(&self, addr: u64) -> Option<([u8; 64], bool)> {
        self.find(addr).map(|i| (self.data[i], self.dirty[i]))
    }

    pub fn contains(&self, addr: u64) -> bool {
        self.find(addr).is_some()
    }

    /// Insert or update a line. Returns the evicted victim if it was dirty.
    pub fn put(&mut self, addr: u64, data: [u8; 64], dirty: bool) -> Option<(u64, [u8; 64])> {
        self.clock += 1;
        if let Some(i) = self.find(addr) {
            self.data[i] = data;
            self.dirty[i] |= dirty;
            self.last_use[i] = self.clock;
            return None;
        }
        let b = self.base(addr);
        // An empty way if there is one, else the least recently used.
        let i = (b..b + self.ways).min_by_key(|&i| if self.tags[i] == EMPTY { 0 } else { self.last_use[i] }).expect("a set has ways");
        let mut victim = None;
        if self.tags[i] != EMPTY && self.dirty[i] {
            self.stats.writebacks += 1;
            victim = Some((self.tags[i], self.data[i]));
        }
        self.tags[i] = addr;
        self.data[i] = data;
        self.dirty[i] = dirty;
        self.last_use[i] = self.clock;
        victim
    }

    /// Mark a resident line clean (after a write-through or flush).
    pub fn mark_clean(&mut self, addr: u64) {
        if let Some(i) = self.find(addr) {
            self.dirty[i] = false;
        }
    }

    pub fn remove(&mut self, addr: u64) -> Option<([u8; 64], bool)> {
        let i = self.find(addr)?;
        self.tags[i] = EMPTY;
        Some((self.data[i], std::mem::take(&mut self.dirty[i])))
    }

    /// Dirty lines, set by set.
    pub fn dirty_lines(&self) -> Vec<(u64, [u8; 64])> {
        (0..self.tags.len()).filter(|&i| self.tags[i] != EMPTY && self.dirty[i]).map(|i| (self.tags[i], self.data[i])).collect()
    }

    pub fn len(&self) -> usize {
        self.tags.iter().filter(|&&t| t != EMPTY).count()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn clear(&mut self) {
        self.tags.fill(EMPTY);
        self.dirty.fill(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_evicts_least_recent_dirty_victim() {
        let mut c = SetAssocCache::new(2, 2); // one set, two ways
        assert!(c.put(1, [1; 64], true).is_none());
        assert!(c.put(2, [2; 64], false).is_none());
        assert_eq!(c.get(1), Some([1; 64])); // 2 is now LRU
        assert!(c.put(3, [3; 64], false).is_none(), "clean victim 2 is dropped silently");
        assert!(!c.contains(2));
        assert_eq!(c.get(3), Some([3; 64]));
        let v = c.put(4, [4; 64], false);
        assert_eq!(v, Some((1, [1; 64])), "dirty victim 1 is returned for write-back");
        assert_eq!(c.stats.writebacks, 1);
    }

    #[test]
    fn update_in_place_is_a_get_then_a_dirty_put() {
        let ops = |c: &mut SetAssocCache, fused: bool| {
            for a in [1u64, 2, 3, 1, 4, 2, 5, 1] {
                if fused {
                    match c.update(a) {
                        Some(b) => b[0] += 1,
                        None => {
                            c.put(a, [1; 64], true);
                        }
                    }
                } else {
                    match c.get(a) {
                        Some(mut b) => {
                            b[0] += 1;
                            c.put(a, b, true);
                        }
                        None => {
                            c.put(a, [1; 64], true);
                        }
                    }
                }
            }
        };
        let (mut a, mut b) = (SetAssocCache::new(4, 2), SetAssocCache::new(4, 2));
        ops(&mut a, false);
        ops(&mut b, true);
        assert_eq!((a.stats, a.dirty_lines()), (b.stats, b.dirty_lines()));
        assert_eq!((a.clock, &a.last_use, &a.tags), (b.clock, &b.last_use, &b.tags));
        assert!(a.stats.hits > 0 && a.stats.misses > 0);
        assert_eq!(b.take_dirty(a.dirty_lines()[0].0), Some(a.dirty_lines()[0].1));
        assert_eq!(b.dirty_lines().len() + 1, a.dirty_lines().len(), "taken lines are clean");
    }

    #[test]
    fn update_keeps_dirty_and_counts() {
        let mut c = SetAssocCache::new(16, 4);
        c.put(9, [0; 64], true);
        c.put(9, [5; 64], false);
        assert_eq!(c.peek(9), Some(([5; 64], true)));
        assert_eq!(c.get(10), None);
        assert_eq!(c.stats.misses, 1);
        c.mark_clean(9);
        assert!(c.dirty_lines().is_empty());
    }
}
