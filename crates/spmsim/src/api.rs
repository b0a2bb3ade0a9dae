//! One timed run as every front end sees it: the `spmsim run` command, the
//! Python package (`spmsim.run`) and Rust callers all go through [`run`],
//! so the statistics document they produce is the same tree, key for key.
//!
//! ```text
//!  RunRequest { scheme, workload, warmup_instructions, instructions, seed, overrides, baseline }
//!    resolve (once, up front; bad input: ApiError::Invalid)
//!      -> load_preset (the scheme under overrides; the baseline as it is)
//!      -> WorkloadKind::parse                      (once, for both runs)
//!      -> timing::ResolvedRun::new for each        (cores, streams, readers opened)
//!    = ResolvedRequest
//!    run
//!      -> ResolvedRun::simulate(stop)              (stop set: ApiError::Cancelled)
//!      -> [the baseline's]                         -> slowdown
//!      -> RunOutput { config, stats, doc }         doc = the JSON of `run --json`
//! ```

use crate::config::{load_preset, SimConfig};
use crate::timing::{ResolvedRun, RunStats};
use crate::workload::WorkloadKind;
use std::sync::atomic::AtomicBool;

/// The instruction count `spmsim run` uses when none is given.
pub const DEFAULT_INSTRUCTIONS: u64 = 1_000_000;

/// What to simulate. `overrides` are `key.path=value` strings, as `--set`
/// takes them; they apply to `scheme` only, not to the baseline, which runs
/// its preset as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRequest {
    pub scheme: String,
    pub workload: String,
    /// Instructions run before the region of interest, through the whole
    /// model but outside the statistics (ChampSim's `--warmup-instructions`);
    /// 0: none. The baseline warms up the same way.
    pub warmup_instructions: u64,
    /// None: [`DEFAULT_INSTRUCTIONS`], and the notes say it was the default.
    pub instructions: Option<u64>,
    pub seed: u64,
    pub overrides: Vec<String>,
    pub baseline: Option<String>,
}

impl RunRequest {
    pub fn new(scheme: &str, workload: &str) -> Self {
        RunRequest {
            scheme: scheme.into(),
            workload: workload.into(),
            warmup_instructions: 0,
            instructions: None,
            seed: 1,
            overrides: Vec::new(),
            baseline: None,
        }
    }

    /// The instructions to simulate.
    pub fn instruction_count(&self) -> u64 {
        self.instructions.unwrap_or(DEFAULT_INSTRUCTIONS)
    }
}

/// A finished run: the resolved configuration, the typed statistics and the
/// document `spmsim run --json` prints (the statistics, plus `baseline` and
/// `slowdown` when a baseline was asked for).
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub config: SimConfig,
    pub stats: RunStats,
    pub doc: serde_json::Value,
}

impl RunOutput {
    /// The document as `spmsim run --json` prints it (without the final
    /// newline) and writes it to `stats.json`.
    pub fn stats_json(&self) -> String {
        serde_json::to_string_pretty(&self.doc).expect("statistics serialize")
    }
}

/// Why a run gave no statistics: bad input (`Invalid`), a failed
/// simulation or a stop; the timing model's own error type. The messages
/// are the ones the command line prints after `error: `.
pub use crate::timing::SimError as ApiError;

/// The resolved configuration of a preset (name or TOML path) under
/// `key.path=value` overrides.
pub fn resolve_config(scheme: &str, overrides: &[String]) -> Result<SimConfig, ApiError> {
    load_preset(scheme, overrides).map_err(|e| ApiError::Invalid(e.to_string()))
}

/// The statistics document of a run, with the baseline's cycles and IPC
/// and the slowdown against it when there is one.
pub fn stats_document(stats: &RunStats, baseline: Option<(&str, &RunStats)>) -> serde_json::Value {
    let mut doc = serde_json::to_value(stats).expect("statistics serialize");
    if let Some((name, base)) = baseline {
        let slowdown = stats.roi.core.cycles as f64 / base.roi.core.cycles as f64 - 1.0;
        doc["baseline"] = serde_json::json!({"scheme": name, "cycles": base.roi.core.cycles, "ipc": base.roi.core.ipc});
        doc["slowdown"] = serde_json::json!(slowdown);
    }
    doc
}

/// A request with everything it reads resolved, before anything runs:
/// the configurations, the workload parsed once, and its streams and
/// readers opened for each machine.
pub struct ResolvedRequest {
    /// The preset under the request's overrides, as written beside the
    /// results.
    pub config: SimConfig,
    run: ResolvedRun,
    /// The baseline preset's name and its run.
    baseline: Option<(String, ResolvedRun)>,
    /// No count was asked for, so the notes name the default.
    default_count: bool,
}

