//! The simulated persistent heap the persistent benchmarks run over, and
//! the undo-log transaction that every one of their updates goes through
//! (Secon 3.3 and 4.1; STAR V-A; Triad-NVM IV: PMDK-style undo logging).
//!
//! ```text
//!  0x0000_0000  log region (4 MiB): block 0 = log header (active tx id, 0 = none),
//!               entries from +64: [addr | nwords << 48][tx id][old word] x nwords
//!  0x0040_0000  root objects (4 MiB): head/tail, root pointer, counts
//!  0x0080_0000  the structure's heap: nodes, values, buckets, tables
//!        ...    (everything below 8 GiB)
//!
//!  dynamic (default, PMDK / Secon Fig. 6):
//!    tx-begin
//!    per update:  load old; log <- old; fence; epoch;  data <- new
//!    commit:      fence; epoch; log.header <- 0; fence; epoch; tx-commit
//!  static  (Secon 3.3, write set known): all log entries; fence; epoch; all data; fence; epoch; commit
//!  strict:  as dynamic, plus a fence and epoch after every update's data
//! ```
//!
//! The heap holds the structure's memory as the program sees it: a sparse
//! map of the 64 B blocks written so far, over an *implicit initial
//! population*. A benchmark's structure starts full (Secon: 1 GB); writing
//! millions of initialisation stores would dominate any run, so instead
//! every block's initial contents are a deterministic function of the seed
//! ([`Layout::initial`]), computed when the program reads it and stored in
//! host memory only once written. Host memory therefore grows with the part
//! of the structure a run writes, not with its nominal size. The simulated
//! memory itself still reads zero where the workload never stored (the
//! population is the program's view, not the NVM image's); `populate=true`
//! emits the population as plain stores before the first transaction, for
//! runs that want the image to hold it (bounded in size, see
//! [`MAX_POPULATE_BYTES`]).
//!
//! Every in-place write is undo-logged first: the old words are loaded,
//! copied into a log entry (stores flagged `log`), and a fence orders the
//! entry before the data. A word is logged once per transaction: its first
//! old value is the one recovery must restore (PMDK's `tx_add_range` skips
//! ranges already in the log the same way). Each fence is followed by an
//! [`Op::Epoch`] marker, the epoch boundary of epoch persistency.

use super::{Event, Op};
pub use crate::trace::event::{log_region_of_thread, LOG_BYTES};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// The log is thread 0's region of the events' convention (`workload::threads`
/// moves thread `t`'s log up by `t` regions).
pub const LOG_BASE: u64 = log_region_of_thread(0).0;
/// First log entry: the log header has the block before it to itself.
pub const LOG_ENTRIES: u64 = LOG_BASE + 64;
pub const ROOT_BASE: u64 = 4 << 20;
pub const HEAP_BASE: u64 = 8 << 20;
/// Every address a generator emits lies below this (the 8 GB PCM of
/// SecPB Table I).
pub const ADDR_LIMIT: u64 = 8 << 30;
/// `populate=true` is refused beyond this much initial population.
pub const MAX_POPULATE_BYTES: u64 = 256 << 20;
/// Entries of the initial-block cache (a power of two).
const ICACHE: usize = 1024;
/// Non-memory instructions between the loads and stores of a bulk copy
/// (snapshotting into the log, writing a value): a pointer increment.
pub const COPY_GAP: u32 = 1;

