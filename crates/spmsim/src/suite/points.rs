//! Simulation points of the suite's programs (representative
//! regions). For each recorded program, one pass of spmtrace over its whole
//! run gives its basic-block vectors and so its phases (phases.rs); a
//! second pass records a trace at each chosen point, fast-forwarding at
//! valgrind's own speed in between (trace/lackey/record.rs `record_windows`).
//!
//! Two choices, by what the run can afford:
//! - `single`: the one interval nearest the whole run's mean vector
//!   (SimPoint's single-point method), for `reproduce --quick`;
//! - `all`: one point per phase, each with its phase's share of the run as
//!   its weight (SimPoint 3.0's multiple points), for the full run.
//!
//! A point's trace is `<cache>/suite/<program>@<label>.trace`, so it runs
//! as workload `suite:<program>@<label>`; the choice and the recordings
//! are in `<cache>/suite/<program>.<choice>.json`.

use super::Manifest;
use crate::trace::lackey::RecordSummary;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Instant;

pub const POINTS_FORMAT: &str = "spmsim-suite-points-2";

/// Largest number of phases tried (SimPoint's usual maximum is 10).
pub const MAX_K: usize = 10;

/// A point's window is this many times its instructions long, as valgrind
/// counts them (each `rep` iteration one), so that the trace, which folds
/// the iterations, can still hold the instructions asked for.
pub(crate) const REP_ROOM: u64 = 3;

/// Which points to record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Choice {
    Single,
    All,
}

impl Choice {
    pub fn name(self) -> &'static str {
        match self {
            Choice::Single => "single",
            Choice::All => "simpoints",
        }
    }
}

/// One recorded point.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Point {
    /// `single`, or `sp<interval>`: the trace is `<program>@<label>`.
    pub label: String,
    /// Interval index: the point starts `interval * interval_size` instructions in.
    pub interval: usize,
    /// Its phase's share of the run (1 for the single point).
    pub weight: f64,
    pub trace: String,
    pub recording: RecordSummary,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PointsManifest {
    pub format: String,
    pub program: String,
    pub choice: Choice,
    /// What the program's own recording was made from, and the tool's
    /// source: points are recorded again when either changes.
    pub key: String,
    pub interval_size: u64,
    /// Instructions recorded at each point (from the interval's start).
    pub point_instructions: u64,
    /// Intervals in the run (the last may be partial).
    pub intervals: usize,
    pub phases: usize,
    pub points: Vec<Point>,
    pub record_seconds: f64,
}

impl PointsManifest {
    pub fn path(cache: &Path, program: &str, choice: Choice) -> PathBuf {
        cache.join("suite").join(format!("{program}.{}.json", choice.name()))
    }

    pub fn load(path: &Path) -> Result<Self, String> {
        let t = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let m: PointsManifest = serde_json::from_str(&t).map_err(|e| format!("{}: not a points manifest: {e}", path.display()))?;
        if m.format != POINTS_FORMAT {
            return Err(format!("{}: format `{}`, expected `{POINTS_FORMAT}`", path.display(), m.format));
        }
        Ok(m)
    }

    /// The workloads of the points, with their weights normalised to sum 1.
    pub fn workloads(&self, policy: &str) -> Vec<(String, f64)> {
        let total: f64 = self.points.iter().map(|p| p.weight).sum();
        self.points
            .iter()
            .map(|p| (format!("suite:{}@{}#persistent={policy}", self.program, p.label), p.weight / total.max(f64::MIN_POSITIVE)))
            .collect()
    }
}

/// What the program's recording was made from, hashed with the tool's source.
fn key_of(m: &Manifest) -> String {
    let mut h = Sha256::new();
    let parts = serde_json::json!([
        m.packages,
        m.binary,
        m.valgrind,
        m.command,
        m.stdin,
        m.env,
        m.inputs.iter().map(|i| &i.sha256).collect::<Vec<_>>()
    ]);
    h.update(parts.to_string().as_bytes());
    h.update(crate::trace::vgtool::SOURCE.as_bytes());
    h.finalize().iter().take(12).map(|b| format!("{b:02x}")).collect()
}

/// The points manifest of `m`'s program if it is up to date for these settings.
pub fn up_to_date(cache: &Path, m: &Manifest, choice: Choice, interval_size: u64, point_instructions: u64) -> Option<PointsManifest> {
    let p = PointsManifest::load(&PointsManifest::path(cache, &m.program, choice)).ok()?;
    let fresh = p.key == key_of(m)
        && p.interval_size == interval_size
        && p.point_instructions == point_instructions
        && p.points.iter().all(|x| usable(Path::new(&x.trace)));
    fresh.then_some(p)
}

