//! The bytes of every NVM block ever written, stored sparsely by 4 KiB
//! page (64 blocks) so that memory follows the touched footprint, not the
//! simulated capacity.
//!
//! ```text
//!  block addr --/64--> page --radix table (3 levels of 1024)--> slot
//!  slot --> PageArena page (64 blocks) + present bits (which were written)
//! ```
//! The page table is a radix tree rather than a hash map: a lookup is three
//! dependent loads from a few hot kilobytes, with no hashing or probing.
//! Addresses reach 2^44 blocks (the 2^50 B memory limit), so the top level
//! has at most 2^18 entries.

use super::page_arena::PageArena;

/// Blocks per page.
const PAGE_BLOCKS: u64 = 64;
/// Entries per radix node; 10 bits of the page number per level.
const FANOUT_BITS: u32 = 10;
const FANOUT: usize = 1 << FANOUT_BITS;

/// One radix node: child index + 1 per entry, 0 for none.
type Node = Box<[u32; FANOUT]>;

#[derive(Clone, Debug, Default)]
pub struct NvmImage {
    /// Page number >> 20 -> index + 1 into `mids`.
    top: Vec<u32>,
    /// Bits 10..20 of the page number -> index + 1 into `leaves`.
    mids: Vec<Node>,
    /// Bits 0..10 of the page number -> slot + 1.
    leaves: Vec<Node>,
    /// Which entries of each leaf node hold a slot, so a range walk
    /// skips the empty ones a word at a time.
    leaf_used: Vec<[u64; FANOUT / 64]>,
    /// Page number of each slot (first-touch order).
    pages: Vec<u64>,
    /// Which blocks of each slot were ever written.
    present: Vec<u64>,
    blocks: PageArena,
    len: usize,
    /// While a crash point is checked on the live image: each block's
    /// bytes before its first change since [`Self::begin_journal`]
    /// (`None`: it was absent), so [`Self::rollback`] can put them back.
    journal: Option<Journal>,
    /// When tracked: every block changed since the last
    /// [`Self::take_changes`] (repeats allowed).
    changes: Option<Vec<u64>>,
}

/// The blocks changed since the journal began, with what they held.
#[derive(Clone, Debug, Default)]
struct Journal {
    old: Vec<(u64, Option<[u8; 64]>)>,
    seen: rustc_hash::FxHashSet<u64>,
}

fn new_node() -> Node {
    Box::new([0; FANOUT])
}

/// Append a node and return its entry value (index + 1).
fn push_node(nodes: &mut Vec<Node>) -> u32 {
    nodes.push(new_node());
    u32::try_from(nodes.len()).expect("fewer than 2^32 radix nodes")
}

impl NvmImage {
    fn slot(&self, page: u64) -> Option<usize> {
        let mid = *self.top.get((page >> (2 * FANOUT_BITS)) as usize)?;
        let leaf = *self.mids.get(mid.checked_sub(1)? as usize)?.get((page >> FANOUT_BITS) as usize % FANOUT)?;
        let slot = self.leaves[leaf.checked_sub(1)? as usize][page as usize % FANOUT];
        slot.checked_sub(1).map(|s| s as usize)
    }

    /// The slot of a page, made (all blocks absent) if the page is new.
    fn slot_or_insert(&mut self, page: u64) -> usize {
        if let Some(s) = self.slot(page) {
            return s;
        }
        let t = (page >> (2 * FANOUT_BITS)) as usize;
        if t >= self.top.len() {
            self.top.resize(t + 1, 0);
        }
        if self.top[t] == 0 {
            self.top[t] = push_node(&mut self.mids);
        }
        let m = self.top[t] as usize - 1;
        let mi = (page >> FANOUT_BITS) as usize % FANOUT;
        if self.mids[m][mi] == 0 {
            self.mids[m][mi] = push_node(&mut self.leaves);
            self.leaf_used.push([0; FANOUT / 64]);
        }
        let l = self.mids[m][mi] as usize - 1;
        let s = self.blocks.push_zeroed();
        let e = page as usize % FANOUT;
        self.leaves[l][e] = u32::try_from(s + 1).expect("fewer than 2^32 pages (16 TiB) touched");
        self.leaf_used[l][e / 64] |= 1 << (e % 64);
        self.pages.push(page);
        self.present.push(0);
        s
    }

    pub fn get(&self, addr: u64) -> Option<&[u8; 64]> {
        let s = self.slot(addr / PAGE_BLOCKS)?;
        let i = addr % PAGE_BLOCKS;
        (self.present[s] >> i & 1 == 1).then(|| &self.blocks.page(s)[i as usize])
    }

