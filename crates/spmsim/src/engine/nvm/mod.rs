//! The untrusted NVM: a sparse image of 64 B blocks, and the write pending
//! queue (WPQ) in front of it, which ADR drains on power loss.
//!
//! ```text
//!  memory controller --push--> WPQ (ADR, FIFO, forwarding) --drain--> image
//! ```
//! A block never written reads as absent; each caller decides what an absent
//! block means (zeros, or a tree's default node).

use crate::engine::layout::{Layout, RegionKind};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::VecDeque;

/// Counts of NVM block accesses, by what the block holds ([`RegionKind`];
/// the field names are the kinds' names, which the stats JSON shows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ByKind {
    pub data: u64,
    pub counter: u64,
    pub mac: u64,
    pub tree: u64,
    /// A scheme's recovery area (STAR's bitmap lines, Anubis's shadow
    /// table); left out of the JSON when 0, as it is for every other scheme.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub recovery: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ByKind {
    pub fn bump(&mut self, kind: RegionKind) {
        *self.of_mut(kind) += 1;
    }
    pub fn of(&self, kind: RegionKind) -> u64 {
        match kind {
            RegionKind::Data => self.data,
            RegionKind::Counter => self.counter,
            RegionKind::Mac => self.mac,
            RegionKind::Tree => self.tree,
            RegionKind::Recovery => self.recovery,
        }
    }
    fn of_mut(&mut self, kind: RegionKind) -> &mut u64 {
        match kind {
            RegionKind::Data => &mut self.data,
            RegionKind::Counter => &mut self.counter,
            RegionKind::Mac => &mut self.mac,
            RegionKind::Tree => &mut self.tree,
            RegionKind::Recovery => &mut self.recovery,
        }
    }
    pub fn total(&self) -> u64 {
        self.data + self.counter + self.mac + self.tree + self.recovery
    }
    /// Add `b`'s counts to these.
    pub fn add(&mut self, b: &ByKind) {
        self.data += b.data;
        self.counter += b.counter;
        self.mac += b.mac;
        self.tree += b.tree;
        self.recovery += b.recovery;
    }
    pub fn since(&self, b: &ByKind) -> ByKind {
        ByKind {
            data: self.data - b.data,
            counter: self.counter - b.counter,
            mac: self.mac - b.mac,
            tree: self.tree - b.tree,
            recovery: self.recovery - b.recovery,
        }
    }
}

mod page_arena;
mod sparse_image;

pub use sparse_image::NvmImage;

#[derive(Clone, Debug)]
pub struct Nvm {
    pub image: NvmImage,
    /// Queued writes: (block, bytes, rides): a rider travels in another
    /// write's entry (a data MAC in the data line's ninth chip) and is
    /// neither counted nor holds a slot of its own.
    wpq: VecDeque<(u64, [u8; 64], bool)>,
    riders: usize,
    /// How many WPQ entries hold each block, so a read looks the WPQ up
    /// without scanning it.
    wpq_index: FxHashMap<u64, u32>,
    wpq_entries: usize,
    pub reads: ByKind,
    /// Writes committed to the device.
    pub writes: ByKind,
    /// Writes accepted into the WPQ (what the timing model queues).
    pub enqueued: ByKind,
    /// When set, the address of every accepted write is appended to
    /// `write_log`, and of every device read (not served by the WPQ) to
    /// `read_log`: the timing model prices these addresses.
    pub log_writes: bool,
    pub write_log: Vec<u64>,
    pub read_log: Vec<u64>,
}

impl Nvm {
    pub fn new(wpq_entries: usize) -> Self {
        Nvm {
            image: NvmImage::default(),
            wpq: VecDeque::new(),
            riders: 0,
            wpq_index: FxHashMap::default(),
            wpq_entries: wpq_entries.max(1),
            reads: ByKind::default(),
            writes: ByKind::default(),
            enqueued: ByKind::default(),
            log_writes: false,
            write_log: Vec::new(),
            read_log: Vec::new(),
        }
    }

