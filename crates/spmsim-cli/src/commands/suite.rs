//! `spmsim suite`: the real-program suite (list, record, inputs).

use anyhow::{anyhow, Result};
use clap::Subcommand;
use spmsim::suite::{self, points, Outcome, Progress, RecordPlan, Status, Suite};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum SuiteCmd {
    /// The suite's programs: package, input, skip, command, and whether a
    /// trace is cached.
    List {
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        place: Place,
    },
    /// Install the programs from Debian's packages, generate their inputs
    /// and record each under valgrind lackey into the cache.
    Record(RecordArgs),
    /// Generate the inputs into the cache and print their paths and
    /// SHA-256 checksums (to run a command of the suite by hand).
    Inputs {
        #[command(flatten)]
        place: Place,
    },
    /// SimPoint-style phases of each recorded program's whole run
    /// (basic-block vectors from spmsim's valgrind tool, k-means with BIC),
    /// and the share of the run in the phase of the window the suite
    /// recorded.
    Phases(PhasesArgs),
    /// Record each recorded program at its simulation points: the single
    /// point nearest the run's mean (what `reproduce --quick` runs), or
    /// one point per phase with its weight (`--all`, the full run).
    Points(PointsArgs),
}

#[derive(clap::Args, Clone)]
pub struct PointsArgs {
    /// One point per phase, weighted, instead of the single point.
    #[arg(long)]
    pub all: bool,
    /// Instructions per interval.
    #[arg(long, default_value_t = 10_000_000)]
    pub interval: u64,
    /// Instructions recorded at each point.
    #[arg(long, default_value_t = 5_000_000)]
    pub instructions: u64,
    /// Record even when the points are up to date.
    #[arg(long)]
    pub force: bool,
    /// Only these programs (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    #[command(flatten)]
    pub place: Place,
}

#[derive(clap::Args, Clone)]
pub struct PhasesArgs {
    /// Instructions per interval.
    #[arg(long, default_value_t = 10_000_000)]
    pub interval: u64,
    /// The largest number of phases tried.
    #[arg(long, default_value_t = 10)]
    pub max_k: usize,
    /// Only these programs (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub place: Place,
}

#[derive(clap::Args, Clone)]
pub struct Place {
    /// Cache folder (default: $SPMSIM_CACHE, else ~/.cache/spmsim).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// The suite definition (default: configs/suite/programs.toml).
    #[arg(long = "programs", value_name = "FILE")]
    pub programs: Option<PathBuf>,
}

impl Place {
    fn load(&self) -> Result<(Suite, PathBuf)> {
        let path = self.programs.clone().unwrap_or_else(suite::programs::default_path);
        let s = Suite::load(&path).map_err(|e| anyhow!(e))?;
        Ok((s, self.cache.clone().unwrap_or_else(suite::cache_dir)))
    }
}

#[derive(clap::Args, Clone)]
pub struct RecordArgs {
    /// Instructions recorded per program, after its skip.
    #[arg(long, default_value_t = suite::DEFAULT_INSTRUCTIONS)]
    pub instructions: u64,
    /// Only these programs (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Record even where the trace and manifest are up to date.
    #[arg(long)]
    pub force: bool,
    /// Programs recorded at once (default: cores + 1; each recording is
    /// valgrind plus a converting thread that waits on it).
    #[arg(long)]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub place: Place,
}

