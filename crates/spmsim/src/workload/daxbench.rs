//! `daxbench`: Triad-NVM's synthetic DAXBENCH-S-RW (IV, Table II): a file
//! mapped with DAX into the persistent region, accessed by plain loads and
//! stores that walk it with stride S, in a read:write ratio RW. It is a
//! synthetic stream, not a data structure, and is reported as such.
//!
//! ```text
//!  HEAP_BASE: the file (size_mib)
//!  access j at offset (j * stride) mod size; each operation is R loads and
//!  W stores spread evenly (1:1 = L S, 2:1 = L L S); every store is
//!  persisted with a fence (clwb + sfence on DAX) and an epoch marker
//! ```
//!
//! Names: `daxbench:stride=128,rw=2:1` or the paper's `daxbench-128-2`
//! (stride 128 B, two reads per write), optionally followed by more keys:
//! `daxbench-256-1:1:size_mib=64`. `rw=R` means `R:1`; `rw=0:1` writes only.

use super::params::{check_range, Ratio};
use super::pheap::{check_plan, mix, HEAP_BASE};
use super::{Event, Generator, Op};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DaxParams {
    /// Bytes between consecutive accesses.
    pub stride: u64,
    /// Reads per write, `R:W`.
    pub rw: Ratio,
    /// File size.
    pub size_mib: u64,
    /// Bytes per load and store (1, 2, 4 or 8).
    pub access_bytes: u64,
    pub gap: u32,
    /// Persist each store with a fence (false: stores are never fenced).
    pub persist: bool,
}

impl Default for DaxParams {
    fn default() -> Self {
        DaxParams { stride: 64, rw: Ratio { reads: 1, writes: 1 }, size_mib: 1024, access_bytes: 8, gap: 4, persist: true }
    }
}

impl DaxParams {
    pub fn validate(&self) -> Result<(), String> {
        if ![1, 2, 4, 8].contains(&self.access_bytes) {
            return Err(format!("daxbench workload: access_bytes must be 1, 2, 4 or 8, got {}", self.access_bytes));
        }
        check_range("daxbench", "stride", self.stride, 1, 1 << 30)?;
        if !self.stride.is_multiple_of(self.access_bytes) {
            return Err(format!("daxbench workload: stride ({}) must be a multiple of access_bytes ({})", self.stride, self.access_bytes));
        }
        check_range("daxbench", "size_mib", self.size_mib, 1, 8184)?;
        check_range("daxbench", "gap", self.gap as u64, 0, 10_000)?;
        check_plan("daxbench", HEAP_BASE + (self.size_mib << 20), 0, false)
    }

    /// `S-RW[:keys]` after `daxbench-`: the paper's names.
    pub fn alias_table(rest: &str) -> Result<toml::Table, String> {
        let (name, keys) = split_alias(rest).unwrap_or((rest, ""));
        let (s, rw) = name.split_once('-').ok_or_else(|| {
            format!("daxbench workload: `daxbench-{rest}` is not daxbench-STRIDE-RW (e.g. daxbench-128-2 or daxbench-256-1:1)")
        })?;
        let stride: i64 = s.parse().map_err(|_| format!("daxbench workload: stride `{s}` in `daxbench-{rest}` is not a number"))?;
        let mut t = super::params::table_of("daxbench", keys)?;
        for k in ["stride", "rw"] {
            if t.contains_key(k) {
                return Err(format!("daxbench workload: `{k}` given both in the name and as a key"));
            }
        }
        t.insert("stride".into(), toml::Value::Integer(stride));
        t.insert("rw".into(), toml::Value::String(rw.into()));
        Ok(t)
    }
}

/// Split `128-2:size_mib=4,gap=3` or `256-1:1:size_mib=4` into the name
/// and its keys: the keys start after the last `:` before the first `=`.
fn split_alias(rest: &str) -> Option<(&str, &str)> {
    let eq = rest.find('=')?;
    let colon = rest[..eq].rfind(':')?;
    Some((&rest[..colon], &rest[colon + 1..]))
}

pub struct Daxbench {
    p: DaxParams,
    seed: u64,
    access: u64,
    positions: u64,
}

impl Daxbench {
    pub fn new(seed: u64, p: DaxParams) -> Result<Self, String> {
        p.validate()?;
        let positions = (p.size_mib << 20) / p.access_bytes;
        Ok(Daxbench { seed: mix(seed, 0xDA7), access: 0, positions, p })
    }
}