/// Whether a point's trace can be read and its instruction stream used
/// with it (none, one of an older format version or one made from other
/// bytes is recorded again).
fn usable(trace: &Path) -> bool {
    use crate::trace::insn::{path_for, InsnReader};
    trace.is_file() && crate::trace::NativeReader::open(trace).is_ok() && InsnReader::open_for(&path_for(trace), trace).is_ok()
}

/// Find the phases of `m`'s program and record its points (see the module
/// notes), replacing what was there.
pub fn record(cache: &Path, m: &Manifest, choice: Choice, interval_size: u64, point_instructions: u64) -> Result<PointsManifest, String> {
    let t0 = Instant::now();
    let work = cache.join("suite").join("work").join(format!("points-{}", m.program));
    let ph = super::program_phases(m, cache, interval_size, MAX_K, &work.join("phases"))?;
    let mut chosen: Vec<(usize, f64, String)> = match choice {
        Choice::Single => vec![(ph.single, 1.0, "single".into())],
        Choice::All => ph.points.iter().map(|p| (p.interval, p.weight, format!("sp{}", p.interval))).collect(),
    };
    chosen.sort_by_key(|c| c.0);
    let dir = cache.join("suite");
    let outs: Vec<PathBuf> = chosen.iter().map(|c| dir.join(format!("{}@{}.trace", m.program, c.2))).collect();
    // Run from the program's stage, as it was recorded and as its phases
    // were found.
    let stage = super::stage::Stage::enter(&m.program, cache)?;
    let mut run = super::rerun::rerun_options(m, &stage);
    run.source = format!("suite:{} ({}): {}", m.program, m.package_label(), m.command.join(" "));
    let opts = crate::trace::lackey::WindowOptions {
        run,
        // Room for rep iterations, which the window counts one by one and
        // the trace folds into their instruction.
        // (never into the next point's window).
        windows: chosen
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let start = c.0 as u64 * interval_size;
                let room = chosen.get(i + 1).map_or(u64::MAX, |n| n.0 as u64 * interval_size - start);
                (start, (point_instructions * REP_ROOM).min(room))
            })
            .collect(),
        outs: outs.clone(),
        instructions: Some(point_instructions),
        cache: cache.to_path_buf(),
    };
    let sums = crate::trace::lackey::record_windows(&opts);
    drop(stage);
    let _ = std::fs::remove_dir_all(&work);
    let sums = sums?;
    if sums.len() < chosen.len() {
        return Err(format!(
            "{}: the program ended before point {} of {} (interval {})",
            m.program,
            sums.len() + 1,
            chosen.len(),
            chosen[sums.len()].0
        ));
    }
    let points = chosen
        .into_iter()
        .zip(sums)
        .zip(outs)
        .map(|(((interval, weight, label), recording), out)| Point { label, interval, weight, trace: out.display().to_string(), recording })
        .collect();
    let pm = PointsManifest {
        format: POINTS_FORMAT.into(),
        program: m.program.clone(),
        choice,
        key: key_of(m),
        interval_size,
        point_instructions,
        intervals: ph.intervals,
        phases: ph.k,
        points,
        record_seconds: t0.elapsed().as_secs_f64(),
    };
    let text = serde_json::to_string_pretty(&pm).map_err(|e| e.to_string())?;
    super::write_atomic(&PointsManifest::path(cache, &m.program, choice), text.as_bytes())?;
    Ok(pm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::insn::{path_for, Insn, InsnWriter};
    use crate::trace::{NativeWriter, TraceHeader};

    #[test]
    fn a_point_whose_stream_cannot_be_used_with_its_trace_is_not_usable() {
        let dir = std::env::temp_dir().join(format!("spmsim-points-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t = dir.join("p@single.trace");
        let header = TraceHeader {
            source_format: "test".into(),
            source: String::new(),
            address_space: Default::default(),
            values: false,
            persistent_ranges: Vec::new(),
            skipped_instructions: 0,
            stack_range: None,
            thread_stacks: Vec::new(),
        };
        NativeWriter::create(&t, &header).unwrap().finish().unwrap();
        assert!(!usable(&t), "a point without its stream");
        let bind = |source: &std::path::Path| {
            let mut w = InsnWriter::create(&path_for(&t)).unwrap();
            w.write(&Insn::default()).unwrap();
            w.finish(0, &crate::util::digest::file_digest(source).unwrap()).unwrap();
        };
        bind(&t);
        assert!(usable(&t), "a point with the stream made from its bytes");
        let other = dir.join("other");
        std::fs::write(&other, b"other bytes").unwrap();
        bind(&other);
        assert!(!usable(&t), "a point whose stream was made from other bytes");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
