//! Physical layout of the secure NVM (SecPB II-B, STAR II-C).
//!
//! ```text
//!  block address (64 B units)
//!  0 ............ D-1 | D ..... D+C-1 | ... MAC lines ... | tree level 1 | ... | top level
//!  data blocks        | counter blocks| 8 x 64-bit MAC     | 8-ary nodes  |     | root node(s)
//! ```
//!
//! Level numbering: level 0 is the counter blocks (the leaves of both trees);
//! level `l >= 1` has `ceil(n(l-1) / arity)` nodes. `levels` counts level 0
//! and every node level up to the top, so an 8 GB memory with split counters
//! (2^21 counter blocks, 8-ary) has levels 0..=7: the 8 levels of SecPB
//! Table I. The on-chip root register holds, for each top-level node, its
//! hash (BMT) or its counter (SIT). A `levels` override below the derived
//! height leaves several top-level nodes, each with its own root register:
//! a Bonsai Merkle forest (SecPB VI-E).

pub use crate::engine::counter::CounterFormat;
use serde::Serialize;

pub const BLOCK_BYTES: u64 = 64;
pub const MACS_PER_LINE: u64 = 8;

/// What a physical block address holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "region", rename_all = "kebab-case")]
pub enum Region {
    Data {
        block: u64,
    },
    Counter {
        index: u64,
    },
    MacLine {
        index: u64,
    },
    Tree {
        level: u32,
        index: u64,
    },
    /// A line of a scheme's own recovery area, after the tree (STAR's
    /// bitmap lines, III-C; Anubis's shadow table).
    Recovery {
        index: u64,
    },
}

/// What kind of block an address holds, without its position: the key of
/// every per-kind count (NVM reads and writes, the stats JSON).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RegionKind {
    Data,
    Counter,
    Mac,
    Tree,
    Recovery,
}

impl RegionKind {
    pub const ALL: [RegionKind; 5] = [RegionKind::Data, RegionKind::Counter, RegionKind::Mac, RegionKind::Tree, RegionKind::Recovery];
    /// The kinds a WPQ merges by default (`persistence.wpq_coalesce`): a
    /// scheme's recovery area is left out, so its lines are written as
    /// often as the scheme writes them.
    pub const COALESCED_BY_DEFAULT: [RegionKind; 4] = [RegionKind::Data, RegionKind::Counter, RegionKind::Mac, RegionKind::Tree];

    /// The name reports and the stats JSON use.
    pub fn name(self) -> &'static str {
        match self {
            RegionKind::Data => "data",
            RegionKind::Counter => "counter",
            RegionKind::Mac => "mac",
            RegionKind::Tree => "tree",
            RegionKind::Recovery => "recovery",
        }
    }
}

