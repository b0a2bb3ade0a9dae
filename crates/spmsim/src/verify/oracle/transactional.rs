//! The transactional guarantee (Secon 3.3): what a relaxed persistency
//! model promises an undo-logged program. See the parent module's docs.
//!
//! ```text
//!  per thread, while the events run:
//!    TxBegin         -> the open transaction's stores start collecting
//!    store (data)    -> in the open transaction, or loose until the next barrier
//!    store log[0]<-0 -> the commit record: from here to TxCommit either outcome
//!    TxCommit        -> the transaction's stores join the committed image
//!  at a crash point: power_fail, recover, replay every thread's log
//!    (workload::pheap's format), then compare the committed image
//! ```
//!
//! A word no committed store has defined reads zero in NVM (the workloads'
//! initial population is the program's view, not the image's,
//! `workload::pheap`), but a rolled-back transaction restores the program's
//! view of it: the old value its log entry holds. Either is right for such
//! a word; the oracle learns the program's initial value of a word from
//! the first log entry that records it before any store has.

use super::{check_point_drain, unrestored_violation, CrashCheck, CrashReport, Guarantee, IncrementalReads, PointResult, Reads, Violation};
use crate::engine::store::CheckFailure;
use crate::machine::System;
use crate::workload::{log_regions_of, Event, Op};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// A store's bytes: block, offset, length, value.
type Bytes = (u64, u8, u8, u64);

/// One thread's transactional state at some event.
#[derive(Clone, Debug, Default)]
struct ThreadState {
    open: bool,
    /// The commit record (the log header set to 0) has been stored and
    /// TxCommit not yet reached.
    committing: bool,
    /// The open transaction's data stores, in order.
    tx: Vec<Bytes>,
    /// Data stores outside any transaction since the thread's last barrier.
    loose: Vec<Bytes>,
    /// The open transaction's log entries wholly written so far, in log
    /// order: their place and words (what a checksum would seal).
    entries: Vec<(u64, Vec<u64>)>,
    /// The entry being written.
    partial: Option<(u64, Vec<u64>)>,
}

/// What a checked block holds at the last commit.
#[derive(Clone, Copy, Debug)]
struct BlockImage {
    value: [u8; 64],
    /// Words a committed store has defined (the rest read 0 or `initial`).
    defined: u8,
    /// The program's initial value of the words in `known`, from the log.
    initial: [u8; 64],
    known: u8,
}

impl Default for BlockImage {
    fn default() -> Self {
        BlockImage { value: [0; 64], defined: 0, initial: [0; 64], known: 0 }
    }
}

impl BlockImage {
    fn store(&mut self, off: u8, len: u8, value: u64) {
        apply(&mut self.value, off, len, value);
        self.defined |= word_mask(off, len);
    }

    /// Whether `got` is this image, word by word: the committed value, the
    /// `alt` one (loose stores persisted), or for an undefined word the
    /// program's initial value (restored by a rollback).
    fn accepts(&self, alt: &BlockImage, got: &[u8; 64]) -> bool {
        (0..8).all(|w| {
            let r = 8 * w..8 * w + 8;
            got[r.clone()] == self.value[r.clone()]
                || got[r.clone()] == alt.value[r.clone()]
                || (self.defined & (1 << w) == 0 && self.known & (1 << w) != 0 && got[r.clone()] == self.initial[r])
        })
    }
}

fn word_mask(off: u8, len: u8) -> u8 {
    let (first, last) = (off / 8, (off + len - 1) / 8);
    (first..=last).fold(0u8, |m, w| m | 1 << w)
}

/// How a thread's undo log is laid out: what its recovery reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LogFormat {
    /// `workload::pheap`'s: the header (the active transaction's id, 0 for
    /// none) at the region's start, entries from `start + 64`. Entries name
    /// words by their offset in the program's pool, which is mapped at
    /// `base` (0; a persistent region's start on a Triad-NVM machine).
    Pheap { base: u64 },
    /// array-swap's one record at the region's start, `[i, a[i], j, a[j],
    /// valid]`, over the array at `base` (where a data store after the
    /// first record puts `a[i]`). The valid word, written last in the same
    /// line, is the record's own seal and its commit record.
    Record { base: u64 },
}

