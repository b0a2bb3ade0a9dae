//! STAR's bitmap lines and multi-layer index (STAR III-C, III-D, Fig. 7).
//!
//! ```text
//!  metadata line m (counter blocks, then tree levels)  --> bit m of layer 1
//!  layer-1 line j non-zero                              --> bit j of layer 2
//!  ...                                                  --> top layer: one line,
//!                                                           an on-chip NV register
//!  layers below the top: N lines in the ADR domain (LRU; N/8 for the upper
//!  layers, the rest for layer 1: 2 + 14 of 16 as STAR IV-B), the others in
//!  the recovery area (RA) in NVM: a miss writes the LRU line back and reads
//!  the wanted one.
//! ```
//! A bit changes only when a metadata line's dirty state does (clean to
//! dirty: set; written back: cleared), so a line is touched at most twice
//! per stay in the metadata cache. A layer-`k` bit is set exactly while
//! its layer-`k-1` line is non-zero, so recovery reads only non-zero lines.

use crate::engine::layout::Layout;
use crate::engine::nvm::Nvm;
use serde::{Deserialize, Serialize};

/// Bits in one 64 B bitmap line.
pub const BITS_PER_LINE: u64 = 512;

/// One bitmap line in the ADR domain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdrLine {
    /// 0 = layer 1 (bits for metadata lines).
    pub layer: u8,
    pub index: u64,
    pub bits: [u64; 8],
}

/// What the bitmap lines did (STAR Fig. 10, Table II).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BitmapStats {
    /// Accesses to a line below the top (a bit set or cleared there).
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    /// Lines read from the recovery area on a miss.
    pub reads: u64,
    /// Lines written to the recovery area (LRU evictions; the battery's
    /// drain is counted by the drain).
    pub writes: u64,
    /// Updates of the cache-tree branch (a dirty line changed, or became
    /// clean): each rehashes the line's MAC, its set-MAC and one path of
    /// the cache-tree (STAR III-E).
    pub cache_tree_updates: u64,
}

impl BitmapStats {
    /// What happened between `before` and `self`.
    pub fn since(&self, b: &BitmapStats) -> BitmapStats {
        BitmapStats {
            accesses: self.accesses - b.accesses,
            hits: self.hits - b.hits,
            misses: self.misses - b.misses,
            reads: self.reads - b.reads,
            writes: self.writes - b.writes,
            cache_tree_updates: self.cache_tree_updates - b.cache_tree_updates,
        }
    }

    /// Share of accesses that found their line in ADR (STAR Table II).
    pub fn hit_ratio(&self) -> f64 {
        self.hits as f64 / self.accesses.max(1) as f64
    }
}

/// The bitmap lines of one machine: ADR lines, the top register, counts.
/// The recovery area itself is NVM (`Layout::recovery`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BitmapLines {
    /// Lines per layer, layer 1 first; the last layer has one line, the
    /// on-chip register.
    pub layer_lines: Vec<u64>,
    pub l1_slots: u32,
    pub upper_slots: u32,
    /// ADR lines, most recently used first.
    pub adr: Vec<AdrLine>,
    pub top: [u64; 8],
    pub stats: BitmapStats,
}

fn is_zero(bits: &[u64; 8]) -> bool {
    bits.iter().all(|&w| w == 0)
}

