//! A suite of real programs, SPEC-like in spirit, recorded under valgrind
//! lackey on inputs the repo generates (`configs/suite/programs.toml`).
//!
//! ```text
//!  programs.toml --load/check--> Suite                            (programs.rs)
//!  record_suite: apt-get install missing packages   (packages.rs, record.rs)
//!      -> generate inputs (sha256)                  (inputs.rs, input_files.rs)
//!      -> per program, in parallel: trace::lackey::record -> <cache>/suite/NAME.trace
//!                                   + manifest           -> <cache>/suite/NAME.json
//!                                                           (manifest.rs)
//!  every run of a program starts from a fixed folder, whatever the
//!      cache's path                                (stage.rs)
//!  phases and simulation points: the recorded command run again
//!      under spmtrace                              (rerun.rs, phases.rs, points.rs)
//!  suite:NAME workloads read <cache>/suite/NAME.trace            (this file)
//! ```
//! A manifest holds everything a trace was recorded from (package
//! versions, the exact command line, input checksums, skipped and recorded
//! instructions), so the trace can be rebuilt exactly; a trace whose
//! manifest still matches is not recorded again.

mod input_files;
pub mod inputs;
mod manifest;
pub mod packages;
pub mod phases;
#[cfg(unix)]
pub mod points;
pub mod programs;
mod record;
mod rerun;
mod stage;

pub use input_files::make_inputs;
pub use manifest::{utc_now, InputFile, Manifest, PackageVersion, MANIFEST_FORMAT};
pub use programs::{InputSpec, ProgramSpec, Suite};
pub use record::{record_suite, select, Outcome, Progress, RecordPlan, Recorder, Status};
#[cfg(unix)]
pub use rerun::program_phases;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Instructions recorded per program unless told otherwise: enough for
/// `reproduce secpb --quick` (5 M per simulation) with room to spare, and
/// short enough that recording the whole suite on a fresh 2-core machine
/// leaves `--quick` inside ten minutes.
pub const DEFAULT_INSTRUCTIONS: u64 = 10_000_000;

pub use crate::trace::cache_dir;

/// The recorded trace of suite program `name`.
pub fn trace_path(name: &str) -> Result<PathBuf, String> {
    let p = cache_dir().join("suite").join(format!("{name}.trace"));
    if p.is_file() {
        Ok(p)
    } else {
        // The stand-in suites' programs are recorded from their own files.
        let own = stand_in_suite_files().into_iter().find(|f| suite_has(f, name));
        let record = match own {
            Some(f) => format!("spmsim suite record --programs {} --only {name}", f.display()),
            None => "spmsim suite record".into(),
        };
        Err(format!("suite program `{name}` has no trace at {}; run `{record}` first", p.display()))
    }
}

/// The stand-in suites' definitions, beside the main suite's.
pub fn stand_in_suite_files() -> Vec<PathBuf> {
    let main = programs::default_path();
    ["memory-intensive.toml", "spec2017-stand-ins.toml", "spec-upstream.toml"].into_iter().map(|f| main.with_file_name(f)).collect()
}

/// The suite defined at `file` has a program `name`.
fn suite_has(file: &Path, name: &str) -> bool {
    Suite::load(file).is_ok_and(|s| s.programs.iter().any(|q| q.name == name))
}

/// Suite program `name` is a program of the main suite or of a stand-in
/// suite (recorded or not).
pub fn known_program(name: &str) -> bool {
    suite_has(&programs::default_path(), name) || stand_in_suite_files().iter().any(|f| suite_has(f, name))
}

/// Where a program's trace and manifest live under a cache folder.
pub fn trace_file(cache: &Path, name: &str) -> PathBuf {
    cache.join("suite").join(format!("{name}.trace"))
}

pub fn manifest_file(cache: &Path, name: &str) -> PathBuf {
    cache.join("suite").join(format!("{name}.json"))
}

pub fn inputs_dir(cache: &Path) -> PathBuf {
    cache.join("suite").join("inputs")
}

/// The manifests of the suite's programs that have a trace in `cache`.
pub fn cached(suite: &Suite, cache: &Path) -> BTreeMap<String, Manifest> {
    suite
        .programs
        .iter()
        .filter(|p| trace_file(cache, &p.name).is_file())
        .filter_map(|p| Manifest::load(&manifest_file(cache, &p.name)).ok().map(|m| (p.name.clone(), m)))
        .collect()
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    crate::util::output::write_atomic(path, bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;