/// Resolve a request: bad input of any kind (preset, key, workload,
/// count, a trace that cannot be opened) is an [`ApiError::Invalid`] here,
/// before anything is simulated.
pub fn resolve(req: &RunRequest) -> Result<ResolvedRequest, ApiError> {
    let config = resolve_config(&req.scheme, &req.overrides)?;
    let workload = WorkloadKind::parse(&req.workload).map_err(ApiError::Invalid)?;
    let n = req.instruction_count();
    if n == 0 {
        return Err(ApiError::Invalid("--instructions must be at least 1".into()));
    }
    let baseline = match &req.baseline {
        Some(b) => Some((b.clone(), resolve_config(b, &[])?)),
        None => None,
    };
    let run = ResolvedRun::new(&config, &workload, req.warmup_instructions, n, req.seed)?;
    let baseline = match baseline {
        Some((b, cfg)) => Some((b, ResolvedRun::new(&cfg, &workload, req.warmup_instructions, n, req.seed)?)),
        None => None,
    };
    Ok(ResolvedRequest { config, run, baseline, default_count: req.instructions.is_none() })
}

impl ResolvedRequest {
    /// Simulate the run, then the baseline's; `stop` ends either early from
    /// another thread (checked every [`crate::timing::STOP_CHECK_EVENTS`]
    /// events).
    pub fn run(self, stop: &AtomicBool) -> Result<RunOutput, ApiError> {
        let mut stats = self.run.simulate(stop)?;
        if self.default_count {
            name_the_default(&mut stats.workload_notes);
        }
        let base = match self.baseline {
            Some((name, b)) => Some((name, b.simulate(stop)?)),
            None => None,
        };
        let doc = stats_document(&stats, base.as_ref().map(|(n, s)| (n.as_str(), s)));
        Ok(RunOutput { config: self.config, stats, doc })
    }
}

/// One run as `spmsim run` does it: [`resolve`], then
/// [`ResolvedRequest::run`].
pub fn run(req: &RunRequest, stop: &AtomicBool) -> Result<RunOutput, ApiError> {
    resolve(req)?.run(stop)
}

/// A note about the count "requested" is about the default when nobody
/// asked for a count: say so.
fn name_the_default(notes: &mut [String]) {
    let requested = format!("the {DEFAULT_INSTRUCTIONS} requested");
    for n in notes.iter_mut().filter(|n| n.ends_with(&requested)) {
        *n = n.replace(&requested, &format!("the default of {DEFAULT_INSTRUCTIONS} (--instructions)"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input_is_invalid_with_the_cli_message() {
        let stop = AtomicBool::new(false);
        let e = run(&RunRequest::new("no-such-preset", "random-writes"), &stop).unwrap_err();
        assert!(matches!(&e, ApiError::Invalid(m) if m.starts_with("unknown preset `no-such-preset`")), "{e:?}");
        let mut r = RunRequest::new("cm", "random-writes");
        r.overrides = vec!["tree.arityy=3".into()];
        assert!(matches!(run(&r, &stop).unwrap_err(), ApiError::Invalid(m) if m.contains("tree") && m.contains("arityy")));
        r.overrides.clear();
        r.instructions = Some(0);
        assert_eq!(run(&r, &stop).unwrap_err(), ApiError::Invalid("--instructions must be at least 1".into()));
    }

    #[test]
    fn a_set_stop_flag_cancels() {
        let stop = AtomicBool::new(true);
        assert_eq!(run(&RunRequest::new("cobcm", "btree"), &stop).unwrap_err(), ApiError::Cancelled);
    }

    #[test]
    fn baseline_adds_slowdown() {
        let mut r = RunRequest::new("cobcm", "random-writes");
        r.instructions = Some(20_000);
        r.baseline = Some("bbb".into());
        let out = run(&r, &AtomicBool::new(false)).unwrap();
        assert_eq!(out.doc["baseline"]["scheme"], "bbb");
        let base = out.doc["baseline"]["cycles"].as_u64().unwrap() as f64;
        let slowdown = out.stats.roi.core.cycles as f64 / base - 1.0;
        assert_eq!(out.doc["slowdown"].as_f64().unwrap(), slowdown);
        assert_eq!(out.doc["roi"]["core"]["cycles"].as_u64().unwrap(), out.stats.roi.core.cycles);
    }

    #[test]
    fn a_short_trace_names_the_default_count_only_when_none_was_given() {
        let dir = std::env::temp_dir().join(format!("spmsim-api-default-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("short.trace");
        let w = WorkloadKind::parse("random-writes").unwrap();
        w.write_trace(1, 3000, &trace).unwrap();
        let mut r = RunRequest::new("cobcm", &format!("trace:{}", trace.display()));
        let notes = |r: &RunRequest| run(r, &AtomicBool::new(false)).unwrap().stats.workload_notes.join("\n");
        let defaulted = notes(&r);
        assert!(defaulted.contains(&format!("short of the default of {DEFAULT_INSTRUCTIONS} (--instructions)")), "{defaulted}");
        r.instructions = Some(DEFAULT_INSTRUCTIONS);
        let asked = notes(&r);
        assert!(asked.contains(&format!("short of the {DEFAULT_INSTRUCTIONS} requested")) && !asked.contains("default"), "{asked}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
