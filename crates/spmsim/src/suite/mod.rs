//! A suite of real programs, SPEC-like in spirit, recorded under valgrind
//! lackey on inputs the repo generates (`configs/suite/programs.toml`).
//!
//! ```text
//!  programs.toml --load/check--> Suite
//!  record_suite: apt-get install missing packages -> generate inputs (sha256)
//!      -> per program, in parallel: trace::lackey::record -> <cache>/suite/NAME.trace
//!                                   + manifest           -> <cache>/suite/NAME.json
//!  suite:NAME workloads read <cache>/suite/NAME.trace
//! ```
//! A manifest holds everything a trace was recorded from (package
//! versions, the exact command line, input checksums, skipped and recorded
//! instructions), so the trace can be rebuilt exactly; a trace whose
//! manifest still matches is not recorded again.

pub mod inputs;
pub mod packages;
pub mod phases;
#[cfg(unix)]
pub mod points;
pub mod programs;

pub use programs::{InputSpec, ProgramSpec, Suite};

use crate::trace::lackey::RecordSummary;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// Instructions recorded per program unless told otherwise: enough for
/// `reproduce secpb --quick` (5 M per simulation) with room to spare, and
/// short enough that recording the whole suite on a fresh 2-core machine
/// leaves `--quick` inside ten minutes.
pub const DEFAULT_INSTRUCTIONS: u64 = 10_000_000;

/// The folder traces are cached in: `$SPMSIM_CACHE`, else
/// `$XDG_CACHE_HOME/spmsim`, else `~/.cache/spmsim`.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("SPMSIM_CACHE") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("spmsim");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache").join("spmsim")
}

/// The recorded trace of suite program `name`.
pub fn trace_path(name: &str) -> Result<PathBuf, String> {
    let p = cache_dir().join("suite").join(format!("{name}.trace"));
    if p.is_file() {
        Ok(p)
    } else {
        // The stand-in suites' programs are recorded from their own files.
        let main = programs::default_path();
        let own = ["memory-intensive.toml", "spec2017-stand-ins.toml"]
            .into_iter()
            .map(|f| main.with_file_name(f))
            .find(|f| Suite::load(f).is_ok_and(|s| s.programs.iter().any(|q| q.name == name)));
        let record = match own {
            Some(f) => format!("spmsim suite record --programs {} --only {name}", f.display()),
            None => "spmsim suite record".into(),
        };
        Err(format!("suite program `{name}` has no trace at {}; run `{record}` first", p.display()))
    }
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
struct Key<'a> {
    packages: &'a [PackageVersion],
    binary: &'a str,
    valgrind: &'a str,
    command: &'a [String],
    stdin: &'a Option<String>,
    env: &'a BTreeMap<String, String>,
    inputs: Vec<(&'a str, &'a str)>,
    skip: u64,
}

impl Manifest {
    fn key(&self) -> Key<'_> {
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
}

