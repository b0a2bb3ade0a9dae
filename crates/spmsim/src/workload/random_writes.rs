//! Random 8-byte stores over a footprint, one fence after each store
//! (strict persistency: every store is a persist).

use super::{Event, Op};
use crate::rng::SplitMix64;

pub struct Params {
    pub base: u64,
    pub footprint_bytes: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params { base: 0, footprint_bytes: 256 << 10 }
    }
}

pub fn generate(ops: u64, seed: u64, p: &Params) -> Vec<Event> {
    let mut r = SplitMix64::new(seed);
    let words = p.footprint_bytes / 8;
    let mut v = Vec::with_capacity(ops as usize * 2);
    for _ in 0..ops {
        let addr = p.base + r.below(words) * 8;
        v.push(Event::store(addr, 8, r.next_u64(), false));
        v.push(Event::marker(Op::Fence));
    }
    v
}