    /// The block's bytes to change in place; a block never written is
    /// made present, all zero.
    pub fn get_mut_or_zero(&mut self, addr: u64) -> &mut [u8; 64] {
        if self.journal.is_some() {
            self.note(addr);
        }
        if let Some(c) = &mut self.changes {
            c.push(addr);
        }
        let s = self.slot_or_insert(addr / PAGE_BLOCKS);
        let i = addr % PAGE_BLOCKS;
        let block = &mut self.blocks.page_mut(s)[i as usize];
        if self.present[s] >> i & 1 == 0 {
            // Zero again: a block `retain` dropped keeps its old bytes.
            *block = [0; 64];
            self.present[s] |= 1 << i;
            self.len += 1;
        }
        block
    }

    pub fn put(&mut self, addr: u64, b: [u8; 64]) {
        *self.get_mut_or_zero(addr) = b;
    }

    /// Record the block's bytes before its first change under the journal.
    fn note(&mut self, addr: u64) {
        let old = self.get(addr).copied();
        let j = self.journal.as_mut().expect("a journal");
        if j.seen.insert(addr) {
            j.old.push((addr, old));
        }
    }

    /// Start recording every change, to be undone by [`Self::rollback`]:
    /// the crash oracle checks a crash point on the live image instead of
    /// copying it.
    pub fn begin_journal(&mut self) {
        self.journal = Some(Journal::default());
    }

    /// The blocks changed since [`Self::begin_journal`], in the order of
    /// their first change.
    pub fn journaled(&self) -> impl Iterator<Item = u64> + '_ {
        self.journal.iter().flat_map(|j| j.old.iter().map(|(a, _)| *a))
    }

    /// Undo every change since [`Self::begin_journal`] and stop recording.
    pub fn rollback(&mut self) {
        let Some(j) = self.journal.take() else { return };
        for (addr, old) in j.old.into_iter().rev() {
            match old {
                Some(b) => *self.get_mut_or_zero(addr) = b,
                None => self.forget(addr),
            }
        }
    }

    /// Start listing the blocks changed (for [`Self::take_changes`]).
    pub fn track_changes(&mut self) {
        self.changes = Some(Vec::new());
    }

    /// The blocks changed since the last call (or since tracking began).
    pub fn take_changes(&mut self) -> Vec<u64> {
        self.changes.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Stop listing changes for a while, keeping the list so far.
    pub fn pause_changes(&mut self) -> Option<Vec<u64>> {
        self.changes.take()
    }

    pub fn resume_changes(&mut self, changes: Option<Vec<u64>>) {
        self.changes = changes;
    }

    /// Make a block absent again.
    fn forget(&mut self, addr: u64) {
        if let Some(c) = &mut self.changes {
            c.push(addr);
        }
        if let Some(s) = self.slot(addr / PAGE_BLOCKS) {
            let i = addr % PAGE_BLOCKS;
            if self.present[s] >> i & 1 == 1 {
                self.present[s] &= !(1 << i);
                self.len -= 1;
            }
        }
    }

    /// Blocks ever written.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every written block, in first-touch order of its page.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &[u8; 64])> + '_ {
        self.pages.iter().enumerate().flat_map(move |(s, &pn)| {
            let (present, blocks) = (self.present[s], self.blocks.page(s));
            (0..PAGE_BLOCKS).filter(move |i| present >> i & 1 == 1).map(move |i| (pn * PAGE_BLOCKS + i, &blocks[i as usize]))
        })
    }

    /// Forget every block for which `keep` is false (emptied pages keep
    /// their slot, to be filled again if the page is written).
    pub fn retain(&mut self, mut keep: impl FnMut(u64) -> bool) {
        if self.journal.is_some() {
            let gone: Vec<u64> = self.iter().map(|(a, _)| a).filter(|&a| !keep(a)).collect();
            for a in gone {
                self.remove(a);
            }
            return;
        }
        let mut len = 0;
        for (&pn, present) in self.pages.iter().zip(&mut self.present) {
            for i in 0..PAGE_BLOCKS {
                if *present >> i & 1 == 1 && !keep(pn * PAGE_BLOCKS + i) {
                    *present &= !(1 << i);
                }
            }
            len += present.count_ones() as usize;
        }
        self.len = len;
    }

    /// The written blocks in `[lo, hi)`, ascending: a walk of the radix
    /// table over that range only, so a recovery that scans one region
    /// (the counter blocks, a tree level) pays for that region's pages, not
    /// for the whole image.
    pub fn addrs_in(&self, lo: u64, hi: u64) -> Vec<u64> {
        let mut out = Vec::new();
        if lo >= hi {
            return out;
        }
        let last = (hi - 1) / PAGE_BLOCKS;
        let mut page = lo / PAGE_BLOCKS;
        while page <= last {
            let t = (page >> (2 * FANOUT_BITS)) as usize;
            let Some(&mid) = self.top.get(t) else { break };
            if mid == 0 {
                page = (t as u64 + 1) << (2 * FANOUT_BITS);
                continue;
            }
            let leaf = self.mids[mid as usize - 1][(page >> FANOUT_BITS) as usize % FANOUT];
            let base = page & !(FANOUT as u64 - 1);
            let stop = (last - base).min(FANOUT as u64 - 1) as usize;
            if leaf != 0 {
                let (used, slots) = (&self.leaf_used[leaf as usize - 1], &self.leaves[leaf as usize - 1]);
                let mut e = (page - base) as usize;
                while e <= stop {
                    let w = used[e / 64] >> (e % 64);
                    if w == 0 {
                        e = (e / 64 + 1) * 64;
                        continue;
                    }
                    e += w.trailing_zeros() as usize;
                    if e > stop {
                        break;
                    }
                    let first = (base + e as u64) * PAGE_BLOCKS;
                    let mut present = self.present[slots[e] as usize - 1];
                    while present != 0 {
                        let a = first + present.trailing_zeros() as u64;
                        present &= present - 1;
                        if a >= lo && a < hi {
                            out.push(a);
                        }
                    }
                    e += 1;
                }
            }
            page = base + stop as u64 + 1;
        }
        out
    }

    /// Make a written block absent again (journaled like any change).
    pub fn remove(&mut self, addr: u64) {
        if self.journal.is_some() {
            self.note(addr);
        }
        self.forget(addr);
    }

    pub fn sorted_addrs(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.iter().map(|(a, _)| a).collect();
        v.sort_unstable();
        v
    }
}

