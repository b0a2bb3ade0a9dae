//! The crash oracle (SecPB III-A, the PLP invariants): crash after every
//! event (or a seeded sample), drain the battery-backed domain, run the
//! scheme's recovery, then read every touched block through the secure
//! read path and compare it with the shadow copy strict persistency
//! promises: the value of the last store before the crash.
//!
//! ```text
//!  events: e1 e2 ... ek | crash -> System::at_crash (a copy of all but the
//!                                  NVM image, the image lent under a journal)
//!                          -> power_fail -> recover
//!                          -> for each touched block: read == shadow[k] ?
//!                          -> roll the image back, run on to e(k+1)
//! ```
//! Crash point k means "after the first k events", k = 0..=N. Each thread
//! takes a run of consecutive points ([`CrashCheck::in_parallel`]). Reads
//! are incremental by default (`incremental`: only the blocks whose read
//! may have changed since the last point are read again); the report is
//! the one full reads give ([`Reads`]).
//!
//! That is the strict guarantee. A relaxed persistency model (epoch, Secon's
//! TEP) promises less, so it is checked with its own, the transactional
//! guarantee (Secon 3.3: a data write never persists before its log write;
//! a committed transaction is wholly persistent):
//!
//! ```text
//!  crash -> power_fail -> recover -> replay each thread's undo log as the
//!  program's recovery would (header = active tx id; its entries, newest
//!  first, restore the old words; stop at an entry of another tx)
//!    -> every touched block outside the logs == its value at the thread's
//!       last TxCommit (the open transaction wholly rolled back)
//! ```
//!
//! Two windows where either outcome is right: between a transaction's
//! commit record (the log header set to 0) and its TxCommit, the
//! transaction may be committed or rolled back, as the header read back
//! says; a store outside any transaction may or may not have persisted
//! until the thread's next barrier.

use crate::config::{PersistencyModel, SimConfig};
use crate::engine::hooks::DrainWork;
use crate::machine::System;
use crate::util::rng::SplitMix64;
use crate::workload::{Event, Op};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

mod incremental;
mod non_persistent;
mod transactional;

use incremental::IncrementalReads;
pub use incremental::Reads;
pub use non_persistent::NonPersistentSummary;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashPoints {
    All,
    Sample(u64),
}

/// A thread's share of the crash points: the last share runs every event.
enum Part<'a> {
    Some(&'a [u64]),
    Last(&'a [u64]),
}

/// What a crash check promises (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Guarantee {
    /// Every block reads the value of its last store before the crash.
    Strict,
    /// After the undo log's replay, every block outside the logs reads its
    /// value at the last commit: the relaxed models' promise.
    Transactional,
}

impl Guarantee {
    /// The guarantee a configuration's persistency model gives.
    pub fn of(cfg: &SimConfig) -> Guarantee {
        match cfg.persistence.model {
            PersistencyModel::Strict => Guarantee::Strict,
            PersistencyModel::Epoch | PersistencyModel::Tep => Guarantee::Transactional,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Guarantee::Strict => "strict",
            Guarantee::Transactional => "transactional",
        }
    }
    fn is_strict(&self) -> bool {
        *self == Guarantee::Strict
    }
}

impl std::str::FromStr for Guarantee {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "strict" => Ok(Guarantee::Strict),
            "transactional" => Ok(Guarantee::Transactional),
            _ => Err(format!("--guarantee must be `strict` or `transactional`, got `{s}`")),
        }
    }
}

