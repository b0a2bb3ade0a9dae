//! Recording the suite: install the packages, make the inputs, resolve
//! each program's command, and record the programs in parallel, keeping a
//! trace whose manifest still matches.
//!
//! ```text
//!  select(only) -> packages::ensure(tools + packages) -> make_inputs
//!    -> prepare: Job (placeholders resolved, binary and its package found)
//!    -> up_to_date? (trace readable, manifest key equal, long enough,
//!       instruction stream made from the trace's bytes) -> UpToDate
//!    -> else, longest first, `jobs` at a time, under the suite's env,
//!       from the program's stage (stage.rs, a fixed folder):
//!         Recorder::record (valgrind lackey) -> trace + manifest -> Recorded
//!  a program that fails is Failed(why); the others go on
//! ```

use super::manifest::Key;
use super::stage::Stage;
use super::{make_inputs, manifest_file, packages, programs, trace_file, write_atomic, InputFile, InputSpec, Manifest, PackageVersion};
use super::{utc_now, ProgramSpec, Suite, MANIFEST_FORMAT};
use crate::trace::lackey::RecordSummary;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// How to record.
#[derive(Clone, Debug)]
pub struct RecordPlan {
    pub cache: PathBuf,
    /// Instructions to record per program.
    pub instructions: u64,
    /// Programs to record (all when empty).
    pub only: Vec<String>,
    /// Record even when the trace and manifest match.
    pub force: bool,
    /// Accept a matching trace that recorded at least this many
    /// instructions (or the whole program), whatever it was asked for;
    /// without it a trace must have been asked for exactly `instructions`.
    pub accept_at_least: Option<u64>,
    /// Programs recorded at once.
    pub jobs: usize,
    /// What records a program: valgrind lackey.
    pub recorder: Recorder,
}

/// valgrind's version and the rules spmsim records its output by, so a
/// trace recorded under older rules is recorded again.
fn valgrind_recorder_version() -> Result<String, String> {
    Ok(format!("{} ({})", crate::trace::vgtool::valgrind_version()?, crate::trace::lackey::RECORDING_RULES))
}

/// The tool that records a program's trace: its version, which is part of
/// what a trace was recorded from, and the recording itself.
/// [`Recorder::VALGRIND`] in normal use; the tests put a stand-in in its
/// place so the suite's own logic is tested without valgrind.
#[derive(Clone, Copy, Debug)]
pub struct Recorder {
    pub version: fn() -> Result<String, String>,
    pub record: fn(&crate::trace::lackey::RecordOptions) -> Result<RecordSummary, String>,
    /// The same window recorded by spmsim's own valgrind tool (built in
    /// the cache folder given), which runs at valgrind's own speed up to
    /// it: for a program with `fast_forward` set.
    pub record_fast: fn(&crate::trace::lackey::RecordOptions, &Path) -> Result<RecordSummary, String>,
}

impl Recorder {
    pub const VALGRIND: Recorder =
        Recorder { version: valgrind_recorder_version, record: crate::trace::lackey::record, record_fast: record_fast_forwarded };
}

/// A program's window of `opts.instructions` after `opts.skip`, recorded
/// by spmtrace as one simulation-point window: lackey's pace through the
/// skip (every instruction printed and parsed) is what a program with a
/// long start-up or a timer-bound front end cannot afford.
fn record_fast_forwarded(opts: &crate::trace::lackey::RecordOptions, cache: &Path) -> Result<RecordSummary, String> {
    let n = opts.instructions.unwrap_or(u64::MAX / 4);
    let w = crate::trace::lackey::WindowOptions {
        run: opts.clone(),
        // Room for `rep` iterations, which the window counts one by one
        // and the trace folds into their instruction (as at the points).
        windows: vec![(opts.skip, n.saturating_mul(super::points::REP_ROOM))],
        outs: vec![opts.out.clone()],
        instructions: opts.instructions,
        cache: cache.to_path_buf(),
    };
    let mut sums = crate::trace::lackey::record_windows(&w)?;
    sums.pop().ok_or_else(|| format!("trace record: the program ended before its window (after {} instructions)", opts.skip))
}

