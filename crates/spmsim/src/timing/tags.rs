//! Tag-only set-associative caches with LRU, for the data cache hierarchy
//! of the timing model (no data: values live in the functional model).
//! The cache itself is the crate's one LRU cache, [`SetAssoc`], with
//! nothing in a way but its tag and a dirty bit: a volatile store dirties
//! its line, and a dirty line that leaves the last level it is in goes
//! back to memory (persistent stores take the persist path instead, so
//! their lines stay clean here).

use crate::util::set_assoc::{Access, CacheStats, SetAssoc, SetIndex};

/// A data cache level: block addresses pick their set by their low bits.
/// A level of no capacity is absent (a machine with L1 caches only, as
/// the multiset-hash paper's Table 1): every lookup misses and nothing is
/// held or counted.
#[derive(Clone, Debug)]
pub struct TagCache(Option<SetAssoc<bool>>);

/// What a lookup found: a hit, or a miss that filled the block, with the
/// dirty block it evicted to make room, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    Hit,
    Miss { dirty_victim: Option<u64> },
}

impl TagCache {
    pub fn new(capacity_bytes: u64, ways: u32) -> Self {
        if capacity_bytes == 0 {
            return TagCache(None);
        }
        let lines = (capacity_bytes / 64).max(1);
        let ways = (ways as u64).clamp(1, lines);
        TagCache(Some(SetAssoc::with_geometry(lines / ways, ways as usize, SetIndex::LowBits)))
    }

    /// Look up a block and fill it (clean) on a miss.
    #[inline]
    pub fn lookup(&mut self, block: u64) -> Lookup {
        let Some(c) = &mut self.0 else { return Lookup::Miss { dirty_victim: None } };
        match c.access(block, false) {
            Access::Hit => Lookup::Hit,
            Access::Miss { evicted } => Lookup::Miss { dirty_victim: evicted.and_then(|(b, dirty)| dirty.then_some(b)) },
        }
    }

    /// [`Self::lookup`], as whether it hit.
    #[cfg(test)]
    fn access(&mut self, block: u64) -> bool {
        self.lookup(block) == Lookup::Hit
    }

    /// Mark a resident block dirty, uncounted and its recency left alone;
    /// false if the block is not here.
    #[inline]
    pub fn mark_dirty(&mut self, block: u64) -> bool {
        match self.0.as_mut().and_then(|c| c.payload_mut(block)) {
            Some(d) => {
                *d = true;
                true
            }
            None => false,
        }
    }

    /// Drop `block` if present (another core wrote it), uncounted.
    #[inline]
    pub fn invalidate(&mut self, block: u64) {
        if let Some(c) = &mut self.0 {
            c.remove_key(block);
        }
    }

    /// The machine has no such cache (capacity 0).
    pub fn is_absent(&self) -> bool {
        self.0.is_none()
    }

    /// Hits and misses so far (no write-backs: tags only).
    pub fn stats(&self) -> CacheStats {
        self.0.as_ref().map(|c| c.stats).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_absent_level_misses_and_holds_nothing() {
        let mut c = super::TagCache::new(0, 8);
        assert!(!c.access(1) && !c.access(1));
        assert!(!c.mark_dirty(1));
        assert_eq!((c.stats().hits, c.stats().misses), (0, 0));
    }

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

    #[test]
    fn only_a_dirty_victim_is_reported() {
        use super::Lookup;
        let mut c = super::TagCache::new(128, 2); // one set of two ways
        c.lookup(1);
        c.lookup(2);
        assert!(c.mark_dirty(1));
        assert!(!c.mark_dirty(9), "block 9 is not resident");
        // Marking left 1 the least recent: it goes first, then clean 2.
        assert_eq!(c.lookup(3), Lookup::Miss { dirty_victim: Some(1) });
        assert_eq!(c.lookup(4), Lookup::Miss { dirty_victim: None });
        assert_eq!(c.lookup(3), Lookup::Hit);
    }
}