/// A stateless 64-bit mix of two words (the SplitMix64 finaliser over
/// their combination): the source of every implicit value.
pub fn mix(a: u64, b: u64) -> u64 {
    let mut z = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_add(0x632B_E59B_D9B4_E019).rotate_left(29);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// Each thread's undo-log region, as the workload's own log stores give
/// it: a region starts at its header (every transaction's first log store,
/// at the lowest address of the thread's log) and spans `LOG_BYTES`; a
/// thread with no log store has none. The region must agree with the
/// `log` flags: every log store of a thread in its region, no other
/// persistent store in any region. The error names the first store that
/// disagrees.
pub fn log_regions_of(events: &[Event], threads: usize) -> Result<Vec<Option<(u64, u64)>>, String> {
    let mut lo: Vec<Option<u64>> = vec![None; threads];
    for e in events.iter().filter(|e| e.op == Op::Store && e.log) {
        let t = e.thread as usize;
        if t >= threads {
            return Err(format!("a log store of thread {t}, but the workload has {threads} thread(s)"));
        }
        lo[t] = Some(lo[t].map_or(e.addr, |l| l.min(e.addr)));
    }
    let regions: Vec<Option<(u64, u64)>> = lo.iter().map(|l| l.map(|s| (s, s + LOG_BYTES))).collect();
    let inside = |a: u64| regions.iter().enumerate().find(|(_, r)| r.is_some_and(|(s, e)| a >= s && a < e)).map(|(t, _)| t);
    for e in events.iter().filter(|e| e.op == Op::Store && !e.volatile) {
        match (e.log, inside(e.addr)) {
            (true, Some(t)) if t == e.thread as usize => {}
            (true, _) => {
                return Err(format!(
                    "the log store {} of thread {} lies outside its log region {:#x?}",
                    e.describe(),
                    e.thread,
                    regions[e.thread as usize]
                ))
            }
            (false, Some(t)) => {
                return Err(format!(
                    "the store {} of thread {} is not flagged `log` but lies in thread {t}'s log region",
                    e.describe(),
                    e.thread
                ))
            }
            (false, None) => {}
        }
    }
    Ok(regions)
}

/// How a transaction orders its log and data writes (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TxStyle {
    #[default]
    Dynamic,
    Static,
    Strict,
}

/// The initial contents of a structure's memory.
pub trait Layout: Send {
    /// The 8 words of the 64 B block at `block_addr` before the workload
    /// writes it: a deterministic function of the seed.
    fn initial(&self, block_addr: u64) -> [u64; 8];
    /// The address ranges `[start, end)` the initial population occupies.
    fn extents(&self) -> Vec<(u64, u64)>;
}

/// A slot allocator over a region of fixed-size slots: freed slots are
/// reused last-in first-out (as a real allocator's free list keeps recently
/// freed memory hot), then fresh slots from `next` up to `cap`. Its state is
/// host-side: the allocator's own persistent metadata is not modelled.
#[derive(Clone, Debug)]
pub struct SlotAlloc {
    pub free: Vec<u64>,
    pub next: u64,
    pub cap: u64,
}

impl SlotAlloc {
    pub fn new(first_fresh: u64, cap: u64) -> Self {
        SlotAlloc { free: Vec::new(), next: first_fresh, cap }
    }
    pub fn alloc(&mut self) -> Option<u64> {
        if let Some(s) = self.free.pop() {
            return Some(s);
        }
        if self.next < self.cap {
            self.next += 1;
            return Some(self.next - 1);
        }
        None
    }
    pub fn release(&mut self, slot: u64) {
        self.free.push(slot);
    }
}

/// The contents of the values a generator creates: its `m`-th value
/// (counting from 1) has word `w` = `mix(mix(seed, m), w)`. One buffer
/// serves every value.
pub struct NewValues {
    seed: u64,
    made: u64,
    buf: Vec<u64>,
}

impl NewValues {
    pub fn new(seed: u64) -> Self {
        NewValues { seed, made: 0, buf: Vec::new() }
    }
    /// The words of the next value, `words` long.
    pub fn next_value(&mut self, words: usize) -> &mut [u64] {
        self.made += 1;
        let (seed, m) = (self.seed, self.made);
        self.buf.clear();
        self.buf.extend((0..words as u64).map(|w| mix(mix(seed, m), w)));
        &mut self.buf
    }
}

/// The persistent heap: memory image, event emission and the undo-log
/// transaction builder.
pub struct PHeap<L: Layout> {
    pub layout: L,
    blocks: FxHashMap<u64, [u64; 8]>,
    /// Recently computed initial blocks (direct-mapped): a walk reads the
    /// same untouched node several times, and computing it can cost
    /// divisions per word.
    icache: std::cell::RefCell<Vec<(u64, [u64; 8])>>,
    style: TxStyle,
    /// Non-memory instructions before each access of the structure's code.
    pub gap: u32,
    txid: u64,
    in_tx: bool,
    header_logged: bool,
    log_cursor: u64,
    /// Words logged in this transaction, as a bit mask per block.
    logged: FxHashMap<u64, u8>,
    /// The update being built: old words to log, new words to store.
    stage_log: Vec<(u64, u64)>,
    stage_data: Vec<(u64, u64)>,
    /// Static style: the whole transaction's log and data events.
    deferred_log: Vec<Event>,
    deferred_data: Vec<Event>,
    /// Data stored since the last fence (dynamic style).
    unfenced: bool,
    scratch_log: Vec<Event>,
    scratch_data: Vec<Event>,
}