/// The recorder's version for one program: a fast-forwarded program's
/// trace comes from another tool, so it is recorded again when the choice
/// changes.
fn version_for(valgrind: &str, spec: &ProgramSpec) -> String {
    if spec.fast_forward {
        format!("{valgrind}, fast-forwarded by spmtrace {}", crate::trace::vgtool::source_digest())
    } else {
        valgrind.to_string()
    }
}

impl RecordPlan {
    pub fn new(cache: PathBuf, instructions: u64) -> Self {
        let jobs = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2) + 1;
        RecordPlan { cache, instructions, only: Vec::new(), force: false, accept_at_least: None, jobs, recorder: Recorder::VALGRIND }
    }
}

#[derive(Clone, Debug)]
pub enum Status {
    Recorded,
    UpToDate,
    Failed(String),
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub name: String,
    pub status: Status,
    pub manifest: Option<Manifest>,
    pub seconds: f64,
}

/// What `record_suite` tells its caller as it goes.
pub enum Progress<'a> {
    Note(&'a str),
    Started { name: &'a str, skip: u64, instructions: u64, index: usize, total: usize },
    Finished(&'a Outcome),
}

/// A program ready to record: every placeholder resolved.
struct Job {
    index: usize,
    spec: ProgramSpec,
    command: Vec<String>,
    stdin: Option<String>,
    work: PathBuf,
    inputs: Vec<InputFile>,
    packages: Vec<PackageVersion>,
    binary: String,
    binary_package: Option<PackageVersion>,
}

/// Sets the suite's fixed environment for the programs valgrind starts and
/// puts the old values back when dropped. Recording passes the process
/// environment on to valgrind, so this must be in place before any
/// recording starts.
struct EnvGuard(Vec<(String, Option<std::ffi::OsString>)>);

impl EnvGuard {
    fn set(env: &BTreeMap<String, String>) -> Self {
        let old = env.keys().map(|k| (k.clone(), std::env::var_os(k))).collect();
        for (k, v) in env {
            std::env::set_var(k, v);
        }
        EnvGuard(old)
    }
}

impl Drop for EnvGuard {
    fn drop(&mut self) {
        for (k, v) in &self.0 {
            match v {
                Some(v) => std::env::set_var(k, v),
                None => std::env::remove_var(k),
            }
        }
    }
}

/// Resolve the program to trace: `executable_from`'s output, the program
/// the suite built (`{input:NAME}`), or the first word.
fn resolve_binary(p: &ProgramSpec, files: &[InputFile]) -> Result<String, String> {
    if let Some(name) = programs::built_program(&p.command[0]) {
        return files.iter().find(|f| f.name == name).map(|f| f.path.clone()).ok_or_else(|| format!("input `{name}` was not made"));
    }
    let bin = match &p.executable_from {
        Some(cmd) => {
            let out = std::process::Command::new(&cmd[0])
                .args(&cmd[1..])
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| format!("executable_from: cannot run `{}`: {e}", cmd.join(" ")))?;
            let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if !out.status.success() || !Path::new(&s).is_absolute() {
                return Err(format!("executable_from: `{}` printed `{s}`, not an absolute path", cmd.join(" ")));
            }
            s
        }
        None => p.command[0].clone(),
    };
    if !Path::new(&bin).is_file() {
        return Err(format!("{bin} does not exist (is package {} installed?)", p.packages[0]));
    }
    Ok(bin)
}

fn prepare(
    suite: &Suite,
    p: &ProgramSpec,
    index: usize,
    cache: &Path,
    versions: &BTreeMap<String, Result<String, String>>,
    made: &BTreeMap<String, Result<InputFile, String>>,
) -> Result<Job, String> {
    let mut packages = Vec::new();
    for k in suite.packages_of(p) {
        match versions.get(&k) {
            Some(Ok(v)) => packages.push(PackageVersion { name: k.clone(), version: v.clone() }),
            Some(Err(e)) => return Err(format!("package {k}: {e}")),
            None => return Err(format!("package {k} was not looked up")),
        }
    }
    let mut files = Vec::new();
    for i in suite.inputs_of(p) {
        match made.get(&i.name) {
            Some(Ok(f)) => files.push(f.clone()),
            Some(Err(e)) => return Err(e.clone()),
            None => return Err(format!("input `{}` was not made", i.name)),
        }
    }
    let binary = resolve_binary(p, &files)?;
    // The command names the stage's folders, not the cache's (stage.rs).
    let work = Stage::work_of(&p.name);
    let staged = |path: &str| super::stage::staged(path, &p.name, cache);
    let input =
        |arg: &str| files.iter().find(|f| f.name == arg).map(|f| staged(&f.path)).ok_or_else(|| format!("input `{arg}` was not made"));
    let lookup = |name: &str, arg: &str| -> Result<String, String> {
        match name {
            "input" => input(arg),
            "input-stem" => input(arg).map(|p| Path::new(&p).with_extension("").display().to_string()),
            "work" => Ok(work.display().to_string()),
            "executable" => Ok(staged(&binary)),
            _ => Err(format!("unknown placeholder {{{name}}}")),
        }
    };
    let command: Vec<String> = p.command.iter().map(|w| programs::expand(w, &lookup)).collect::<Result<_, _>>()?;
    let stdin = p.stdin.as_ref().map(|s| programs::expand(s, &lookup)).transpose()?;
    let binary_package = packages::owner(&binary).map(|(name, version)| PackageVersion { name, version });
    Ok(Job { index, spec: p.clone(), command, stdin, work, inputs: files, packages, binary, binary_package })
}

fn record_job(job: &Job, plan: &RecordPlan, valgrind: &str, env: &BTreeMap<String, String>) -> Result<Manifest, String> {
    let valgrind = &version_for(valgrind, &job.spec);
    let trace = trace_file(&plan.cache, &job.spec.name);
    std::fs::create_dir_all(trace.parent().unwrap()).map_err(|e| format!("{}: {e}", plan.cache.display()))?;
    // A fresh stage each time, so earlier outputs cannot change a run; the
    // same one whatever the cache's path.
    let stage = Stage::enter(&job.spec.name, &plan.cache)?;
    let source = format!(
        "suite:{} ({}; {}): {}",
        job.spec.name,
        job.binary_package.as_ref().map(|b| format!("{} {}", b.name, b.version)).unwrap_or_else(|| job.binary.clone()),
        valgrind,
        job.command.join(" ")
    );
    let opts = crate::trace::lackey::RecordOptions {
        program: job.command.clone(),
        cwd: Some(stage.work()),
        stdin: job.stdin.as_ref().map(PathBuf::from),
        skip: job.spec.skip,
        instructions: Some(plan.instructions),
        persistent_ranges: Vec::new(),
        out: trace.clone(),
        source,
        // The suite's fixed environment alone: a recording must not
        // depend on the shell or on where spmsim was started from.
        env: env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        isolated: true,
        tool_link: Some(stage.tool_link()),
    };
    let t0 = Instant::now();
    let sum = if job.spec.fast_forward { (plan.recorder.record_fast)(&opts, &plan.cache) } else { (plan.recorder.record)(&opts) };
    let seconds = t0.elapsed().as_secs_f64();
    drop(stage);
    let sum = sum?;
    let m = Manifest {
        format: MANIFEST_FORMAT.into(),
        program: job.spec.name.clone(),
        description: job.spec.description.clone(),
        packages: job.packages.clone(),
        binary: job.binary.clone(),
        binary_package: job.binary_package.clone(),
        valgrind: valgrind.into(),
        command: job.command.clone(),
        stdin: job.stdin.clone(),
        cwd: job.work.display().to_string(),
        env: env.clone(),
        inputs: job.inputs.clone(),
        skip: job.spec.skip,
        instructions_requested: plan.instructions,
        recording: sum,
        trace: trace.display().to_string(),
        trace_bytes: std::fs::metadata(&trace).map(|m| m.len()).unwrap_or(0),
        spmsim_version: env!("CARGO_PKG_VERSION").into(),
        recorded_at: utc_now(),
        record_seconds: seconds,
    };
    let text = serde_json::to_string_pretty(&m).map_err(|e| e.to_string())?;
    write_atomic(&manifest_file(&plan.cache, &job.spec.name), text.as_bytes())?;
    Ok(m)
}

/// The manifest of a trace that can be used as it is, if there is one. A
/// trace that matches but whose instruction stream cannot be used (none,
/// an older format version, made from other bytes than the trace's) is
/// recorded again, and `note` says why.
fn up_to_date(job: &Job, plan: &RecordPlan, valgrind: &str, env: &BTreeMap<String, String>, note: &dyn Fn(&str)) -> Option<Manifest> {
    let valgrind = &version_for(valgrind, &job.spec);
    if plan.force || !trace_file(&plan.cache, &job.spec.name).is_file() {
        return None;
    }
    // A trace this spmsim cannot read (an older format version, a damaged
    // header) is recorded again.
    crate::trace::NativeReader::open(&trace_file(&plan.cache, &job.spec.name)).ok()?;
    let m = Manifest::load(&manifest_file(&plan.cache, &job.spec.name)).ok()?;
    let want = Key {
        packages: &job.packages,
        binary: &job.binary,
        valgrind,
        command: &job.command,
        stdin: &job.stdin,
        env,
        inputs: job.inputs.iter().map(|i| (i.name.as_str(), i.sha256.as_str())).collect(),
        skip: job.spec.skip,
    };
    let long_enough = match plan.accept_at_least {
        Some(n) => m.recording.recorded_instructions >= n || m.recording.program_finished,
        None => m.instructions_requested == plan.instructions,
    };
    if m.key() != want || !long_enough {
        return None;
    }
    let trace = trace_file(&plan.cache, &job.spec.name);
    if let Err(e) = crate::trace::insn::InsnReader::open_for(&crate::trace::insn::path_for(&trace), &trace) {
        note(&format!("{}: its instruction stream cannot be used ({e}); recording it again", job.spec.name));
        return None;
    }
    Some(m)
}

/// The programs `plan.only` names (all when empty), or an error naming the unknown ones.
pub fn select<'a>(suite: &'a Suite, only: &[String]) -> Result<Vec<&'a ProgramSpec>, String> {
    if only.is_empty() {
        return Ok(suite.programs.iter().collect());
    }
    let unknown: Vec<&String> = only.iter().filter(|n| suite.programs.iter().all(|p| &p.name != *n)).collect();
    if !unknown.is_empty() {
        return Err(format!(
            "no program {} in {}; programs: {}",
            unknown.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
            suite.path.display(),
            suite.names().join(", ")
        ));
    }
    Ok(suite.programs.iter().filter(|p| only.contains(&p.name)).collect())
}

