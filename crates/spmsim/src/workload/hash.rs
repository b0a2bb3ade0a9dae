//! `hash`: a persistent chained hash table; each operation inserts or
//! deletes a random key (Secon 4.1 "Hash: insert/delete random items in a
//! 1GB hash table", 256 B values; STAR V-A; Triad-NVM IV, PMDK hashmap).
//! The same table, full and updated in place, is the index of `ycsb`.
//!
//! ```text
//!  ROOT_BASE: [count][buckets][bucket array][node pool]
//!  HEAP_BASE: bucket[0..B]            8 B heads (node address, 0 = empty)
//!  node pool: slot s = [key][next][value ...]     64 B-aligned slots
//!  insert k: walk bucket k % B; log+write node; log+write bucket head; count++
//!  delete k: walk to k; log+write the link that points at it; count--
//! ```
//!
//! Keys are `0..S` for `S` node slots; an operation draws a key and deletes
//! it if present, else inserts it (so about half the keys are present). The
//! initial population (implicit, see [`super::pheap`]): key `k` is present
//! with probability 1/2, in node slot `k`, and bucket chains link the
//! present keys of a bucket in increasing order. New nodes are prepended to
//! their chain, as PMDK's hashmap does; freed slots are reused first, then
//! slots that started empty.

use super::params::structure_params;
use super::pheap::{align_up, check_plan, mix, transaction, Layout, NewValues, PHeap, TxStyle, HEAP_BASE, ROOT_BASE};
use super::{Event, Generator};
use crate::util::rng::SplitMix64;

structure_params! {
    /// The table (Secon: 256 B values, 1 GB).
    HashParams, kind = "hash", gap = 5, max_size_mib = 8000
}

impl HashParams {
    pub fn validate(&self) -> Result<(), String> {
        self.check_keys()?;
        let l = HashLayout::new(self.size_mib << 20, self.value_bytes, 4, false, 0);
        l.check("hash", self.populate)
    }
}

const COUNT: u64 = ROOT_BASE;

/// Address plan and implicit population of a chained table.
pub struct HashLayout {
    /// Node slots, which is also the key space.
    pub slots: u64,
    pub buckets: u64,
    pub stride: u64,
    pub value_bytes: u64,
    pub node_base: u64,
    /// Every key starts present (ycsb) rather than half of them.
    all_present: bool,
    seed: u64,
}

impl HashLayout {
    /// A table of about `bytes`, with `per_bucket` key slots per bucket.
    pub fn new(bytes: u64, value_bytes: u64, per_bucket: u64, all_present: bool, seed: u64) -> Self {
        let stride = align_up(16 + value_bytes, 64);
        let slots = (bytes / (stride + 8 / per_bucket.max(1))).max(1);
        let buckets = slots.div_ceil(per_bucket).max(1);
        let node_base = align_up(HEAP_BASE + 8 * buckets, 4096);
        HashLayout { slots, buckets, stride, value_bytes, node_base, all_present, seed: mix(seed, 0x4A54) }
    }
    pub fn end(&self) -> u64 {
        self.node_base + self.slots * self.stride
    }
    pub fn check(&self, kind: &str, populate: bool) -> Result<(), String> {
        if self.slots < 2 {
            return Err(format!("{kind} workload: size_mib holds fewer than two entries"));
        }
        check_plan(kind, self.end(), self.end() - HEAP_BASE, populate)
    }
    pub fn bucket_addr(&self, b: u64) -> u64 {
        HEAP_BASE + 8 * b
    }
    pub fn node_addr(&self, slot: u64) -> u64 {
        self.node_base + slot * self.stride
    }
    pub fn present0(&self, k: u64) -> bool {
        self.all_present || mix(self.seed, k) & 1 == 1
    }
    /// The first initially present key at or after `k` in `k`'s bucket.
    fn chain_from(&self, mut k: u64) -> u64 {
        while k < self.slots {
            if self.present0(k) {
                return self.node_addr(k);
            }
            k += self.buckets;
        }
        0
    }
    pub fn initial_value_word(&self, key: u64, w: u64) -> u64 {
        mix(mix(self.seed ^ 0x5A5A, key), w)
    }
}

