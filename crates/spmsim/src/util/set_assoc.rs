//! The one set-associative cache with true LRU replacement, generic over
//! what a way holds besides its tag: a 64 B line and a dirty bit for the
//! metadata caches and the eADR data cache ([`LineCache`]), nothing for
//! the timing model's tag-only data caches (`timing::tags::TagCache`, a
//! `SetAssoc<()>`).
//!
//! ```text
//!  key --set index--> set: tags  [MRU ... LRU | empty ...]   recency order
//!                          slots [ s0  ...  sk | ...     ]   payload slot of each tag
//!  hit:  the tag (and its slot) moves to the front
//!  miss: the last tag (an empty way while there is one, else the least
//!        recently used) leaves; the new key takes the front and its slot
//! ```
//! Each set keeps its tags in recency order, so LRU needs no timestamps
//! and a lookup reads only the set's own tags. Payloads stay where they
//! are; only a small slot index moves with each tag, and with no payload
//! (the tag caches) there is no slot array at all.

use serde::Serialize;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub writebacks: u64,
}

/// A cache's counts as the stats tree shows them, with its hit rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CacheReport {
    pub hits: u64,
    pub misses: u64,
    /// Dirty lines written back on eviction (caches that hold data).
    pub writebacks: u64,
    /// Hits over accesses (0 without accesses).
    pub hit_rate: f64,
}

impl CacheStats {
    pub fn report(&self) -> CacheReport {
        let accesses = self.hits + self.misses;
        CacheReport {
            hits: self.hits,
            misses: self.misses,
            writebacks: self.writebacks,
            hit_rate: if accesses == 0 { 0.0 } else { self.hits as f64 / accesses as f64 },
        }
    }

    /// What happened between `before` and `self`.
    pub fn since(&self, before: &CacheStats) -> CacheStats {
        CacheStats { hits: self.hits - before.hits, misses: self.misses - before.misses, writebacks: self.writebacks - before.writebacks }
    }
}

/// Tag of an empty way.
const EMPTY: u64 = u64::MAX;

/// How a key picks its set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetIndex {
    /// The key's low bits: the data caches, whose block addresses are
    /// spread by the program itself.
    LowBits,
    /// The key mixed first, so that metadata regions with power-of-two
    /// strides do not all land in a few sets.
    Hashed,
}

#[derive(Clone, Debug)]
pub struct SetAssoc<P> {
    /// Per set, the resident keys most recent first, then empty ways.
    tags: Vec<u64>,
    /// Parallel to `tags`: the set's payload slot holding that key's
    /// payload. Empty when payloads take no space.
    slots: Vec<u16>,
    payload: Vec<P>,
    ways: usize,
    nsets: u64,
    index: SetIndex,
    pub stats: CacheStats,
}

impl<P: Clone + Default> SetAssoc<P> {
    /// `nsets` sets of `ways` ways each (both at least 1; at most 65536
    /// ways, far above what the configuration accepts).
    pub fn with_geometry(nsets: u64, ways: usize, index: SetIndex) -> Self {
        let (nsets, ways) = (nsets.max(1), ways.clamp(1, 1 << 16));
        let n = nsets as usize * ways;
        let slots = if Self::HAS_PAYLOAD { (0..n).map(|i| (i % ways) as u16).collect() } else { Vec::new() };
        SetAssoc { tags: vec![EMPTY; n], slots, payload: vec![P::default(); n], ways, nsets, index, stats: CacheStats::default() }
    }
}

impl<P> SetAssoc<P> {
    const HAS_PAYLOAD: bool = std::mem::size_of::<P>() != 0;

    /// First way of `key`'s set.
    #[inline]
    fn base(&self, key: u64) -> usize {
        let h = match self.index {
            SetIndex::LowBits => key,
            SetIndex::Hashed => key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20,
        };
        // A mask when the set count allows (it always does in the presets):
        // the same set as the remainder, without a 64-bit division.
        let set = if self.nsets.is_power_of_two() { h & (self.nsets - 1) } else { h % self.nsets };
        set as usize * self.ways
    }

    /// `key`'s set base and its position in the set's recency order.
    #[inline]
    fn find(&self, key: u64) -> Option<(usize, usize)> {
        let b = self.base(key);
        self.tags[b..b + self.ways].iter().position(|&t| t == key).map(|i| (b, i))
    }