impl std::str::FromStr for CrashPoints {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "all" {
            return Ok(CrashPoints::All);
        }
        match s.parse::<u64>() {
            Ok(k) if k > 0 => Ok(CrashPoints::Sample(k)),
            _ => Err(format!("--crash-points must be `all` or a positive count, got `{s}`")),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Violation {
    pub crash_point: u64,
    /// The last event before the crash.
    pub after_event: String,
    pub address: String,
    pub expected: String,
    /// The plaintext read back, or null when an integrity check refused it.
    pub actual: Option<String>,
    /// `plaintext` (wrong value, no check fired), or the failed check:
    /// `mac`, `tree`, `root`, `unwritten`.
    pub check: String,
    pub detail: String,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct DrainSummary {
    pub max_front_lines: u64,
    pub max_metadata_lines: u64,
    pub max_wpq_entries: u64,
    pub max_aes_blocks: u64,
    pub max_macs: u64,
    pub max_tree_hashes: u64,
    pub max_nvm_writes: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct CrashReport {
    pub scheme: String,
    pub workload: String,
    pub ops: u64,
    pub seed: u64,
    pub events: u64,
    pub crash_points: u64,
    pub blocks_checked_per_point: u64,
    pub violations: u64,
    pub violating_crash_points: u64,
    pub recovery_failures: u64,
    pub violations_by_check: BTreeMap<String, u64>,
    pub drain: DrainSummary,
    pub violations_listed: u64,
    pub violation_list: Vec<Violation>,
    /// The guarantee checked; left out when strict, so the reports of
    /// strict checks keep their bytes.
    #[serde(skip_serializing_if = "Guarantee::is_strict")]
    pub guarantee: Guarantee,
    /// Transactional guarantee: crash points whose undo-log replay met an
    /// integrity failure or a malformed entry (each also a violation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_replay_failures: Option<u64>,
    /// What the TEP managers did over the whole run (TEP only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tep: Option<crate::persist::TepStats>,
    /// With more than one core: the threads' events interleaved in the
    /// checked order, and what the cores' front ends did between them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multicore: Option<MulticoreCheck>,
    /// With persistent regions (Triad-NVM): what non-persistent memory
    /// showed after each recovery. Its losses are allowed and counted
    /// here; a stale value accepted or a pad reused is a violation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub non_persistent: Option<NonPersistentSummary>,
}

/// The multi-core part of a crash check. A crash point is
/// after the first k events of the interleaved run, so its check (every
/// store before it reads back) covers each thread's persist order and
/// each transaction committed before it, on every core at once.
#[derive(Clone, Debug, Serialize)]
pub struct MulticoreCheck {
    pub cores: usize,
    /// Events of each thread.
    pub events_per_thread: Vec<u64>,
    /// SecPB entries migrated and flushed between cores over the run
    /// (SecPB IV-C c).
    pub coherence: crate::persist::CoherenceStats,
    /// Crash points after which some core's front end still held lines
    /// once the battery's drain was over (each must drain: 0).
    pub undrained_points: u64,
}

impl CrashReport {
    /// The one rule for judging a crash check (`spmsim check-crash`'s exit
    /// code and `check-all` share it): a configuration must show no
    /// violation, except a control (`expect_crash_violations = true`), built
    /// to show that the oracle can fail, which must show some.
    pub fn as_expected(&self, cfg: &SimConfig) -> bool {
        (self.violations > 0) == cfg.expect_crash_violations
    }
}

pub(crate) struct PointResult {
    /// A front end still held lines after the drain.
    undrained: bool,
    violations: Vec<Violation>,
    count: u64,
    by_check: BTreeMap<String, u64>,
    recovery_failed: bool,
    replay_failed: bool,
    drain: DrainWork,
    /// Non-persistent memory's account, with persistent regions.
    np: Option<non_persistent::Point>,
}

fn hex64(b: &[u8; 64]) -> String {
    hex::encode(b)
}

/// Power fails and the scheme recovers: the drain's work, whether a front
/// end still holds lines, the recovery report and what to say of it.
fn check_point_drain(
    sys: &mut System,
) -> (DrainWork, bool, crate::engine::hooks::RecoveryReport, &'static str, Vec<u64>, Option<non_persistent::Point>) {
    // A scheme that restores the dirty metadata lines the crash loses
    // (STAR, Anubis) must restore each exactly: its counters (a SIT node's
    // first 56 bytes; the MAC is recomputed) as the cache held them once
    // the battery had drained the front end through the engine (a persist
    // buffer's or eADR's drain dirties them further).
    let restores = sys.mc.rules.shape.recovery_restores_dirty_lines && sys.mc.secure();
    let mut dirty: Vec<(u64, [u8; 64])> = Vec::new();
    let np = non_persistent::before_crash(sys);
    let drain = sys.power_fail_observed(|s| {
        if restores {
            dirty = s.mc.st.caches.dirty_lines().into_iter().filter(|(a, _)| s.mc.st.layout.meta_pos(*a).is_some()).collect();
        }
    });
    let undrained = sys.fronts.iter().any(|f| !f.is_empty());
    let rec = sys.recover();
    // The oracle's reads from here on check what recovery restored; no
    // later recovery follows them, so state a scheme keeps only for a
    // recovery (the multiset-hash scheme's registers) need not follow the
    // lines those reads cache. Read results do not depend on it.
    sys.mc.rules.scheme.no_recovery_follows();
    let np = np.map(|b| non_persistent::after_recovery(sys, b));
    let unrestored: Vec<u64> =
        dirty.into_iter().filter(|(a, b)| sys.mc.st.nvm.peek(*a).is_none_or(|n| n[..56] != b[..56])).map(|(a, _)| a).collect();
    let why_recovery = match &rec.rebuild {
        Some(r) if !r.mismatched_roots.is_empty() => {
            "recovery failed: the BMT rebuilt from persisted counters disagrees with the root register; "
        }
        _ if rec.root_registers_lost => "recovery failed: root registers lost; ",
        _ if rec.scheme_failure.is_some() => "recovery failed: the scheme's own check of its recovery failed; ",
        _ => "",
    };
    (drain, undrained, rec, why_recovery, unrestored, np)
}

/// Fold non-persistent memory's findings at point `k` into a point's
/// violations.
fn np_violations(
    np: &Option<non_persistent::Point>,
    k: u64,
    last: &str,
    max_keep: usize,
    violations: &mut Vec<Violation>,
    by_check: &mut BTreeMap<String, u64>,
) -> u64 {
    let Some(p) = np else { return 0 };
    for f in &p.findings {
        *by_check.entry(f.check.to_string()).or_insert(0) += 1;
        if violations.len() < max_keep {
            violations.push(Violation {
                crash_point: k,
                after_event: last.to_string(),
                address: format!("{:#x}", f.block * 64),
                expected: hex64(&f.expected),
                actual: f.actual.as_ref().map(hex64),
                check: f.check.to_string(),
                detail: f.detail.clone(),
            });
        }
    }
    p.findings.len() as u64
}

/// A dirty metadata line that recovery did not restore as the cache held it.
fn unrestored_violation(k: u64, last: &str, addr: u64, why: &str) -> Violation {
    Violation {
        crash_point: k,
        after_event: last.to_string(),
        address: format!("{:#x}", addr * 64),
        expected: "the counters the metadata cache held before the crash".into(),
        actual: None,
        check: "stale-restore".into(),
        detail: format!("{why}a dirty metadata line lost in the crash was not restored exactly"),
    }
}

/// A crash point of the strict check: power fails, the scheme recovers,
/// and the checked blocks are read ([`IncrementalReads`]: those whose read
/// may have changed; `changes`, the blocks the main run wrote since the
/// last point) and judged against the shadow (`stored`: the blocks whose
/// shadow changed since the last point).
#[allow(clippy::too_many_arguments)]
fn check_point(
    sys: &mut System,
    k: u64,
    last: &str,
    shadow: &FxHashMap<u64, [u8; 64]>,
    stored: &[usize],
    changes: &[u64],
    reads: &mut IncrementalReads,
    max_keep: usize,
) -> PointResult {
    let (drain, undrained, rec, why_recovery, unrestored, np) = check_point_drain(sys);
    let mut judge = reads.read(sys, changes);
    judge.extend_from_slice(stored);
    judge.sort_unstable();
    judge.dedup();
    for j in judge {
        let expect = &shadow[&reads.blocks()[j]];
        let failed = match reads.results[j].as_ref().expect("read at the first point") {
            Ok(v) if v == expect => None,
            Ok(_) => Some("plaintext".to_string()),
            Err(e) => Some(e.name().to_string()),
        };
        reads.judge(j, failed);
    }
    let mut violations = Vec::new();
    if reads.failing > 0 && max_keep > 0 {
        for j in reads.failing_blocks().take(max_keep) {
            let block = reads.blocks()[j];
            let (actual, check, detail) = match reads.results[j].as_ref().expect("read") {
                Ok(v) => (Some(hex64(v)), "plaintext".to_string(), "decrypted value differs from the last persisted store".to_string()),
                Err(e) => (None, e.name().to_string(), format!("{why_recovery}{e}")),
            };
            violations.push(Violation {
                crash_point: k,
                after_event: last.to_string(),
                address: format!("{:#x}", block * 64),
                expected: hex64(&shadow[&block]),
                actual,
                check,
                detail,
            });
        }
    }
    let mut by_check = reads.by_check.clone();
    if !unrestored.is_empty() {
        *by_check.entry("stale-restore".into()).or_insert(0) += unrestored.len() as u64;
        for &a in unrestored.iter().take(max_keep.saturating_sub(violations.len())) {
            violations.push(unrestored_violation(k, last, a, why_recovery));
        }
    }
    let np_count = np_violations(&np, k, last, max_keep, &mut violations, &mut by_check);
    PointResult {
        undrained,
        violations,
        count: reads.failing + unrestored.len() as u64 + np_count,
        by_check,
        recovery_failed: !rec.ok(),
        replay_failed: false,
        drain,
        np,
    }
}

pub struct CrashCheck<'a> {
    pub cfg: &'a SimConfig,
    pub workload_name: String,
    pub events: Vec<Event>,
    pub ops: u64,
    pub seed: u64,
    pub points: CrashPoints,
    /// At most this many violations are listed in full (all are counted).
    pub max_listed: usize,
    /// The guarantee to check; None: the one the configuration's
    /// persistency model gives ([`Guarantee::of`]).
    pub guarantee: Option<Guarantee>,
}

impl CrashCheck<'_> {
    pub fn run(&self) -> Result<CrashReport, String> {
        self.run_with_progress(&|_, _| {})
    }

    /// [`Self::run`], calling `progress(done, total)` with the crash points
    /// checked so far after each batch (for a progress display).
    pub fn run_with_progress(&self, progress: &dyn Fn(u64, u64)) -> Result<CrashReport, String> {
        self.run_reads(Reads::Incremental, progress)
    }

    /// [`Self::run_with_progress`] with the checked blocks read as `reads`
    /// says: the report is the same either way (tests/incremental_reads.rs
    /// holds the two to it), incremental reads are far quicker.
    pub fn run_reads(&self, reads: Reads, progress: &dyn Fn(u64, u64)) -> Result<CrashReport, String> {
        let guarantee = self.guarantee.unwrap_or_else(|| Guarantee::of(self.cfg));
        let n = self.events.len() as u64;
        let chosen: Vec<u64> = match self.points {
            CrashPoints::All => (0..=n).collect(),
            CrashPoints::Sample(k) if k > n => (0..=n).collect(),
            CrashPoints::Sample(k) => {
                let mut r = SplitMix64::new(self.seed ^ 0xC4A5);
                let mut set = std::collections::BTreeSet::new();
                while (set.len() as u64) < k {
                    set.insert(r.below(n + 1));
                }
                set.into_iter().collect()
            }
        };
        // Every block of persistent memory the workload touches is checked
        // at every point (volatile memory promises nothing after a crash).
        let mut touched: Vec<u64> =
            self.events.iter().filter(|e| matches!(e.op, Op::Store | Op::Load) && !e.volatile).map(|e| e.block()).collect();
        touched.sort_unstable();
        touched.dedup();

        if guarantee == Guarantee::Transactional {
            return self.run_transactional(chosen, touched, reads, progress);
        }
        let (results, sys) =
            self.in_parallel(&chosen, progress, |points, to_end, done| self.strict_range(points, to_end, &touched, reads, done))?;
        let mut rep = self.report(n, results.len() as u64, touched.len() as u64, guarantee, &sys);
        self.summarise(&mut rep, &sys, results);
        Ok(rep)
    }

    /// Split the crash points into one run of consecutive points per
    /// thread; each thread runs the events from the start on its own
    /// machine and checks its points as it passes them. The results come
    /// back in crash-point order (the report does not depend on the thread
    /// count), with the machine of the run that went furthest.
    /// `done` counts the points checked, for `progress`.
    pub(crate) fn in_parallel(
        &self,
        chosen: &[u64],
        progress: &dyn Fn(u64, u64),
        range: impl Fn(&[u64], bool, &AtomicU64) -> Result<(Vec<PointResult>, System), String> + Sync,
    ) -> Result<(Vec<PointResult>, System), String> {
        let threads = rayon::current_num_threads().clamp(1, chosen.len().max(1));
        let per = chosen.len().div_ceil(threads).max(1);
        let done = AtomicU64::new(0);
        let total = chosen.len() as u64;
        let outs = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let part = &chosen[(t * per).min(chosen.len())..((t + 1) * per).min(chosen.len())];
                    let (range, done) = (&range, &done);
                    // The last part runs every event, so its machine ends
                    // where a single run's would.
                    let part = if t + 1 == threads { Part::Last(part) } else { Part::Some(part) };
                    scope.spawn(move || match part {
                        Part::Some([]) => None,
                        Part::Some(p) => Some(range(p, false, done)),
                        Part::Last(p) => Some(range(p, true, done)),
                    })
                })
                .collect();
            let mut last = u64::MAX;
            while handles.iter().any(|h| !h.is_finished()) {
                let d = done.load(Ordering::Relaxed);
                if d != last {
                    progress(d, total);
                    last = d;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            handles.into_iter().map(|h| h.join().expect("a crash-check thread panicked")).collect::<Vec<_>>()
        });
        progress(done.load(Ordering::Relaxed), total);
        let mut results = Vec::with_capacity(chosen.len());
        let mut sys = None;
        for out in outs.into_iter().flatten() {
            let (r, s) = out?;
            results.extend(r);
            sys = Some(s);
        }
        Ok((results, sys.expect("the last part always runs")))
    }

