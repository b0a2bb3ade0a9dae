//! `ycsb`: the YCSB update-only workload (Secon 4.1 "YCSB: cloud
//! benchmark, 100% update"; STAR V-A, both from WHISPER) over a persistent
//! key-value store: the chained hash table of [`super::hash`], full, whose
//! values are records of `fields` fields. An operation looks a key up and
//! overwrites one field, undo-logged, as YCSB's core workload does by
//! default (`writeallfields=false`, `requestdistribution=zipfian`).
//!
//! ```text
//!  key = scramble(zipf(theta))           (YCSB ScrambledZipfian)
//!  walk bucket key % B                   (loads of links and keys)
//!  log field f; fence; field f <- new bytes
//! ```
//!
//! Records: key `k` lives in node slot `k`; every key is present from the
//! start (implicit population, see [`super::pheap`]). A field of
//! `field_bytes` is padded to whole 8-byte words in the record.

use super::hash::{HashLayout, HashTable};
use super::params::{check_range, OpsPerTx};
use super::pheap::{mix, transaction, NewValues, TxStyle};
use super::{Event, Generator};
use crate::util::rng::SplitMix64;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    Zipfian,
    Uniform,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct YcsbParams {
    /// Fields per record and bytes per field (YCSB core: 10 x 100 B).
    pub fields: u64,
    pub field_bytes: u64,
    pub size_mib: u64,
    pub distribution: Distribution,
    /// Zipfian constant (YCSB: 0.99).
    pub theta: f64,
    pub ops_per_tx: OpsPerTx,
    pub gap: u32,
    pub style: TxStyle,
    pub populate: bool,
}

impl Default for YcsbParams {
    fn default() -> Self {
        YcsbParams {
            fields: 10,
            field_bytes: 100,
            size_mib: 1024,
            distribution: Distribution::Zipfian,
            theta: 0.99,
            ops_per_tx: OpsPerTx::fixed(1),
            gap: 8,
            style: TxStyle::Dynamic,
            populate: false,
        }
    }
}

impl YcsbParams {
    pub fn validate(&self) -> Result<(), String> {
        check_range("ycsb", "fields", self.fields, 1, 64)?;
        check_range("ycsb", "field_bytes", self.field_bytes, 1, 4096)?;
        check_range("ycsb", "size_mib", self.size_mib, 1, 8000)?;
        check_range("ycsb", "gap", self.gap as u64, 0, 10_000)?;
        if !(self.theta > 0.0 && self.theta < 1.0) {
            return Err(format!("ycsb workload: theta must be in (0, 1), got {}", self.theta));
        }
        if self.value_bytes() > 64 << 10 {
            return Err("ycsb workload: fields x field_bytes must be at most 64 KiB".into());
        }
        self.layout(0).check("ycsb", self.populate)
    }
    fn field_words(&self) -> u64 {
        self.field_bytes.div_ceil(8)
    }
    pub fn value_bytes(&self) -> u64 {
        self.fields * self.field_words() * 8
    }
    fn layout(&self, seed: u64) -> HashLayout {
        HashLayout::new(self.size_mib << 20, self.value_bytes(), 1, true, seed)
    }
}

/// YCSB's Zipfian generator (Gray et al., "Quickly generating billion-record
/// synthetic databases"), over `0..n`.
pub struct Zipf {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

fn zeta(n: u64, theta: f64) -> f64 {
    // Exact up to 2^20 terms, then the Euler-Maclaurin tail.
    let m = n.min(1 << 20);
    let mut s: f64 = (1..=m).map(|i| (i as f64).powf(-theta)).sum();
    if n > m {
        let (a, b) = (m as f64, n as f64);
        s += (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta) + (b.powf(-theta) - a.powf(-theta)) / 2.0;
    }
    s
}

impl Zipf {
    pub fn new(n: u64, theta: f64) -> Self {
        let zetan = zeta(n, theta);
        let zeta2 = zeta(2, theta);
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
        Zipf { n, theta, alpha: 1.0 / (1.0 - theta), zetan, eta }
    }
    pub fn next(&self, r: &mut SplitMix64) -> u64 {
        let u = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1.min(self.n - 1);
        }
        ((self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64).min(self.n - 1)
    }
}

/// FNV-1a over the 8 bytes of `x` (YCSB scrambles Zipfian ranks with it).
fn fnv64(x: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in x.to_le_bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01B3);
    }
    h
}

pub struct Ycsb {
    pub t: HashTable,
    r: SplitMix64,
    p: YcsbParams,
    zipf: Option<Zipf>,
    populate: bool,
    values: NewValues,
}