impl LogFormat {
    /// The format of the log at `start`, from the offsets its stores use.
    fn detect(events: &[Event], thread: u8, start: u64) -> Result<LogFormat, String> {
        let of_thread = |e: &&Event| e.thread == thread && e.op == Op::Store && !e.volatile;
        let offsets: Vec<u64> = events.iter().filter(of_thread).filter(|e| e.log).map(|e| e.addr - start).collect();
        if offsets.iter().any(|&o| o >= 64) {
            // The log region is the pool's own first part.
            let base = start.wrapping_sub(crate::workload::log_region_of_thread(thread as usize).0);
            return Ok(LogFormat::Pheap { base });
        }
        if !offsets.iter().all(|o| [0, 8, 16, 24, 32].contains(o)) {
            return Err(format!("thread {thread}'s log at {start:#x} is neither pheap's (header, entries from +64) nor a 5-word record"));
        }
        // The first record's i, then the first data store after it: a[i].
        let mut i = None;
        for e in events.iter().filter(of_thread) {
            match (e.log, i) {
                (true, None) if e.addr == start => i = Some(e.value),
                (false, Some(i)) => return Ok(LogFormat::Record { base: e.addr.wrapping_sub(8 * i) }),
                _ => {}
            }
        }
        Ok(LogFormat::Record { base: 0 })
    }

    /// The commit record: the store that ends a transaction in the log.
    fn commit_record(self, start: u64) -> u64 {
        match self {
            LogFormat::Pheap { .. } => start,
            LogFormat::Record { .. } => start + 32,
        }
    }
}

/// Where a thread's log parse stands (`workload::pheap`'s entry format).
#[derive(Clone, Copy, Debug, Default)]
enum LogParse {
    #[default]
    Head,
    TxId {
        addr: u64,
        n: u64,
    },
    Old {
        addr: u64,
        n: u64,
        k: u64,
    },
}

/// What a crash point must show.
#[derive(Clone, Debug)]
struct Expect<'e> {
    /// The committed image of every checked block (outside the logs), in
    /// block order.
    committed: &'e [(u64, BlockImage)],
    threads: &'e [ThreadState],
}

fn apply(line: &mut [u8; 64], off: u8, len: u8, value: u64) {
    let o = off as usize;
    line[o..o + len as usize].copy_from_slice(&value.to_le_bytes()[..len as usize]);
}

/// An entry of an undo log: the address of its first word and the old words.
struct Entry {
    addr: u64,
    old: Vec<u64>,
}

/// Reads 8-byte words of persistent memory through the secure read path,
/// a block at a time.
struct Words<'a> {
    sys: &'a mut System,
    cached: Option<(u64, [u8; 64])>,
}

impl Words<'_> {
    fn word(&mut self, addr: u64) -> Result<u64, CheckFailure> {
        let b = addr / 64;
        let line = match self.cached {
            Some((cb, l)) if cb == b => l,
            _ => {
                let l = self.sys.mc.read(b)?;
                self.cached = Some((b, l));
                l
            }
        };
        let o = (addr % 64) as usize;
        Ok(u64::from_le_bytes(line[o..o + 8].try_into().expect("8 bytes")))
    }
}

