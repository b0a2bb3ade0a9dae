//! Metadata caches of the memory controller (SecPB Table I: counter, MAC and
//! BMT caches, 128 KB, 8-way; STAR and the multiset-hash paper: one unified
//! metadata cache).
//!
//! ```text
//!  counter blocks --> [counter cache] \
//!  MAC lines      --> [MAC cache]      > separate, or all in [unified cache]
//!  tree nodes     --> [tree cache]    /
//!  nodes of one tree level --> [level cache]  (a scheme's own: CacheTree's
//!                                              HNode cache), when it has one
//! ```
//! Lines hold verified plaintext metadata; they are trusted (on chip).

pub use crate::util::set_assoc::{CacheStats, LineCache};

use crate::config::{CacheGeometry, MetadataCacheOrganization};
use crate::engine::layout::{Layout, Region};

#[derive(Clone, Debug)]
pub struct MetaCaches {
    main: MainCaches,
    /// The tree nodes of one level, held apart (CacheTree's HNode cache).
    level: Option<LevelCache>,
}

#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // one value per controller: size does not matter
enum MainCaches {
    Separate { counter: LineCache, mac: LineCache, tree: LineCache },
    Unified(LineCache),
}

/// A cache of its own for the nodes of one tree level.
#[derive(Clone, Debug)]
struct LevelCache {
    level: u32,
    cache: LineCache,
}

/// A way of a cache: the line it holds (address, bytes), if any.
pub type Way = Option<(u64, [u8; 64])>;

/// The shape of a scheme's level cache: which tree level it holds, and
/// its lines and ways.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelCacheGeometry {
    pub level: u32,
    pub lines: u64,
    pub ways: u32,
}

fn build(g: &CacheGeometry) -> LineCache {
    LineCache::new(g.capacity_bytes / 64, g.ways)
}

/// The one of three separate caches (shared or exclusive references) that
/// holds a line of `addr`'s region.
fn pick<T>(layout: &Layout, addr: u64, counter: T, mac: T, tree: T) -> T {
    match layout.region(addr) {
        Some(Region::Counter { .. }) => counter,
        Some(Region::MacLine { .. }) => mac,
        _ => tree,
    }
}

impl LevelCache {
    fn holds(&self, layout: &Layout, addr: u64) -> bool {
        matches!(layout.region(addr), Some(Region::Tree { level, .. }) if level == self.level)
    }
}

impl MetaCaches {
    pub fn new(org: &MetadataCacheOrganization) -> Self {
        let main = match org {
            MetadataCacheOrganization::Separate { counter, mac, tree } => {
                MainCaches::Separate { counter: build(counter), mac: build(mac), tree: build(tree) }
            }
            MetadataCacheOrganization::Unified { unified } => MainCaches::Unified(build(unified)),
        };
        MetaCaches { main, level: None }
    }

    /// The same caches, with the nodes of `g.level` held in a level cache
    /// of their own when `g` is given.
    pub fn with_level_cache(mut self, g: Option<LevelCacheGeometry>) -> Self {
        self.level = g.map(|g| LevelCache { level: g.level, cache: LineCache::new(g.lines, g.ways) });
        self
    }

    /// The cache that holds `addr`.
    pub fn for_addr(&mut self, layout: &Layout, addr: u64) -> &mut LineCache {
        if let Some(l) = self.level.as_mut().filter(|l| l.holds(layout, addr)) {
            return &mut l.cache;
        }
        match &mut self.main {
            MainCaches::Unified(c) => c,
            MainCaches::Separate { counter, mac, tree } => pick(layout, addr, counter, mac, tree),
        }
    }

    /// The cache that holds `addr` (shared).
    fn of(&self, layout: &Layout, addr: u64) -> &LineCache {
        if let Some(l) = self.level.as_ref().filter(|l| l.holds(layout, addr)) {
            return &l.cache;
        }
        match &self.main {
            MainCaches::Unified(c) => c,
            MainCaches::Separate { counter, mac, tree } => pick(layout, addr, counter, mac, tree),
        }
    }

    /// The cached copy of a line, if any, leaving recency and statistics
    /// as they are.
    pub fn peek(&self, layout: &Layout, addr: u64) -> Option<[u8; 64]> {
        self.of(layout, addr).peek(addr).map(|(b, _)| b)
    }

    /// The line in each way of the level cache (None: empty), when there
    /// is one.
    pub fn level_cache_slots(&self) -> Option<Vec<Way>> {
        let l = self.level.as_ref()?;
        let mut slots = vec![None; (l.cache.sets() * l.cache.ways() as u64) as usize];
        for (a, line) in l.cache.entries() {
            slots[l.cache.way_of(a).expect("resident")] = Some((a, line.bytes));
        }
        Some(slots)
    }

    /// Whether `addr` belongs in the level cache.
    pub fn in_level_cache(&self, layout: &Layout, addr: u64) -> bool {
        self.level.as_ref().is_some_and(|l| l.holds(layout, addr))
    }

    pub fn all(&self) -> Vec<(&'static str, &LineCache)> {
        let mut v = match &self.main {
            MainCaches::Separate { counter, mac, tree } => vec![("counter", counter), ("mac", mac), ("tree", tree)],
            MainCaches::Unified(c) => vec![("unified", c)],
        };
        if let Some(l) = &self.level {
            v.push(("level", &l.cache));
        }
        v
    }

    /// The address of every line on chip, in any of the caches.
    pub fn resident_addrs(&self) -> Vec<u64> {
        self.all().into_iter().flat_map(|(_, c)| c.entries().map(|(a, _)| a).collect::<Vec<_>>()).collect()
    }

    pub fn all_mut(&mut self) -> Vec<&mut LineCache> {
        let mut v = match &mut self.main {
            MainCaches::Separate { counter, mac, tree } => vec![counter, mac, tree],
            MainCaches::Unified(c) => vec![c],
        };
        if let Some(l) = &mut self.level {
            v.push(&mut l.cache);
        }
        v
    }

    /// Every dirty line, sorted by address.
    pub fn dirty_lines(&self) -> Vec<(u64, [u8; 64])> {
        let mut v: Vec<(u64, [u8; 64])> = self.all().iter().flat_map(|(_, c)| c.dirty_lines()).collect();
        v.sort_unstable_by_key(|(a, _)| *a);
        v
    }

    pub fn clear(&mut self) {
        for c in self.all_mut() {
            c.clear();
        }
    }
}
