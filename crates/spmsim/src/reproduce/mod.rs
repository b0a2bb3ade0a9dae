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
//!    points.rs  the points folder: each run's record kept as it ends, so
//!               that a rerun resumes and points can run elsewhere
//!    readings.rs  the readings of what a paper leaves open, each run, the
//!               primary one's numbers the claims'
//! ```
//! [`run`] drives a paper from its grid to its results ([`run_kept`]
//! keeping each run's record in the points folder as it ends, and reusing
//! those it finds there); [`write`] writes them. The CLI adds what needs the outside world: recording the
//! programs a grid runs, the progress bar, and the Python page of plots.

pub mod claims;
pub mod grid;
pub mod index;
pub mod mset;
pub mod open_statement;
pub mod points;
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

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::Path;

/// One paper's reproduction, as the framework drives it.
pub trait Paper: Sync {
    /// One point of the grid: what to run (serialized into its id in the
    /// points folder).
    type Point: Sync + Serialize;
    /// What one point's run measured (kept in the points folder).
    type Record: Send + Serialize + DeserializeOwned;
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
    /// What besides a point shapes its record (the instructions, the seed,
    /// the options the runs read): part of every point's id, so that a
    /// record kept under other settings is computed again.
    fn settings(&self) -> serde_json::Value;
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

/// [`run`], keeping each run's record in the points folder `dir` as the
/// run ends and taking the records already there instead of running
/// their points again. `note` hears of a kept record that could not be
/// used (computed again) or a record that could not be kept, and of how
/// many runs were found done.
pub fn run_kept<P: Paper>(
    paper: &P,
    dir: &Path,
    progress: Progress,
    note: &(dyn Fn(String) + Sync),
) -> Result<P::Results, Failure<P::Record>> {
    let points = paper.grid();
    let keys = points::keys(paper, &points).map_err(Failure::before_any_run)?;
    let kept: Vec<Option<P::Record>> = keys
        .iter()
        .map(|k| {
            points::load::<P>(dir, k).unwrap_or_else(|why| {
                note(format!("{why}; computing it again"));
                None
            })
        })
        .collect();
    let todo: Vec<usize> = (0..points.len()).filter(|&i| kept[i].is_none()).collect();
    if todo.len() < points.len() {
        note(format!("{} of {} runs already done in {}", points.len() - todo.len(), points.len(), dir.display()));
    }
    let ran = grid::run(
        &todo,
        progress,
        |&i| paper.describe(&points[i]),
        |&i| {
            let r = paper.run(&points[i])?;
            if let Err(e) = points::save::<P>(dir, &keys[i], &r) {
                note(format!("warning: {e}"));
            }
            Ok(r)
        },
    );
    let mut ran = todo.into_iter().zip(ran).peekable();
    let mut all = Vec::with_capacity(points.len());
    for (i, k) in kept.into_iter().enumerate() {
        all.push(match k {
            Some(r) => Ok(r),
            None => ran.next_if(|(j, _)| *j == i).map_or_else(|| Err(format!("{}: not run", paper.describe(&points[i]))), |(_, r)| r),
        });
    }
    let records = Failure::collect(all)?;
    paper.analyse(points.iter().zip(records).collect()).map_err(Failure::before_any_run)
}

/// Every point of `paper`'s grid with whether the points folder `dir`
/// holds a record that stands for it (`--list-points`).
pub fn list_points<P: Paper>(paper: &P, dir: &Path) -> Result<Vec<(points::Key, bool)>, String> {
    let keys = points::keys(paper, &paper.grid())?;
    Ok(keys.into_iter().map(|k| (points::load::<P>(dir, &k).ok().flatten().is_some(), k)).map(|(done, k)| (k, done)).collect())
}

/// Run the point of `paper`'s grid whose id is `id` and keep its record
/// in the points folder `dir` (`--only-point`); a record already kept is
/// left as it is. Returns the point's description and whether it ran.
pub fn run_point<P: Paper>(paper: &P, dir: &Path, id: &str, note: &dyn Fn(String)) -> Result<(String, bool), String> {
    let points = paper.grid();
    let keys = points::keys(paper, &points)?;
    let Some(i) = keys.iter().position(|k| k.id == id) else {
        return Err(format!(
            "reproduce {}: no point `{id}` in this grid (its {} points are listed by the same arguments with --list-points)",
            P::ID,
            keys.len()
        ));
    };
    match points::load::<P>(dir, &keys[i]) {
        Ok(Some(_)) => return Ok((keys[i].point.clone(), false)),
        Ok(None) => {}
        Err(why) => note(format!("{why}; computing it again")),
    }
    let r = grid::run(&points[i..=i], &|_, _, _| {}, |p| paper.describe(p), |p| paper.run(p)).pop().expect("one run");
    points::save::<P>(dir, &keys[i], &r?)?;
    Ok((keys[i].point.clone(), true))
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