impl<L: Layout> PHeap<L> {
    pub fn new(layout: L, style: TxStyle, gap: u32) -> Self {
        PHeap {
            layout,
            blocks: FxHashMap::default(),
            icache: std::cell::RefCell::new(vec![(u64::MAX, [0; 8]); ICACHE]),
            style,
            gap,
            txid: 0,
            in_tx: false,
            header_logged: false,
            log_cursor: LOG_ENTRIES,
            logged: FxHashMap::default(),
            stage_log: Vec::new(),
            stage_data: Vec::new(),
            deferred_log: Vec::new(),
            deferred_data: Vec::new(),
            unfenced: false,
            scratch_log: Vec::new(),
            scratch_data: Vec::new(),
        }
    }

    /// The initial contents of block `b`, through the cache.
    fn initial(&self, b: u64) -> [u64; 8] {
        cached_initial(&self.icache, &self.layout, b)
    }

    /// The word at `addr` as the program sees it (no event).
    pub fn peek(&self, addr: u64) -> u64 {
        debug_assert_eq!(addr % 8, 0);
        let b = addr & !63;
        let w = ((addr & 63) / 8) as usize;
        match self.blocks.get(&b) {
            Some(words) => words[w],
            None => self.initial(b)[w],
        }
    }

    /// `n` consecutive words from `addr` (no event).
    pub fn peek_words(&self, addr: u64, out: &mut [u64]) {
        let mut a = addr;
        let mut i = 0;
        while i < out.len() {
            let b = a & !63;
            let w0 = ((a & 63) / 8) as usize;
            let n = (8 - w0).min(out.len() - i);
            match self.blocks.get(&b) {
                Some(words) => out[i..i + n].copy_from_slice(&words[w0..w0 + n]),
                None => out[i..i + n].copy_from_slice(&self.initial(b)[w0..w0 + n]),
            }
            i += n;
            a += 8 * n as u64;
        }
    }

    /// Blocks written so far (host memory the run has materialised).
    pub fn written_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// An 8-byte load by the structure's code; returns the word.
    pub fn load(&self, out: &mut Vec<Event>, addr: u64) -> u64 {
        out.push(Event::load(addr, 8).after(self.gap));
        self.peek(addr)
    }

    /// Loads covering `[addr, addr + bytes)`, one per block, as a
    /// vectorised copy reads a value.
    pub fn copy_loads(&self, out: &mut Vec<Event>, addr: u64, bytes: u64) {
        let end = addr + bytes;
        let mut a = addr;
        let mut first = true;
        while a < end {
            let n = (64 - a % 64).min(end - a);
            out.push(Event::load(a, n as u8).after(if first { self.gap } else { COPY_GAP }));
            first = false;
            a += n;
        }
    }

    pub fn begin(&mut self, out: &mut Vec<Event>) {
        debug_assert!(!self.in_tx);
        self.txid += 1;
        self.in_tx = true;
        self.header_logged = false;
        self.log_cursor = LOG_ENTRIES;
        out.push(Event::marker(Op::TxBegin));
    }

    /// Log bytes this transaction has used so far.
    pub fn log_used(&self) -> u64 {
        self.log_cursor - LOG_BASE
    }

    /// Add the words of `[addr, addr + 8 * n)` not yet logged in this
    /// transaction to the update's log entries.
    pub fn snapshot(&mut self, addr: u64, n: u64) {
        debug_assert!(self.in_tx && addr.is_multiple_of(8));
        let mut a = addr;
        let end = addr + 8 * n;
        while a < end {
            let b = a & !63;
            let stop = end.min(b + 64);
            let (icache, layout) = (&self.icache, &self.layout);
            let words = *self.blocks.entry(b).or_insert_with(|| cached_initial(icache, layout, b));
            let mask = self.logged.entry(b).or_insert(0);
            while a < stop {
                let w = (a - b) / 8;
                if *mask & (1 << w) == 0 {
                    *mask |= 1 << w;
                    self.stage_log.push((a, words[w as usize]));
                }
                a += 8;
            }
        }
    }

