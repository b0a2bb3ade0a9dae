//! Reproductions of the papers' evaluations: run the grid of simulations a
//! paper's tables and figures need, then put our numbers beside theirs.
//!
//! ```text
//!  a paper's module (secpb/, secon, star, triad, mset) declares:
//!    grid()     the points to run      --> grid::run: in parallel, one progress bar,
//!    run(point) one simulation,              each result in its point's place
//!               or one counted recovery
//!    analyse()  figures, claims, causes <-- every record beside its point
//!    files()    results.json, runs.csv, report.md, figure CSVs
//!  the framework:
//!    rule.rs    the kinds of claim and the one rule that judges them
//!    claims.rs  claims of configs/reference/<paper>.toml, their outcome
//!               (reproduced, the paper disagrees with itself, missed), the
//!               log-log point each has on the index
//!    grid.rs    the runner (compare's too), a timed run, a failure that
//!               keeps the finished runs
//!    report.rs  the report's common sections, figures, writing files
//!    index.rs   `reproduce all`: one page of every paper's claims
//!    readings.rs  the readings of what a paper leaves open, each run, the
//!               primary one's numbers the claims'
//! ```
//! [`run`] drives a paper from its grid to its results; [`write`] writes
//! them. The CLI adds what needs the outside world: recording the
//! programs a grid runs, the progress bar, and the Python page of plots.

pub mod claims;
pub mod grid;
pub mod index;
pub mod mset;
pub mod published_ipc;
pub mod readings;
pub mod report;
pub mod rule;
pub mod secon;
pub mod secpb;
pub mod star;
pub mod triad;

pub use claims::{ClaimResult, Kind, Outcome, Reference, Rule};
pub use grid::{Failure, Progress};
pub use report::Figure;

use serde::Serialize;
use std::path::Path;

/// One paper's reproduction, as the framework drives it.
pub trait Paper: Sync {
    /// One point of the grid: what to run.
    type Point: Sync;
    /// What one point's run measured.
    type Record: Send;
    /// The analysis: what results.json holds.
    type Results: Serialize;

    /// `spmsim reproduce ID` and its folder in `reproduce all`'s results.
    const ID: &'static str;
    /// The Python package draws a page of plots (report.html) for it.
    const PLOTS: bool = false;

    /// Every point, in the order the results list them.
    fn grid(&self) -> Vec<Self::Point>;
    /// A point, for the progress line and the errors.
    fn describe(&self, point: &Self::Point) -> String;
    fn run(&self, point: &Self::Point) -> Result<Self::Record, String>;
    /// Figures, claims and causes from every run beside its point, in grid order.
    fn analyse(&self, runs: Vec<(&Self::Point, Self::Record)>) -> Result<Self::Results, String>;
    /// The claims, judged, for the index.
    fn claims(&self, results: &Self::Results) -> Vec<ClaimResult>;
    /// The files to write: (name, contents).
    fn files(&self, results: &Self::Results) -> Result<Vec<(String, String)>, String>;
    /// runs.csv of the runs that finished when others failed.
    fn runs_csv(&self, finished: &[Self::Record]) -> String;
    /// Lines the command prints beside the claims (what the paper's
    /// headline numbers came to, what the runs differ in).
    fn summary(&self, _results: &Self::Results) -> Vec<String> {
        Vec::new()
    }
}

/// Run `paper`'s grid and analyse it; `progress` hears of every run.
pub fn run<P: Paper>(paper: &P, progress: Progress) -> Result<P::Results, Failure<P::Record>> {
    let points = paper.grid();
    let records = Failure::collect(grid::run(&points, progress, |p| paper.describe(p), |p| paper.run(p)))?;
    paper.analyse(points.iter().zip(records).collect()).map_err(Failure::before_any_run)
}

/// Write `results` into `dir`: all of the paper's files or none.
pub fn write<P: Paper>(paper: &P, results: &P::Results, dir: &Path) -> Result<(), String> {
    report::write_files(dir, &paper.files(results)?)
}

/// Keep what a failed reproduction computed: `runs.csv` with the runs that
/// finished and `failed.txt` with each failure. No table is written, since
/// a table needs every one of its runs.
pub fn write_partial<P: Paper>(paper: &P, f: &Failure<P::Record>, dir: &Path) -> Result<(), String> {
    let mut failed = f.failed.join("\n");
    failed.push('\n');
    report::write_files(dir, &[("runs.csv".into(), paper.runs_csv(&f.completed)), ("failed.txt".into(), failed)])
}

/// Geometric mean of positive values.
pub fn geomean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// The geometric and the arithmetic mean.
pub fn means(v: &[f64]) -> (f64, f64) {
    (geomean(v), mean(v))
}

/// Smallest and largest of the values ((inf, 0) for none).
pub fn range(v: &[f64]) -> (f64, f64) {
    v.iter().fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)))
}

pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}