/// The undo-log replay of one thread's region `[start, end)`, as the
/// program's recovery does it (`workload::pheap`'s format): the header
/// holds the active transaction's id (0: none); its entries follow from
/// `start + 64`, `[addr | nwords << 48][tx id][old word] x nwords`; the walk
/// stops at the first entry of another transaction or the first entry
/// that is not whole. The old words are written back newest entry first,
/// so that where two entries cover a word the oldest value is the one
/// left. Returns the header read before the replay; an integrity failure
/// is an error, with what was restored so far left in place.
///
/// Whole: pheap's entries carry no checksum, and its tx id is written
/// before the old words, so a crash inside an entry (under any model) or
/// between its lines (TEP sends the lines of one epoch in any order) leaves
/// an entry whose tx id matches and whose old words are another
/// transaction's; replaying it would write stale words over committed
/// data that was never changed. A real undo log (PMDK's ulog) seals each
/// entry with a checksum; the oracle stands in for one with the entries
/// the thread had wholly written before the crash (`written`, in log
/// order): an entry is replayed only if NVM holds exactly the words written
/// at its place. The data an entry covers is stored only after the fence
/// that ends the entry's epoch, so a torn entry's data has not been
/// written and stopping there loses nothing.
fn replay(sys: &mut System, (start, end, base): (u64, u64, u64), written: &[(u64, Vec<u64>)]) -> Result<u64, String> {
    let mut w = Words { sys, cached: None };
    let header = w.word(start).map_err(|e| format!("the log header at {start:#x} fails its check: {e}"))?;
    if header == 0 {
        return Ok(0);
    }
    let mut entries = Vec::new();
    let mut pos = start + 64;
    for (at, words) in written {
        if *at != pos || pos + 8 * words.len() as u64 > end {
            break;
        }
        let tx = w.word(pos + 8).map_err(|e| format!("the log entry at {pos:#x} fails its check: {e}"))?;
        if tx != header {
            break;
        }
        let mut whole = true;
        for (k, &want) in words.iter().enumerate() {
            let a = pos + 8 * k as u64;
            let got = w.word(a).map_err(|e| format!("the log entry's word at {a:#x} fails its check: {e}"))?;
            whole &= got == want;
        }
        if !whole {
            break;
        }
        let addr = base + (words[0] & ((1 << 48) - 1));
        entries.push(Entry { addr, old: words[2..].to_vec() });
        pos += 8 * words.len() as u64;
    }
    for e in entries.iter().rev() {
        for (k, &v) in e.old.iter().enumerate() {
            let a = e.addr + 8 * k as u64;
            let b = a / 64;
            let mut line =
                sys.mc.read(b).map_err(|x| format!("restoring {a:#x} (transaction {header}): the block fails its check: {x}"))?;
            apply(&mut line, (a % 64) as u8, 8, v);
            sys.mc.write(b, &line).map_err(|x| format!("restoring {a:#x} (transaction {header}): {x}"))?;
        }
    }
    Ok(header)
}

/// array-swap's recovery: a record whose valid word is 1 puts both old
/// elements back. Returns whether a transaction was open (valid = 1).
fn replay_record(sys: &mut System, start: u64, base: u64) -> Result<bool, String> {
    let mut w = Words { sys, cached: None };
    let mut r = [0u64; 5];
    for (k, x) in r.iter_mut().enumerate() {
        let a = start + 8 * k as u64;
        *x = w.word(a).map_err(|e| format!("the log record's word at {a:#x} fails its check: {e}"))?;
    }
    if r[4] != 1 {
        return Ok(false);
    }
    for (i, old) in [(r[0], r[1]), (r[2], r[3])] {
        let a = base.wrapping_add(8 * i);
        let b = a / 64;
        let mut line = sys.mc.read(b).map_err(|x| format!("restoring {a:#x}: the block fails its check: {x}"))?;
        apply(&mut line, (a % 64) as u8, 8, old);
        sys.mc.write(b, &line).map_err(|x| format!("restoring {a:#x}: {x}"))?;
    }
    Ok(true)
}

/// A thread's log: its region and format.
type ThreadLog = Option<(u64, u64, LogFormat)>;

/// What the checked blocks' reads at a crash point start from: the reads
/// themselves, the blocks whose expected image changed since the last point
/// (`changed`, indices), the expected images the last point laid over the
/// committed one (`last_laid`), and the blocks the main run wrote since.
struct PointReads<'r> {
    reads: &'r mut IncrementalReads,
    changed: &'r [usize],
    last_laid: &'r mut Vec<usize>,
    changes: &'r [u64],
}