    /// Set the words from `addr` in the update being built (the image
    /// changes now; the stores are emitted by [`PHeap::flush`]). Words not
    /// yet logged are snapshotted first, so no store escapes the log.
    pub fn set(&mut self, addr: u64, words: &[u64]) {
        self.snapshot(addr, words.len() as u64);
        let (mut a, mut i) = (addr, 0);
        while i < words.len() {
            let b = a & !63;
            let w0 = ((a - b) / 8) as usize;
            let n = (8 - w0).min(words.len() - i);
            // `snapshot` materialised the block.
            self.blocks.get_mut(&b).expect("snapshotted block")[w0..w0 + n].copy_from_slice(&words[i..i + n]);
            self.stage_data.extend((0..n).map(|k| (a + 8 * k as u64, words[i + k])));
            i += n;
            a += 8 * n as u64;
        }
    }

    /// Emit the update built by `snapshot`/`set`: its log entries, a fence
    /// and epoch, then its data stores.
    pub fn flush(&mut self, out: &mut Vec<Event>) {
        if self.stage_log.is_empty() && self.stage_data.is_empty() {
            return;
        }
        let mut log_ev = std::mem::take(&mut self.scratch_log);
        let mut data_ev = std::mem::take(&mut self.scratch_data);
        if !self.stage_log.is_empty() {
            if !self.header_logged {
                self.header_logged = true;
                log_ev.push(Event::store(LOG_BASE, 8, self.txid, true).after(self.gap));
            }
            // One entry per run of consecutive words.
            let mut i = 0;
            while i < self.stage_log.len() {
                let mut j = i + 1;
                while j < self.stage_log.len() && self.stage_log[j].0 == self.stage_log[j - 1].0 + 8 && j - i < 0xFFFF {
                    j += 1;
                }
                let start = self.stage_log[i].0;
                let n = (j - i) as u64;
                // Snapshot: read the old bytes, then copy them into the entry.
                let end = start + 8 * n;
                let mut a = start;
                while a < end {
                    let m = (64 - a % 64).min(end - a);
                    log_ev.push(Event::load(a, m as u8).after(COPY_GAP));
                    a += m;
                }
                if self.log_cursor + 16 + 8 * n > LOG_BASE + LOG_BYTES {
                    // Generators commit early long before this (see
                    // `log_used`); wrapping keeps addresses in the region.
                    self.log_cursor = LOG_ENTRIES;
                }
                let c = self.log_cursor;
                log_ev.push(Event::store(c, 8, start | n << 48, true).after(COPY_GAP));
                log_ev.push(Event::store(c + 8, 8, self.txid, true).after(COPY_GAP));
                for (k, &(_, old)) in self.stage_log[i..j].iter().enumerate() {
                    log_ev.push(Event::store(c + 16 + 8 * k as u64, 8, old, true).after(COPY_GAP));
                }
                self.log_cursor = c + 16 + 8 * n;
                i = j;
            }
        }
        for (k, &(a, v)) in self.stage_data.iter().enumerate() {
            data_ev.push(Event::store(a, 8, v, false).after(if k == 0 { self.gap } else { COPY_GAP }));
        }
        let logged = !self.stage_log.is_empty();
        self.stage_log.clear();
        self.stage_data.clear();
        match self.style {
            TxStyle::Static => {
                self.deferred_log.append(&mut log_ev);
                self.deferred_data.append(&mut data_ev);
            }
            TxStyle::Dynamic | TxStyle::Strict => {
                out.append(&mut log_ev);
                if logged {
                    out.push(Event::marker(Op::Fence));
                    out.push(Event::marker(Op::Epoch));
                }
                out.append(&mut data_ev);
                if self.style == TxStyle::Strict {
                    out.push(Event::marker(Op::Fence));
                    out.push(Event::marker(Op::Epoch));
                } else {
                    self.unfenced = true;
                }
            }
        }
        self.scratch_log = log_ev;
        self.scratch_data = data_ev;
    }

    /// One update: log the old words of `[addr, addr + 8 * words.len())`,
    /// fence, store the new ones.
    pub fn write(&mut self, out: &mut Vec<Event>, addr: u64, words: &[u64]) {
        self.set(addr, words);
        self.flush(out);
    }

