//! Sequential 8-byte stores, wrapping around a footprint; a fence after
//! every block's worth of stores.

use super::{Event, Generator, Op};
use crate::util::rng::SplitMix64;

pub struct Params {
    pub base: u64,
    pub footprint_bytes: u64,
    pub gap: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { base: 0, footprint_bytes: 512 << 10, gap: 24 }
    }
}

pub struct SeqWrites {
    r: SplitMix64,
    p: Params,
    i: u64,
}

impl SeqWrites {
    pub fn new(seed: u64, p: Params) -> Self {
        SeqWrites { r: SplitMix64::new(seed), p, i: 0 }
    }
}

impl Generator for SeqWrites {
    fn next_op(&mut self, out: &mut Vec<Event>) {
        let addr = self.p.base + (self.i % (self.p.footprint_bytes / 8)) * 8;
        self.i += 1;
        out.push(Event::store(addr, 8, self.r.next_u64(), false).after(self.p.gap));
        if addr % 64 == 56 {
            out.push(Event::marker(Op::Fence));
        }
    }
}