impl Layout for HashLayout {
    fn initial(&self, b: u64) -> [u64; 8] {
        if b == ROOT_BASE {
            // The count is written on the first change; until then the
            // generator supplies it (see `HashTable::new`).
            return [0, self.buckets, HEAP_BASE, self.node_base, 0, 0, 0, 0];
        }
        if b >= HEAP_BASE && b < HEAP_BASE + 8 * self.buckets {
            return std::array::from_fn(|w| {
                let k = (b - HEAP_BASE) / 8 + w as u64;
                if k < self.buckets {
                    self.chain_from(k)
                } else {
                    0
                }
            });
        }
        if b >= self.node_base && b < self.end() {
            let slot = (b - self.node_base) / self.stride;
            if !self.present0(slot) {
                return [0; 8];
            }
            let first = (b - self.node_addr(slot)) / 8;
            return std::array::from_fn(|w| match first + w as u64 {
                0 => slot,
                1 => self.chain_from(slot + self.buckets),
                i if i - 2 < self.value_bytes / 8 => self.initial_value_word(slot, i - 2),
                _ => 0,
            });
        }
        [0; 8]
    }
    fn extents(&self) -> Vec<(u64, u64)> {
        vec![(ROOT_BASE, ROOT_BASE + 32), (HEAP_BASE, self.end())]
    }
}

/// Root block with the real initial count: [`HashLayout`] alone cannot know
/// it without a scan, so the table counts once and answers for that word.
pub struct CountedLayout {
    pub inner: HashLayout,
    count0: u64,
}

impl Layout for CountedLayout {
    fn initial(&self, b: u64) -> [u64; 8] {
        let mut w = self.inner.initial(b);
        if b == ROOT_BASE {
            w[0] = self.count0;
        }
        w
    }
    fn extents(&self) -> Vec<(u64, u64)> {
        self.inner.extents()
    }
}

/// The table over the persistent heap, with its host-side allocator.
pub struct HashTable {
    pub h: PHeap<CountedLayout>,
    free: Vec<u64>,
    fresh: u64,
}

/// Where a lookup ended: the link that points (or would point) at the key,
/// and the key's node (0 if absent).
pub struct Found {
    pub bucket: u64,
    pub link: u64,
    pub node: u64,
}

impl HashTable {
    pub fn new(layout: HashLayout, style: TxStyle, gap: u32) -> Self {
        let count0 = if layout.all_present { layout.slots } else { (0..layout.slots).filter(|&k| layout.present0(k)).count() as u64 };
        HashTable { h: PHeap::new(CountedLayout { inner: layout, count0 }, style, gap), free: Vec::new(), fresh: 0 }
    }
    pub fn layout(&self) -> &HashLayout {
        &self.h.layout.inner
    }

    /// Walk `k`'s chain, loading each link and key.
    pub fn find(&self, out: &mut Vec<Event>, k: u64) -> Found {
        let l = self.layout();
        let bucket = l.bucket_addr(k % l.buckets);
        let mut link = bucket;
        let mut cur = self.h.load(out, link);
        while cur != 0 {
            if self.h.load(out, cur) == k {
                return Found { bucket, link, node: cur };
            }
            link = cur + 8;
            cur = self.h.load(out, link);
        }
        Found { bucket, link, node: 0 }
    }

    fn alloc(&mut self) -> u64 {
        if let Some(s) = self.free.pop() {
            return s;
        }
        // Slots that started empty, in order; one exists while a key is
        // absent (slots = keys).
        loop {
            let s = self.fresh;
            self.fresh += 1;
            if !self.layout().present0(s) {
                debug_assert!(s < self.layout().slots);
                return s;
            }
        }
    }

    fn add_count(&mut self, out: &mut Vec<Event>, d: i64) {
        let c = self.h.load(out, COUNT);
        self.h.write(out, COUNT, &[c.wrapping_add(d as u64)]);
    }

    /// Insert `k` (absent, `f` from [`HashTable::find`]) with `value`.
    pub fn insert(&mut self, out: &mut Vec<Event>, k: u64, f: &Found, value: &[u64]) {
        let slot = self.alloc();
        let node = self.layout().node_addr(slot);
        let head = self.h.peek(f.bucket);
        self.h.set(node, &[k, head]);
        self.h.set(node + 16, value);
        self.h.flush(out);
        self.h.write(out, f.bucket, &[node]);
        self.add_count(out, 1);
    }

    /// Unlink the node `f` found.
    pub fn remove(&mut self, out: &mut Vec<Event>, f: &Found) {
        let next = self.h.load(out, f.node + 8);
        self.h.write(out, f.link, &[next]);
        self.add_count(out, -1);
        let l = self.layout();
        self.free.push((f.node - l.node_base) / l.stride);
    }