    /// Commit: the data persists before the log is invalidated.
    pub fn commit(&mut self, out: &mut Vec<Event>) {
        self.flush(out);
        let fence = |out: &mut Vec<Event>| {
            out.push(Event::marker(Op::Fence));
            out.push(Event::marker(Op::Epoch));
        };
        if self.style == TxStyle::Static && !self.deferred_log.is_empty() {
            out.append(&mut self.deferred_log);
            fence(out);
            out.append(&mut self.deferred_data);
            fence(out);
        } else if self.unfenced {
            fence(out);
        }
        self.unfenced = false;
        if self.header_logged {
            out.push(Event::store(LOG_BASE, 8, 0, true).after(self.gap));
            fence(out);
        }
        self.logged.clear();
        self.in_tx = false;
        out.push(Event::marker(Op::TxCommit));
    }

    /// The initial population as plain stores (zero words are skipped:
    /// unwritten memory reads zero), then a fence and epoch.
    pub fn populate(&self, out: &mut Vec<Event>) {
        for (start, end) in self.layout.extents() {
            let mut b = start & !63;
            while b < end {
                let words = self.layout.initial(b);
                for (w, &v) in words.iter().enumerate() {
                    let a = b + 8 * w as u64;
                    if v != 0 && a >= start && a < end {
                        out.push(Event::store(a, 8, v, false).after(COPY_GAP));
                    }
                }
                b += 64;
            }
        }
        out.push(Event::marker(Op::Fence));
        out.push(Event::marker(Op::Epoch));
    }
}

/// One operation of a transactional generator `g`: the initial population
/// first if `populate` (the first operation of a `populate=true` run), then
/// one transaction of `updates` calls of `update`, committed and begun anew
/// whenever the log passes half its region, so that no transaction outgrows
/// the log. `heap` finds the generator's heap; what an update returns is
/// not needed here.
pub fn transaction<G, L: Layout, R>(
    g: &mut G,
    out: &mut Vec<Event>,
    populate: bool,
    updates: u32,
    heap: impl Fn(&mut G) -> &mut PHeap<L>,
    mut update: impl FnMut(&mut G, &mut Vec<Event>) -> R,
) {
    if populate {
        heap(g).populate(out);
    }
    heap(g).begin(out);
    for i in 0..updates {
        let h = heap(g);
        if i > 0 && h.log_used() > LOG_BYTES / 2 {
            h.commit(out);
            h.begin(out);
        }
        update(g, out);
    }
    heap(g).commit(out);
}

fn cached_initial<L: Layout>(icache: &std::cell::RefCell<Vec<(u64, [u64; 8])>>, layout: &L, b: u64) -> [u64; 8] {
    let mut c = icache.borrow_mut();
    let slot = &mut c[((b >> 6) as usize) & (ICACHE - 1)];
    if slot.0 != b {
        *slot = (b, layout.initial(b));
    }
    slot.1
}

/// Bytes the extents of a layout cover.
pub fn extent_bytes(ext: &[(u64, u64)]) -> u64 {
    ext.iter().map(|(s, e)| e - s).sum()
}