impl Recorder {
    pub const VALGRIND: Recorder = Recorder { version: valgrind_recorder_version, record: crate::trace::lackey::record };
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

/// Make (or check) the inputs `wanted` under `<cache>/suite/inputs`; a file
/// already holding the right bytes is left alone. Returns each input or
/// the reason it could not be made.
pub fn make_inputs(suite: &Suite, wanted: &[&InputSpec], cache: &Path) -> BTreeMap<String, Result<InputFile, String>> {
    let dir = inputs_dir(cache);
    let mut done: BTreeMap<String, Result<InputFile, String>> = BTreeMap::new();
    if let Err(e) = std::fs::create_dir_all(&dir) {
        for i in wanted {
            done.insert(i.name.clone(), Err(format!("{}: {e}", dir.display())));
        }
        return done;
    }
    for spec in &suite.inputs {
        if !wanted.iter().any(|w| w.name == spec.name) {
            continue;
        }
        let ext = spec.extension.clone().unwrap_or_else(|| match spec.kind.as_str() {
            "file" => Path::new(spec.file.as_deref().unwrap_or("")).extension().and_then(|e| e.to_str()).unwrap_or("dat").to_string(),
            k => inputs::extension(k).to_string(),
        });
        let path = dir.join(format!("{}.{ext}", spec.name));
        let made = make_one(suite, spec, &path, &done);
        let r = made.and_then(|bytes| {
            write_if_changed(&path, &bytes)?;
            if spec.executable {
                make_executable(&path)?;
            }
            Ok(InputFile {
                name: spec.name.clone(),
                kind: spec.kind.clone(),
                path: path.display().to_string(),
                sha256: inputs::sha256_hex(&bytes),
                bytes: bytes.len() as u64,
                made_by: spec.clone(),
            })
        });
        done.insert(spec.name.clone(), r.map_err(|e| format!("input `{}`: {e}", spec.name)));
    }
    done
}

fn make_one(suite: &Suite, spec: &InputSpec, path: &Path, done: &BTreeMap<String, Result<InputFile, String>>) -> Result<Vec<u8>, String> {
    match spec.kind.as_str() {
        "file" => {
            let f = suite.dir.join(spec.file.as_deref().unwrap_or_default());
            std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))
        }
        "derived" => {
            let tmp = path.with_extension("making");
            let lookup = |name: &str, arg: &str| -> Result<String, String> {
                match name {
                    "out" => Ok(tmp.display().to_string()),
                    "input" => match done.get(arg) {
                        Some(Ok(i)) => Ok(i.path.clone()),
                        Some(Err(e)) => Err(e.clone()),
                        None => Err(format!("input `{arg}` was not made")),
                    },
                    _ => Err(format!("unknown placeholder {{{name}}}")),
                }
            };
            let argv: Vec<String> = spec.command.iter().flatten().map(|w| programs::expand(w, &lookup)).collect::<Result<_, _>>()?;
            let out = std::process::Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| format!("cannot run `{}`: {e}", argv.join(" ")))?;
            if !out.status.success() {
                let _ = std::fs::remove_file(&tmp);
                let err = String::from_utf8_lossy(&out.stderr);
                return Err(format!("`{}` failed ({}): {}", argv.join(" "), out.status, err.trim()));
            }
            let bytes = std::fs::read(&tmp).map_err(|e| format!("`{}` made no {}: {e}", argv.join(" "), tmp.display()))?;
            let _ = std::fs::remove_file(&tmp);
            if spec.drop_lines.is_empty() {
                return Ok(bytes);
            }
            let kept: Vec<&[u8]> =
                bytes.split_inclusive(|&b| b == b'\n').filter(|l| !spec.drop_lines.iter().any(|d| l.starts_with(d.as_bytes()))).collect();
            Ok(kept.concat())
        }
        k => inputs::generate(k, spec.seed.unwrap_or(1), spec.size.unwrap_or(0), spec.depth.unwrap_or(0)),
    }
}

/// Let a built program run (its owner, group and others may execute it).
fn make_executable(path: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if std::fs::metadata(path).map(|m| m.len() == bytes.len() as u64).unwrap_or(false)
        && std::fs::read(path).map(|b| b == bytes).unwrap_or(false)
    {
        return Ok(());
    }
    write_atomic(path, bytes)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    crate::util::output::write_atomic(path, bytes).map_err(|e| e.to_string())
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
    let work = cache.join("suite").join("work").join(&p.name);
    let lookup = |name: &str, arg: &str| -> Result<String, String> {
        match name {
            "input" => files.iter().find(|f| f.name == arg).map(|f| f.path.clone()).ok_or_else(|| format!("input `{arg}` was not made")),
            "work" => Ok(work.display().to_string()),
            "executable" => Ok(binary.clone()),
            _ => Err(format!("unknown placeholder {{{name}}}")),
        }
    };
    let command: Vec<String> = p.command.iter().map(|w| programs::expand(w, &lookup)).collect::<Result<_, _>>()?;
    let stdin = p.stdin.as_ref().map(|s| programs::expand(s, &lookup)).transpose()?;
    let binary_package = packages::owner(&binary).map(|(name, version)| PackageVersion { name, version });
    Ok(Job { index, spec: p.clone(), command, stdin, work, inputs: files, packages, binary, binary_package })
}

fn record_job(job: &Job, plan: &RecordPlan, valgrind: &str, env: &BTreeMap<String, String>) -> Result<Manifest, String> {
    let trace = trace_file(&plan.cache, &job.spec.name);
    std::fs::create_dir_all(trace.parent().unwrap()).map_err(|e| format!("{}: {e}", plan.cache.display()))?;
    // A fresh scratch folder each time, so earlier outputs cannot change a run.
    let _ = std::fs::remove_dir_all(&job.work);
    std::fs::create_dir_all(&job.work).map_err(|e| format!("{}: {e}", job.work.display()))?;
    let source = format!(
        "suite:{} ({}; {}): {}",
        job.spec.name,
        job.binary_package.as_ref().map(|b| format!("{} {}", b.name, b.version)).unwrap_or_else(|| job.binary.clone()),
        valgrind,
        job.command.join(" ")
    );
    let opts = crate::trace::lackey::RecordOptions {
        program: job.command.clone(),
        cwd: Some(job.work.clone()),
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
    };
    let t0 = Instant::now();
    let sum = (plan.recorder.record)(&opts);
    let seconds = t0.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&job.work);
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