    /// The strict check of `points` (ascending): run the events, check each
    /// point as the run passes it, on the live machine.
    fn strict_range(
        &self,
        points: &[u64],
        to_end: bool,
        touched: &[u64],
        reads: Reads,
        done: &AtomicU64,
    ) -> Result<(Vec<PointResult>, System), String> {
        let n = self.events.len() as u64;
        let (mut sys, mut incremental) = self.checking_machine(touched, reads);
        let mut stored: Vec<usize> = Vec::new();
        let mut shadow: FxHashMap<u64, [u8; 64]> = touched.iter().map(|b| (*b, [0u8; 64])).collect();
        let mut results: Vec<PointResult> = Vec::with_capacity(points.len());
        let mut kept = 0usize;
        let mut next = 0usize;
        let end = if to_end { n } else { points.last().copied().unwrap_or(0) };
        for k in 0..=end {
            if next < points.len() && points[next] == k {
                let last = self.describe_point(k);
                let changes = sys.mc.st.nvm.image.take_changes();
                let budget = self.max_listed.saturating_sub(kept);
                let r = sys.at_crash(|crashed| check_point(crashed, k, &last, &shadow, &stored, &changes, &mut incremental, budget));
                stored.clear();
                kept += r.violations.len();
                results.push(r);
                done.fetch_add(1, Ordering::Relaxed);
                next += 1;
            }
            if k == n {
                break;
            }
            let ev = &self.events[k as usize];
            sys.apply(ev).map_err(|e| format!("event {} ({}) failed an integrity check before any crash: {e}", k + 1, ev.describe()))?;
            if ev.op == Op::Store && !ev.volatile {
                stored.push(touched.binary_search(&ev.block()).expect("a touched block"));
                let line = shadow.get_mut(&ev.block()).unwrap();
                let off = (ev.addr % 64) as usize;
                line[off..off + ev.size as usize].copy_from_slice(&ev.value.to_le_bytes()[..ev.size as usize]);
            }
        }
        Ok((results, sys))
    }