fn encode(bits: &[u64; 8]) -> [u8; 64] {
    let mut b = [0u8; 64];
    for (i, w) in bits.iter().enumerate() {
        b[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    b
}

fn decode(b: &[u8; 64]) -> [u64; 8] {
    std::array::from_fn(|i| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes")))
}

impl BitmapLines {
    /// Bitmap lines over `metadata_lines` lines with `slots` lines in ADR.
    pub fn new(metadata_lines: u64, slots: u32) -> Self {
        let mut layer_lines = vec![metadata_lines.div_ceil(BITS_PER_LINE).max(1)];
        while *layer_lines.last().expect("one layer") > 1 {
            let n = layer_lines.last().expect("one layer").div_ceil(BITS_PER_LINE);
            layer_lines.push(n);
        }
        let upper_slots = if layer_lines.len() > 2 { (slots / 8).max(1) } else { 0 };
        BitmapLines {
            layer_lines,
            l1_slots: slots.saturating_sub(upper_slots).max(1),
            upper_slots,
            adr: Vec::new(),
            top: [0; 8],
            stats: BitmapStats::default(),
        }
    }

    /// Recovery-area lines the layers below the top need.
    pub fn area_lines(metadata_lines: u64) -> u64 {
        let b = BitmapLines::new(metadata_lines, 2);
        b.layer_lines[..b.layer_lines.len() - 1].iter().sum()
    }

    fn top_layer(&self) -> u8 {
        (self.layer_lines.len() - 1) as u8
    }

    fn ra_addr(&self, layout: &Layout, layer: u8, index: u64) -> u64 {
        layout.recovery_addr(self.layer_lines[..layer as usize].iter().sum::<u64>() + index)
    }

    /// A bit's value, as bookkeeping (nothing counted or moved).
    pub fn bit(&self, nvm: &Nvm, layout: &Layout, layer: u8, pos: u64) -> bool {
        let (index, bit) = (pos / BITS_PER_LINE, pos % BITS_PER_LINE);
        let word = |bits: &[u64; 8]| bits[(bit / 64) as usize] >> (bit % 64) & 1 == 1;
        if layer == self.top_layer() {
            return word(&self.top);
        }
        if let Some(l) = self.adr.iter().find(|l| l.layer == layer && l.index == index) {
            return word(&l.bits);
        }
        nvm.peek(self.ra_addr(layout, layer, index)).is_some_and(|b| word(&decode(&b)))
    }

    /// Whether metadata line `m` is marked stale.
    pub fn is_marked(&self, nvm: &Nvm, layout: &Layout, m: u64) -> bool {
        self.bit(nvm, layout, 0, m)
    }

    /// Mark metadata line `m` stale (`true`) or not.
    pub fn mark(&mut self, nvm: &mut Nvm, layout: &Layout, m: u64, value: bool) {
        self.set(nvm, layout, 0, m, value);
    }

    fn set(&mut self, nvm: &mut Nvm, layout: &Layout, layer: u8, pos: u64, value: bool) {
        let (index, bit) = (pos / BITS_PER_LINE, pos % BITS_PER_LINE);
        let apply = |bits: &mut [u64; 8]| {
            let (w, b) = ((bit / 64) as usize, bit % 64);
            bits[w] = (bits[w] & !(1 << b)) | (value as u64) << b;
        };
        if layer == self.top_layer() {
            apply(&mut self.top);
            return;
        }
        let at = self.access(nvm, layout, layer, index);
        let line = &mut self.adr[at];
        let was_zero = is_zero(&line.bits);
        apply(&mut line.bits);
        let now_zero = is_zero(&line.bits);
        if was_zero != now_zero {
            self.set(nvm, layout, layer + 1, index, !now_zero);
        }
    }

    /// Bring a line to the front of the ADR lines (reading it from the RA
    /// on a miss, after writing back the LRU line of its pool); its slot.
    fn access(&mut self, nvm: &mut Nvm, layout: &Layout, layer: u8, index: u64) -> usize {
        self.stats.accesses += 1;
        if let Some(i) = self.adr.iter().position(|l| l.layer == layer && l.index == index) {
            self.stats.hits += 1;
            let l = self.adr.remove(i);
            self.adr.insert(0, l);
            return 0;
        }
        self.stats.misses += 1;
        let upper = layer > 0;
        let slots = if upper { self.upper_slots } else { self.l1_slots } as usize;
        let in_pool = self.adr.iter().filter(|l| (l.layer > 0) == upper).count();
        if in_pool >= slots {
            let lru = self.adr.iter().rposition(|l| (l.layer > 0) == upper).expect("a full pool has a line");
            let l = self.adr.remove(lru);
            nvm.write(layout, self.ra_addr(layout, l.layer, l.index), encode(&l.bits));
            self.stats.writes += 1;
        }
        let bits = nvm.read(layout, self.ra_addr(layout, layer, index)).map(|b| decode(&b)).unwrap_or([0; 8]);
        self.stats.reads += 1;
        self.adr.insert(0, AdrLine { layer, index, bits });
        0
    }

    /// The battery writes every ADR line to the recovery area (STAR III-C);
    /// returns the lines written.
    pub fn drain(&mut self, nvm: &mut Nvm, layout: &Layout) -> u64 {
        let lines = std::mem::take(&mut self.adr);
        for l in &lines {
            nvm.write(layout, self.ra_addr(layout, l.layer, l.index), encode(&l.bits));
        }
        lines.len() as u64
    }

    /// Power lost with the ADR lines outside the battery domain (the
    /// control `star-no-bitmap-persist`).
    pub fn lose_adr(&mut self) {
        self.adr.clear();
    }

    /// Recovery (STAR III-F): walk the index from the top register down,
    /// reading only the non-zero lines from the recovery area (counted),
    /// and return the marked metadata lines in order. Every line read is
    /// then cleared in the RA (counted writes) with the register: after
    /// recovery nothing is stale.
    pub fn take_marked(&mut self, nvm: &mut Nvm, layout: &Layout) -> Vec<u64> {
        let mut positions: Vec<u64> = set_bits(&self.top).collect();
        self.top = [0; 8];
        for layer in (0..self.top_layer()).rev() {
            let mut below = Vec::new();
            for index in positions {
                let addr = self.ra_addr(layout, layer, index);
                let bits = nvm.read(layout, addr).map(|b| decode(&b)).unwrap_or([0; 8]);
                if !is_zero(&bits) {
                    nvm.write(layout, addr, [0; 64]);
                }
                below.extend(set_bits(&bits).map(|b| index * BITS_PER_LINE + b));
            }
            positions = below;
        }
        positions
    }
}

fn set_bits(bits: &[u64; 8]) -> impl Iterator<Item = u64> + '_ {
    bits.iter().enumerate().flat_map(|(w, &word)| (0..64).filter(move |b| word >> b & 1 == 1).map(move |b| w as u64 * 64 + b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::counter::CounterFormat;

    /// 16 GB under SIT counter blocks: three layers, the top on chip, and
    /// a 4-5 MB recovery area (STAR III-D: "the 3-layer index is sufficient",
    /// Table I: "4MB, in NVM").
    #[test]
    fn sixteen_gib_needs_three_layers() {
        let l = Layout::new(16 << 30, CounterFormat::Sit, 8, None);
        let b = BitmapLines::new(l.metadata_lines(), 16);
        assert_eq!(b.layer_lines.len(), 3);
        assert_eq!((b.l1_slots, b.upper_slots), (14, 2));
        let ra_mib = BitmapLines::area_lines(l.metadata_lines()) as f64 * 64.0 / (1 << 20) as f64;
        assert!((4.0..5.0).contains(&ra_mib), "{ra_mib} MiB");
    }

    #[test]
    fn marks_survive_eviction_and_drain_and_recovery_reads_only_them() {
        let layout = Layout::new(128 << 20, CounterFormat::Sit, 8, None);
        let m = layout.metadata_lines();
        let layout = layout.with_recovery_area(BitmapLines::area_lines(m));
        let mut nvm = Nvm::new(8);
        let mut b = BitmapLines::new(m, 2);
        assert_eq!(b.layer_lines.len(), 3, "{m} lines");
        let marks = [3u64, 600, 5000, 70_000, m - 1];
        for &x in &marks {
            b.mark(&mut nvm, &layout, x, true);
        }
        b.mark(&mut nvm, &layout, 600, false);
        assert!(b.stats.misses > 0 && b.stats.writes > 0, "two slots cannot hold five lines: {:?}", b.stats);
        for &x in &marks {
            assert_eq!(b.is_marked(&nvm, &layout, x), x != 600, "{x}");
        }
        b.drain(&mut nvm, &layout);
        nvm.drain_wpq(&layout);
        let before = nvm.reads.recovery;
        let got = b.take_marked(&mut nvm, &layout);
        assert_eq!(got, vec![3, 5000, 70_000, m - 1]);
        // Both layer-2 lines are non-zero; four layer-1 lines are (line 1
        // held 600 only, and was cleared).
        assert_eq!(nvm.reads.recovery - before, 2 + 4);
        nvm.drain_wpq(&layout);
        assert!(b.take_marked(&mut nvm, &layout).is_empty(), "recovery leaves nothing marked");
    }
}
