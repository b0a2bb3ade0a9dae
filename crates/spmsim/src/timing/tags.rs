//! Tag-only set-associative caches with LRU, for the data cache hierarchy
//! of the timing model (no data: values live in the functional model).

/// Each set keeps its tags in recency order, most recent first, so a hit
/// moves a tag to the front and a miss drops the last one (an empty way
/// while there is one, else the least recently used block): true LRU with
/// no timestamps, and a lookup reads only the set's own tags.
#[derive(Clone, Debug)]
pub struct TagCache {
    tags: Vec<u64>,
    ways: usize,
    sets: u64,
    pub hits: u64,
    pub misses: u64,
}

const EMPTY: u64 = u64::MAX;

impl TagCache {
    pub fn new(capacity_bytes: u64, ways: u32) -> Self {
        let lines = (capacity_bytes / 64).max(1);
        let ways = (ways as u64).clamp(1, lines) as usize;
        let sets = (lines / ways as u64).max(1);
        TagCache { tags: vec![EMPTY; (sets as usize) * ways], ways, sets, hits: 0, misses: 0 }
    }

    /// Look up a block and fill it on a miss. Returns whether it hit.
    pub fn access(&mut self, block: u64) -> bool {
        let set = if self.sets.is_power_of_two() { block & (self.sets - 1) } else { block % self.sets };
        let base = set as usize * self.ways;
        let tags = &mut self.tags[base..base + self.ways];
        if let Some(i) = tags.iter().position(|&t| t == block) {
            tags[..=i].rotate_right(1);
            self.hits += 1;
            return true;
        }
        self.misses += 1;
        tags.rotate_right(1);
        tags[0] = block;
        false
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn lru_within_a_set() {
        let mut c = super::TagCache::new(128, 2); // one set of two ways
        assert!(!c.access(1));
        assert!(!c.access(2));
        assert!(c.access(1));
        assert!(!c.access(3)); // evicts 2
        assert!(c.access(1));
        assert!(!c.access(2));
    }

    #[test]
    fn empty_ways_fill_before_any_block_is_evicted() {
        let mut c = super::TagCache::new(4 * 64, 4); // one set of four ways
        for b in [10, 11, 12] {
            assert!(!c.access(b));
        }
        assert!(c.access(10));
        assert!(!c.access(13), "the fourth way was empty");
        for b in [10, 11, 12, 13] {
            assert!(c.access(b), "block {b} still resident");
        }
        assert!(!c.access(14)); // evicts 10, the least recent
        assert!(!c.access(10));
        assert_eq!((c.hits, c.misses), (5, 6));
    }
}
