//! A battery-backed persist buffer beside L1D (BBB; SecPB III, Fig. 2a).
//! A store allocates its block (fetching it from memory) or coalesces into
//! the resident entry. When occupancy reaches the high watermark, the oldest
//! entries drain to the memory controller until the low watermark.

use crate::config::CrashDrain;
use crate::controller::MemoryController;
use crate::store::CheckFailure;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct PersistBuffer {
    order: VecDeque<u64>,
    lines: FxHashMap<u64, [u8; 64]>,
    high: usize,
    low: usize,
    pub crash_drain: CrashDrain,
    pub coalesced: u64,
    pub drained: u64,
}

impl PersistBuffer {
    pub fn new(entries: u32, high_pct: u32, low_pct: u32, crash_drain: CrashDrain) -> Self {
        let n = entries as usize;
        let high = (n * high_pct as usize).div_ceil(100).clamp(1, n);
        let low = (n * low_pct as usize / 100).min(high - 1);
        PersistBuffer { order: VecDeque::new(), lines: FxHashMap::default(), high, low, crash_drain, coalesced: 0, drained: 0 }
    }

    pub fn store(&mut self, mc: &mut MemoryController, block: u64, offset: usize, bytes: &[u8]) -> Result<(), CheckFailure> {
        if let Some(l) = self.lines.get_mut(&block) {
            l[offset..offset + bytes.len()].copy_from_slice(bytes);
            self.coalesced += 1;
            return Ok(());
        }
        let mut l = mc.read(block)?;
        l[offset..offset + bytes.len()].copy_from_slice(bytes);
        self.lines.insert(block, l);
        self.order.push_back(block);
        if self.order.len() >= self.high {
            while self.order.len() > self.low {
                let b = self.order.pop_front().unwrap();
                let data = self.lines.remove(&b).unwrap();
                mc.write(b, &data)?;
                self.drained += 1;
            }
        }
        Ok(())
    }

    pub fn load(&mut self, mc: &mut MemoryController, block: u64) -> Result<[u8; 64], CheckFailure> {
        match self.lines.get(&block) {
            Some(l) => Ok(*l),
            None => mc.read(block),
        }
    }

    /// Every entry, oldest first, leaving the buffer empty.
    pub fn take_all(&mut self) -> Vec<(u64, [u8; 64])> {
        let v = self.order.iter().map(|b| (*b, self.lines[b])).collect();
        self.order.clear();
        self.lines.clear();
        v
    }

    pub fn occupancy(&self) -> usize {
        self.order.len()
    }
}