    /// Read a block, forwarding the newest WPQ entry for it.
    pub fn read(&mut self, layout: &Layout, addr: u64) -> Option<[u8; 64]> {
        if !self.wpq_index.contains_key(&addr) {
            self.reads.bump(layout.kind_of(addr));
            if self.log_writes {
                self.read_log.push(addr);
            }
        }
        self.peek(addr)
    }

    /// What a read of the block would return, without counting a read:
    /// the newest WPQ entry for it, else the image.
    pub fn peek(&self, addr: u64) -> Option<[u8; 64]> {
        if self.wpq_index.contains_key(&addr) {
            if let Some((_, b, _)) = self.wpq.iter().rev().find(|(a, _, _)| *a == addr) {
                return Some(*b);
            }
        }
        self.image.get(addr).copied()
    }

    /// Enqueue a write; once in the WPQ it is persistent (ADR).
    pub fn write(&mut self, layout: &Layout, addr: u64, b: [u8; 64]) {
        self.enqueued.bump(layout.kind_of(addr));
        if self.log_writes {
            self.write_log.push(addr);
        }
        self.wpq.push_back((addr, b, false));
        *self.wpq_index.entry(addr).or_insert(0) += 1;
        self.spill(layout);
    }

    /// Queue a block that rides in the write just queued (a data MAC in
    /// the ninth chip of its data line, STAR II-D): persistent with it, not
    /// counted, no slot of its own.
    pub fn write_riding(&mut self, layout: &Layout, addr: u64, b: [u8; 64]) {
        self.wpq.push_back((addr, b, true));
        self.riders += 1;
        *self.wpq_index.entry(addr).or_insert(0) += 1;
        self.spill(layout);
    }

    /// Commit the oldest entries while more writes are queued than slots.
    fn spill(&mut self, layout: &Layout) {
        while self.wpq.len() - self.riders > self.wpq_entries {
            let (a, blk, rides) = self.wpq.pop_front().unwrap();
            self.riders -= rides as usize;
            self.unindex(a);
            self.commit(layout, a, blk, !rides);
        }
    }

    fn unindex(&mut self, addr: u64) {
        if let Some(n) = self.wpq_index.get_mut(&addr) {
            *n -= 1;
            if *n == 0 {
                self.wpq_index.remove(&addr);
            }
        }
    }

    fn commit(&mut self, layout: &Layout, addr: u64, b: [u8; 64], counted: bool) {
        if counted {
            self.writes.bump(layout.kind_of(addr));
        }
        self.image.put(addr, b);
    }

    /// Drain the whole WPQ to the image; returns entries moved.
    pub fn drain_wpq(&mut self, layout: &Layout) -> u64 {
        let n = (self.wpq.len() - self.riders) as u64;
        while let Some((a, b, rides)) = self.wpq.pop_front() {
            self.commit(layout, a, b, !rides);
        }
        self.riders = 0;
        self.wpq_index.clear();
        n
    }

    /// Power lost without ADR: the WPQ contents vanish.
    pub fn discard_wpq(&mut self) {
        self.wpq.clear();
        self.riders = 0;
        self.wpq_index.clear();
    }

    /// The blocks the WPQ holds writes for.
    pub fn wpq_addrs(&self) -> impl Iterator<Item = u64> + '_ {
        self.wpq.iter().map(|(a, _, _)| *a)
    }

    pub fn wpq_len(&self) -> usize {
        self.wpq.len() - self.riders
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_counted_under_its_own_name() {
        let mut b = ByKind::default();
        for (n, k) in RegionKind::ALL.into_iter().enumerate() {
            for _ in 0..=n {
                b.bump(k);
            }
        }
        let json = serde_json::to_value(b).unwrap();
        assert_eq!(json.as_object().unwrap().len(), RegionKind::ALL.len(), "{json}");
        for (n, k) in RegionKind::ALL.into_iter().enumerate() {
            assert_eq!(b.of(k), n as u64 + 1, "{k:?}");
            assert_eq!(json[k.name()], n as u64 + 1, "{k:?} in {json}");
        }
        assert_eq!(b.total(), 1 + 2 + 3 + 4 + 5);
        let none = serde_json::to_value(ByKind { recovery: 0, ..b }).unwrap();
        assert!(none.get("recovery").is_none(), "a scheme with no recovery area shows none: {none}");
    }
}
