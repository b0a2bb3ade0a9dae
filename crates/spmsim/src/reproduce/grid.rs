//! The grid runner: every run of a reproduction (or of `spmsim compare`)
//! in parallel, each result in its point's place.
//!
//! ```text
//!  points  [p0 p1 p2 ... pn]      the grid, in the order the results list it
//!     |  rayon: each point on a free core; a panic becomes that point's error
//!     v
//!  results [r0 r1 r2 ... rn]      the same order, whatever order they ended in
//!     progress(done, total, what) as each ends: the CLI's one bar on a
//!     terminal, a plain line now and then in a log
//! ```
//! A point's result depends only on the point (every run is seeded), so
//! the order the cores take them in changes no number.

use crate::config::{load_preset, SimConfig};
use crate::timing::{simulate_after_warmup, RunStats};
use crate::workload::WorkloadKind;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Told `(done, total, what)` as each run ends; `what` names the run that did.
pub type Progress<'a> = &'a (dyn Fn(usize, usize, &str) + Sync);

/// Instructions a recorded program runs before its statistics start: the
/// caches and the metadata cache fill with its working set (the multiset-hash
/// paper fast-forwards, then simulates 10 M instructions). The programs
/// `compare` runs are that paper's stand-ins, warmed up alike.
pub const PROGRAM_WARMUP: u64 = 2_000_000;

/// Instructions a recording must hold beyond a warm-up and the region
/// after it: the warm-up ends at the first event that takes it to its
/// count or past it, so it overruns by that event's gap of non-memory
/// instructions, and a recording of exactly the two counts would cut the
/// region short by as much (and by a different amount than a longer
/// recording of the same program, so results would depend on which
/// recording the cache holds).
pub const RECORDING_SLACK: u64 = 100_000;

/// The instructions a recorded program's trace must hold for runs of
/// `instructions` after a warm-up of `warmup` (0: none, and no slack
/// needed: a run without warm-up ends where the region does).
pub fn recording_for(warmup: u64, instructions: u64) -> u64 {
    if warmup == 0 {
        instructions
    } else {
        warmup + instructions + RECORDING_SLACK
    }
}

/// `run` on every point, in parallel; the results in the points' order.
/// `describe` names a point for the progress line and for the error of a
/// run that panicked (a bug of the model, which then fails that point
/// alone).
pub fn run<S: Sync, R: Send>(
    points: &[S],
    progress: Progress,
    describe: impl Fn(&S) -> String + Sync,
    run: impl Fn(&S) -> Result<R, String> + Sync,
) -> Vec<Result<R, String>> {
    let done = AtomicUsize::new(0);
    points
        .par_iter()
        .map(|p| {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(p))).unwrap_or_else(|e| {
                let msg =
                    e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                Err(format!("{}: the model panicked (a bug): {msg}", describe(p)))
            });
            progress(done.fetch_add(1, Ordering::SeqCst) + 1, points.len(), &describe(p));
            r
        })
        .collect()
}

/// The runs of a grid that failed, and those that had finished, so that no
/// computed result is lost (a reproduction writes them to runs.csv).
#[derive(Debug)]
pub struct Failure<R> {
    pub failed: Vec<String>,
    pub completed: Vec<R>,
}

impl<R> Failure<R> {
    /// A failure before any run (a reference file that does not load).
    pub fn before_any_run(message: String) -> Self {
        Failure { failed: vec![message], completed: Vec::new() }
    }

    /// Every error of `results`, or every value when none failed.
    pub fn collect(results: Vec<Result<R, String>>) -> Result<Vec<R>, Self> {
        let (mut failed, mut completed) = (Vec::new(), Vec::new());
        for r in results {
            match r {
                Ok(x) => completed.push(x),
                Err(e) => failed.push(e),
            }
        }
        if failed.is_empty() {
            Ok(completed)
        } else {
            Err(Failure { failed, completed })
        }
    }
}

impl<R> std::fmt::Display for Failure<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.failed.len();
        write!(f, "{n} run{} failed", if n == 1 { "" } else { "s" })?;
        if !self.completed.is_empty() {
            write!(f, " ({} finished)", self.completed.len())?;
        }
        for e in self.failed.iter().take(5) {
            write!(f, "\n  {e}")?;
        }
        if n > 5 {
            write!(f, "\n  ... and {} more", n - 5)?;
        }
        Ok(())
    }
}

/// What a point of a grid that also counts recoveries gave (STAR's Fig. 14,
/// Triad-NVM's Fig. 10): a timing run's record `R` or a recovery's `C`.
#[derive(serde::Serialize, serde::Deserialize)]
pub enum RunOrRecovery<R, C> {
    Run(R),
    Recovery(C),
}

impl<R: Clone, C> RunOrRecovery<R, C> {
    /// The timing runs and the recoveries, each in grid order.
    pub fn split(records: impl IntoIterator<Item = Self>) -> (Vec<R>, Vec<C>) {
        let (mut runs, mut recoveries) = (Vec::new(), Vec::new());
        for r in records {
            match r {
                RunOrRecovery::Run(x) => runs.push(x),
                RunOrRecovery::Recovery(x) => recoveries.push(x),
            }
        }
        (runs, recoveries)
    }

