//! The workloads SecPB's grid runs over: a recorded real-program suite
//! (the default: the upstream programs of the SPEC CPU2006 benchmarks
//! SecPB VI-A ran, `configs/suite/spec-upstream.toml`; `--programs` names
//! another, such as the suite of other Debian programs, `programs.toml`)
//! or the built-in stand-ins (`--builtin`: micro-benchmarks and synthetic
//! profiles, no valgrind needed).
//!
//! ```text
//!  configs/suite/spec-upstream.toml --record--> ~/.cache/spmsim (trace + manifest)
//!     -> SuiteEntry { label, workload = suite:NAME#persistent=heap,
//!                     points = [(workload, weight)] at SimPoint regions }
//!  builtin_suite()  -> SuiteEntry { label, workload = array-swap | synthetic:... }
//! ```

use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// The suite entry that carries the VI-B worked example.
pub const GAMESS_LIKE: &str = "syn-gamess";

#[derive(Clone, Debug, Serialize)]
pub struct SuiteEntry {
    pub label: String,
    pub workload: String,
    pub what: String,
    /// The Debian package and version of a recorded program (`None` for
    /// the built-in stand-ins).
    pub package: Option<String>,
    /// Instructions skipped at the program's start before its trace begins.
    pub skipped: Option<u64>,
    /// The persistence policy of a recorded program's runs (`heap`: its
    /// stack is volatile); `None` for the built-in stand-ins, which model
    /// persistent data alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persistent: Option<String>,
    /// Simulation points (workload, weight; weights sum to 1) that stand
    /// for the program; empty: `workload` alone. A program's figures are
    /// the points' per-instruction figures weighted (SimPoint's weighted CPI).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<(String, f64)>,
    /// Which points: `single` or `simpoints`, with the interval size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regions: Option<String>,
    /// The suite file that defines a recorded program (its file name in
    /// `configs/suite/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_file: Option<String>,
}

/// The policy a recorded program's main grid runs under: heap and globals
/// persistent, the stack volatile; Table IV is also run with
/// every store persistent (`all`) beside it.
pub const MAIN_POLICY: &str = "heap";

/// The synthetic profile of the VI-B worked example (gamess's PPTI and
/// NWPE as the paper reports them).
pub(super) const GAMESS_PROFILE: &str = "synthetic:ppti=47.4,nwpe=2.1,footprint_mib=1";

/// The built-in stand-ins (`--builtin`): micro-benchmarks and synthetic
/// profiles, run without valgrind or recorded traces.
pub fn builtin_suite() -> Vec<SuiteEntry> {
    let e = |l: &str, w: &str, what: &str| SuiteEntry {
        points: Vec::new(),
        regions: None,
        suite_file: None,
        label: l.into(),
        workload: w.into(),
        what: what.into(),
        package: None,
        skipped: None,
        persistent: None,
    };
    vec![
        e("array-swap", "array-swap", "persistent micro-benchmark: undo-logged swaps of a 1024-element array"),
        e("random-writes", "random-writes", "random 8-byte persists over 256 KiB, ~10 per 1000 instructions"),
        e("seq-writes", "seq-writes", "sequential 8-byte persists over 512 KiB"),
        e(GAMESS_LIKE, GAMESS_PROFILE, "synthetic with the PPTI and NWPE the paper reports for gamess (VI-B)"),
        e(
            "syn-povray",
            "synthetic:ppti=38.8,nwpe=17.6,footprint_mib=4",
            "synthetic with the PPTI and NWPE the paper reports for povray (VI-B)",
        ),
        e("syn-moderate", "synthetic:ppti=5,nwpe=4,miss_pti=5,footprint_mib=256", "synthetic: moderate persists, memory-bound loads"),
        e("syn-light", "synthetic:ppti=2,nwpe=8,miss_pti=1,footprint_mib=64", "synthetic: few persists with high locality"),
        e(
            "syn-scatter",
            "synthetic:ppti=15,nwpe=1.5,miss_pti=10,footprint_mib=512",
            "synthetic: many persists with little locality, large footprint",
        ),
    ]
}