    /// Index in `payload` of the entry at position `pos` of the set at `b`.
    #[inline]
    fn slot(&self, b: usize, pos: usize) -> usize {
        if Self::HAS_PAYLOAD {
            b + self.slots[b + pos] as usize
        } else {
            b + pos
        }
    }

    /// Make the entry at position `pos` the most recent; returns its
    /// payload index.
    #[inline]
    fn promote(&mut self, b: usize, pos: usize) -> usize {
        if pos > 0 {
            shift_to_front(&mut self.tags[b..=b + pos]);
            if Self::HAS_PAYLOAD {
                shift_to_front(&mut self.slots[b..=b + pos]);
            }
        }
        self.slot(b, 0)
    }

    /// Look `key` up, counting a hit (it becomes the most recent) or a
    /// miss; on a miss, fill it with payload `fill` as the most recent, in
    /// place of the set's last entry, which is returned if it held a key.
    #[inline]
    pub fn access(&mut self, key: u64, fill: P) -> Access<P> {
        match self.find(key) {
            Some((b, pos)) => {
                self.promote(b, pos);
                self.stats.hits += 1;
                Access::Hit
            }
            None => {
                self.stats.misses += 1;
                Access::Miss { evicted: self.fill(key, fill) }
            }
        }
    }

    /// A counted lookup: on a hit the key becomes the most recent and its
    /// payload is returned; a miss fills nothing.
    pub fn lookup(&mut self, key: u64) -> Option<&mut P> {
        match self.find(key) {
            Some((b, pos)) => {
                self.stats.hits += 1;
                let i = self.promote(b, pos);
                Some(&mut self.payload[i])
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }

    /// An uncounted use of a resident key: it becomes the most recent.
    pub fn touch(&mut self, key: u64) -> Option<&mut P> {
        let (b, pos) = self.find(key)?;
        let i = self.promote(b, pos);
        Some(&mut self.payload[i])
    }

    /// Place a key that is not resident as the most recent of its set, in
    /// place of the set's last entry (an empty way while there is one, else
    /// the least recently used); returns that entry if it held a key.
    #[inline]
    pub fn fill(&mut self, key: u64, payload: P) -> Option<(u64, P)> {
        debug_assert!(key != EMPTY && !self.contains(key));
        let b = self.base(key);
        let i = self.promote(b, self.ways - 1);
        let old_key = std::mem::replace(&mut self.tags[b], key);
        let old = std::mem::replace(&mut self.payload[i], payload);
        (old_key != EMPTY).then_some((old_key, old))
    }

    /// A resident key's payload, recency and statistics left alone.
    pub fn payload(&self, key: u64) -> Option<&P> {
        self.find(key).map(|(b, pos)| &self.payload[self.slot(b, pos)])
    }

    /// [`Self::payload`], to change.
    pub fn payload_mut(&mut self, key: u64) -> Option<&mut P> {
        let (b, pos) = self.find(key)?;
        let i = self.slot(b, pos);
        Some(&mut self.payload[i])
    }

    /// Take a key out; its way becomes empty (the next one its set fills).
    pub fn remove_key(&mut self, key: u64) -> Option<&mut P> {
        let (b, pos) = self.find(key)?;
        let i = self.slot(b, pos);
        self.tags[b + pos..b + self.ways].rotate_left(1);
        if Self::HAS_PAYLOAD {
            self.slots[b + pos..b + self.ways].rotate_left(1);
        }
        self.tags[b + self.ways - 1] = EMPTY;
        Some(&mut self.payload[i])
    }

    /// Resident keys and their payloads, set by set.
    pub fn entries(&self) -> impl Iterator<Item = (u64, &P)> + '_ {
        (0..self.tags.len()).filter(|&i| self.tags[i] != EMPTY).map(move |i| {
            let b = i - i % self.ways;
            (self.tags[i], &self.payload[self.slot(b, i - b)])
        })
    }

    pub fn contains(&self, key: u64) -> bool {
        self.find(key).is_some()
    }

    /// Resident keys.
    /// The set `key` maps to (STAR's cache-tree groups dirty lines by it).
    pub fn set_of(&self, key: u64) -> usize {
        self.base(key) / self.ways
    }

    pub fn sets(&self) -> u64 {
        self.nsets
    }

    pub fn ways(&self) -> usize {
        self.ways
    }

    /// The way (payload slot, `set * ways + way`) holding `key`: a line
    /// keeps its way while resident, whatever its recency (Anubis's
    /// shadow table has one entry per way of the metadata cache).
    pub fn way_of(&self, key: u64) -> Option<usize> {
        self.find(key).map(|(b, pos)| self.slot(b, pos))
    }

    pub fn len(&self) -> usize {
        self.tags.iter().filter(|&&t| t != EMPTY).count()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every way empty. Payloads of empty ways are never read, so they are
    /// left as they are.
    pub fn clear(&mut self) {
        self.tags.fill(EMPTY);
    }

    /// Fraction of lookups that hit (0 before any).
    pub fn hit_rate(&self) -> f64 {
        let n = self.stats.hits + self.stats.misses;
        if n == 0 {
            0.0
        } else {
            self.stats.hits as f64 / n as f64
        }
    }
}

/// Move the last element of a short slice to the front, the others one
/// place back: `rotate_right(1)` without the call a general rotation
/// makes, for the few ways of one set.
#[inline]
fn shift_to_front<T: Copy>(s: &mut [T]) {
    let last = s[s.len() - 1];
    for i in (1..s.len()).rev() {
        s[i] = s[i - 1];
    }
    s[0] = last;
}

/// The outcome of [`SetAssoc::access`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access<P> {
    Hit,
    /// The key was filled; `evicted` is the key and payload it replaced.
    Miss {
        evicted: Option<(u64, P)>,
    },
}

/// A metadata or data line: its 64 bytes and whether NVM lacks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub bytes: [u8; 64],
    pub dirty: bool,
}

