//! `array`: swap two random entries of a large persistent array, each swap
//! undo-logged (Secon 4.1 "Array: swap two random entries in a 1GB array",
//! 256 B values; STAR V-A; Triad-NVM IV ArraySwap), 1-16 swaps per
//! transaction (Secon 4.2.1).
//!
//! ```text
//!  HEAP_BASE: a[0] a[1] ... a[n-1]      (value_bytes each, contiguous)
//!  swap(i, j):  read a[i], a[j];  log a[i]; fence; a[i] <- old a[j];
//!                                 log a[j]; fence; a[j] <- old a[i]
//! ```
//!
//! The legacy `array-swap` workload (1024 8-byte elements, one swap per
//! transaction, explicit initialisation) is unchanged; this one follows the
//! papers' sizes over the implicit population of [`super::pheap`].

use super::params::structure_params;
use super::pheap::{check_plan, mix, transaction, Layout, PHeap, HEAP_BASE};
use super::{Event, Generator};
use crate::util::rng::SplitMix64;

structure_params! {
    /// The array of entries to swap (Secon: 256 B entries, 1 GB).
    ArrayParams, kind = "array", gap = 6, max_size_mib = 8184
}

impl ArrayParams {
    pub fn validate(&self) -> Result<(), String> {
        self.check_keys()?;
        let l = ArrayLayout::new(self, 0);
        if l.n < 2 {
            return Err("array workload: size_mib holds fewer than two entries".into());
        }
        check_plan("array", HEAP_BASE + l.n * l.stride, l.n * l.stride, self.populate)
    }
}

pub struct ArrayLayout {
    pub n: u64,
    pub stride: u64,
    seed: u64,
}

impl ArrayLayout {
    fn new(p: &ArrayParams, seed: u64) -> Self {
        ArrayLayout { n: (p.size_mib << 20) / p.value_bytes, stride: p.value_bytes, seed: mix(seed, 0xA77A) }
    }
    pub fn addr(&self, i: u64) -> u64 {
        HEAP_BASE + i * self.stride
    }
}

impl Layout for ArrayLayout {
    fn initial(&self, b: u64) -> [u64; 8] {
        let end = HEAP_BASE + self.n * self.stride;
        std::array::from_fn(|w| {
            let a = b + 8 * w as u64;
            if a < HEAP_BASE || a >= end {
                return 0;
            }
            let off = a - HEAP_BASE;
            mix(mix(self.seed, off / self.stride), off % self.stride / 8)
        })
    }
    fn extents(&self) -> Vec<(u64, u64)> {
        vec![(HEAP_BASE, HEAP_BASE + self.n * self.stride)]
    }
}

pub struct Array {
    pub h: PHeap<ArrayLayout>,
    r: SplitMix64,
    p: ArrayParams,
    populate: bool,
    a: Vec<u64>,
    b: Vec<u64>,
}

impl Array {
    pub fn new(seed: u64, p: ArrayParams) -> Result<Self, String> {
        p.validate()?;
        let h = PHeap::new(ArrayLayout::new(&p, seed), p.style, p.gap);
        Ok(Array { h, r: SplitMix64::new(seed), populate: p.populate, p, a: Vec::new(), b: Vec::new() })
    }

    /// One swap; returns the two indexes.
    pub fn swap(&mut self, out: &mut Vec<Event>) -> (u64, u64) {
        let n = self.h.layout.n;
        let i = self.r.below(n);
        let mut j = self.r.below(n - 1);
        if j >= i {
            j += 1;
        }
        let (ai, aj) = (self.h.layout.addr(i), self.h.layout.addr(j));
        let words = (self.p.value_bytes / 8) as usize;
        self.a.resize(words, 0);
        self.b.resize(words, 0);
        self.h.copy_loads(out, ai, self.p.value_bytes);
        self.h.peek_words(ai, &mut self.a);
        self.h.copy_loads(out, aj, self.p.value_bytes);
        self.h.peek_words(aj, &mut self.b);
        self.h.write(out, ai, &self.b);
        self.h.write(out, aj, &self.a);
        (i, j)
    }
}

impl Generator for Array {
    fn next_op(&mut self, out: &mut Vec<Event>) {
        let (populate, swaps) = (std::mem::take(&mut self.populate), self.p.ops_per_tx.draw(&mut self.r));
        transaction(self, out, populate, swaps, |g| &mut g.h, Self::swap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::pheap::tests::check_stream;

    fn small() -> ArrayParams {
        ArrayParams { value_bytes: 64, size_mib: 1, ..ArrayParams::default() }
    }

    #[test]
    fn swaps_permute_the_entries_and_the_stream_carries_them() {
        let mut g = Array::new(3, small()).unwrap();
        let n = g.h.layout.n;
        let entry = |g: &Array, i: u64| {
            let mut v = vec![0; 8];
            g.h.peek_words(g.h.layout.addr(i), &mut v);
            v
        };
        let mut model: Vec<Vec<u64>> = (0..n).map(|i| entry(&g, i)).collect();
        let mut ev = Vec::new();
        for _ in 0..300 {
            let mut v = Vec::new();
            g.h.begin(&mut v);
            let (i, j) = g.swap(&mut v);
            g.h.commit(&mut v);
            model.swap(i as usize, j as usize);
            ev.extend(v);
        }
        for i in 0..n {
            assert_eq!(entry(&g, i), model[i as usize], "entry {i}");
        }
        check_stream(&ev, &g.h);
        let mut sorted = model.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len() as u64, n, "a swap never duplicates or loses an entry");
    }

    #[test]
    fn defaults_follow_the_papers_and_bad_sizes_are_refused() {
        let g = Array::new(1, ArrayParams::default()).unwrap();
        assert_eq!(g.h.layout.n, (1 << 30) / 256);
        let mut v = Vec::new();
        let mut g = g;
        for _ in 0..50 {
            g.next_op(&mut v);
        }
        assert!(v.iter().all(|e| e.addr < 8 << 30));
        assert!(g.h.written_blocks() < 50 * 16 * 8 + 8, "host memory follows the touched part");
        assert!(Array::new(1, ArrayParams { value_bytes: 12, ..small() }).is_err());
        assert!(Array::new(1, ArrayParams { size_mib: 9000, ..small() }).is_err());
        assert!(Array::new(1, ArrayParams { populate: true, size_mib: 512, ..small() }).err().unwrap().contains("populate"));
    }

    #[test]
    fn same_seed_same_events() {
        crate::workload::pheap::tests::deterministic(|seed| {
            Array::new(seed, ArrayParams { size_mib: 1, ..ArrayParams::default() }).ok().unwrap()
        });
    }
}