/// The recorded real-program suite as workloads: `suite:NAME` for every
/// program of `suite` with a trace and manifest in `cache`, and the names
/// of the programs that have none.
///
/// With `regions`, a program whose points of that choice are recorded
/// (`spmsim suite points`) runs at them instead of at its start-up window.
pub fn recorded_suite(
    suite: &crate::suite::Suite,
    cache: &Path,
    regions: Option<crate::suite::points::Choice>,
) -> (Vec<SuiteEntry>, Vec<String>) {
    let manifests = crate::suite::cached(suite, cache);
    let mut entries = Vec::new();
    let mut missing = Vec::new();
    for p in &suite.programs {
        match manifests.get(&p.name) {
            Some(m) => {
                let mut e = SuiteEntry {
                    label: p.name.clone(),
                    workload: format!("suite:{}#persistent={MAIN_POLICY}", p.name),
                    what: p.description.clone(),
                    package: Some(m.package_label()),
                    skipped: Some(m.recording.skipped_instructions),
                    persistent: Some(MAIN_POLICY.into()),
                    points: Vec::new(),
                    regions: None,
                    suite_file: suite.path.file_name().map(|f| f.to_string_lossy().into_owned()),
                };
                let pm = regions.and_then(|c| {
                    crate::suite::points::PointsManifest::load(&crate::suite::points::PointsManifest::path(cache, &p.name, c)).ok()
                });
                if let Some(pm) = pm {
                    e.points = pm.workloads(MAIN_POLICY);
                    e.workload = e.points[0].0.clone();
                    e.skipped = pm.points.first().map(|x| x.recording.skipped_instructions);
                    e.regions = Some(format!(
                        "{} ({} of {} phases, intervals of {} M instructions, {} M recorded at each)",
                        pm.choice.name(),
                        pm.points.len(),
                        pm.phases,
                        pm.interval_size / 1_000_000,
                        pm.point_instructions / 1_000_000
                    ));
                }
                entries.push(e)
            }
            None => missing.push(p.name.clone()),
        }
    }
    (entries, missing)
}

/// How the report describes where the programs' traces come from.
pub(super) fn regions_text(suite: &[SuiteEntry]) -> String {
    let with = suite.iter().filter(|s| s.regions.is_some()).count();
    let startup = "traced after skipping its start-up (`spmsim suite record`; spmsim's valgrind tool runs through the start-up and lackey's format is recorded from there, or lackey throughout where the suite file says `fast_forward = false`)";
    if with == 0 {
        return format!("Each program is {startup}.");
    }
    let single = suite.iter().any(|s| s.regions.as_deref().is_some_and(|r| r.starts_with("single")));
    let how = if single {
        "at their single simulation points: for each, the interval of its whole run whose basic-block vector is nearest the run's mean (SimPoint's one-point method, used by quick runs; the table below gives each program's phases). These are short regions, not the paper's: SecPB V-A simulates 250 M instructions at each representative region, which the full run (without `--quick`) does. One point per program is also fragile: whatever shifts the program's addresses or the boundaries of its phases (the size of its environment, of an input) can move the point to another interval and the program's figures with it; the full run's several points, weighted by their phases, damp that"
    } else {
        "at their SimPoint simulation points, one per phase, and each program's figures are its points' per-instruction figures weighted by the phases' shares of the run (SimPoint's weighted CPI)"
    };
    let mut t = format!(
        "{with} of the {} programs run {how}. `spmsim suite points` finds the phases from basic-block vectors of the whole run (k-means, BIC) and records the points in one pass of spmsim's valgrind tool, which runs at valgrind's own speed up to each point.",
        suite.len()
    );
    if with < suite.len() {
        let _ = write!(t, " The others are {startup}.");
    }
    t
}

/// The suite is made of recorded programs (not the built-in stand-ins).
pub fn is_recorded(suite: &[SuiteEntry]) -> bool {
    !suite.is_empty() && suite.iter().all(|s| s.package.is_some())
}
