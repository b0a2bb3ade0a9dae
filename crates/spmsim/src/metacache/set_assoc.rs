//! A set-associative cache of 64 B lines with true LRU replacement and
//! dirty bits. Used for metadata caches and for the eADR data cache.

use serde::Serialize;

#[derive(Clone, Copy, Debug)]
struct Line {
    addr: u64,
    data: [u8; 64],
    dirty: bool,
    last_use: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub writebacks: u64,
}

#[derive(Clone, Debug)]
pub struct SetAssocCache {
    sets: Vec<Vec<Line>>,
    ways: usize,
    clock: u64,
    pub stats: CacheStats,
}

impl SetAssocCache {
    /// `lines` total lines; `ways` per set (validated by the config layer).
    pub fn new(lines: u64, ways: u32) -> Self {
        let ways = ways.max(1) as usize;
        let nsets = ((lines as usize) / ways).max(1);
        SetAssocCache { sets: vec![Vec::new(); nsets], ways, clock: 0, stats: CacheStats::default() }
    }

    fn set_of(&self, addr: u64) -> usize {
        // Mix the address so that metadata regions with power-of-two strides
        // do not all land in a few sets.
        let h = addr.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h >> 20) % self.sets.len() as u64) as usize
    }

    /// Look up and mark used; counts a hit or miss.
    pub fn get(&mut self, addr: u64) -> Option<[u8; 64]> {
        self.clock += 1;
        let clock = self.clock;
        let s = self.set_of(addr);
        match self.sets[s].iter_mut().find(|l| l.addr == addr) {
            Some(l) => {
                l.last_use = clock;
                self.stats.hits += 1;
                Some(l.data)
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }

    /// Look up without touching LRU state or statistics.
    pub fn peek(&self, addr: u64) -> Option<([u8; 64], bool)> {
        let s = self.set_of(addr);
        self.sets[s].iter().find(|l| l.addr == addr).map(|l| (l.data, l.dirty))
    }

    pub fn contains(&self, addr: u64) -> bool {
        self.peek(addr).is_some()
    }

    /// Insert or update a line. Returns the evicted victim if it was dirty.
    pub fn put(&mut self, addr: u64, data: [u8; 64], dirty: bool) -> Option<(u64, [u8; 64])> {
        self.clock += 1;
        let clock = self.clock;
        let ways = self.ways;
        let s = self.set_of(addr);
        let set = &mut self.sets[s];
        if let Some(l) = set.iter_mut().find(|l| l.addr == addr) {
            l.data = data;
            l.dirty |= dirty;
            l.last_use = clock;
            return None;
        }
        let mut victim = None;
        if set.len() >= ways {
            let (i, _) = set.iter().enumerate().min_by_key(|(_, l)| l.last_use).unwrap();
            let v = set.swap_remove(i);
            if v.dirty {
                self.stats.writebacks += 1;
                victim = Some((v.addr, v.data));
            }
        }
        set.push(Line { addr, data, dirty, last_use: clock });
        victim
    }

    /// Mark a resident line clean (after a write-through or flush).
    pub fn mark_clean(&mut self, addr: u64) {
        let s = self.set_of(addr);
        if let Some(l) = self.sets[s].iter_mut().find(|l| l.addr == addr) {
            l.dirty = false;
        }
    }

    pub fn remove(&mut self, addr: u64) -> Option<([u8; 64], bool)> {
        let s = self.set_of(addr);
        let set = &mut self.sets[s];
        let i = set.iter().position(|l| l.addr == addr)?;
        let l = set.swap_remove(i);
        Some((l.data, l.dirty))
    }

    pub fn dirty_lines(&self) -> Vec<(u64, [u8; 64])> {
        self.sets.iter().flatten().filter(|l| l.dirty).map(|l| (l.addr, l.data)).collect()
    }

    pub fn len(&self) -> usize {
        self.sets.iter().map(|s| s.len()).sum()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn clear(&mut self) {
        for s in &mut self.sets {
            s.clear();
        }
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