#[cfg(test)]
mod tests {
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
        m.get_mut_or_zero(5)[7] = 9;
        let mut want = [0; 64];
        want[7] = 9;
        assert_eq!((m.len(), m.get(5)), (2, Some(&want)), "a forgotten block comes back zero, not with its old bytes");
    }

    #[test]
    fn a_range_lists_and_forgets_only_its_blocks() {
        let mut m = NvmImage::default();
        let all: Vec<u64> = vec![3, 63, 64, 65, 64 * 1023 + 5, 64 * 1024 + 1, 64 << 20, (64 << 20) + 7, 1 << 40];
        for &a in &all {
            m.put(a, [1; 64]);
        }
        for (lo, hi) in
            [(0, u64::MAX), (0, 64), (63, 66), (64 * 1000, 64 << 20), ((64 << 20) + 1, 1 << 40), (5, 5), (1 << 40, (1 << 40) + 1)]
        {
            let want: Vec<u64> = all.iter().copied().filter(|&a| a >= lo && a < hi).collect();
            assert_eq!(m.addrs_in(lo, hi), want, "[{lo:#x}, {hi:#x})");
        }
        for a in m.addrs_in(64, 64 << 20) {
            m.remove(a);
        }
        assert_eq!(m.sorted_addrs(), vec![3, 63, 64 << 20, (64 << 20) + 7, 1 << 40]);
        assert_eq!(m.len(), 5);
    }

    #[test]
    fn a_rollback_undoes_every_change_made_under_the_journal() {
        let mut m = NvmImage::default();
        for a in [1u64, 2, 64 * 5] {
            m.put(a, [a as u8; 64]);
        }
        let before: Vec<(u64, [u8; 64])> = m.iter().map(|(a, b)| (a, *b)).collect();
        m.begin_journal();
        m.put(1, [9; 64]);
        m.put(1, [8; 64]);
        m.put(7, [7; 64]);
        m.put(64 * 900, [6; 64]);
        m.retain(|a| a != 2 && a != 7);
        assert_eq!(m.len(), 3);
        let mut changed: Vec<u64> = m.journaled().collect();
        changed.sort_unstable();
        assert_eq!(changed, vec![1, 2, 7, 64 * 900], "each changed block once");
        m.rollback();
        let after: Vec<(u64, [u8; 64])> = m.iter().map(|(a, b)| (a, *b)).collect();
        assert_eq!(after, before);
        assert_eq!(m.len(), 3);
        assert_eq!(m.journaled().count(), 0, "the journal ends with the rollback");
        m.put(2, [5; 64]);
        m.rollback();
        assert_eq!(m.get(2), Some(&[5; 64]), "no journal, nothing to undo");
    }

    #[test]
    fn far_apart_addresses_land_in_their_own_radix_nodes() {
        // Blocks on either side of every radix boundary, up to the 2^44
        // blocks of the largest memory the config accepts.
        let mut want = Vec::new();
        for bits in [0u32, 6, 16, 26, 36, 43] {
            for a in [(1u64 << bits) - 1, 1 << bits, (1 << bits) + 1] {
                want.push(a);
            }
        }
        want.push((1 << 44) - 1);
        want.sort_unstable();
        want.dedup();
        let mut m = NvmImage::default();
        for &a in &want {
            m.put(a, [(a % 255) as u8; 64]);
        }
        assert_eq!(m.sorted_addrs(), want);
        for &a in &want {
            assert_eq!(m.get(a), Some(&[(a % 255) as u8; 64]), "block {a:#x}");
            assert!(m.get(a ^ (1 << 40)).is_none() || want.contains(&(a ^ (1 << 40))));
        }
        assert!(m.top.len() <= 1 << 18, "the top level stays within 2^18 entries");
    }
}
