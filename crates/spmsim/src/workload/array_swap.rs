//! Array swap with undo logging (the persistent micro-benchmark of Secon,
//! STAR and Triad-NVM). The first operation initialises the array; every
//! later operation is one failure-atomic transaction:
//!
//! ```text
//!  tx-begin
//!  log <- (i, a[i], j, a[j]); log.valid <- 1; fence     (undo log entry)
//!  a[i] <- old a[j]; a[j] <- old a[i]; fence            (in-place update)
//!  log.valid <- 0; fence; tx-commit                     (commit)
//! ```

use super::{Event, Generator, Op};
use crate::util::rng::SplitMix64;

pub struct Params {
    pub array_base: u64,
    pub elements: u64,
    pub log_base: u64,
    /// Non-memory instructions between the memory operations of a swap.
    pub gap: u32,
}

impl Default for Params {
    fn default() -> Self {
        // 1024 8-byte elements (8 KiB, two pages); the log on its own page.
        Params { array_base: 0, elements: 1024, log_base: 64 << 10, gap: 12 }
    }
}

pub struct ArraySwap {
    r: SplitMix64,
    p: Params,
    a: Vec<u64>,
    started: bool,
}

impl ArraySwap {
    pub fn new(seed: u64, p: Params) -> Self {
        let a = (0..p.elements).map(|i| i.wrapping_mul(0x1000_0001) + 1).collect();
        ArraySwap { r: SplitMix64::new(seed), p, a, started: false }
    }
}

impl Generator for ArraySwap {
    fn next_op(&mut self, v: &mut Vec<Event>) {
        let p = &self.p;
        if !self.started {
            self.started = true;
            for (i, val) in self.a.iter().enumerate() {
                v.push(Event::store(p.array_base + i as u64 * 8, 8, *val, false).after(2));
            }
            v.push(Event::marker(Op::Fence));
        }
        let i = self.r.below(p.elements);
        let mut j = self.r.below(p.elements);
        if j == i {
            j = (i + 1) % p.elements;
        }
        let (ai, aj) = (self.a[i as usize], self.a[j as usize]);
        let g = p.gap;
        v.push(Event::marker(Op::TxBegin));
        v.push(Event::load(p.array_base + i * 8, 8).after(g));
        v.push(Event::load(p.array_base + j * 8, 8).after(2));
        v.push(Event::store(p.log_base, 8, i, true).after(2));
        v.push(Event::store(p.log_base + 8, 8, ai, true).after(2));
        v.push(Event::store(p.log_base + 16, 8, j, true).after(2));
        v.push(Event::store(p.log_base + 24, 8, aj, true).after(2));
        v.push(Event::store(p.log_base + 32, 8, 1, true).after(2));
        v.push(Event::marker(Op::Fence));
        v.push(Event::store(p.array_base + i * 8, 8, aj, false).after(g));
        v.push(Event::store(p.array_base + j * 8, 8, ai, false).after(2));
        v.push(Event::marker(Op::Fence));
        v.push(Event::store(p.log_base + 32, 8, 0, true).after(2));
        v.push(Event::marker(Op::Fence));
        v.push(Event::marker(Op::TxCommit));
        self.a.swap(i as usize, j as usize);
    }
}
