//! The untrusted NVM: a sparse image of 64 B blocks, and the write pending
//! queue (WPQ) in front of it, which ADR drains on power loss.
//!
//! ```text
//!  memory controller --push--> WPQ (ADR, FIFO, forwarding) --drain--> image
//! ```
//! A block never written reads as absent; each caller decides what an absent
//! block means (zeros, or a tree's default node).

use crate::layout::{Layout, Region};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::VecDeque;

/// Counts of NVM block accesses, by what the block holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ByKind {
    pub data: u64,
    pub counter: u64,
    pub mac: u64,
    pub tree: u64,
}

impl ByKind {
    pub fn bump(&mut self, kind: &str) {
        match kind {
            "data" => self.data += 1,
            "counter" => self.counter += 1,
            "mac" => self.mac += 1,
            _ => self.tree += 1,
        }
    }
    pub fn total(&self) -> u64 {
        self.data + self.counter + self.mac + self.tree
    }
    pub fn since(&self, b: &ByKind) -> ByKind {
        ByKind { data: self.data - b.data, counter: self.counter - b.counter, mac: self.mac - b.mac, tree: self.tree - b.tree }
    }
}

/// Blocks per page of the sparse image.
const PAGE_BLOCKS: u64 = 64;

/// The 64 blocks of one 4 KiB page.
type PageBlocks = [[u8; 64]; PAGE_BLOCKS as usize];

/// The bytes of every block ever written, stored sparsely by 4 KiB page
/// (64 blocks), so memory follows the touched footprint and neighbouring
/// blocks share one map entry. The pages sit side by side in one growing
/// array, in first-touch order, which the kernel may back with huge pages:
/// a timed run over a large footprint misses the host's TLB far less than
/// with one allocation per page.
#[derive(Clone, Debug, Default)]
pub struct NvmImage {
    /// Page number -> slot in `blocks` and `present`.
    slots: FxHashMap<u64, u32>,
    /// Which blocks of each slot were ever written.
    present: Vec<u64>,
    blocks: Vec<PageBlocks>,
    len: usize,
}

impl NvmImage {
    pub fn get(&self, addr: u64) -> Option<&[u8; 64]> {
        let &s = self.slots.get(&(addr / PAGE_BLOCKS))?;
        let i = addr % PAGE_BLOCKS;
        (self.present[s as usize] >> i & 1 == 1).then(|| &self.blocks[s as usize][i as usize])
    }

    pub fn put(&mut self, addr: u64, b: [u8; 64]) {
        let s = match self.slots.get(&(addr / PAGE_BLOCKS)) {
            Some(&s) => s as usize,
            None => self.new_slot(addr / PAGE_BLOCKS),
        };
        let i = addr % PAGE_BLOCKS;
        if self.present[s] >> i & 1 == 0 {
            self.present[s] |= 1 << i;
            self.len += 1;
        }
        self.blocks[s][i as usize] = b;
    }

    fn new_slot(&mut self, page: u64) -> usize {
        let s = self.blocks.len();
        if s == self.blocks.capacity() {
            self.blocks.reserve(s.max(16));
            advise_huge_pages(&self.blocks);
        }
        self.blocks.push([[0; 64]; PAGE_BLOCKS as usize]);
        self.present.push(0);
        self.slots.insert(page, u32::try_from(s).expect("fewer than 2^32 pages (16 TiB) touched"));
        s
    }

    /// Blocks ever written.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every written block, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &[u8; 64])> + '_ {
        self.slots.iter().flat_map(move |(&pn, &s)| {
            let (present, blocks) = (self.present[s as usize], &self.blocks[s as usize]);
            (0..PAGE_BLOCKS).filter(move |i| present >> i & 1 == 1).map(move |i| (pn * PAGE_BLOCKS + i, &blocks[i as usize]))
        })
    }

    /// Forget every block for which `keep` is false (emptied pages keep
    /// their slot, to be filled again if the page is written).
    pub fn retain(&mut self, mut keep: impl FnMut(u64) -> bool) {
        let mut len = 0;
        for (&pn, &s) in &self.slots {
            let present = &mut self.present[s as usize];
            for i in 0..PAGE_BLOCKS {
                if *present >> i & 1 == 1 && !keep(pn * PAGE_BLOCKS + i) {
                    *present &= !(1 << i);
                }
            }
            len += present.count_ones() as usize;
        }
        self.len = len;
    }

    pub fn sorted_addrs(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.iter().map(|(a, _)| a).collect();
        v.sort_unstable();
        v
    }
}