    /// A fresh machine for a run of crash points, listing the image blocks
    /// it changes and remembering tree hashes, with reads of `blocks` as
    /// `reads` says.
    pub(crate) fn checking_machine(&self, blocks: &[u64], reads: Reads) -> (System, IncrementalReads) {
        let mut sys = System::new(self.cfg, self.seed);
        sys.mc.st.nvm.image.track_changes();
        sys.mc.st.crypto.memoize_tree_hashes();
        sys.mc.rules.tree.keep_rebuilds();
        if sys.mc.layout().has_regions() {
            sys.mc.st.crypto.ledger = Some(Default::default());
        }
        let incremental = IncrementalReads::new(&sys, blocks.to_vec(), reads);
        (sys, incremental)
    }

    /// How a crash point is named in a violation: the last event before it.
    pub(crate) fn describe_point(&self, k: u64) -> String {
        if k == 0 {
            "(start)".to_string()
        } else {
            format!("#{} {}", k, self.events[k as usize - 1].describe())
        }
    }

    /// A report of this check with nothing folded in yet: `events` checked
    /// at `points` crash points over `blocks` blocks each, under `guarantee`.
    pub(crate) fn report(&self, events: u64, points: u64, blocks: u64, guarantee: Guarantee, sys: &System) -> CrashReport {
        CrashReport {
            scheme: self.cfg.name.clone(),
            workload: self.workload_name.clone(),
            ops: self.ops,
            seed: self.seed,
            events,
            crash_points: points,
            blocks_checked_per_point: blocks,
            violations: 0,
            violating_crash_points: 0,
            recovery_failures: 0,
            violations_by_check: BTreeMap::new(),
            drain: DrainSummary::default(),
            violations_listed: 0,
            violation_list: Vec::new(),
            guarantee,
            log_replay_failures: (guarantee == Guarantee::Transactional).then_some(0),
            tep: sys.tep_stats(),
            multicore: None,
            non_persistent: sys.mc.layout().has_regions().then(NonPersistentSummary::default),
        }
    }