fn check_point(
    sys: &mut System,
    k: u64,
    last: &str,
    regions: &[ThreadLog],
    expect: &Expect,
    max_keep: usize,
    pr: PointReads,
) -> PointResult {
    let (drain, undrained, rec, why_recovery, unrestored, np) = check_point_drain(sys);
    let mut violations = Vec::new();
    let mut count = unrestored.len() as u64;
    let mut by_check = BTreeMap::new();
    if count > 0 {
        by_check.insert("stale-restore".to_string(), count);
        violations.extend(unrestored.iter().take(max_keep).map(|&a| unrestored_violation(k, last, a, why_recovery)));
    }
    let mut replay_failed = false;
    let mut note =
        |check: &str, address: u64, expected: String, actual: Option<String>, detail: String, violations: &mut Vec<Violation>| {
            count += 1;
            *by_check.entry(check.to_string()).or_insert(0u64) += 1;
            if violations.len() < max_keep {
                violations.push(Violation {
                    crash_point: k,
                    after_event: last.to_string(),
                    address: format!("{address:#x}"),
                    expected,
                    actual,
                    check: check.to_string(),
                    detail,
                });
            }
        };
    // Each thread's log, replayed; the header read first says whether a
    // transaction in its commit window committed.
    let mut committed_now = vec![false; regions.len()];
    for (t, r) in regions.iter().enumerate() {
        let Some((start, end, format)) = *r else { continue };
        let written = expect.threads.get(t).map_or(&[][..], |th| &th.entries[..]);
        let open = match format {
            LogFormat::Pheap { base } => replay(sys, (start, end, base), written).map(|h| h != 0),
            LogFormat::Record { base } => replay_record(sys, start, base),
        };
        match open {
            Ok(open) => committed_now[t] = !open,
            Err(e) => {
                replay_failed = true;
                note("log-replay", start, "a replayable undo log".into(), None, format!("{why_recovery}{e}"), &mut violations);
            }
        }
    }
    // The committed image, with the blocks a transaction in its commit
    // window changes (when its commit record persisted) laid over it; the
    // checked blocks are looked up in the index (binary search: they are
    // sorted).
    let committed = expect.committed;
    let index = |b: u64| committed.binary_search_by_key(&b, |(k, _)| *k).ok();
    let mut over: FxHashMap<u64, BlockImage> = FxHashMap::default();
    for (t, th) in expect.threads.iter().enumerate() {
        if th.committing && committed_now.get(t).copied().unwrap_or(false) {
            for &(b, o, l, v) in &th.tx {
                if let Some(i) = index(b) {
                    over.entry(b).or_insert(committed[i].1).store(o, l, v);
                }
            }
        }
    }
    // Loose stores may or may not have persisted: either image is right.
    let mut loose: FxHashMap<u64, BlockImage> = FxHashMap::default();
    for th in expect.threads {
        for &(b, o, l, v) in &th.loose {
            if let Some(i) = index(b) {
                let base = *over.get(&b).unwrap_or(&committed[i].1);
                loose.entry(b).or_insert(base).store(o, l, v);
            }
        }
    }
    // Judge the blocks read again, those whose expected image changed, and
    // those laid over the committed image now or at the last point.
    let reads = pr.reads;
    let position = |b: &u64| committed.binary_search_by_key(b, |(k, _)| *k).expect("a checked block");
    let laid: Vec<usize> = over.keys().chain(loose.keys()).map(position).collect();
    let mut judge = reads.read(sys, pr.changes);
    judge.extend_from_slice(pr.changed);
    judge.extend_from_slice(&laid);
    judge.append(pr.last_laid);
    *pr.last_laid = laid;
    judge.sort_unstable();
    judge.dedup();
    let want_of = |j: usize| -> (&BlockImage, &BlockImage) {
        let (block, img) = &committed[j];
        let want = over.get(block).unwrap_or(img);
        (want, loose.get(block).unwrap_or(want))
    };
    for j in judge {
        let (want, alt) = want_of(j);
        let failed = match reads.results[j].as_ref().expect("read at the first point") {
            Ok(v) if want.accepts(alt, v) => None,
            Ok(_) => Some("plaintext".to_string()),
            Err(e) => Some(e.name().to_string()),
        };
        reads.judge(j, failed);
    }
    count += reads.failing;
    for (c, n) in &reads.by_check {
        *by_check.entry(c.clone()).or_insert(0) += n;
    }
    let room = max_keep.saturating_sub(violations.len());
    if reads.failing > 0 && room > 0 {
        for j in reads.failing_blocks().take(room) {
            let block = committed[j].0;
            let (actual, check, detail) = match reads.results[j].as_ref().expect("read") {
                Ok(v) => (
                    Some(hex::encode(v)),
                    "plaintext".to_string(),
                    "differs from the transactional state after the log replay: the last commit, the open transaction rolled back"
                        .to_string(),
                ),
                Err(e) => (None, e.name().to_string(), format!("{why_recovery}{e}")),
            };
            violations.push(Violation {
                crash_point: k,
                after_event: last.to_string(),
                address: format!("{:#x}", block * 64),
                expected: hex::encode(want_of(j).0.value),
                actual,
                check,
                detail,
            });
        }
    }
    count += super::np_violations(&np, k, last, max_keep, &mut violations, &mut by_check);
    PointResult { undrained, violations, count, by_check, recovery_failed: !rec.ok(), replay_failed, drain, np }
}

