//! A battery-backed persist buffer beside L1D: BBB's PB and the SecPB
//! (SecPB III-IV, Fig. 5).
//!
//! ```text
//!  store --> [entry: plaintext | C (early counter) | B (BMT done)] --drain--> MC completes the tuple
//!             early work by scheme: NoGap all, M all but MAC, CM counter+OTP+BMT,
//!             BCM counter+OTP, OBCM counter, COBCM nothing
//! ```
//! A store allocates its block (fetching it through the secure read path)
//! or coalesces into the resident entry. Data-value-independent metadata
//! (counter, OTP, BMT root) is produced once per residency when
//! `coalesce_metadata` is on (SecPB IV-A), else on every store. When the
//! occupancy reaches the high watermark the oldest entries drain until the
//! low watermark; on a crash the battery drains every entry.

use crate::engine::controller::{BlockCounter, MemoryController, Prepared};
use crate::engine::store::CheckFailure;
use crate::scheme::params::{FrontDrain, SchemeWork, Steps, TupleStep};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct Entry {
    data: [u8; 64],
    /// The counter produced early (the entry's C field), if any.
    ctr: Option<BlockCounter>,
    /// O, Dc and M fields, when produced early.
    prep: Prepared,
}

/// The steps that do not depend on the data value: once per residency
/// when metadata coalesces (SecPB IV-A).
const VALUE_INDEPENDENT: Steps = Steps::of(&[TupleStep::Counter, TupleStep::Otp, TupleStep::Bmt]);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreOutcome {
    pub allocated: bool,
    /// The tuple steps this store did early.
    pub early: Steps,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct PbStats {
    pub stores: u64,
    pub allocations: u64,
    pub drains: u64,
    /// Drains whose early counter had gone stale (page re-encrypted).
    pub stale_early_counters: u64,
}

#[derive(Clone, Debug)]
pub struct PersistBuffer {
    order: VecDeque<u64>,
    lines: FxHashMap<u64, Entry>,
    pub capacity: usize,
    pub high: usize,
    pub low: usize,
    /// The scheme's early steps and what its battery does on a crash.
    pub early: Steps,
    pub crash_drain: FrontDrain,
    pub coalesce_metadata: bool,
    pub stats: PbStats,
}

impl PersistBuffer {
    pub fn new(entries: u32, high_pct: u32, low_pct: u32, work: &SchemeWork, coalesce_metadata: bool) -> Self {
        let n = entries as usize;
        let high = (n * high_pct as usize).div_ceil(100).clamp(1, n);
        let low = (n * low_pct as usize / 100).min(high - 1);
        PersistBuffer {
            order: VecDeque::new(),
            lines: FxHashMap::default(),
            capacity: n,
            high,
            low,
            early: work.early,
            crash_drain: work.front_drain,
            coalesce_metadata,
            stats: PbStats::default(),
        }
    }

    /// Apply one store; no draining here (the caller owns the watermark).
    pub fn store(&mut self, mc: &mut MemoryController, block: u64, offset: usize, bytes: &[u8]) -> Result<StoreOutcome, CheckFailure> {
        self.store_filled(mc, block, offset, bytes, None)
    }

    /// As `store`, with the block's current plaintext supplied by the
    /// caller (the timing model has it in a cache) instead of a secure read.
    pub fn store_filled(
        &mut self,
        mc: &mut MemoryController,
        block: u64,
        offset: usize,
        bytes: &[u8],
        fill: Option<[u8; 64]>,
    ) -> Result<StoreOutcome, CheckFailure> {
        self.stats.stores += 1;
        let allocated = !self.lines.contains_key(&block);
        if allocated {
            let data = match fill {
                Some(d) => d,
                None => mc.read(block)?,
            };
            self.lines.insert(block, Entry { data, ctr: None, prep: Prepared::default() });
            self.order.push_back(block);
            self.stats.allocations += 1;
        }
        let s = self.early;
        let independent = allocated || !self.coalesce_metadata;
        // Value-dependent steps follow every store (SecPB IV-A).
        let mut early = s.intersect(VALUE_INDEPENDENT.complement());
        if independent && s.contains(TupleStep::Counter) && mc.secure() {
            let advance = s.contains(TupleStep::Bmt);
            let ctr = if advance { Some(mc.advance_counter(block)?) } else { mc.peek_next_counter(block)? };
            early = early.union(s.intersect(VALUE_INDEPENDENT));
            let pad = match ctr {
                Some(c) if s.contains(TupleStep::Otp) => Some(mc.pad(block, c)),
                _ => None,
            };
            let e = self.lines.get_mut(&block).unwrap();
            e.ctr = ctr;
            e.prep = Prepared { pad, ..Prepared::default() };
        }
        let e = self.lines.get_mut(&block).unwrap();
        e.data[offset..offset + bytes.len()].copy_from_slice(bytes);
        if let (Some(pad), Some(c)) = (e.prep.pad, e.ctr) {
            if s.contains(TupleStep::Ciphertext) {
                let ct: [u8; 64] = std::array::from_fn(|i| e.data[i] ^ pad[i]);
                e.prep.ciphertext = Some(ct);
                if s.contains(TupleStep::Mac) {
                    e.prep.mac = Some(mc.data_mac(block, &ct, c));
                }
            }
        }
        Ok(StoreOutcome { allocated, early })
    }

    /// The watermark rule (SecPB IV-B), in one place for the functional and
    /// the timing model: once occupancy reaches the high watermark, the
    /// oldest entries drain until it is down to the low one. Returns how
    /// many entries to drain now.
    pub fn watermark_drains(&self) -> usize {
        if self.order.len() >= self.high {
            self.order.len() - self.low
        } else {
            0
        }
    }

    /// Complete the oldest entry's memory tuple at the MC. Returns the block
    /// and the steps left to the MC.
    pub fn drain_oldest(&mut self, mc: &mut MemoryController) -> Result<Option<(u64, Steps)>, CheckFailure> {
        let Some(&b) = self.order.front() else { return Ok(None) };
        Ok(self.flush_entry(mc, b)?.map(|late| (b, late)))
    }

    fn complete(&mut self, mc: &mut MemoryController, b: u64, e: &Entry) -> Result<Steps, CheckFailure> {
        let fresh = match e.ctr {
            Some(c) => mc.write_prepared(b, &e.data, c, self.early.contains(TupleStep::Bmt), &e.prep)?,
            None => {
                mc.write(b, &e.data)?;
                false
            }
        };
        if e.ctr.is_some() && !fresh {
            self.stats.stale_early_counters += 1;
        }
        // Without a fresh early counter the MC redoes the value-independent
        // steps too.
        let late = self.early.complement();
        Ok(if e.ctr.is_some() && fresh { late } else { late.union(VALUE_INDEPENDENT) })
    }

    pub fn load(&mut self, mc: &mut MemoryController, block: u64) -> Result<[u8; 64], CheckFailure> {
        match self.lines.get(&block) {
            Some(e) => Ok(e.data),
            None => mc.read(block),
        }
    }

    pub fn contains(&self, block: u64) -> bool {
        self.lines.contains_key(&block)
    }

    /// Power failure: the battery drains every entry, oldest first.
    pub fn crash_drain(&mut self, mc: &mut MemoryController) -> Result<u64, CheckFailure> {
        let mut n = 0;
        while let Some(b) = self.order.pop_front() {
            let e = self.lines.remove(&b).unwrap();
            match self.crash_drain {
                FrontDrain::Secured => {
                    self.complete(mc, b, &e)?;
                }
                FrontDrain::Unsecured => mc.write_unsecured(b, &e.data),
            }
            n += 1;
        }
        Ok(n)
    }

    /// The volatile case: the buffer's contents are lost.
    pub fn discard(&mut self) {
        self.order.clear();
        self.lines.clear();
    }

    /// Orderly shutdown: every entry completes its tuple.
    pub fn flush(&mut self, mc: &mut MemoryController) -> Result<u64, CheckFailure> {
        let mut n = 0;
        while self.drain_oldest(mc)?.is_some() {
            n += 1;
        }
        Ok(n)
    }

    pub fn occupancy(&self) -> usize {
        self.order.len()
    }

    /// Remove `block`'s entry, with the metadata made for it early, to
    /// move it to another core's buffer (SecPB IV-C c: a write from
    /// another core migrates the entry; nothing is replicated).
    pub fn take_entry(&mut self, block: u64) -> Option<Entry> {
        let e = self.lines.remove(&block)?;
        let i = self.order.iter().position(|&b| b == block).expect("every entry is in the drain order");
        self.order.remove(i);
        Some(e)
    }

    /// Take in an entry migrated from another core's buffer, as its
    /// youngest: its early counter, pad and tree update stay valid, so the
    /// store that pulled it in redoes none of them (SecPB IV-C c).
    pub fn insert_entry(&mut self, block: u64, e: Entry) {
        debug_assert!(!self.lines.contains_key(&block), "a migrated entry is never replicated");
        self.lines.insert(block, e);
        self.order.push_back(block);
    }

    /// Complete `block`'s tuple at the MC now, out of drain order (another
    /// core reads the block: SecPB IV-C c flushes the entry while the data
    /// is served). Returns the steps left to the MC, or None if the block
    /// has no entry.
    pub fn flush_entry(&mut self, mc: &mut MemoryController, block: u64) -> Result<Option<Steps>, CheckFailure> {
        let Some(e) = self.take_entry(block) else { return Ok(None) };
        let late = self.complete(mc, block, &e)?;
        self.stats.drains += 1;
        Ok(Some(late))
    }
}
