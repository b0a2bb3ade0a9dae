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
//!
//! Optional keys, for controlled locality experiments; a stream without
//! them is exactly the stream above, event for event:
//! - `stride`: bytes (a multiple of 64) between consecutive new blocks,
//!   wrapping in the footprint, instead of the shuffled order (4096: one
//!   block per page, the worst PPTI-per-page case; 64: sequential).
//! - `reuse_distance`: a visit returns, with probability `reuse_fraction`
//!   (default 0.5), to the block visited exactly this many visits earlier,
//!   instead of a new block; the reuse distance of those accesses is then
//!   `reuse_distance` visits.
//! - `write_fraction`: the share of the stream's accesses that are stores;
//!   each store brings (1 - w) / w loads that read the stream's next blocks
//!   (visits of their own, so stride and reuse apply to them too), taken
//!   out of the instructions between stores so that `ppti` still holds.
//! - `insns`: a recorded trace whose instruction stream (`TRACE.insn`) the
//!   `ooo` core schedules beside the profile's events: the profile's
//!   stores and loads, on a real program's register dependences,
//!   functional units and branches. Without it the profile has
//!   no instructions to schedule and runs only on the `interval` core.
//!
//! Stores per block (`nwpe`) and stores per 1000 instructions (`ppti`) set
//! the two quantities SecPB's overheads follow (VI-B); everything here is a
//! synthetic profile, and [`super::EventStream::notes`] says so in every
//! report that runs one.

use super::{Event, Generator};
use crate::util::rng::SplitMix64;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SyntheticParams {
    pub ppti: f64,
    pub nwpe: f64,
    pub footprint_mib: u64,
    pub loads_pti: f64,
    pub miss_pti: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stride: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reuse_distance: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reuse_fraction: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_fraction: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub insns: Option<String>,
}

impl Default for SyntheticParams {
    fn default() -> Self {
        SyntheticParams {
            ppti: 10.0,
            nwpe: 2.0,
            footprint_mib: 64,
            loads_pti: 0.0,
            miss_pti: 0.0,
            stride: None,
            reuse_distance: None,
            reuse_fraction: None,
            write_fraction: None,
            insns: None,
        }
    }
}

/// The keys [`SyntheticParams::parse`] accepts.
pub const SYNTHETIC_KEYS: &str =
    "ppti, nwpe, footprint_mib, loads_pti, miss_pti, stride, reuse_distance, reuse_fraction, write_fraction, insns";

impl SyntheticParams {
    pub fn name(&self) -> String {
        let mut s = format!(
            "synthetic:ppti={},nwpe={},footprint_mib={},loads_pti={},miss_pti={}",
            self.ppti, self.nwpe, self.footprint_mib, self.loads_pti, self.miss_pti
        );
        if let Some(x) = self.stride {
            s += &format!(",stride={x}");
        }
        if let Some(x) = self.reuse_distance {
            s += &format!(",reuse_distance={x}");
        }
        if let Some(x) = self.reuse_fraction {
            s += &format!(",reuse_fraction={x}");
        }
        if let Some(x) = self.write_fraction {
            s += &format!(",write_fraction={x}");
        }
        if let Some(x) = &self.insns {
            s += &format!(",insns={x}");
        }
        s
    }

