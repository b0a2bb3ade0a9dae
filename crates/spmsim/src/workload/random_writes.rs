//! Random 8-byte stores over a footprint, one fence after each store
//! (strict persistency: every store is a persist).

use super::{Event, Generator, Op};
use crate::util::rng::SplitMix64;

pub struct Params {
    pub base: u64,
    pub footprint_bytes: u64,
    /// Non-memory instructions before each store.
    pub gap: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { base: 0, footprint_bytes: 256 << 10, gap: 98 }
    }
}

pub struct RandomWrites {
    r: SplitMix64,
    p: Params,
}

impl RandomWrites {
    pub fn new(seed: u64, p: Params) -> Self {
        RandomWrites { r: SplitMix64::new(seed), p }
    }
}

impl Generator for RandomWrites {
    fn next_op(&mut self, out: &mut Vec<Event>) {
        let addr = self.p.base + self.r.below(self.p.footprint_bytes / 8) * 8;
        out.push(Event::store(addr, 8, self.r.next_u64(), false).after(self.p.gap));
        out.push(Event::marker(Op::Fence));
    }
}