/// The manifest of a trace that can be used as it is, if there is one.
fn up_to_date(job: &Job, plan: &RecordPlan, valgrind: &str, env: &BTreeMap<String, String>) -> Option<Manifest> {
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
    (m.key() == want && long_enough).then_some(m)
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
        match up_to_date(&job, plan, &valgrind, &suite.env) {
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

/// A cached program's recorded command, ready to run again in `work` (a
/// fresh folder) rather than where it was recorded.
pub fn rerun_options(m: &Manifest, work: &Path) -> crate::trace::lackey::RecordOptions {
    let w = work.display().to_string();
    crate::trace::lackey::RecordOptions {
        program: m.command.iter().map(|a| a.replace(&m.cwd, &w)).collect(),
        cwd: Some(work.to_path_buf()),
        stdin: m.stdin.as_ref().map(PathBuf::from),
        env: m.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        isolated: true,
        ..Default::default()
    }
}

/// Run a cached program's recorded command over its whole run under
/// spmtrace, writing a basic-block vector every `interval` instructions
/// (the inputs must be in `cache`, as after `suite record`; the tool is
/// built there too), and find its phases ([`phases::analyse`]). A
/// multi-threaded program's threads count into one vector.
#[cfg(unix)]
pub fn program_phases(m: &Manifest, cache: &Path, interval: u64, max_k: usize, scratch: &Path) -> Result<phases::Phases, String> {
    let _ = std::fs::remove_dir_all(scratch);
    std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let bbv = scratch.join("bb.out");
    let cwd = scratch.join("work");
    std::fs::create_dir_all(&cwd).map_err(|e| format!("{}: {e}", cwd.display()))?;
    let opts = rerun_options(m, &cwd);
    let tool = crate::trace::vgtool::ensure(cache)?;
    let stdin = match &opts.stdin {
        Some(p) => std::process::Stdio::from(std::fs::File::open(p).map_err(|e| format!("stdin file {}: {e}", p.display()))?),
        None => std::process::Stdio::null(),
    };
    let mut cmd = tool.command();
    cmd.arg(format!("--bbv-interval={interval}"))
        .arg(format!("--bbv-out={}", bbv.display()))
        .arg("--log-fd=2")
        .args(&opts.program)
        .current_dir(&cwd);
    crate::trace::lackey::program_env(&mut cmd, &opts.env, opts.isolated, Some(&cwd));
    let out = cmd
        .stdin(stdin)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| format!("cannot start valgrind (is it installed?): {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(10).collect();
        return Err(format!(
            "`{}` under spmtrace exited with {}: {}",
            opts.program.join(" "),
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ));
    }
    let text = std::fs::read_to_string(&bbv).map_err(|e| format!("{}: {e}", bbv.display()))?;
    let r = phases::analyse(&phases::parse_bbv(&text)?, interval, max_k);
    let _ = std::fs::remove_dir_all(scratch);
    r
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::trace::event::Op;
    use crate::trace::lackey::RecordOptions;
    use crate::trace::{AddressSpace, NativeWriter, TraceHeader, TraceRecord};

    /// A stand-in for valgrind lackey: it runs nothing and writes a trace
    /// of the instructions asked for (one load each), with the options it
    /// was given in the header, so the test sees what the suite asked of it.
    fn fake_record(opts: &RecordOptions) -> Result<RecordSummary, String> {
        let n = opts.instructions.ok_or("the suite always bounds a recording")?;
        let mut h = TraceHeader::new("fake", AddressSpace::Virtual, false);
        h.source = format!("{} | cwd {} | program {}", opts.source, opts.cwd.as_ref().unwrap().display(), opts.program.join(" "));
        h.skipped_instructions = opts.skip;
        let mut w = NativeWriter::create(&opts.out, &h).map_err(|e| e.to_string())?;
        for i in 0..n {
            let r = TraceRecord {
                gap: 0,
                op: Op::Load,
                log: false,
                addr: 4096 + 64 * (i % 100),
                size: 8,
                value: None,
                same_instruction: false,
            };
            w.write(&r).map_err(|e| e.to_string())?;
        }
        w.finish().map_err(|e| e.to_string())?;
        Ok(RecordSummary {
            skipped_instructions: opts.skip,
            recorded_instructions: n,
            loads: n,
            stores: 0,
            records: n,
            program_finished: false,
            folded_iterations: 0,
            ..RecordSummary::default()
        })
    }

    const FAKE: Recorder = Recorder { version: || Ok("fake-recorder-1".into()), record: fake_record };
    /// The same tool at another version: traces it made before do not match.
    const FAKE_2: Recorder = Recorder { version: || Ok("fake-recorder-2".into()), record: fake_record };

    /// A one-program suite (cat on a small corpus) plus a broken entry, in
    /// a temporary folder: the file and its cache. No tool is named, so
    /// nothing is installed.
    fn tiny_suite(tag: &str) -> (Suite, PathBuf) {
        let dir = std::env::temp_dir().join(format!("spmsim-suite-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let text = r#"
tools = []
[env]
LC_ALL = "C"
[[input]]
name = "corpus"
kind = "text"
seed = 3
size = 20000
[[program]]
name = "cat"
packages = ["coreutils"]
description = "cat on a small corpus"
command = ["/bin/cat", "-n", "{input:corpus}"]
skip = 1000
[[program]]
name = "broken"
packages = ["coreutils"]
description = "a program that is not there"
command = ["/nonexistent/spmsim-test-program", "{input:corpus}"]
skip = 0
"#;
        let path = dir.join("programs.toml");
        std::fs::write(&path, text).unwrap();
        (Suite::load(&path).unwrap(), dir.join("cache"))
    }

    #[test]
    fn records_a_program_and_reuses_a_matching_trace() {
        let (suite, cache) = tiny_suite("e2e");
        let mut plan = RecordPlan::new(cache.clone(), 3000);
        plan.recorder = FAKE;
        let run = |plan: &RecordPlan| record_suite(&suite, plan, &|_| {}).unwrap();
        let out = run(&plan);
        assert_eq!(out.len(), 2);
        let broken = out.iter().find(|o| o.name == "broken").unwrap();
        match &broken.status {
            Status::Failed(e) => assert!(e.contains("/nonexistent/spmsim-test-program") && e.contains("does not exist"), "{e}"),
            s => panic!("broken entry: {s:?}"),
        }
        let o = out.iter().find(|o| o.name == "cat").unwrap();
        assert!(matches!(o.status, Status::Recorded), "{:?}", o.status);
        let m = Manifest::load(&manifest_file(&cache, "cat")).unwrap();
        assert_eq!(o.manifest.as_ref(), Some(&m));
        assert_eq!((m.program.as_str(), m.packages[0].name.as_str(), m.valgrind.as_str()), ("cat", "coreutils", "fake-recorder-1"));
        assert_eq!(Some(&m.packages[0].version), packages::installed_version("coreutils").unwrap().as_ref());
        assert_eq!(m.binary_package.as_ref().map(|b| b.name.as_str()), Some("coreutils"));
        let corpus = inputs::generate("text", 3, 20_000, 0).unwrap();
        assert_eq!(m.inputs[0].sha256, inputs::sha256_hex(&corpus));
        assert_eq!(std::fs::read(&m.inputs[0].path).unwrap(), corpus);
        assert_eq!(m.command, ["/bin/cat", "-n", m.inputs[0].path.as_str()], "placeholders resolved");
        assert_eq!(
            (m.skip, m.recording.skipped_instructions, m.instructions_requested, m.recording.recorded_instructions),
            (1000, 1000, 3000, 3000)
        );
        assert_eq!(m.env.get("LC_ALL").map(String::as_str), Some("C"));
        assert_eq!(m.trace_bytes, std::fs::metadata(trace_file(&cache, "cat")).unwrap().len());
        // The recorder was given the resolved command, a scratch folder of
        // its own, and a source line naming the program, package and tool.
        let mut r = crate::trace::open(&trace_file(&cache, "cat"), None).unwrap();
        let info = crate::trace::info::scan("native", r.as_mut()).unwrap();
        assert_eq!(info.instructions, 3000);
        let h = info.header.unwrap();
        assert_eq!(h.skipped_instructions, 1000);
        assert!(h.source.starts_with("suite:cat (coreutils ") && h.source.contains("; fake-recorder-1): /bin/cat -n "), "{}", h.source);
        assert!(h.source.contains(&format!("| cwd {} |", cache.join("suite").join("work").join("cat").display())), "{}", h.source);
        assert!(h.source.ends_with(&format!("| program {}", m.command.join(" "))), "{}", h.source);
        assert!(!cache.join("suite").join("work").join("cat").exists(), "the scratch folder is removed");
        // Again: the trace matches, so nothing is recorded.
        plan.only = vec!["cat".into()];
        assert!(matches!(run(&plan)[0].status, Status::UpToDate));
        // Forced, it is recorded again.
        plan.force = true;
        assert!(matches!(run(&plan)[0].status, Status::Recorded));
        plan.force = false;
        // Asked for more, it is recorded again, unless a shorter trace will do.
        plan.instructions = 4000;
        plan.accept_at_least = Some(2000);
        assert!(matches!(run(&plan)[0].status, Status::UpToDate), "a trace longer than needed will do");
        plan.accept_at_least = None;
        assert!(matches!(run(&plan)[0].status, Status::Recorded), "without accept_at_least the count must match");
        assert_eq!(Manifest::load(&manifest_file(&cache, "cat")).unwrap().recording.recorded_instructions, 4000);
        // Another version of the tool: the trace is recorded again.
        plan.recorder = FAKE_2;
        assert!(matches!(run(&plan)[0].status, Status::Recorded));
        assert_eq!(Manifest::load(&manifest_file(&cache, "cat")).unwrap().valgrind, "fake-recorder-2");
        assert!(matches!(run(&plan)[0].status, Status::UpToDate));
        // A trace in an older format version is recorded again.
        let t = trace_file(&cache, "cat");
        let mut bytes = std::fs::read(&t).unwrap();
        bytes[8..10].copy_from_slice(&1u16.to_le_bytes());
        std::fs::write(&t, bytes).unwrap();
        assert!(matches!(run(&plan)[0].status, Status::Recorded), "a version 1 trace must be re-recorded");
        assert!(crate::trace::NativeReader::open(&t).is_ok());
        let _ = std::fs::remove_dir_all(cache.parent().unwrap());
    }

    #[test]
    fn without_the_recording_tool_every_program_fails_naming_it() {
        let (suite, cache) = tiny_suite("notool");
        let mut plan = RecordPlan::new(cache.clone(), 1000);
        plan.recorder = Recorder { version: || Err("cannot run valgrind: not found".into()), record: fake_record };
        let out = record_suite(&suite, &plan, &|_| {}).unwrap();
        assert_eq!(out.len(), 2);
        for o in &out {
            assert!(matches!(&o.status, Status::Failed(e) if e.contains("cannot run valgrind")), "{}: {:?}", o.name, o.status);
        }
        assert!(!trace_file(&cache, "cat").exists());
        let _ = std::fs::remove_dir_all(cache.parent().unwrap());
    }

    #[test]
    fn derived_inputs_are_made_by_their_command_and_drop_their_stamps() {
        let dir = std::env::temp_dir().join(format!("spmsim-suite-derived-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = r#"
[[input]]
name = "base"
kind = "text"
size = 100
[[input]]
name = "made"
kind = "derived"
command = ["/bin/sh", "-c", "cat \"$1\" > \"$0\"; printf '\\nDATE today\\nkept\\n' >> \"$0\"", "{out}", "{input:base}"]
packages = ["dash"]
drop_lines = ["DATE "]
[[program]]
name = "p"
packages = ["dash"]
description = "d"
command = ["/bin/cat", "{input:made}"]
skip = 0
"#;
        let path = dir.join("programs.toml");
        std::fs::write(&path, text).unwrap();
        let suite = Suite::load(&path).unwrap();
        let wanted = suite.inputs_of(&suite.programs[0]);
        assert_eq!(wanted.len(), 2, "the input a derived one is made from comes along");
        let made = make_inputs(&suite, &wanted, &dir.join("cache"));
        let m = made["made"].as_ref().unwrap();
        let bytes = std::fs::read(&m.path).unwrap();
        let base = inputs::generate("text", 1, 100, 0).unwrap();
        assert_eq!(bytes, [base.as_slice(), b"\nkept\n"].concat(), "the DATE line is dropped");
        assert_eq!(m.sha256, inputs::sha256_hex(&bytes));
        let again = make_inputs(&suite, &wanted, &dir.join("cache"));
        assert_eq!(again["made"].as_ref().unwrap().sha256, m.sha256, "made the same way twice, same bytes");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unknown_program_is_an_error_naming_the_known_ones() {
        let (suite, cache) = tiny_suite("sel");
        let mut plan = RecordPlan::new(cache.clone(), 1000);
        plan.recorder = FAKE;
        plan.only = vec!["gzip".into()];
        let e = record_suite(&suite, &plan, &|_| {}).unwrap_err();
        assert!(e.contains("`gzip`") && e.contains("cat, broken"), "{e}");
        let _ = std::fs::remove_dir_all(cache.parent().unwrap());
    }

    #[test]
    fn utc_dates_are_iso() {
        let d = utc_now();
        assert_eq!(d.len(), 20, "{d}");
        assert!(d.starts_with("20") && d.ends_with('Z') && d.as_bytes()[10] == b'T');
    }
}