pub fn run(cmd: SuiteCmd) -> Result<ExitCode> {
    match cmd {
        SuiteCmd::List { json, place } => list(json, &place),
        SuiteCmd::Record(a) => {
            let (s, cache) = a.place.load()?;
            let mut plan = RecordPlan::new(cache, a.instructions);
            plan.only = a.only.clone();
            plan.force = a.force;
            if let Some(j) = a.jobs {
                plan.jobs = j.max(1);
            }
            let outcomes = record(&s, &plan)?;
            print!("{}", outcome_table(&outcomes));
            let failed = outcomes.iter().filter(|o| matches!(o.status, Status::Failed(_))).count();
            println!("traces and manifests: {}", plan.cache.join("suite").display());
            if failed > 0 {
                println!("{failed} of {} programs failed (see above)", outcomes.len());
                return Ok(ExitCode::from(1));
            }
            Ok(ExitCode::SUCCESS)
        }
        SuiteCmd::Phases(a) => phases(&a),
        SuiteCmd::Points(a) => {
            if a.interval == 0 || a.instructions == 0 || a.instructions > a.interval {
                return Err(anyhow!("--interval and --instructions must be at least 1, and --instructions at most --interval"));
            }
            let (s, cache) = a.place.load()?;
            let wanted = suite::select(&s, &a.only).map_err(|e| anyhow!(e))?;
            let manifests = suite::cached(&s, &cache);
            let ms: Vec<suite::Manifest> = wanted.iter().filter_map(|p| manifests.get(&p.name).cloned()).collect();
            let choice = if a.all { points::Choice::All } else { points::Choice::Single };
            let got = record_points(&cache, &ms, choice, a.interval, a.instructions, a.force);
            let rows: Vec<Vec<String>> = got
                .iter()
                .map(|(name, r)| match r {
                    Ok(pm) => vec![
                        name.clone(),
                        format!("{:.2}", pm.intervals as f64 * pm.interval_size as f64 / 1e9),
                        pm.phases.to_string(),
                        pm.points.iter().map(|p| format!("{}:{:.2}", p.interval, p.weight)).collect::<Vec<_>>().join(" "),
                        format!("{:.0}", pm.record_seconds),
                    ],
                    Err(e) => vec![name.clone(), "FAILED".into(), "-".into(), e.clone(), "-".into()],
                })
                .collect();
            print!("{}", crate::table::render(&["program", "G instructions", "phases", "points (interval:weight)", "record s"], &rows));
            Ok(if got.iter().any(|(_, r)| r.is_err()) { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
        SuiteCmd::Inputs { place } => {
            let (s, cache) = place.load()?;
            let wanted: Vec<&suite::InputSpec> = s.inputs.iter().collect();
            let made = suite::make_inputs(&s, &wanted, &cache);
            let mut bad = 0;
            for i in &s.inputs {
                match made.get(&i.name) {
                    Some(Ok(f)) => println!("{}  {:>10}  {}", f.sha256, f.bytes, f.path),
                    Some(Err(e)) => {
                        bad += 1;
                        println!("{}: {e}", i.name);
                    }
                    None => {}
                }
            }
            Ok(if bad > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
    }
}

fn phases(a: &PhasesArgs) -> Result<ExitCode> {
    if a.interval == 0 || a.max_k == 0 {
        return Err(anyhow!("--interval and --max-k must be at least 1"));
    }
    let (s, cache) = a.place.load()?;
    let wanted = suite::select(&s, &a.only).map_err(|e| anyhow!(e))?;
    let manifests = suite::cached(&s, &cache);
    let mut rows = Vec::new();
    let mut json = serde_json::Map::new();
    let t0 = std::time::Instant::now();
    for (i, p) in wanted.iter().enumerate() {
        let Some(m) = manifests.get(&p.name) else {
            eprintln!("phases: {}: no recorded trace (run `spmsim suite record --only {}` first)", p.name, p.name);
            continue;
        };
        eprintln!(
            "phases: [{}/{}] {}: basic-block vectors over the whole run ({:.0} s so far)",
            i + 1,
            wanted.len(),
            p.name,
            t0.elapsed().as_secs_f64()
        );
        let scratch = cache.join("suite").join("work").join(format!("phases-{}", p.name));
        let ph = match suite::program_phases(m, &cache, a.interval, a.max_k, &scratch) {
            Ok(ph) => ph,
            Err(e) => {
                eprintln!("phases: {}: {e}", p.name);
                continue;
            }
        };
        let window = (m.skip / a.interval) as usize;
        let wweight = ph.weight_of_interval(window);
        let points: Vec<String> = ph.points.iter().map(|x| format!("{}:{:.2}", x.interval, x.weight)).collect();
        rows.push(vec![
            p.name.clone(),
            format!("{:.2}", ph.intervals as f64 * a.interval as f64 / 1e9),
            ph.intervals.to_string(),
            ph.k.to_string(),
            points.join(" "),
            format!("{window}"),
            wweight.map(|w| format!("{:.2}", w)).unwrap_or_else(|| "-".into()),
        ]);
        json.insert(
            p.name.clone(),
            serde_json::json!({"phases": ph, "recorded_window_interval": window, "recorded_window_phase_weight": wweight}),
        );
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        let header = [
            "program",
            "G instructions",
            "intervals",
            "phases",
            "points (interval:weight)",
            "recorded window's interval",
            "its phase's weight",
        ];
        print!("{}", crate::table::render(&header, &rows));
    }
    Ok(ExitCode::SUCCESS)
}

/// Record the points of each program whose trace is cached (two at a
/// time), with a progress bar and ETA on a terminal and plain lines in a
/// log; shared with `reproduce secpb`. Up-to-date points are kept.
pub fn record_points(
    cache: &std::path::Path,
    ms: &[suite::Manifest],
    choice: points::Choice,
    interval: u64,
    instructions: u64,
    force: bool,
) -> Vec<(String, Result<points::PointsManifest, String>)> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let total = ms.len() as u64;
    let bar = crate::progress::Progress::new("suite points", "programs", total);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let out: Mutex<Vec<(String, Result<points::PointsManifest, String>)>> = Mutex::new(Vec::new());
    let jobs = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).min(ms.len().max(1));
    std::thread::scope(|sc| {
        for _ in 0..jobs {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(m) = ms.get(i) else { break };
                let r = match (force, points::up_to_date(cache, m, choice, interval, instructions)) {
                    (false, Some(pm)) => Ok(pm),
                    _ => {
                        bar.update(done.load(Ordering::SeqCst) as u64, total, &format!("{}: phases and points", m.program));
                        points::record(cache, m, choice, interval, instructions)
                    }
                };
                if let Err(e) = &r {
                    eprintln!("suite points: {}: {e}", m.program);
                }
                let d = done.fetch_add(1, Ordering::SeqCst) + 1;
                bar.update(d as u64, total, &m.program);
                out.lock().unwrap_or_else(|e| e.into_inner()).push((m.program.clone(), r));
            });
        }
    });
    bar.finish(done.load(Ordering::SeqCst) as u64);
    let mut v = out.into_inner().unwrap_or_else(|e| e.into_inner());
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// Record with progress lines on stderr; shared with `reproduce secpb`.
pub fn record(s: &Suite, plan: &RecordPlan) -> Result<Vec<Outcome>> {
    let t0 = std::time::Instant::now();
    let progress = |p: Progress| match p {
        Progress::Note(n) => eprintln!("suite: {n}"),
        Progress::Started { name, skip, instructions, index, total } => {
            eprintln!(
                "suite: [{}/{total}] {name}: recording {instructions} instructions after skipping {skip} ({:.0} s)",
                index + 1,
                t0.elapsed().as_secs_f64()
            )
        }
        Progress::Finished(o) => match (&o.status, &o.manifest) {
            (Status::Failed(e), _) => eprintln!("suite: {}: FAILED: {}", o.name, e.trim_end().replace('\n', "\n    ")),
            (Status::UpToDate, Some(m)) => {
                eprintln!("suite: {}: up to date ({} instructions recorded {})", o.name, m.recording.recorded_instructions, m.recorded_at)
            }
            (_, Some(m)) => eprintln!(
                "suite: {}: recorded {} instructions ({} loads, {} stores) in {:.0} s{}",
                o.name,
                m.recording.recorded_instructions,
                m.recording.loads,
                m.recording.stores,
                o.seconds,
                if m.recording.program_finished { "; the program ended before the limit" } else { "" }
            ),
            _ => {}
        },
    };
    suite::record_suite(s, plan, &progress).map_err(|e| anyhow!(e))
}

fn mib(b: u64) -> String {
    format!("{:.1}", b as f64 / (1024.0 * 1024.0))
}

pub fn outcome_table(outcomes: &[Outcome]) -> String {
    let rows: Vec<Vec<String>> = outcomes
        .iter()
        .map(|o| {
            let status = match &o.status {
                Status::Recorded => "recorded".to_string(),
                Status::UpToDate => "up to date".to_string(),
                Status::Failed(_) => "FAILED".to_string(),
            };
            match &o.manifest {
                Some(m) => vec![
                    o.name.clone(),
                    m.package_label(),
                    status,
                    m.recording.skipped_instructions.to_string(),
                    m.recording.recorded_instructions.to_string(),
                    m.recording.loads.to_string(),
                    m.recording.stores.to_string(),
                    mib(m.trace_bytes),
                    format!("{:.0}", if matches!(o.status, Status::Recorded) { o.seconds } else { m.record_seconds }),
                ],
                None => vec![o.name.clone(), "-".into(), status, "-".into(), "-".into(), "-".into(), "-".into(), "-".into(), "-".into()],
            }
        })
        .collect();
    crate::table::render(&["program", "package", "status", "skipped", "recorded", "loads", "stores", "trace MiB", "record s"], &rows)
}

fn list(json: bool, place: &Place) -> Result<ExitCode> {
    let (s, cache) = place.load()?;
    let cached = suite::cached(&s, &cache);
    if json {
        let v: Vec<serde_json::Value> = s
            .programs
            .iter()
            .map(|p| {
                let ins: Vec<&suite::InputSpec> = s.inputs_of(p);
                serde_json::json!({
                    "name": p.name,
                    "packages": p.packages,
                    "all_packages": s.packages_of(p),
                    "description": p.description,
                    "command": p.command,
                    "executable_from": p.executable_from,
                    "stdin": p.stdin,
                    "skip": p.skip,
                    "inputs": ins,
                    "trace": suite::trace_file(&cache, &p.name),
                    "manifest": cached.get(&p.name),
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "programs_file": s.path, "cache": cache, "env": s.env, "programs": v }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = s
        .programs
        .iter()
        .map(|p| {
            let ins: Vec<String> = s.inputs_of(p).iter().map(|i| i.name.clone()).collect();
            let trace = match cached.get(&p.name) {
                Some(m) => format!("{} instr. ({})", m.recording.recorded_instructions, m.package_label()),
                None => "-".into(),
            };
            vec![p.name.clone(), p.packages.join(" "), ins.join(" "), p.skip.to_string(), trace, p.description.clone()]
        })
        .collect();
    print!("{}", crate::table::render(&["program", "packages", "inputs", "skip", "cached trace", "what it does"], &rows));
    println!("{} programs in {}; cache {}", s.programs.len(), s.path.display(), cache.join("suite").display());
    Ok(ExitCode::SUCCESS)
}
