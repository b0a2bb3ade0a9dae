//! Synthetic store streams with a chosen store rate and locality, for
//! controlled experiments such as the worked NoGap IPC estimate of SecPB
//! VI-B. They are synthetic, and every report that uses them says so.
//!
//! - `ppti`: stores (SecPB persists) per 1000 instructions.
//! - `nwpe`: stores per block before the stream moves to a new block; a
//!   fractional value alternates so that the mean is `nwpe`. Past eight
//!   stores the block's words are written again.
//! - `footprint_mib`: blocks are visited in a shuffled order over this
//!   footprint, so a revisit is far away and each visit is a new entry.
//! - `loads_pti`: loads per 1000 instructions, to the block just written
//!   (cache hits).
//! - `miss_pti`: loads per 1000 instructions to random blocks of the
//!   footprint (misses once the footprint exceeds the caches).

use super::{Event, Generator};
use crate::rng::SplitMix64;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SyntheticParams {
    pub ppti: f64,
    pub nwpe: f64,
    pub footprint_mib: u64,
    pub loads_pti: f64,
    pub miss_pti: f64,
}

impl Default for SyntheticParams {
    fn default() -> Self {
        SyntheticParams { ppti: 10.0, nwpe: 2.0, footprint_mib: 64, loads_pti: 0.0, miss_pti: 0.0 }
    }
}

impl SyntheticParams {
    pub fn name(&self) -> String {
        format!("synthetic:ppti={},nwpe={},footprint_mib={},loads_pti={},miss_pti={}", self.ppti, self.nwpe, self.footprint_mib, self.loads_pti, self.miss_pti)
    }

    /// `synthetic:ppti=47.4,nwpe=2.1` (any subset of the keys).
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut p = SyntheticParams::default();
        let body = s.strip_prefix("synthetic").unwrap_or(s).trim_start_matches(':');
        for kv in body.split(',').filter(|x| !x.is_empty()) {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("synthetic workload: `{kv}` is not key=value"))?;
            let num: f64 = v.parse().map_err(|_| format!("synthetic workload: `{k}` wants a number, got `{v}`"))?;
            match k {
                "ppti" => p.ppti = num,
                "nwpe" => p.nwpe = num,
                "footprint_mib" => p.footprint_mib = num as u64,
                "loads_pti" => p.loads_pti = num,
                "miss_pti" => p.miss_pti = num,
                _ => return Err(format!("synthetic workload: unknown key `{k}` (ppti, nwpe, footprint_mib, loads_pti, miss_pti)")),
            }
        }
        if !(p.ppti > 0.0 && p.ppti <= 1000.0) {
            return Err(format!("synthetic workload: ppti must be in (0, 1000], got {}", p.ppti));
        }
        if !(1.0..=64.0).contains(&p.nwpe) {
            return Err(format!("synthetic workload: nwpe must be in [1, 64], got {}", p.nwpe));
        }
        if p.footprint_mib == 0 || p.footprint_mib > 1 << 20 {
            return Err(format!("synthetic workload: footprint_mib must be in 1..=1048576, got {}", p.footprint_mib));
        }
        if p.loads_pti < 0.0 || p.miss_pti < 0.0 || p.ppti + p.loads_pti + p.miss_pti > 1000.0 {
            return Err("synthetic workload: loads_pti and miss_pti must be >= 0 and ppti + loads_pti + miss_pti <= 1000".into());
        }
        Ok(p)
    }
}

pub struct Synthetic {
    r: SplitMix64,
    p: SyntheticParams,
    blocks: u64,
    /// Multiplier of an affine permutation of the block indexes.
    stride: u64,
    visit: u64,
    /// Carries the fractional part of the instruction gap and of nwpe.
    gap_acc: f64,
    nwpe_acc: f64,
    load_acc: f64,
    miss_acc: f64,
}

impl Synthetic {
    pub fn new(seed: u64, p: SyntheticParams) -> Self {
        let blocks = (p.footprint_mib << 20) / 64;
        let mut r = SplitMix64::new(seed);
        // An odd multiplier is a permutation modulo a power of two; blocks
        // is a power of two for whole MiB footprints.
        let stride = (r.next_u64() | 1) % blocks.next_power_of_two().max(2) | 1;
        Synthetic { r, p, blocks, stride, visit: 0, gap_acc: 0.0, nwpe_acc: 0.0, load_acc: 0.0, miss_acc: 0.0 }
    }
}

impl Generator for Synthetic {
    /// One operation: the stores to one block.
    fn next_op(&mut self, out: &mut Vec<Event>) {
        let b = (self.visit.wrapping_mul(self.stride)) % self.blocks;
        self.visit += 1;
        self.nwpe_acc += self.p.nwpe;
        let n = self.nwpe_acc.floor() as u64;
        self.nwpe_acc -= n as f64;
        for w in 0..n.clamp(1, 64) {
            // Instructions per store, less the store itself and any loads.
            self.gap_acc += 1000.0 / self.p.ppti - 1.0;
            self.load_acc += self.p.loads_pti / self.p.ppti;
            self.miss_acc += self.p.miss_pti / self.p.ppti;
            let loads = self.load_acc.floor() as u32;
            self.load_acc -= loads as f64;
            let misses = self.miss_acc.floor() as u32;
            self.miss_acc -= misses as f64;
            let mut gap = self.gap_acc.floor() as u32;
            self.gap_acc -= gap as f64;
            gap = gap.saturating_sub(loads + misses);
            let word = (w % 8) * 8;
            for _ in 0..misses {
                let m = self.r.below(self.blocks);
                out.push(Event::load(m * 64, 8).after(gap / (misses + 1)));
            }
            out.push(Event::store(b * 64 + word, 8, self.r.next_u64(), false).after(gap - misses * (gap / (misses + 1))));
            for _ in 0..loads {
                out.push(Event::load(b * 64 + word, 8));
            }
        }
    }
}
