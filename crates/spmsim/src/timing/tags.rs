//! Tag-only set-associative caches with LRU, for the data cache hierarchy
//! of the timing model (no data: values live in the functional model).
//! The cache itself is the crate's one LRU cache, [`SetAssoc`], with
//! nothing in a way but its tag.

use crate::set_assoc::{Access, CacheStats, SetAssoc, SetIndex};

/// A data cache level: block addresses pick their set by their low bits.
#[derive(Clone, Debug)]
pub struct TagCache(SetAssoc<()>);

impl TagCache {
    pub fn new(capacity_bytes: u64, ways: u32) -> Self {
        let lines = (capacity_bytes / 64).max(1);
        let ways = (ways as u64).clamp(1, lines);
        TagCache(SetAssoc::with_geometry(lines / ways, ways as usize, SetIndex::LowBits))
    }

    /// Look up a block and fill it on a miss. Returns whether it hit.
    #[inline]
    pub fn access(&mut self, block: u64) -> bool {
        self.0.access(block, ()) == Access::Hit
    }

    /// Drop `block` if present (another core wrote it), uncounted.
    #[inline]
    pub fn invalidate(&mut self, block: u64) {
        self.0.remove_key(block);
    }

    /// Hits and misses so far (no write-backs: tags only).
    pub fn stats(&self) -> CacheStats {
        self.0.stats
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
        assert_eq!((c.stats().hits, c.stats().misses), (5, 6));
    }
}