    /// Host-side walk of every chain: the keys present, or what is broken.
    pub fn check(&self) -> Result<Vec<u64>, String> {
        let l = self.layout();
        let mut keys = Vec::new();
        let mut seen = rustc_hash::FxHashSet::default();
        for b in 0..l.buckets {
            let mut cur = self.h.peek(l.bucket_addr(b));
            while cur != 0 {
                if !seen.insert(cur) {
                    return Err(format!("node {cur:#x} linked twice"));
                }
                if cur < l.node_base || !(cur - l.node_base).is_multiple_of(l.stride) || cur >= l.end() {
                    return Err(format!("bucket {b} links {cur:#x}, not a node slot"));
                }
                let k = self.h.peek(cur);
                if k % l.buckets != b {
                    return Err(format!("key {k} in bucket {b}"));
                }
                keys.push(k);
                cur = self.h.peek(cur + 8);
            }
        }
        let count = self.h.peek(COUNT);
        if count != keys.len() as u64 {
            return Err(format!("count word {count}, chains hold {}", keys.len()));
        }
        keys.sort_unstable();
        if keys.windows(2).any(|w| w[0] == w[1]) {
            return Err("a key is present twice".into());
        }
        Ok(keys)
    }
}

pub struct Hash {
    pub t: HashTable,
    r: SplitMix64,
    p: HashParams,
    populate: bool,
    values: NewValues,
}

impl Hash {
    pub fn new(seed: u64, p: HashParams) -> Result<Self, String> {
        p.validate()?;
        let t = HashTable::new(HashLayout::new(p.size_mib << 20, p.value_bytes, 4, false, seed), p.style, p.gap);
        Ok(Hash { t, r: SplitMix64::new(seed), populate: p.populate, p, values: NewValues::new(mix(seed, 0x4A55)) })
    }

    /// Toggle key `k`: delete it if present, else insert it. True if inserted.
    pub fn toggle(&mut self, out: &mut Vec<Event>, k: u64) -> bool {
        let f = self.t.find(out, k);
        if f.node != 0 {
            self.t.remove(out, &f);
            return false;
        }
        let v = self.values.next_value((self.p.value_bytes / 8) as usize);
        self.t.insert(out, k, &f, v);
        true
    }

    /// An operation of the stream: toggle a key drawn uniformly.
    fn toggle_random(&mut self, out: &mut Vec<Event>) -> bool {
        let k = self.r.below(self.t.layout().slots);
        self.toggle(out, k)
    }
}

impl Generator for Hash {
    fn next_op(&mut self, out: &mut Vec<Event>) {
        let (populate, toggles) = (std::mem::take(&mut self.populate), self.p.ops_per_tx.draw(&mut self.r));
        transaction(self, out, populate, toggles, |g| &mut g.t.h, Self::toggle_random);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::params::OpsPerTx;
    use crate::workload::pheap::tests::check_stream;
    use std::collections::BTreeMap;

    #[test]
    fn lookups_find_what_was_inserted_and_miss_what_was_deleted() {
        let p = HashParams { size_mib: 1, ops_per_tx: OpsPerTx::fixed(4), ..HashParams::default() };
        let mut g = Hash::new(5, p).unwrap();
        let slots = g.t.layout().slots;
        let mut model: BTreeMap<u64, bool> = (0..slots).map(|k| (k, g.t.layout().present0(k))).collect();
        assert_eq!(
            g.t.check().unwrap(),
            model.iter().filter(|x| *x.1).map(|x| *x.0).collect::<Vec<_>>(),
            "the implicit table is consistent"
        );
        let mut ev = Vec::new();
        let mut r = SplitMix64::new(2);
        for _ in 0..6000 {
            let k = r.below(slots);
            let mut v = Vec::new();
            g.t.h.begin(&mut v);
            let inserted = g.toggle(&mut v, k);
            g.t.h.commit(&mut v);
            assert_eq!(inserted, !model[&k]);
            model.insert(k, inserted);
            ev.extend(v);
        }
        let keys = g.t.check().unwrap();
        assert_eq!(keys, model.iter().filter(|x| *x.1).map(|x| *x.0).collect::<Vec<_>>());
        for k in 0..slots {
            assert_eq!(g.t.find(&mut Vec::new(), k).node != 0, model[&k], "key {k}");
        }
        check_stream(&ev, &g.t.h);
        // Generated transactions keep the table whole too.
        let mut v = Vec::new();
        for _ in 0..300 {
            g.next_op(&mut v);
        }
        g.t.check().unwrap();
    }

    #[test]
    fn same_seed_same_events() {
        crate::workload::pheap::tests::deterministic(|seed| {
            Hash::new(seed, HashParams { size_mib: 1, ..HashParams::default() }).ok().unwrap()
        });
    }
}
