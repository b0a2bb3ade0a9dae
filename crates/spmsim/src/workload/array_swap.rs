//! Array swap with undo logging (the persistent micro-benchmark of Secon,
//! STAR and Triad-NVM). One operation is one failure-atomic transaction:
//!
//! ```text
//!  tx-begin
//!  log <- (i, a[i], j, a[j]); log.valid <- 1; fence     (undo log entry)
//!  a[i] <- old a[j]; a[j] <- old a[i]; fence            (in-place update)
//!  log.valid <- 0; fence; tx-commit                     (commit)
//! ```

use super::{Event, Op};
use crate::rng::SplitMix64;

pub struct Params {
    pub array_base: u64,
    pub elements: u64,
    pub log_base: u64,
}

impl Default for Params {
    fn default() -> Self {
        // 1024 8-byte elements (8 KiB, two pages); the log on its own page.
        Params { array_base: 0, elements: 1024, log_base: 64 << 10 }
    }
}

pub fn generate(ops: u64, seed: u64, p: &Params) -> Vec<Event> {
    let mut r = SplitMix64::new(seed);
    // The program's view of the array, initialised by the first stores.
    let mut a: Vec<u64> = (0..p.elements).map(|i| i.wrapping_mul(0x1000_0001) + 1).collect();
    let mut v = Vec::new();
    for (i, val) in a.iter().enumerate() {
        v.push(Event::store(p.array_base + i as u64 * 8, 8, *val, false));
    }
    v.push(Event::marker(Op::Fence));
    for _ in 0..ops {
        let i = r.below(p.elements);
        let mut j = r.below(p.elements);
        if j == i {
            j = (i + 1) % p.elements;
        }
        let (ai, aj) = (a[i as usize], a[j as usize]);
        v.push(Event::marker(Op::TxBegin));
        v.push(Event::load(p.array_base + i * 8, 8));
        v.push(Event::load(p.array_base + j * 8, 8));
        v.push(Event::store(p.log_base, 8, i, true));
        v.push(Event::store(p.log_base + 8, 8, ai, true));
        v.push(Event::store(p.log_base + 16, 8, j, true));
        v.push(Event::store(p.log_base + 24, 8, aj, true));
        v.push(Event::store(p.log_base + 32, 8, 1, true));
        v.push(Event::marker(Op::Fence));
        v.push(Event::store(p.array_base + i * 8, 8, aj, false));
        v.push(Event::store(p.array_base + j * 8, 8, ai, false));
        v.push(Event::marker(Op::Fence));
        v.push(Event::store(p.log_base + 32, 8, 0, true));
        v.push(Event::marker(Op::Fence));
        v.push(Event::marker(Op::TxCommit));
        a.swap(i as usize, j as usize);
    }
    v
}