impl Generator for Daxbench {
    /// One operation: R loads and W stores.
    fn next_op(&mut self, out: &mut Vec<Event>) {
        let (r, w) = (self.p.rw.reads as u64, self.p.rw.writes as u64);
        let n = r + w;
        let step = self.p.stride / self.p.access_bytes;
        for j in 0..n {
            let pos = (self.access.wrapping_mul(step)) % self.positions;
            let addr = HEAP_BASE + pos * self.p.access_bytes;
            self.access += 1;
            let write = (j + 1) * w / n > j * w / n;
            if write {
                let bits = 8 * self.p.access_bytes;
                let v = mix(self.seed, self.access) & if bits == 64 { u64::MAX } else { (1 << bits) - 1 };
                out.push(Event::store(addr, self.p.access_bytes as u8, v, false).after(self.p.gap));
                if self.p.persist {
                    out.push(Event::marker(Op::Fence));
                    out.push(Event::marker(Op::Epoch));
                }
            } else {
                out.push(Event::load(addr, self.p.access_bytes as u8).after(self.p.gap));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::params::from_table;

    #[test]
    fn stride_and_ratio_shape_the_stream() {
        let p = DaxParams { stride: 128, rw: Ratio { reads: 2, writes: 1 }, size_mib: 1, ..DaxParams::default() };
        let mut g = Daxbench::new(1, p).unwrap();
        let mut v = Vec::new();
        for _ in 0..10_000 {
            g.next_op(&mut v);
        }
        let acc: Vec<&Event> = v.iter().filter(|e| matches!(e.op, Op::Load | Op::Store)).collect();
        assert_eq!(acc.len(), 30_000);
        let loads = acc.iter().filter(|e| e.op == Op::Load).count();
        assert_eq!(loads, 20_000, "2:1");
        for (i, e) in acc.iter().enumerate() {
            assert_eq!(e.addr, HEAP_BASE + (i as u64 * 128) % (1 << 20), "access {i}");
        }
        let fences = v.iter().filter(|e| e.op == Op::Fence).count();
        assert_eq!(fences, 10_000, "one persist per store");
        // Write-only, 4-byte accesses, no fences.
        let p = DaxParams {
            stride: 4,
            rw: Ratio { reads: 0, writes: 1 },
            access_bytes: 4,
            persist: false,
            size_mib: 1,
            ..DaxParams::default()
        };
        let mut g = Daxbench::new(1, p).unwrap();
        let mut v = Vec::new();
        g.next_op(&mut v);
        g.next_op(&mut v);
        assert!(v.iter().all(|e| e.op == Op::Store && e.size == 4 && e.value >> 32 == 0));
        assert_eq!(v[1].addr - v[0].addr, 4);
    }

    #[test]
    fn paper_names_parse() {
        let p: DaxParams = from_table("daxbench", DaxParams::alias_table("128-2").unwrap()).unwrap();
        assert_eq!((p.stride, p.rw), (128, Ratio { reads: 2, writes: 1 }));
        let p: DaxParams = from_table("daxbench", DaxParams::alias_table("256-1:1:size_mib=4,gap=2").unwrap()).unwrap();
        assert_eq!((p.stride, p.rw, p.size_mib, p.gap), (256, Ratio { reads: 1, writes: 1 }, 4, 2));
        let p: DaxParams = from_table("daxbench", DaxParams::alias_table("64-3:size_mib=2").unwrap()).unwrap();
        assert_eq!((p.stride, p.rw, p.size_mib), (64, Ratio { reads: 3, writes: 1 }, 2));
        assert!(DaxParams::alias_table("x-2").unwrap_err().contains("stride"));
        assert!(DaxParams::alias_table("64").unwrap_err().contains("daxbench-STRIDE-RW"));
        assert!(DaxParams::alias_table("64-2:stride=3").unwrap_err().contains("both"));
        assert!(Daxbench::new(0, DaxParams { stride: 6, ..DaxParams::default() }).err().unwrap().contains("multiple"));
    }

    #[test]
    fn same_seed_same_events() {
        crate::workload::pheap::tests::deterministic(|seed| {
            Daxbench::new(seed, DaxParams { size_mib: 1, ..DaxParams::default() }).ok().unwrap()
        });
    }
}
