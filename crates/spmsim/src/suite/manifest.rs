//! What a recorded trace was recorded from, kept beside it as
//! `<cache>/suite/NAME.json`, and what decides whether it must be recorded
//! again.
//!
//! ```text
//!  Manifest { packages, binary, valgrind, command, stdin, env, inputs (sha256), skip,
//!             + what the recording gave: instructions, loads, stores, ... }
//!  Key = the fields a recording depends on: a trace is kept while its
//!        manifest's key equals the job's, and recorded again otherwise
//! ```

use super::InputSpec;
use crate::trace::lackey::RecordSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct PackageVersion {
    pub name: String,
    pub version: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct InputFile {
    pub name: String,
    pub kind: String,
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
    /// How it was made: the generator's seed and size, the copied file, or
    /// the deriving command.
    pub made_by: InputSpec,
}

/// Everything a trace was recorded from, and what the recording gave.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub format: String,
    pub program: String,
    pub description: String,
    /// The packages the entry names, at their installed versions.
    pub packages: Vec<PackageVersion>,
    /// The traced binary and the package it comes from.
    pub binary: String,
    pub binary_package: Option<PackageVersion>,
    pub valgrind: String,
    /// The exact command line, placeholders resolved.
    pub command: Vec<String>,
    pub stdin: Option<String>,
    pub cwd: String,
    pub env: BTreeMap<String, String>,
    pub inputs: Vec<InputFile>,
    /// Instructions asked for: skipped before recording, then recorded.
    pub skip: u64,
    pub instructions_requested: u64,
    /// Skipped and recorded instructions, loads, stores, whether the
    /// program ended before the limit (the same keys at the top level).
    #[serde(flatten)]
    pub recording: RecordSummary,
    pub trace: String,
    pub trace_bytes: u64,
    pub spmsim_version: String,
    /// UTC, ISO 8601.
    pub recorded_at: String,
    pub record_seconds: f64,
}

pub const MANIFEST_FORMAT: &str = "spmsim-suite-manifest-2";

impl Manifest {
    pub fn load(path: &Path) -> Result<Manifest, String> {
        let t = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let m: Manifest = serde_json::from_str(&t).map_err(|e| format!("{}: not a suite manifest: {e}", path.display()))?;
        if m.format != MANIFEST_FORMAT {
            return Err(format!("{}: manifest format `{}`, expected `{MANIFEST_FORMAT}`", path.display(), m.format));
        }
        Ok(m)
    }

    /// The version of the program's own package (the first it names).
    pub fn package_label(&self) -> String {
        match (&self.binary_package, self.packages.first()) {
            (Some(b), _) => format!("{} {}", b.name, b.version),
            (None, Some(p)) => format!("{} {}", p.name, p.version),
            _ => "unknown".into(),
        }
    }
}

/// What a recording depends on: a trace is recorded again when this differs.
#[derive(Debug, PartialEq)]
pub(super) struct Key<'a> {
    pub(super) packages: &'a [PackageVersion],
    pub(super) binary: &'a str,
    pub(super) valgrind: &'a str,
    pub(super) command: &'a [String],
    pub(super) stdin: &'a Option<String>,
    pub(super) env: &'a BTreeMap<String, String>,
    pub(super) inputs: Vec<(&'a str, &'a str)>,
    pub(super) skip: u64,
}

impl Manifest {
    pub(super) fn key(&self) -> Key<'_> {
        Key {
            packages: &self.packages,
            binary: &self.binary,
            valgrind: &self.valgrind,
            command: &self.command,
            stdin: &self.stdin,
            env: &self.env,
            inputs: self.inputs.iter().map(|i| (i.name.as_str(), i.sha256.as_str())).collect(),
            skip: self.skip,
        }
    }
}

/// The date and time now, UTC, as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}