impl Region {
    pub fn kind(&self) -> RegionKind {
        match self {
            Region::Data { .. } => RegionKind::Data,
            Region::Counter { .. } => RegionKind::Counter,
            Region::MacLine { .. } => RegionKind::Mac,
            Region::Tree { .. } => RegionKind::Tree,
            Region::Recovery { .. } => RegionKind::Recovery,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Layout {
    pub capacity_bytes: u64,
    pub data_blocks: u64,
    pub counter_format: CounterFormat,
    pub arity: u64,
    /// Node count per level; `level_nodes[0]` is the counter-block count.
    pub level_nodes: Vec<u64>,
    /// First block address of each level; `level_base[0]` is the counter region.
    pub level_base: Vec<u64>,
    pub mac_base: u64,
    pub mac_lines: u64,
    /// A scheme's recovery area, `(first block, lines)`, after the tree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<(u64, u64)>,
    pub end: u64,
    /// The persistent regions as data-block ranges `[start, end)`, sorted
    /// (Triad-NVM III-B); empty: all of memory is persistent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub persistent: Vec<(u64, u64)>,
}

/// Which kind of data a metadata line covers (Triad-NVM III-B2, Fig. 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cover {
    /// Only data in persistent regions.
    Persistent,
    /// Only data outside them.
    Volatile,
    /// Both: only on-chip levels may be mixed (each root register covers
    /// one kind).
    Mixed,
}

impl Layout {
    /// `levels = None` derives the height that ends in one top node.
    pub fn new(capacity_bytes: u64, counter_format: CounterFormat, arity: u64, levels: Option<u32>) -> Layout {
        let data_blocks = capacity_bytes / BLOCK_BYTES;
        let per = counter_format.blocks_per_counter_block();
        let mut level_nodes = vec![data_blocks.div_ceil(per)];
        match levels {
            None => {
                while *level_nodes.last().unwrap() > 1 {
                    let n = level_nodes.last().unwrap().div_ceil(arity);
                    level_nodes.push(n);
                }
            }
            Some(h) => {
                while (level_nodes.len() as u32) < h.max(1) {
                    let n = level_nodes.last().unwrap().div_ceil(arity);
                    level_nodes.push(n);
                }
            }
        }
        let counter_base = data_blocks;
        let counter_end = counter_base + level_nodes[0];
        let mac_lines = data_blocks.div_ceil(MACS_PER_LINE);
        let mac_base = counter_end;
        let mut level_base = vec![counter_base];
        let mut next = mac_base + mac_lines;
        for n in &level_nodes[1..] {
            level_base.push(next);
            next += n;
        }
        Layout {
            capacity_bytes,
            data_blocks,
            counter_format,
            arity,
            level_nodes,
            level_base,
            mac_base,
            mac_lines,
            recovery: None,
            end: next,
            persistent: Vec::new(),
        }
    }

    /// The same layout with persistent regions given as (start, size) in
    /// bytes (`memory.persistent_regions`, already checked to be
    /// page-aligned and inside memory); none: all of memory is persistent.
    pub fn with_persistent_regions(mut self, regions: impl IntoIterator<Item = (u64, u64)>) -> Layout {
        let mut r: Vec<(u64, u64)> = regions.into_iter().map(|(start, size)| (start / BLOCK_BYTES, (start + size) / BLOCK_BYTES)).collect();
        r.sort_unstable();
        self.persistent = r;
        self
    }

    /// Whether memory is split into persistent and non-persistent regions.
    pub fn has_regions(&self) -> bool {
        !self.persistent.is_empty()
    }

    /// Whether data block `block` lies in a persistent region (every block
    /// does when no region is declared).
    pub fn is_persistent(&self, block: u64) -> bool {
        self.persistent.is_empty() || self.persistent.iter().any(|&(s, e)| block >= s && block < e)
    }

    /// What the data blocks `[lo, hi)` are.
    fn cover_of_blocks(&self, lo: u64, hi: u64) -> Cover {
        if self.persistent.is_empty() {
            return Cover::Persistent;
        }
        let inside: u64 = self.persistent.iter().map(|&(s, e)| e.min(hi).saturating_sub(s.max(lo))).sum();
        match inside {
            0 => Cover::Volatile,
            n if n == hi - lo => Cover::Persistent,
            _ => Cover::Mixed,
        }
    }

    /// The data blocks under node `index` of `level` (0: a counter block).
    pub fn blocks_under(&self, level: u32, index: u64) -> (u64, u64) {
        let span = self.arity.pow(level) * self.blocks_per_counter_block();
        ((index * span).min(self.data_blocks), ((index + 1) * span).min(self.data_blocks))
    }

    /// What the node `index` of `level` (0: a counter block) covers.
    pub fn cover(&self, level: u32, index: u64) -> Cover {
        let (lo, hi) = self.blocks_under(level, index);
        self.cover_of_blocks(lo, hi)
    }

    /// What the metadata line at `addr` (counter block, tree node or MAC
    /// line) covers.
    pub fn cover_of_line(&self, addr: u64) -> Cover {
        match self.region(addr) {
            Some(Region::MacLine { index }) => {
                self.cover_of_blocks(index * MACS_PER_LINE, ((index + 1) * MACS_PER_LINE).min(self.data_blocks))
            }
            Some(Region::Counter { index }) => self.cover(0, index),
            Some(Region::Tree { level, index }) => self.cover(level, index),
            _ => Cover::Persistent,
        }
    }

    /// The nodes of `level` whose cover is `kind`, as index ranges
    /// `[start, end)` in order: the work of a recovery over one kind of
    /// region, level by level.
    pub fn nodes_covering(&self, level: u32, kind: Cover) -> Vec<(u64, u64)> {
        let n = self.level_nodes[level as usize];
        let mut out: Vec<(u64, u64)> = Vec::new();
        // Boundaries of the regions, as node indexes at this level: the
        // cover changes only at the nodes they fall in.
        let span = self.arity.pow(level) * self.blocks_per_counter_block();
        let mut cuts: Vec<u64> = vec![0, n];
        for &(s, e) in &self.persistent {
            for b in [s, e] {
                cuts.push((b / span).min(n));
                cuts.push((b.div_ceil(span)).min(n));
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        for w in cuts.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            if lo < hi && self.cover(level, lo) == kind && self.cover(level, hi - 1) == kind {
                match out.last_mut() {
                    Some(last) if last.1 == lo => last.1 = hi,
                    _ => out.push((lo, hi)),
                }
            }
        }
        out
    }

    /// The same layout with a recovery area of `lines` blocks after the
    /// tree (none when 0).
    pub fn with_recovery_area(mut self, lines: u64) -> Layout {
        if lines > 0 {
            self.recovery = Some((self.end, lines));
            self.end += lines;
        }
        self
    }

    /// Block address of line `index` of the recovery area.
    pub fn recovery_addr(&self, index: u64) -> u64 {
        let (base, lines) = self.recovery.expect("the scheme asked for a recovery area");
        debug_assert!(index < lines);
        base + index
    }

    /// Metadata lines (counter blocks and tree nodes, not MAC lines), in
    /// the order STAR's bitmap lines number them (III-C: bit i of the
    /// first line is the i-th metadata line).
    pub fn metadata_lines(&self) -> u64 {
        self.level_nodes.iter().sum()
    }

    /// The position of a metadata line in [`Self::metadata_lines`]'s order.
    pub fn metadata_line_of(&self, addr: u64) -> Option<u64> {
        let (level, index) = self.meta_pos(addr)?;
        Some(self.level_nodes[..level as usize].iter().sum::<u64>() + index)
    }

    /// The address of metadata line `m` ([`Self::metadata_line_of`]'s inverse).
    pub fn metadata_line_addr(&self, m: u64) -> u64 {
        let mut rest = m;
        for (l, &n) in self.level_nodes.iter().enumerate() {
            if rest < n {
                return self.meta_addr(l as u32, rest);
            }
            rest -= n;
        }
        panic!("metadata line {m} is past the last tree level")
    }

    pub fn levels(&self) -> u32 {
        self.level_nodes.len() as u32
    }
    pub fn top_level(&self) -> u32 {
        self.levels() - 1
    }
    pub fn blocks_per_counter_block(&self) -> u64 {
        self.counter_format.blocks_per_counter_block()
    }

    /// Counter block covering data block `block`, and the slot in it.
    pub fn counter_of(&self, block: u64) -> (u64, usize) {
        let per = self.blocks_per_counter_block();
        (block / per, (block % per) as usize)
    }
    pub fn meta_addr(&self, level: u32, index: u64) -> u64 {
        self.level_base[level as usize] + index
    }
    pub fn mac_line_of(&self, block: u64) -> (u64, usize) {
        (self.mac_base + block / MACS_PER_LINE, (block % MACS_PER_LINE) as usize)
    }
    /// The counter blocks' addresses, `[start, end)`.
    pub fn counter_range(&self) -> (u64, u64) {
        (self.level_base[0], self.level_base[0] + self.level_nodes[0])
    }
    /// The addresses of tree level `level`, `[start, end)` (empty above
    /// the top).
    pub fn level_range(&self, level: u32) -> (u64, u64) {
        let l = level as usize;
        match (self.level_base.get(l), self.level_nodes.get(l)) {
            (Some(&b), Some(&n)) => (b, b + n),
            _ => (self.end, self.end),
        }
    }
    /// The addresses of every tree level above the counter blocks, which
    /// follow one another after the MAC lines, `[start, end)`.
    pub fn tree_range(&self) -> (u64, u64) {
        match self.level_base.get(1) {
            Some(&start) => (start, self.end),
            None => (self.end, self.end),
        }
    }
    /// Parent (level, index, slot) of a metadata node, or None at the top.
    pub fn parent_of(&self, level: u32, index: u64) -> Option<(u32, u64, usize)> {
        if level >= self.top_level() {
            None
        } else {
            Some((level + 1, index / self.arity, (index % self.arity) as usize))
        }
    }

    pub fn region(&self, addr: u64) -> Option<Region> {
        if addr < self.data_blocks {
            return Some(Region::Data { block: addr });
        }
        if addr >= self.mac_base && addr < self.mac_base + self.mac_lines {
            return Some(Region::MacLine { index: addr - self.mac_base });
        }
        for (l, (&base, &n)) in self.level_base.iter().zip(&self.level_nodes).enumerate() {
            if addr >= base && addr < base + n {
                return Some(if l == 0 {
                    Region::Counter { index: addr - base }
                } else {
                    Region::Tree { level: l as u32, index: addr - base }
                });
            }
        }
        match self.recovery {
            Some((base, n)) if addr >= base && addr < base + n => Some(Region::Recovery { index: addr - base }),
            _ => None,
        }
    }

    /// The kind of block at `addr`. Every address the memory controller
    /// reads or writes lies inside the layout; one outside is a simulator
    /// bug, not an input error, so it stops the run with the address.
    pub fn kind_of(&self, addr: u64) -> RegionKind {
        match self.region(addr) {
            Some(r) => r.kind(),
            None => panic!("block address {addr:#x} lies outside the secure NVM layout (which ends at {:#x})", self.end),
        }
    }

    /// (level, index) of a metadata block address (level 0 = counter block).
    pub fn meta_pos(&self, addr: u64) -> Option<(u32, u64)> {
        match self.region(addr)? {
            Region::Counter { index } => Some((0, index)),
            Region::Tree { level, index } => Some((level, index)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_gib_split_counters_give_eight_levels() {
        let l = Layout::new(8 << 30, CounterFormat::Split, 8, None);
        assert_eq!(l.levels(), 8, "SecPB Table I: 8 BMT levels for 8 GB");
        assert_eq!(l.level_nodes[0], 1 << 21);
        assert_eq!(*l.level_nodes.last().unwrap(), 1);
    }

    #[test]
    fn regions_round_trip() {
        let l = Layout::new(64 << 20, CounterFormat::Split, 8, None);
        assert_eq!(l.region(5), Some(Region::Data { block: 5 }));
        let c = l.meta_addr(0, 3);
        assert_eq!(l.region(c), Some(Region::Counter { index: 3 }));
        let t = l.meta_addr(2, 1);
        assert_eq!(l.region(t), Some(Region::Tree { level: 2, index: 1 }));
        let (m, slot) = l.mac_line_of(17);
        assert_eq!((l.region(m), slot), (Some(Region::MacLine { index: 2 }), 1));
        assert_eq!(l.region(l.end), None);
        let l = l.with_recovery_area(3);
        let r = l.recovery_addr(2);
        assert_eq!((l.region(r), l.region(r + 1)), (Some(Region::Recovery { index: 2 }), None));
        let kinds: Vec<RegionKind> = [5, c, m, t, r].iter().map(|&a| l.kind_of(a)).collect();
        assert_eq!(kinds, RegionKind::ALL);
        for a in [c, t, l.meta_addr(l.top_level(), 0)] {
            assert_eq!(l.metadata_line_addr(l.metadata_line_of(a).unwrap()), a);
        }
        assert_eq!(l.metadata_line_of(m), None, "MAC lines are not metadata lines");
    }

    #[test]
    fn level_override_makes_a_forest_or_a_taller_tree() {
        let forest = Layout::new(8 << 30, CounterFormat::Split, 8, Some(2));
        assert_eq!(forest.level_nodes, vec![1 << 21, 1 << 18]);
        let tall = Layout::new(64 << 20, CounterFormat::Split, 8, Some(9));
        assert_eq!(tall.levels(), 9);
        assert_eq!(*tall.level_nodes.last().unwrap(), 1);
    }
}