/// Ask the kernel to back the 2 MiB-aligned stretches of `v`'s buffer
/// with huge pages (transparent huge pages in `madvise` mode); a hint
/// whose failure changes nothing but speed.
#[allow(clippy::ptr_arg)] // the capacity, not just the elements, is advised
fn advise_huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<T>();
        let first = start.div_ceil(HUGE) * HUGE;
        if end > first + HUGE {
            let len = (end - first) / HUGE * HUGE;
            // SAFETY: the range lies inside the vector's own allocation;
            // MADV_HUGEPAGE changes how it is backed, never its contents.
            unsafe {
                libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

#[cfg(test)]
mod image_tests {
    use super::*;

    #[test]
    fn the_paged_image_keeps_blocks_apart() {
        let mut m = NvmImage::default();
        assert!(m.get(5).is_none());
        m.put(5, [1; 64]);
        m.put(64 * 9 + 3, [2; 64]);
        m.put(5, [3; 64]);
        assert_eq!(m.len(), 2);
        assert_eq!(m.get(5), Some(&[3; 64]));
        assert!(m.get(4).is_none(), "a neighbour on the same page was never written");
        assert_eq!(m.sorted_addrs(), vec![5, 64 * 9 + 3]);
        m.retain(|a| a != 5);
        assert_eq!((m.len(), m.sorted_addrs()), (1, vec![64 * 9 + 3]));
    }
}

#[derive(Clone, Debug)]
pub struct Nvm {
    pub image: NvmImage,
    wpq: VecDeque<(u64, [u8; 64])>,
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
    /// `write_log` (the timing model takes it to find writes it can merge).
    pub log_writes: bool,
    pub write_log: Vec<u64>,
}

impl Nvm {
    pub fn new(wpq_entries: usize) -> Self {
        Nvm { image: NvmImage::default(), wpq: VecDeque::new(), wpq_index: FxHashMap::default(), wpq_entries: wpq_entries.max(1), reads: ByKind::default(), writes: ByKind::default(), enqueued: ByKind::default(), log_writes: false, write_log: Vec::new() }
    }

    fn kind(layout: &Layout, addr: u64) -> &'static str {
        layout.region(addr).map(|r| r.kind()).unwrap_or("tree")
    }

    /// Read a block, forwarding the newest WPQ entry for it.
    pub fn read(&mut self, layout: &Layout, addr: u64) -> Option<[u8; 64]> {
        if self.wpq_index.contains_key(&addr) {
            if let Some((_, b)) = self.wpq.iter().rev().find(|(a, _)| *a == addr) {
                return Some(*b);
            }
        }
        self.reads.bump(Self::kind(layout, addr));
        self.image.get(addr).copied()
    }

    /// Enqueue a write; once in the WPQ it is persistent (ADR).
    pub fn write(&mut self, layout: &Layout, addr: u64, b: [u8; 64]) {
        self.enqueued.bump(Self::kind(layout, addr));
        if self.log_writes {
            self.write_log.push(addr);
        }
        self.wpq.push_back((addr, b));
        *self.wpq_index.entry(addr).or_insert(0) += 1;
        while self.wpq.len() > self.wpq_entries {
            let (a, blk) = self.wpq.pop_front().unwrap();
            self.unindex(a);
            self.commit(layout, a, blk);
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

    fn commit(&mut self, layout: &Layout, addr: u64, b: [u8; 64]) {
        self.writes.bump(Self::kind(layout, addr));
        self.image.put(addr, b);
    }

    /// Drain the whole WPQ to the image; returns entries moved.
    pub fn drain_wpq(&mut self, layout: &Layout) -> u64 {
        let n = self.wpq.len() as u64;
        while let Some((a, b)) = self.wpq.pop_front() {
            self.commit(layout, a, b);
        }
        self.wpq_index.clear();
        n
    }

    /// Power lost without ADR: the WPQ contents vanish.
    pub fn discard_wpq(&mut self) {
        self.wpq.clear();
        self.wpq_index.clear();
    }

    pub fn wpq_len(&self) -> usize {
        self.wpq.len()
    }

    pub fn region_kind(layout: &Layout, addr: u64) -> Option<Region> {
        layout.region(addr)
    }
}
