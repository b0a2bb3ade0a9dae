//! Metadata caches of the memory controller (SecPB Table I: counter, MAC and
//! BMT caches, 128 KB, 8-way; STAR and the multiset-hash paper: one unified
//! metadata cache).
//!
//! ```text
//!  counter blocks --> [counter cache] \
//!  MAC lines      --> [MAC cache]      > separate, or all in [unified cache]
//!  tree nodes     --> [tree cache]    /
//! ```
//! Lines hold verified plaintext metadata; they are trusted (on chip).

pub use crate::set_assoc::{CacheStats, LineCache};

use crate::config::{CacheGeometry, MetadataCacheOrganization};
use crate::layout::{Layout, Region};

#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // one value per controller: size does not matter
pub enum MetaCaches {
    Separate { counter: LineCache, mac: LineCache, tree: LineCache },
    Unified(LineCache),
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

impl MetaCaches {
    pub fn new(org: &MetadataCacheOrganization) -> Self {
        match org {
            MetadataCacheOrganization::Separate { counter, mac, tree } => {
                MetaCaches::Separate { counter: build(counter), mac: build(mac), tree: build(tree) }
            }
            MetadataCacheOrganization::Unified { unified } => MetaCaches::Unified(build(unified)),
        }
    }

    /// The cache that holds `addr`.
    pub fn for_addr(&mut self, layout: &Layout, addr: u64) -> &mut LineCache {
        match self {
            MetaCaches::Unified(c) => c,
            MetaCaches::Separate { counter, mac, tree } => pick(layout, addr, counter, mac, tree),
        }
    }

    /// The cached copy of a line, if any, leaving recency and statistics
    /// as they are.
    pub fn peek(&self, layout: &Layout, addr: u64) -> Option<[u8; 64]> {
        let cache = match self {
            MetaCaches::Unified(c) => c,
            MetaCaches::Separate { counter, mac, tree } => pick(layout, addr, counter, mac, tree),
        };
        cache.peek(addr).map(|(b, _)| b)
    }

    pub fn all(&self) -> Vec<(&'static str, &LineCache)> {
        match self {
            MetaCaches::Separate { counter, mac, tree } => vec![("counter", counter), ("mac", mac), ("tree", tree)],
            MetaCaches::Unified(c) => vec![("unified", c)],
        }
    }

    /// The address of every line on chip, in any of the caches.
    pub fn resident_addrs(&self) -> Vec<u64> {
        self.all().into_iter().flat_map(|(_, c)| c.entries().map(|(a, _)| a).collect::<Vec<_>>()).collect()
    }

    pub fn all_mut(&mut self) -> Vec<&mut LineCache> {
        match self {
            MetaCaches::Separate { counter, mac, tree } => vec![counter, mac, tree],
            MetaCaches::Unified(c) => vec![c],
        }
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
