//! Tag-only set-associative caches with LRU, for the data cache hierarchy
//! of the timing model (no data: values live in the functional model).

#[derive(Clone, Debug)]
pub struct TagCache {
    tags: Vec<u64>,
    stamps: Vec<u64>,
    ways: usize,
    sets: u64,
    clock: u64,
    pub hits: u64,
    pub misses: u64,
}

const EMPTY: u64 = u64::MAX;

impl TagCache {
    pub fn new(capacity_bytes: u64, ways: u32) -> Self {
        let lines = (capacity_bytes / 64).max(1);
        let ways = (ways as u64).clamp(1, lines) as usize;
        let sets = (lines / ways as u64).max(1);
        TagCache { tags: vec![EMPTY; (sets as usize) * ways], stamps: vec![0; (sets as usize) * ways], ways, sets, clock: 0, hits: 0, misses: 0 }
    }

    /// Look up a block and fill it on a miss. Returns whether it hit.
    pub fn access(&mut self, block: u64) -> bool {
        self.clock += 1;
        let base = ((block % self.sets) as usize) * self.ways;
        let set = base..base + self.ways;
        if let Some(i) = self.tags[set.clone()].iter().position(|&t| t == block) {
            self.stamps[base + i] = self.clock;
            self.hits += 1;
            return true;
        }
        self.misses += 1;
        let victim = set.min_by_key(|&i| if self.tags[i] == EMPTY { 0 } else { self.stamps[i] }).unwrap();
        self.tags[victim] = block;
        self.stamps[victim] = self.clock;
        false
    }

    pub fn hit_rate(&self) -> f64 {
        let n = self.hits + self.misses;
        if n == 0 { 0.0 } else { self.hits as f64 / n as f64 }
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
}