impl Ycsb {
    pub fn new(seed: u64, p: YcsbParams) -> Result<Self, String> {
        p.validate()?;
        let t = HashTable::new(p.layout(seed), p.style, p.gap);
        let n = t.layout().slots;
        let zipf = (p.distribution == Distribution::Zipfian).then(|| Zipf::new(n, p.theta));
        Ok(Ycsb { t, r: SplitMix64::new(seed), zipf, populate: p.populate, p, values: NewValues::new(mix(seed, 0x7C5B)) })
    }

    pub fn next_key(&mut self) -> u64 {
        let n = self.t.layout().slots;
        match &self.zipf {
            Some(z) => fnv64(z.next(&mut self.r)) % n,
            None => self.r.below(n),
        }
    }

    /// Overwrite field `f` of record `k`; returns the field's address.
    pub fn update(&mut self, out: &mut Vec<Event>, k: u64, f: u64) -> u64 {
        let found = self.t.find(out, k);
        debug_assert!(found.node != 0, "every ycsb key is present");
        let fw = self.p.field_words();
        let addr = found.node + 16 + 8 * f * fw;
        let v = self.values.next_value(fw as usize);
        // The padding of a field's last word stays zero.
        let last = self.p.field_bytes % 8;
        if last != 0 {
            v[fw as usize - 1] &= (1u64 << (8 * last)) - 1;
        }
        self.t.h.write(out, addr, v);
        addr
    }

    /// An operation of the stream: overwrite a field, drawn uniformly, of
    /// the next key's record.
    fn random_update(&mut self, out: &mut Vec<Event>) -> u64 {
        let k = self.next_key();
        let f = self.r.below(self.p.fields);
        self.update(out, k, f)
    }
}

impl Generator for Ycsb {
    fn next_op(&mut self, out: &mut Vec<Event>) {
        let (populate, updates) = (std::mem::take(&mut self.populate), self.p.ops_per_tx.draw(&mut self.r));
        transaction(self, out, populate, updates, |g| &mut g.t.h, Self::random_update);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::pheap::tests::check_stream;

    #[test]
    fn zipf_is_skewed_like_ycsb() {
        let z = Zipf::new(100_000, 0.99);
        let mut r = SplitMix64::new(1);
        let mut hits = vec![0u32; 100_000];
        for _ in 0..200_000 {
            hits[z.next(&mut r) as usize] += 1;
        }
        // Rank 0 draws about 1 / zeta(n) = 8 % of requests at theta 0.99.
        let top = hits[0] as f64 / 200_000.0;
        assert!((0.06..0.10).contains(&top), "{top}");
        let top100: u32 = hits[..100].iter().sum();
        assert!(top100 > 200_000 / 3, "{top100}");
        // The tail approximation agrees with the exact sum.
        let exact: f64 = (1..=(3u64 << 20)).map(|i| (i as f64).powf(-0.99)).sum();
        assert!((zeta(3 << 20, 0.99) - exact).abs() < 1e-6 * exact);
    }

    #[test]
    fn updates_change_one_field_of_an_existing_record() {
        let p = YcsbParams { size_mib: 2, ops_per_tx: OpsPerTx::fixed(2), ..YcsbParams::default() };
        let mut g = Ycsb::new(4, p.clone()).unwrap();
        let slots = g.t.layout().slots;
        assert_eq!(g.t.check().unwrap(), (0..slots).collect::<Vec<_>>(), "every record is present");
        let mut ev = Vec::new();
        for i in 0..500u64 {
            let k = g.next_key();
            let f = i % p.fields;
            let node = g.t.layout().node_addr(k);
            let before: Vec<u64> = (0..g.t.layout().stride / 8).map(|w| g.t.h.peek(node + 8 * w)).collect();
            let mut v = Vec::new();
            g.t.h.begin(&mut v);
            let a = g.update(&mut v, k, f);
            g.t.h.commit(&mut v);
            assert_eq!(a, node + 16 + f * 13 * 8);
            for w in 0..g.t.layout().stride / 8 {
                let inside = node + 8 * w >= a && node + 8 * w < a + 13 * 8;
                assert_eq!(g.t.h.peek(node + 8 * w) == before[w as usize], !inside, "record {k} word {w}");
            }
            // 100 B of a 104 B field: the padding stays zero.
            assert_eq!(g.t.h.peek(a + 96) >> 32, 0);
            ev.extend(v);
        }
        assert!(ev.iter().filter(|e| e.op == crate::workload::Op::Store && !e.log).count() == 500 * 13);
        check_stream(&ev, &g.t.h);
        g.t.check().unwrap();
    }

    #[test]
    fn same_seed_same_events() {
        crate::workload::pheap::tests::deterministic(|seed| {
            Ycsb::new(seed, YcsbParams { size_mib: 1, ..YcsbParams::default() }).ok().unwrap()
        });
    }
}