impl Default for Line {
    fn default() -> Self {
        Line { bytes: [0; 64], dirty: false }
    }
}

/// A cache of 64 B lines with dirty bits: the metadata caches and the
/// eADR data cache.
pub type LineCache = SetAssoc<Line>;

impl SetAssoc<Line> {
    /// `lines` total lines; `ways` per set (validated by the config layer).
    pub fn new(lines: u64, ways: u32) -> Self {
        let ways = ways.max(1) as usize;
        let nsets = ((lines as usize) / ways).max(1);
        SetAssoc::with_geometry(nsets as u64, ways, SetIndex::Hashed)
    }

    /// Look up and mark used; counts a hit or miss.
    pub fn get(&mut self, addr: u64) -> Option<[u8; 64]> {
        self.lookup(addr).map(|l| l.bytes)
    }

    /// A resident line to change: counts and recency exactly as a `get`
    /// hit followed by a dirty `put` of the changed bytes, in one lookup.
    /// On a miss, counts the `get` miss and returns None.
    pub fn update(&mut self, addr: u64) -> Option<&mut [u8; 64]> {
        let line = self.lookup(addr)?;
        line.dirty = true;
        Some(&mut line.bytes)
    }

    /// A resident dirty line's bytes, now marked clean (`peek` then
    /// `mark_clean`, in one lookup).
    pub fn take_dirty(&mut self, addr: u64) -> Option<[u8; 64]> {
        let line = self.payload_mut(addr)?;
        std::mem::take(&mut line.dirty).then_some(line.bytes)
    }

    /// Look up without touching LRU state or statistics.
    pub fn peek(&self, addr: u64) -> Option<([u8; 64], bool)> {
        self.payload(addr).map(|l| (l.bytes, l.dirty))
    }

    /// Insert or update a line. Returns the evicted victim if it was dirty.
    /// Not counted as a hit or miss: callers `get` first.
    pub fn put(&mut self, addr: u64, data: [u8; 64], dirty: bool) -> Option<(u64, [u8; 64])> {
        if let Some(line) = self.touch(addr) {
            line.bytes = data;
            line.dirty |= dirty;
            return None;
        }
        let (victim, line) = self.fill(addr, Line { bytes: data, dirty })?;
        if !line.dirty {
            return None;
        }
        self.stats.writebacks += 1;
        Some((victim, line.bytes))
    }

    /// [`Self::put`], returning any line evicted, clean or dirty, with its
    /// dirty bit (the multiset-hash registers log every line that leaves).
    pub fn put_any(&mut self, addr: u64, data: [u8; 64], dirty: bool) -> Option<(u64, [u8; 64], bool)> {
        if let Some(line) = self.touch(addr) {
            line.bytes = data;
            line.dirty |= dirty;
            return None;
        }
        let (victim, line) = self.fill(addr, Line { bytes: data, dirty })?;
        if line.dirty {
            self.stats.writebacks += 1;
        }
        Some((victim, line.bytes, line.dirty))
    }