impl CrashCheck<'_> {
    /// The transactional guarantee's run: events as in the strict run, the
    /// expected image kept per thread by transaction.
    pub(super) fn run_transactional(
        &self,
        chosen: Vec<u64>,
        touched: Vec<u64>,
        reads: Reads,
        progress: &dyn Fn(u64, u64),
    ) -> Result<CrashReport, String> {
        let n = self.events.len() as u64;
        let threads = self.cfg.core.count.max(1) as usize;
        if threads > 1 || self.events.iter().any(|e| e.thread > 0) {
            // workload::threads moves each thread's accesses (partitioned:
            // up by t x span; shared: data above every thread's log) but not
            // the data addresses written inside its undo-log entries, so a
            // replay from NVM, as the program's recovery would do it, would
            // restore the wrong words. Missing: those addresses relocated
            // like the accesses (or the mapping handed to the oracle).
            return Err(format!(
                "the transactional guarantee does not check multi-threaded workloads yet (`{}` runs {threads} threads): \
                 workload::threads relocates each thread's accesses but not the data addresses inside its undo-log entries, \
                 so replaying the logs from NVM would restore the wrong words; check one thread, or use --guarantee strict",
                self.workload_name
            ));
        }
        let regions =
            log_regions_of(&self.events, threads).map_err(|e| format!("the transactional guarantee needs each thread's undo log: {e}"))?;
        let logs: Vec<ThreadLog> = regions
            .iter()
            .enumerate()
            .map(|(t, r)| r.map(|(s, e)| LogFormat::detect(&self.events, t as u8, s).map(|f| (s, e, f))).transpose())
            .collect::<Result<_, _>>()?;
        let in_log = |b: u64| regions.iter().flatten().any(|&(s, e)| b * 64 >= s && b * 64 < e);
        let checked: Vec<u64> = touched.into_iter().filter(|b| !in_log(*b)).collect();
        let (results, sys) = self.in_parallel(&chosen, progress, |points, to_end, done| {
            self.transactional_range(points, to_end, &regions, &logs, &checked, reads, done)
        })?;
        let mut rep = self.report(n, results.len() as u64, checked.len() as u64, Guarantee::Transactional, &sys);
        self.summarise(&mut rep, &sys, results);
        Ok(rep)
    }

    /// The transactional check of `points` (ascending), as
    /// [`CrashCheck::in_parallel`] hands them out.
    #[allow(clippy::too_many_arguments)]
    fn transactional_range(
        &self,
        points: &[u64],
        to_end: bool,
        regions: &[Option<(u64, u64)>],
        logs: &[ThreadLog],
        checked: &[u64],
        reads: Reads,
        done: &AtomicU64,
    ) -> Result<(Vec<PointResult>, System), String> {
        let n = self.events.len() as u64;
        let (mut sys, mut incremental) = self.checking_machine(checked, reads);
        // Blocks whose committed image changed since the last point, and
        // those the last point laid over it.
        let mut changed: Vec<u64> = Vec::new();
        let mut last_laid: Vec<usize> = Vec::new();
        let threads = sys.fronts.len();
        // A thread with no undo log has no transaction to roll back: its
        // stores are loose, each persistent by the thread's next barrier
        // (the epoch guarantee), and its TEP manager sees no log write.
        for (core, r) in regions.iter().enumerate() {
            let (s, e) = r.unwrap_or((0, 0));
            sys.set_log_region(core, s, e);
        }
        let mut committed: Vec<(u64, BlockImage)> = checked.iter().map(|b| (*b, BlockImage::default())).collect();
        let at = |b: u64| checked.binary_search(&b).ok();
        let mut state = vec![ThreadState::default(); threads];
        let mut parse = vec![LogParse::default(); threads];
        // Words some data store has written (their log's old value is no
        // longer the program's initial one).
        let mut stored: FxHashMap<u64, u8> = FxHashMap::default();
        let mut results: Vec<PointResult> = Vec::with_capacity(points.len());
        let mut kept = 0usize;
        let mut next = 0usize;
        let end = if to_end { n } else { points.last().copied().unwrap_or(0) };
        for k in 0..=end {
            if next < points.len() && points[next] == k {
                let last = self.describe_point(k);
                let ex = Expect { committed: &committed, threads: &state };
                let changes = sys.mc.st.nvm.image.take_changes();
                changed.sort_unstable();
                changed.dedup();
                let at: Vec<usize> = changed.drain(..).map(|b| checked.binary_search(&b).expect("a checked block")).collect();
                let budget = self.max_listed.saturating_sub(kept);
                let r = sys.at_crash(|crashed| {
                    let pr = PointReads { reads: &mut incremental, changed: &at, last_laid: &mut last_laid, changes: &changes };
                    check_point(crashed, k, &last, logs, &ex, budget, pr)
                });
                kept += r.violations.len();
                results.push(r);
                done.fetch_add(1, Ordering::Relaxed);
                next += 1;
            }
            if k == n {
                break;
            }
            let ev: &Event = &self.events[k as usize];
            sys.apply(ev).map_err(|e| format!("event {} ({}) failed an integrity check before any crash: {e}", k + 1, ev.describe()))?;
            let th = &mut state[ev.thread as usize];
            match ev.op {
                Op::TxBegin => *th = ThreadState { loose: std::mem::take(&mut th.loose), open: true, ..Default::default() },
                Op::TxCommit => {
                    for &(b, o, l, v) in &th.tx {
                        committed[at(b).expect("a checked block")].1.store(o, l, v);
                        changed.push(b);
                    }
                    *th = ThreadState { loose: std::mem::take(&mut th.loose), ..Default::default() };
                }
                Op::Fence | Op::Epoch => {
                    for &(b, o, l, v) in &th.loose {
                        committed[at(b).expect("a checked block")].1.store(o, l, v);
                        changed.push(b);
                    }
                    th.loose.clear();
                }
                Op::Store if !ev.volatile => {
                    let s = (ev.block(), (ev.addr % 64) as u8, ev.size, ev.value);
                    if ev.log {
                        let log = logs[ev.thread as usize];
                        if log.is_some_and(|(s, _, f)| ev.addr == f.commit_record(s)) {
                            th.committing |= th.open && ev.value == 0;
                        } else if let Some((_, _, LogFormat::Pheap { base })) = log {
                            match (parse[ev.thread as usize], &mut th.partial) {
                                (LogParse::Head, p) => *p = Some((ev.addr, vec![ev.value])),
                                (_, Some((_, words))) => words.push(ev.value),
                                (_, None) => {}
                            }
                            let p = &mut parse[ev.thread as usize];
                            *p = match *p {
                                LogParse::Head => LogParse::TxId { addr: base + (ev.value & ((1 << 48) - 1)), n: ev.value >> 48 },
                                LogParse::TxId { addr, n } => LogParse::Old { addr, n, k: 0 },
                                LogParse::Old { addr, n, k } => {
                                    let a = addr + 8 * k;
                                    let (b, w) = (a / 64, (a % 64) / 8);
                                    let never_stored = stored.get(&b).is_none_or(|m| m & (1 << w) == 0);
                                    if let (true, Some(img)) = (never_stored, at(b).map(|i| &mut committed[i].1)) {
                                        if img.known & (1 << w) == 0 {
                                            img.known |= 1 << w;
                                            changed.push(b);
                                            apply(&mut img.initial, (w * 8) as u8, 8, ev.value);
                                        }
                                    }
                                    if k + 1 >= n {
                                        th.entries.extend(th.partial.take());
                                        LogParse::Head
                                    } else {
                                        LogParse::Old { addr, n, k: k + 1 }
                                    }
                                }
                            };
                        }
                    } else {
                        *stored.entry(s.0).or_default() |= word_mask(s.1, s.2);
                        if th.open {
                            th.tx.push(s);
                        } else {
                            th.loose.push(s);
                        }
                    }
                }
                _ => {}
            }
        }
        Ok((results, sys))
    }
}