/// Install, generate and record the selected programs. A program that
/// fails is reported in its outcome and the others go on; an existing
/// trace is replaced only by a complete new one. `Err` only when nothing
/// can be recorded at all (a bad selection, no cache folder).
pub fn record_suite(suite: &Suite, plan: &RecordPlan, progress: &(dyn Fn(Progress) + Sync)) -> Result<Vec<Outcome>, String> {
    let chosen = select(suite, &plan.only)?;
    let dir = plan.cache.join("suite");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create the cache folder {}: {e}", dir.display()))?;
    if plan.instructions == 0 {
        return Err("--instructions must be at least 1".into());
    }
    let note = |s: &str| progress(Progress::Note(s));
    let mut pkgs: Vec<String> = suite.tools.clone();
    for p in &chosen {
        for k in suite.packages_of(p) {
            if !pkgs.contains(&k) {
                pkgs.push(k);
            }
        }
    }
    let versions = packages::ensure(&pkgs, &note);
    let tool_error: Option<String> = suite
        .tools
        .iter()
        .find_map(|t| versions.get(t).and_then(|v| v.as_ref().err()).map(|e| format!("package {t} (needed to record): {e}")));
    let valgrind = match &tool_error {
        Some(e) => Err(e.clone()),
        None => (plan.recorder.version)(),
    };
    let mut wanted: Vec<&InputSpec> = Vec::new();
    for p in &chosen {
        for i in suite.inputs_of(p) {
            if !wanted.iter().any(|w| w.name == i.name) {
                wanted.push(i);
            }
        }
    }
    let made = make_inputs(suite, &wanted, &plan.cache);
    let total = chosen.len();
    let mut outcomes: Vec<Option<Outcome>> = vec![None; total];
    let mut queue = VecDeque::new();
    for (index, p) in chosen.iter().enumerate() {
        let job = valgrind.clone().and_then(|_| prepare(suite, p, index, &plan.cache, &versions, &made));
        match job {
            Ok(j) => queue.push_back(j),
            Err(e) => {
                let o = Outcome { name: p.name.clone(), status: Status::Failed(e), manifest: None, seconds: 0.0 };
                progress(Progress::Finished(&o));
                outcomes[index] = Some(o);
            }
        }
    }
    let valgrind = valgrind.unwrap_or_default();
    // Up-to-date traces first, so the table shows them without waiting.
    let mut pending = VecDeque::new();
    for job in queue {
        match up_to_date(&job, plan, &valgrind, &suite.env, &note) {
            Some(m) => {
                let o = Outcome { name: job.spec.name.clone(), status: Status::UpToDate, manifest: Some(m), seconds: 0.0 };
                progress(Progress::Finished(&o));
                outcomes[job.index] = Some(o);
            }
            None => pending.push_back(job),
        }
    }
    // The longest recordings start first, so the parallel ones end together.
    let mut pending: Vec<Job> = pending.into_iter().collect();
    pending.sort_by_key(|j| std::cmp::Reverse(j.spec.skip));
    let pending = Mutex::new(VecDeque::from(pending));
    let results = Mutex::new(Vec::new());
    let started = std::sync::atomic::AtomicUsize::new(0);
    {
        let _env = EnvGuard::set(&suite.env);
        std::thread::scope(|s| {
            for _ in 0..plan.jobs.max(1) {
                s.spawn(|| loop {
                    let Some(job) = pending.lock().unwrap().pop_front() else { break };
                    let k = started.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    progress(Progress::Started {
                        name: &job.spec.name,
                        skip: job.spec.skip,
                        instructions: plan.instructions,
                        index: k,
                        total,
                    });
                    let t0 = Instant::now();
                    let r = record_job(&job, plan, &valgrind, &suite.env);
                    let o = match r {
                        Ok(m) => Outcome {
                            name: job.spec.name.clone(),
                            status: Status::Recorded,
                            manifest: Some(m),
                            seconds: t0.elapsed().as_secs_f64(),
                        },
                        Err(e) => Outcome {
                            name: job.spec.name.clone(),
                            status: Status::Failed(e),
                            manifest: None,
                            seconds: t0.elapsed().as_secs_f64(),
                        },
                    };
                    progress(Progress::Finished(&o));
                    results.lock().unwrap().push((job.index, o));
                });
            }
        });
    }
    for (i, o) in results.into_inner().unwrap() {
        outcomes[i] = Some(o);
    }
    Ok(outcomes.into_iter().flatten().collect())
}