    /// Mark a resident line clean (after a write-through or flush).
    pub fn mark_clean(&mut self, addr: u64) {
        if let Some(line) = self.payload_mut(addr) {
            line.dirty = false;
        }
    }

    pub fn remove(&mut self, addr: u64) -> Option<([u8; 64], bool)> {
        let line = self.remove_key(addr)?;
        Some((line.bytes, std::mem::take(&mut line.dirty)))
    }

    /// Dirty lines, set by set (in no order within a set).
    pub fn dirty_lines(&self) -> Vec<(u64, [u8; 64])> {
        self.entries().filter(|(_, l)| l.dirty).map(|(a, l)| (a, l.bytes)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// True LRU written the plain way: per set, the resident keys most
    /// recent first, at most `ways` of them.
    struct ReferenceLru {
        sets: Vec<Vec<u64>>,
        ways: usize,
    }

    impl ReferenceLru {
        fn access(&mut self, set: usize, key: u64) -> bool {
            let s = &mut self.sets[set];
            let hit = s.iter().position(|&k| k == key).map(|i| s.remove(i)).is_some();
            s.insert(0, key);
            s.truncate(self.ways);
            hit
        }
    }

    proptest! {
        /// Every hit and miss is the one true LRU decides, for tag-only and
        /// line payloads alike, with lines removed on the way.
        #[test]
        fn hits_and_misses_are_true_lru(keys in proptest::collection::vec((0u64..48, any::<bool>()), 1..400), ways in 1usize..6) {
            let nsets = 4u64;
            let mut tags: SetAssoc<()> = SetAssoc::with_geometry(nsets, ways, SetIndex::LowBits);
            let mut lines = LineCache::new(nsets * ways as u64, ways as u32);
            let mut r_tags = ReferenceLru { sets: vec![Vec::new(); nsets as usize], ways };
            let mut r_lines = ReferenceLru { sets: vec![Vec::new(); nsets as usize], ways };
            for (k, remove) in keys {
                prop_assert_eq!(tags.access(k, ()) == Access::Hit, r_tags.access((k % nsets) as usize, k), "tags, key {}", k);
                let set = lines.base(k) / ways;
                let want = r_lines.access(set, k);
                let got = lines.get(k).is_some();
                if !got {
                    lines.put(k, [k as u8; 64], true);
                }
                prop_assert_eq!(got, want, "lines, key {}", k);
                if remove && k % 3 == 0 {
                    prop_assert!(lines.remove(k).is_some());
                    r_lines.sets[set].retain(|&x| x != k);
                }
                prop_assert_eq!(lines.len(), r_lines.sets.iter().map(Vec::len).sum::<usize>());
            }
            for (set, keys) in r_lines.sets.iter().enumerate() {
                for &k in keys {
                    prop_assert_eq!(lines.peek(k), Some(([k as u8; 64], true)), "set {}", set);
                }
            }
        }
    }

    #[test]
    fn lru_evicts_least_recent_dirty_victim() {
        let mut c = LineCache::new(2, 2); // one set, two ways
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
        let ops = |c: &mut LineCache, fused: bool| {
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
        let (mut a, mut b) = (LineCache::new(4, 2), LineCache::new(4, 2));
        ops(&mut a, false);
        ops(&mut b, true);
        assert_eq!((a.stats, a.dirty_lines()), (b.stats, b.dirty_lines()));
        assert_eq!((&a.tags, &a.slots), (&b.tags, &b.slots), "the same recency order");
        assert!(a.stats.hits > 0 && a.stats.misses > 0);
        assert_eq!(b.take_dirty(a.dirty_lines()[0].0), Some(a.dirty_lines()[0].1));
        assert_eq!(b.dirty_lines().len() + 1, a.dirty_lines().len(), "taken lines are clean");
    }

    #[test]
    fn update_keeps_dirty_and_counts() {
        let mut c = LineCache::new(16, 4);
        c.put(9, [0; 64], true);
        c.put(9, [5; 64], false);
        assert_eq!(c.peek(9), Some(([5; 64], true)));
        assert_eq!(c.get(10), None);
        assert_eq!(c.stats.misses, 1);
        c.mark_clean(9);
        assert!(c.dirty_lines().is_empty());
    }
}