/// Check a generator's address plan: every extent below [`ADDR_LIMIT`],
/// and a population small enough to emit if `populate` is set.
pub fn check_plan(kind: &str, end: u64, population: u64, populate: bool) -> Result<(), String> {
    if end > ADDR_LIMIT {
        return Err(format!(
            "{kind} workload: the structure would reach {:#x}, beyond the 8 GiB address limit; lower size_mib (or the table counts)",
            end
        ));
    }
    if populate && population > MAX_POPULATE_BYTES {
        return Err(format!(
            "{kind} workload: populate=true would emit {} MiB of initial stores, more than the {} MiB allowed; lower size_mib or leave the population implicit",
            population >> 20,
            MAX_POPULATE_BYTES >> 20
        ));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Same seed, same events; another seed, other events.
    pub fn deterministic<G: crate::workload::Generator>(make: impl Fn(u64) -> G) {
        let run = |seed| {
            let mut g = make(seed);
            let mut v = Vec::new();
            for _ in 0..20 {
                g.next_op(&mut v);
            }
            v
        };
        let a = run(1);
        assert!(!a.is_empty());
        assert_eq!(a, run(1));
        assert_ne!(a, run(2));
    }

    /// Check an event stream against the transaction rules of the module
    /// docs, starting from the layout's initial memory, and that the memory
    /// it leaves equals the heap's image wherever it stored.
    pub fn check_stream<L: Layout>(ev: &[Event], h: &PHeap<L>) {
        use std::collections::HashMap;
        let init = |a: u64| h.layout.initial(a & !63)[((a & 63) / 8) as usize];
        let mut mem: HashMap<u64, u64> = HashMap::new();
        let val = |mem: &HashMap<u64, u64>, a: u64| mem.get(&a).copied().unwrap_or_else(|| init(a));
        let mut in_tx = false;
        let mut log: HashMap<u64, (u64, usize)> = HashMap::new();
        let mut before: HashMap<u64, u64> = HashMap::new();
        let mut last_fence = 0usize;
        let mut last_data = 0usize;
        let mut last_inval = None;
        for (i, e) in ev.iter().enumerate() {
            match e.op {
                Op::Store => {
                    assert!((1..=8).contains(&e.size) && e.addr % 64 + e.size as u64 <= 64, "#{i} {}", e.describe());
                    assert!(e.addr < ADDR_LIMIT);
                    assert_eq!(e.log, e.addr < LOG_BASE + LOG_BYTES, "#{i}: log stores, and only they, write the log region");
                    if e.log {
                        assert!(in_tx, "#{i}: log store outside a transaction");
                        log.insert(e.addr, (e.value, i));
                        if e.addr == LOG_BASE && e.value == 0 {
                            assert!(last_fence > last_data, "#{i}: the log is invalidated before the data persisted");
                            last_inval = Some(i);
                        }
                    } else if in_tx {
                        let a = e.addr;
                        let old = *before.entry(a).or_insert_with(|| val(&mem, a));
                        let (hdr_tx, hdr_i) = log.get(&LOG_BASE).copied().expect("log header set");
                        assert!(hdr_tx != 0 && hdr_i < last_fence);
                        let mut c = LOG_ENTRIES;
                        let mut found = false;
                        while let Some(&(hdr, hi)) = log.get(&c) {
                            let (start, n) = (hdr & ((1 << 48) - 1), hdr >> 48);
                            assert_eq!(log.get(&(c + 8)).map(|x| x.0), Some(hdr_tx), "entry at {c:#x} names the transaction");
                            if (start..start + 8 * n).contains(&a) {
                                let (v, vi) = log[&(c + 16 + (a - start))];
                                assert_eq!(v, old, "#{i}: the log holds the old bytes of {a:#x}");
                                assert!(hi < last_fence && vi < last_fence, "#{i}: a fence separates the log entry from the store");
                                found = true;
                                break;
                            }
                            c += 16 + 8 * n;
                        }
                        assert!(found, "#{i}: store to {a:#x} without a log entry");
                        last_data = i;
                    }
                    if !e.log {
                        mem.insert(e.addr, e.value);
                    }
                }
                Op::Load => assert!((1..=64).contains(&e.size) && e.addr % 64 + e.size as u64 <= 64, "#{i} {}", e.describe()),
                Op::Fence => {
                    assert_eq!(ev.get(i + 1).map(|x| x.op), Some(Op::Epoch), "#{i}: an epoch marker follows each fence");
                    last_fence = i;
                }
                Op::Epoch => assert_eq!(ev[i - 1].op, Op::Fence),
                Op::TxBegin => {
                    assert!(!in_tx);
                    in_tx = true;
                    log.clear();
                    before.clear();
                    last_inval = None;
                }
                Op::TxCommit => {
                    assert!(in_tx);
                    in_tx = false;
                    if let Some(k) = last_inval {
                        assert!(last_fence > k, "#{i}: the invalidation persists before the commit");
                    } else {
                        assert!(before.is_empty(), "#{i}: a transaction that wrote data never invalidated its log");
                    }
                }
                Op::Compute => panic!("#{i}: generators make no compute events"),
            }
        }
        assert!(!in_tx, "the stream ends inside a transaction");
        for (a, v) in &mem {
            assert_eq!(*v, h.peek(*a), "the stream's last store to {a:#x} differs from the structure's memory");
        }
    }

    /// A flat layout whose initial word at `a` is `a + 1` below 1 MiB.
    pub struct Flat;
    impl Layout for Flat {
        fn initial(&self, b: u64) -> [u64; 8] {
            std::array::from_fn(|w| if (HEAP_BASE..HEAP_BASE + (1 << 20)).contains(&b) { b + 8 * w as u64 + 1 } else { 0 })
        }
        fn extents(&self) -> Vec<(u64, u64)> {
            vec![(HEAP_BASE, HEAP_BASE + 4096)]
        }
    }

    #[test]
    fn dynamic_tx_logs_old_words_once_then_fences_then_writes() {
        let mut h = PHeap::new(Flat, TxStyle::Dynamic, 3);
        let mut v = Vec::new();
        h.begin(&mut v);
        let a = HEAP_BASE + 56;
        h.write(&mut v, a, &[10, 11]);
        h.write(&mut v, a + 8, &[12]);
        h.commit(&mut v);
        let d: Vec<String> = v.iter().map(|e| e.describe()).collect();
        let expect = [
            "tx-begin".to_string(),
            "store64 0x0 <- 0x1 (log)".into(),
            format!("load64 {:#x}", a),
            format!("load64 {:#x}", a + 8),
            format!("store64 0x40 <- {:#x} (log)", a | 2 << 48),
            "store64 0x48 <- 0x1 (log)".into(),
            format!("store64 0x50 <- {:#x} (log)", a + 1),
            format!("store64 0x58 <- {:#x} (log)", a + 9),
            "fence".into(),
            "epoch".into(),
            format!("store64 {:#x} <- 0xa", a),
            format!("store64 {:#x} <- 0xb", a + 8),
            // a + 8 is already logged: no entry, no fence.
            format!("store64 {:#x} <- 0xc", a + 8),
            "fence".into(),
            "epoch".into(),
            "store64 0x0 <- 0x0 (log)".into(),
            "fence".into(),
            "epoch".into(),
            "tx-commit".into(),
        ];
        assert_eq!(d, expect);
        assert_eq!(h.peek(a), 10);
        assert_eq!(h.peek(a + 8), 12);
        assert_eq!(h.peek(a + 16), a + 16 + 1, "untouched words keep their initial value");
        // The next transaction logs a + 8 again, with its new old value.
        let mut v = Vec::new();
        h.begin(&mut v);
        h.write(&mut v, a + 8, &[13]);
        h.commit(&mut v);
        assert!(v.iter().any(|e| e.log && e.value == 12 && e.addr == 0x50), "{v:?}");
    }

    #[test]
    fn static_and_strict_styles_order_log_and_data() {
        for style in [TxStyle::Static, TxStyle::Strict] {
            let mut h = PHeap::new(Flat, style, 0);
            let mut v = Vec::new();
            h.begin(&mut v);
            h.write(&mut v, HEAP_BASE, &[1]);
            h.write(&mut v, HEAP_BASE + 64, &[2]);
            h.commit(&mut v);
            let ops: String = v
                .iter()
                .map(|e| match e.op {
                    Op::Store if e.log => 'L',
                    Op::Store => 'S',
                    Op::Load => 'r',
                    Op::Fence => 'F',
                    Op::Epoch => 'E',
                    Op::TxBegin => '<',
                    Op::TxCommit => '>',
                    Op::Compute => 'c',
                })
                .collect();
            let expect = match style {
                TxStyle::Static => "<LrLLLrLLLFESSFELFE>",
                _ => "<LrLLLFESFErLLLFESFELFE>",
            };
            assert_eq!(ops, expect, "{style:?}");
        }
    }

    #[test]
    fn copy_loads_split_at_blocks_and_slots_recycle() {
        let h = PHeap::new(Flat, TxStyle::Dynamic, 2);
        let mut v = Vec::new();
        h.copy_loads(&mut v, HEAP_BASE + 40, 100);
        let sizes: Vec<(u64, u8)> = v.iter().map(|e| (e.addr - HEAP_BASE, e.size)).collect();
        assert_eq!(sizes, vec![(40, 24), (64, 64), (128, 12)]);
        let mut s = SlotAlloc::new(5, 7);
        assert_eq!((s.alloc(), s.alloc(), s.alloc()), (Some(5), Some(6), None));
        s.release(5);
        assert_eq!(s.alloc(), Some(5));
    }

    #[test]
    fn populate_emits_nonzero_initial_words() {
        let h = PHeap::new(Flat, TxStyle::Dynamic, 2);
        let mut v = Vec::new();
        h.populate(&mut v);
        assert_eq!(v.len(), 4096 / 8 + 2);
        assert!(v[..512].iter().all(|e| e.op == Op::Store && e.value == e.addr + 1));
        assert!(check_plan("x", ADDR_LIMIT + 1, 0, false).unwrap_err().contains("8 GiB"));
        assert!(check_plan("x", 1, MAX_POPULATE_BYTES + 1, true).unwrap_err().contains("populate"));
    }
}
