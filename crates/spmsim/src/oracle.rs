//! The crash oracle (SecPB III-A, the PLP invariants): crash after every
//! event (or a seeded sample), drain the battery-backed domain, run the
//! scheme's recovery, then read every touched block through the secure
//! read path and compare it with the shadow copy strict persistency
//! promises: the value of the last store before the crash.
//!
//! ```text
//!  events: e1 e2 ... ek | crash -> clone(System) -> power_fail -> recover
//!                                   -> for each touched block: read == shadow[k] ?
//! ```
//! Crash point k means "after the first k events", k = 0..=N.

use crate::config::SimConfig;
use crate::rng::SplitMix64;
use crate::system::{DrainWork, System};
use crate::workload::{Event, Op};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashPoints {
    All,
    Sample(u64),
}

/// A crash point waiting for its batch: the crashed machine, its event
/// index, its label and the shadow values it must show.
type PendingPoint = (System, u64, String, Vec<(u64, [u8; 64])>);

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

struct PointResult {
    violations: Vec<Violation>,
    count: u64,
    by_check: BTreeMap<String, u64>,
    recovery_failed: bool,
    drain: DrainWork,
}

fn hex64(b: &[u8; 64]) -> String {
    hex::encode(b)
}

fn check_point(mut sys: System, k: u64, last: &str, shadow: &[(u64, [u8; 64])], max_keep: usize) -> PointResult {
    let drain = sys.power_fail();
    let rec = sys.recover();
    let why_recovery = match &rec.rebuild {
        Some(r) if !r.mismatched_roots.is_empty() => {
            "recovery failed: the BMT rebuilt from persisted counters disagrees with the root register; "
        }
        _ if rec.root_registers_lost => "recovery failed: root registers lost; ",
        _ => "",
    };
    let mut violations = Vec::new();
    let mut count = 0u64;
    let mut by_check = BTreeMap::new();
    for (block, expect) in shadow {
        let got = sys.mc.read(*block);
        let (actual, check, detail) = match got {
            Ok(v) if v == *expect => continue,
            Ok(v) => (Some(hex64(&v)), "plaintext".to_string(), "decrypted value differs from the last persisted store".to_string()),
            Err(e) => (None, e.name().to_string(), format!("{why_recovery}{e}")),
        };
        count += 1;
        *by_check.entry(check.clone()).or_insert(0u64) += 1;
        if violations.len() < max_keep {
            violations.push(Violation {
                crash_point: k,
                after_event: last.to_string(),
                address: format!("{:#x}", block * 64),
                expected: hex64(expect),
                actual,
                check,
                detail,
            });
        }
    }
    PointResult { violations, count, by_check, recovery_failed: !rec.ok(), drain }
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
}

impl CrashCheck<'_> {
    pub fn run(&self) -> Result<CrashReport, String> {
        self.run_with_progress(&|_, _| {})
    }

    /// [`Self::run`], calling `progress(done, total)` with the crash points
    /// checked so far after each batch (for a progress display).
    pub fn run_with_progress(&self, progress: &dyn Fn(u64, u64)) -> Result<CrashReport, String> {
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
        // Every block the workload touches is checked at every point.
        let mut touched: Vec<u64> = self.events.iter().filter(|e| matches!(e.op, Op::Store | Op::Load)).map(|e| e.block()).collect();
        touched.sort_unstable();
        touched.dedup();

        let mut sys = System::new(self.cfg, self.seed);
        let mut shadow: FxHashMap<u64, [u8; 64]> = touched.iter().map(|b| (*b, [0u8; 64])).collect();
        let mut results: Vec<PointResult> = Vec::with_capacity(chosen.len());
        let mut batch: Vec<PendingPoint> = Vec::new();
        let batch_size = 64;
        let mut next = 0usize;
        // Only the first `max_listed` violations overall are kept in full.
        let flush = |batch: &mut Vec<PendingPoint>, results: &mut Vec<PointResult>, max: usize| {
            let kept: usize = results.iter().map(|r| r.violations.len()).sum();
            let budget = max.saturating_sub(kept);
            let out: Vec<PointResult> =
                std::mem::take(batch).into_par_iter().map(|(s, k, last, sh)| check_point(s, k, &last, &sh, budget)).collect();
            results.extend(out);
            progress(results.len() as u64, chosen.len() as u64);
        };
        let shadow_vec = |shadow: &FxHashMap<u64, [u8; 64]>| -> Vec<(u64, [u8; 64])> { touched.iter().map(|b| (*b, shadow[b])).collect() };
        for k in 0..=n {
            if next < chosen.len() && chosen[next] == k {
                let last = if k == 0 { "(start)".to_string() } else { format!("#{} {}", k, self.events[k as usize - 1].describe()) };
                batch.push((sys.clone(), k, last, shadow_vec(&shadow)));
                next += 1;
                if batch.len() >= batch_size {
                    flush(&mut batch, &mut results, self.max_listed);
                }
            }
            if k == n {
                break;
            }
            let ev = &self.events[k as usize];
            sys.apply(ev).map_err(|e| format!("event {} ({}) failed an integrity check before any crash: {e}", k + 1, ev.describe()))?;
            if ev.op == Op::Store {
                let line = shadow.get_mut(&ev.block()).unwrap();
                let off = (ev.addr % 64) as usize;
                line[off..off + ev.size as usize].copy_from_slice(&ev.value.to_le_bytes()[..ev.size as usize]);
            }
        }
        flush(&mut batch, &mut results, self.max_listed);

        let mut rep = CrashReport {
            scheme: self.cfg.name.clone(),
            workload: self.workload_name.clone(),
            ops: self.ops,
            seed: self.seed,
            events: n,
            crash_points: results.len() as u64,
            blocks_checked_per_point: touched.len() as u64,
            violations: 0,
            violating_crash_points: 0,
            recovery_failures: 0,
            violations_by_check: BTreeMap::new(),
            drain: DrainSummary::default(),
            violations_listed: 0,
            violation_list: Vec::new(),
        };
        for r in results {
            rep.violations += r.count;
            rep.violating_crash_points += (r.count > 0) as u64;
            rep.recovery_failures += r.recovery_failed as u64;
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
        Ok(rep)
    }
}