    /// `synthetic:ppti=47.4,nwpe=2.1` (any subset of the keys).
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut p = SyntheticParams::default();
        let body = s.strip_prefix("synthetic").unwrap_or(s).trim_start_matches(':');
        for kv in body.split(',').filter(|x| !x.is_empty()) {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("synthetic workload: `{kv}` is not key=value"))?;
            if k == "insns" {
                if v.is_empty() {
                    return Err("synthetic workload: `insns` wants the path of a recorded trace".into());
                }
                p.insns = Some(v.to_string());
                continue;
            }
            let num: f64 = v.parse().map_err(|_| format!("synthetic workload: `{k}` wants a number, got `{v}`"))?;
            let whole = |what: &str| -> Result<u64, String> {
                if num.fract() == 0.0 && (1.0..1e15).contains(&num) {
                    Ok(num as u64)
                } else {
                    Err(format!("synthetic workload: `{what}` wants a whole number >= 1, got `{v}`"))
                }
            };
            match k {
                "ppti" => p.ppti = num,
                "nwpe" => p.nwpe = num,
                "footprint_mib" => p.footprint_mib = num as u64,
                "loads_pti" => p.loads_pti = num,
                "miss_pti" => p.miss_pti = num,
                "stride" => p.stride = Some(whole(k)?),
                "reuse_distance" => p.reuse_distance = Some(whole(k)?),
                "reuse_fraction" => p.reuse_fraction = Some(num),
                "write_fraction" => p.write_fraction = Some(num),
                _ => return Err(format!("synthetic workload: unknown key `{k}` ({SYNTHETIC_KEYS})")),
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
        if let Some(st) = p.stride {
            if st % 64 != 0 || st > p.footprint_mib << 20 {
                return Err(format!("synthetic workload: stride must be a multiple of 64 no larger than the footprint, got {st}"));
            }
        }
        if let Some(r) = p.reuse_distance {
            if r > 1 << 20 {
                return Err(format!("synthetic workload: reuse_distance must be in 1..=1048576, got {r}"));
            }
        }
        match (p.reuse_distance, p.reuse_fraction) {
            (None, Some(_)) => return Err("synthetic workload: reuse_fraction needs reuse_distance".into()),
            (_, Some(q)) if !(0.0..=1.0).contains(&q) => {
                return Err(format!("synthetic workload: reuse_fraction must be in [0, 1], got {q}"))
            }
            _ => {}
        }
        if let Some(w) = p.write_fraction {
            if !(w > 0.0 && w <= 1.0) {
                return Err(format!("synthetic workload: write_fraction must be in (0, 1], got {w}"));
            }
            if p.ppti / w + p.loads_pti + p.miss_pti > 1000.0 {
                return Err(
                    "synthetic workload: ppti / write_fraction + loads_pti + miss_pti must be <= 1000 (accesses per 1000 instructions)"
                        .into(),
                );
            }
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
    /// The optional keys' state; untouched when they are absent.
    x: Option<Extra>,
}

struct Extra {
    r: SplitMix64,
    stride_blocks: Option<u64>,
    reuse: Option<(u64, f64)>,
    /// Blocks of the last `reuse_distance` visits, oldest at `pos`.
    history: Vec<u64>,
    pos: usize,
    /// Loads per store, and the fraction carried over.
    reads_per_store: f64,
    read_acc: f64,
    fresh: u64,
}

impl Extra {
    /// The block of the next visit (reuse, else the next new block).
    fn visit(&mut self, blocks: u64, permuted: impl FnOnce(u64) -> u64) -> u64 {
        let mut chosen = None;
        if let Some((d, q)) = self.reuse {
            if self.history.len() as u64 == d && ((self.r.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < q {
                chosen = Some(self.history[self.pos]);
            }
        }
        let b = chosen.unwrap_or_else(|| {
            let v = self.fresh;
            self.fresh += 1;
            match self.stride_blocks {
                Some(s) => v.wrapping_mul(s) % blocks,
                None => permuted(v),
            }
        });
        if let Some((d, _)) = self.reuse {
            if (self.history.len() as u64) < d {
                self.history.push(b);
            } else {
                self.history[self.pos] = b;
                self.pos = (self.pos + 1) % d as usize;
            }
        }
        b
    }
}

impl Synthetic {
    pub fn new(seed: u64, p: SyntheticParams) -> Self {
        let blocks = (p.footprint_mib << 20) / 64;
        let mut r = SplitMix64::new(seed);
        // An odd multiplier is a permutation modulo a power of two; blocks
        // is a power of two for whole MiB footprints.
        let stride = ((r.next_u64() | 1) % blocks.next_power_of_two().max(2)) | 1;
        let x = (p.stride.is_some() || p.reuse_distance.is_some() || p.write_fraction.is_some()).then(|| Extra {
            r: SplitMix64::new(seed ^ 0x5EED_0002),
            stride_blocks: p.stride.map(|s| s / 64),
            reuse: p.reuse_distance.map(|d| (d, p.reuse_fraction.unwrap_or(0.5))),
            history: Vec::new(),
            pos: 0,
            reads_per_store: p.write_fraction.map_or(0.0, |w| (1.0 - w) / w),
            read_acc: 0.0,
            fresh: 0,
        });
        Synthetic { r, p, blocks, stride, visit: 0, gap_acc: 0.0, nwpe_acc: 0.0, load_acc: 0.0, miss_acc: 0.0, x }
    }
}

impl Generator for Synthetic {
    /// One operation: the stores to one block.
    fn next_op(&mut self, out: &mut Vec<Event>) {
        let (blocks, stride) = (self.blocks, self.stride);
        let b = match &mut self.x {
            None => {
                let b = (self.visit.wrapping_mul(self.stride)) % self.blocks;
                self.visit += 1;
                b
            }
            Some(x) => x.visit(blocks, |v| v.wrapping_mul(stride) % blocks),
        };
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
            if let Some(x) = &mut self.x {
                // Reads of the stream's next blocks (write_fraction).
                x.read_acc += x.reads_per_store;
                let reads = x.read_acc.floor() as u32;
                x.read_acc -= reads as f64;
                gap = gap.saturating_sub(reads);
                for _ in 0..reads {
                    let rb = x.visit(blocks, |v| v.wrapping_mul(stride) % blocks);
                    out.push(Event::load(rb * 64, 8).after(gap / (reads + 1)));
                }
                gap -= reads * (gap / (reads + 1));
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Op;

    fn events(spec: &str, ops: usize) -> Vec<Event> {
        let mut g = Synthetic::new(7, SyntheticParams::parse(spec).unwrap());
        let mut v = Vec::new();
        for _ in 0..ops {
            g.next_op(&mut v);
        }
        v
    }

    #[test]
    fn existing_profiles_are_unchanged_event_for_event() {
        // Fingerprints of 5000 operations, taken from the generator before
        // the optional keys existed (the SecPB reproduction depends on them).
        for (spec, n, fp) in [
            ("synthetic:ppti=47.4,nwpe=2.1,footprint_mib=1", 10500, 0x3388439affad8cb8u64),
            ("synthetic:ppti=5,nwpe=4,miss_pti=5,footprint_mib=256", 40000, 0x5813dcfb95a2f48),
            ("synthetic:ppti=20,nwpe=3,loads_pti=30", 37500, 0xae109c2105dc21ce),
            ("synthetic:ppti=38.8,nwpe=17.6,footprint_mib=4", 88000, 0xc1d1e9d8946229c1),
        ] {
            let v = events(spec, 5000);
            let mut h: u64 = 0xCBF29CE484222325;
            for e in &v {
                for x in [e.op as u64, e.addr, e.size as u64, e.value, e.gap as u64, e.log as u64] {
                    h = (h ^ x).wrapping_mul(0x100000001B3);
                }
            }
            assert_eq!((v.len(), h), (n, fp), "{spec}");
            assert_eq!(
                SyntheticParams::parse(spec).unwrap().name(),
                SyntheticParams::parse(&SyntheticParams::parse(spec).unwrap().name()).unwrap().name()
            );
        }
        assert_eq!(
            SyntheticParams::parse("synthetic:ppti=20").unwrap().name(),
            "synthetic:ppti=20,nwpe=2,footprint_mib=64,loads_pti=0,miss_pti=0"
        );
    }

    #[test]
    fn stride_reuse_and_write_fraction_shape_the_stream() {
        let stores = |v: &[Event]| v.iter().filter(|e| e.op == Op::Store).map(|e| e.block()).collect::<Vec<_>>();
        // Stride 4096: one new block per page, in order.
        let v = events("synthetic:ppti=10,nwpe=1,footprint_mib=1,stride=4096", 300);
        let b = stores(&v);
        for (i, blk) in b.iter().enumerate() {
            assert_eq!(*blk, (i as u64 * 64) % (1 << 14), "visit {i}");
        }
        // Reuse distance 5, always taken once the history is full: the
        // stream cycles through five blocks.
        let v = events("synthetic:ppti=10,nwpe=1,stride=64,reuse_distance=5,reuse_fraction=1", 100);
        let b = stores(&v);
        assert_eq!(&b[..5], &[0, 1, 2, 3, 4]);
        for i in 5..b.len() {
            assert_eq!(b[i], b[i - 5]);
        }
        // Half the visits reuse: about half the blocks are revisits at
        // distance 16.
        let v = events("synthetic:ppti=10,nwpe=1,reuse_distance=16", 20_000);
        let b = stores(&v);
        let reused = (16..b.len()).filter(|&i| b[i] == b[i - 16]).count() as f64 / b.len() as f64;
        assert!((0.45..0.55).contains(&reused), "{reused}");
        // Write fraction 0.25: three loads per store, ppti still holds.
        let v = events("synthetic:ppti=20,nwpe=2,write_fraction=0.25", 10_000);
        let (s, l) = (v.iter().filter(|e| e.op == Op::Store).count(), v.iter().filter(|e| e.op == Op::Load).count());
        assert_eq!(l, 3 * s);
        let instr: u64 = v.iter().map(|e| e.instructions()).sum();
        let ppti = s as f64 * 1000.0 / instr as f64;
        assert!((ppti - 20.0).abs() < 0.2, "{ppti}");
        let p = SyntheticParams::parse("synthetic:ppti=20,write_fraction=0.25,stride=128,reuse_distance=3,reuse_fraction=0.2").unwrap();
        assert_eq!(SyntheticParams::parse(&p.name()).unwrap(), p);
        for bad in
            ["stride=100", "reuse_fraction=0.5", "write_fraction=0", "reuse_distance=0.5", "ppti=100,write_fraction=0.05", "strid=64"]
        {
            let e = SyntheticParams::parse(&format!("synthetic:{bad}")).unwrap_err();
            assert!(e.contains("synthetic workload"), "{bad}: {e}");
        }
        assert!(SyntheticParams::parse("synthetic:strid=64").unwrap_err().contains("write_fraction"));
    }
}