    /// The timing runs among `records` (those a partial runs.csv lists).
    pub fn runs(records: &[Self]) -> Vec<R> {
        records.iter().filter_map(|r| if let RunOrRecovery::Run(x) = r { Some(x.clone()) } else { None }).collect()
    }
}

/// One timing run of a grid: a preset with its overrides (`key=value`), on
/// a workload (as `spmsim run --workload` spells it), after a warm-up.
#[derive(Clone, Debug)]
pub struct TimedRun {
    pub preset: String,
    pub sets: Vec<String>,
    pub workload: String,
    pub warmup: u64,
}

/// What a timing run gives: the configuration and workload it ran, and
/// its statistics.
pub struct Timed {
    pub cfg: SimConfig,
    pub workload: WorkloadKind,
    pub stats: RunStats,
}

impl TimedRun {
    pub fn new(preset: &str, sets: Vec<String>, workload: &str) -> Self {
        TimedRun { preset: preset.into(), sets, workload: workload.into(), warmup: 0 }
    }

    pub fn after_warmup(self, warmup: u64) -> Self {
        TimedRun { warmup, ..self }
    }

    /// `instructions` measured after the warm-up; an error names the
    /// preset and the workload.
    pub fn time(&self, instructions: u64, seed: u64) -> Result<Timed, String> {
        let cfg = load_preset(&self.preset, &self.sets).map_err(|e| e.to_string())?;
        let workload = WorkloadKind::parse(&self.workload).map_err(|e| format!("{}: {e}", self.workload))?;
        let stats = simulate_after_warmup(&cfg, &workload, self.warmup, instructions, seed, &AtomicBool::new(false))
            .map_err(|e| format!("{} on {}: {e}", self.preset, self.workload))?;
        Ok(Timed { cfg, workload, stats })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn results_keep_the_points_order_and_progress_counts_every_run() {
        let points: Vec<u64> = (0..64).collect();
        let seen = Mutex::new(Vec::new());
        let progress = |done: usize, total: usize, what: &str| seen.lock().unwrap().push((done, total, what.to_string()));
        // Later points end first: the order of the results must not follow.
        let r = run(
            &points,
            &progress,
            |p| format!("point {p}"),
            |&p| {
                std::thread::sleep(std::time::Duration::from_micros(64 - p));
                if p % 10 == 3 {
                    Err(format!("{p} failed"))
                } else {
                    Ok(p * p)
                }
            },
        );
        for (p, r) in points.iter().zip(&r) {
            match r {
                Ok(sq) => assert_eq!(*sq, p * p),
                Err(e) => assert_eq!(e, &format!("{p} failed")),
            }
        }
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), (1..=64).collect::<Vec<_>>());
        assert!(seen.iter().all(|s| s.1 == 64));
        let mut named: Vec<&str> = seen.iter().map(|s| s.2.as_str()).collect();
        named.sort();
        named.dedup();
        assert_eq!(named.len(), 64, "each point named once");
    }

    #[test]
    fn a_panic_fails_its_point_alone_and_a_failure_keeps_the_finished_runs() {
        let r = run(&[1, 2, 3], &|_, _, _| {}, |p| format!("point {p}"), |&p| if p == 2 { panic!("boom {p}") } else { Ok(p) });
        assert_eq!(r[0], Ok(1));
        assert_eq!(r[2], Ok(3));
        let e = r[1].as_ref().unwrap_err();
        assert!(e.starts_with("point 2: the model panicked (a bug): boom 2"), "{e}");
        let f = Failure::collect(r).unwrap_err();
        assert_eq!((f.failed.len(), f.completed.clone()), (1, vec![1, 3]));
        let shown = f.to_string();
        assert!(shown.starts_with("1 run failed (2 finished)") && shown.contains("boom 2"), "{shown}");
        assert_eq!(Failure::collect(vec![Ok::<_, String>(7)]).unwrap(), vec![7]);
    }

    #[test]
    fn a_recording_after_a_warm_up_holds_more_than_the_two_counts() {
        assert_eq!(recording_for(0, 5_000_000), 5_000_000);
        assert!(recording_for(2_000_000, 10_000_000) > 12_000_000);
    }

    #[test]
    fn a_timed_run_names_what_failed() {
        let e = TimedRun::new("no-such-preset", vec![], "btree").time(1000, 1).err().unwrap();
        assert!(e.contains("no-such-preset"), "{e}");
        let e = TimedRun::new("cobcm", vec![], "no-such-workload").time(1000, 1).err().unwrap();
        assert!(e.starts_with("no-such-workload: "), "{e}");
        let t = TimedRun::new("cobcm", vec!["persistence.point.entries=8".into()], "btree").time(2000, 1).unwrap();
        assert!(t.stats.roi.core.instructions >= 2000);
        assert_eq!(t.cfg.name, "cobcm");
    }
}