    /// Fold the crash points' results into the report.
    fn summarise(&self, rep: &mut CrashReport, sys: &System, results: Vec<PointResult>) {
        rep.multicore = (sys.fronts.len() > 1).then(|| {
            let mut per = vec![0u64; sys.fronts.len()];
            for e in &self.events {
                if let Some(p) = per.get_mut(e.thread as usize) {
                    *p += 1;
                }
            }
            MulticoreCheck { cores: sys.fronts.len(), events_per_thread: per, coherence: sys.coherence.stats, undrained_points: 0 }
        });
        for r in results {
            if let Some(f) = &mut rep.log_replay_failures {
                *f += r.replay_failed as u64;
            }
            rep.violations += r.count;
            rep.violating_crash_points += (r.count > 0) as u64;
            rep.recovery_failures += r.recovery_failed as u64;
            if let (Some(s), Some(p)) = (&mut rep.non_persistent, &r.np) {
                s.add(p);
            }
            if let Some(m) = &mut rep.multicore {
                m.undrained_points += r.undrained as u64;
            }
            let d = &r.drain;
            let s = &mut rep.drain;
            s.max_front_lines = s.max_front_lines.max(d.front_lines);
            s.max_metadata_lines = s.max_metadata_lines.max(d.metadata_lines);
            s.max_wpq_entries = s.max_wpq_entries.max(d.wpq_entries);
            s.max_aes_blocks = s.max_aes_blocks.max(d.crypto.aes_blocks);
            s.max_macs = s.max_macs.max(d.crypto.macs);
            s.max_tree_hashes = s.max_tree_hashes.max(d.crypto.tree_hashes);
            s.max_nvm_writes = s.max_nvm_writes.max(d.nvm_writes.total());
            for (c, n) in r.by_check {
                *rep.violations_by_check.entry(c).or_default() += n;
            }
            for v in r.violations {
                if rep.violation_list.len() < self.max_listed {
                    rep.violation_list.push(v);
                }
            }
        }
        rep.violations_listed = rep.violation_list.len() as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_preset;

    fn small(preset: &str) -> SimConfig {
        load_preset(preset, &["memory.capacity_bytes=67108864".into()]).unwrap()
    }

    /// 150 seeded 8-byte stores, each followed by a fence, over 40 blocks
    /// of page 0 and 40 of page 7.
    fn events() -> Vec<Event> {
        let mut r = SplitMix64::new(5);
        let mut v = Vec::new();
        for _ in 0..150 {
            let block = r.below(40) + 7 * 64 * r.below(2);
            v.push(Event::store(block * 64 + 8 * r.below(8), 8, r.next_u64() | 1, false));
            v.push(Event::marker(Op::Fence));
        }
        v
    }

    fn touched() -> u64 {
        let mut b: Vec<u64> = events().iter().filter(|e| e.op == Op::Store).map(|e| e.block()).collect();
        b.sort_unstable();
        b.dedup();
        b.len() as u64
    }

    fn check(cfg: &SimConfig, points: CrashPoints) -> CrashReport {
        CrashCheck { cfg, workload_name: "unit".into(), events: events(), ops: 150, seed: 1, points, max_listed: 5, guarantee: None }
            .run()
            .unwrap()
    }

    #[test]
    fn a_consistent_scheme_shows_no_violation_at_any_crash_point() {
        let cfg = small("cobcm");
        let rep = check(&cfg, CrashPoints::All);
        assert_eq!((rep.events, rep.crash_points, rep.blocks_checked_per_point), (300, 301, touched()));
        assert_eq!((rep.violations, rep.violating_crash_points, rep.recovery_failures), (0, 0, 0), "{:?}", rep.violation_list.first());
        assert!(rep.drain.max_front_lines > 0, "some crashes found stores in the persist buffer");
        assert!(rep.as_expected(&cfg));
    }

    #[test]
    fn a_control_with_a_recoverability_gap_shows_violations() {
        let cfg = small("bbb-gap");
        assert!(cfg.expect_crash_violations);
        let rep = check(&cfg, CrashPoints::All);
        assert!(rep.violating_crash_points > 0, "the unsecured drain loses the memory tuple");
        assert!(rep.violations >= rep.violating_crash_points);
        assert_eq!(rep.violations, rep.violations_by_check.values().sum::<u64>());
        assert_eq!((rep.violations_listed, rep.violation_list.len()), (5, 5), "listed up to max_listed, all counted");
        assert!(rep.violation_list.iter().all(|v| v.crash_point > 0), "nothing is lost before the first store");
        assert!(rep.as_expected(&cfg));
        let cobcm = small("cobcm");
        assert!(!rep.as_expected(&cobcm), "violations are not as expected on a configuration that is not a control");
    }

    #[test]
    fn a_lost_write_back_metadata_cache_fails_recovery() {
        let cfg = small("secure-wb-nobattery");
        let rep = check(&cfg, CrashPoints::All);
        assert!(rep.recovery_failures > 0 && rep.violations > 0);
        assert!(
            rep.violation_list.iter().all(|v| v.actual.is_none() && v.detail.starts_with("recovery failed")),
            "{:?}",
            rep.violation_list
        );
    }

    #[test]
    fn a_wrong_value_no_check_catches_is_a_plaintext_violation() {
        // BBB has no security; without its battery the buffered stores are
        // simply lost, and the old values read back unchallenged.
        let cfg =
            load_preset("bbb", &["memory.capacity_bytes=67108864".into(), "persistence.battery.persist_buffer=false".into()]).unwrap();
        let rep = check(&cfg, CrashPoints::All);
        assert!(rep.violations > 0);
        assert_eq!(rep.violations_by_check.keys().collect::<Vec<_>>(), ["plaintext"]);
        let v = &rep.violation_list[0];
        assert!(v.actual.as_ref().is_some_and(|a| *a != v.expected), "{v:?}");
    }

    #[test]
    fn sampled_crash_points_are_that_many_or_all() {
        let cfg = small("cobcm");
        assert_eq!(check(&cfg, CrashPoints::Sample(10)).crash_points, 10);
        assert_eq!(check(&cfg, CrashPoints::Sample(1000)).crash_points, 301);
        assert_eq!("all".parse::<CrashPoints>(), Ok(CrashPoints::All));
        assert_eq!("7".parse::<CrashPoints>(), Ok(CrashPoints::Sample(7)));
        for bad in ["0", "-1", "some"] {
            assert!(bad.parse::<CrashPoints>().unwrap_err().contains(&format!("`{bad}`")));
        }
    }
}
