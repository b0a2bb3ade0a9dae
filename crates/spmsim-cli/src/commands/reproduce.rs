use anyhow::{anyhow, Result};
use clap::Subcommand;
use spmsim::reproduce::{self, index, mset, secon, secpb, star, triad, ClaimResult, Paper};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum ReproduceCmd {
    /// SecPB: Table IV, Figs. 6-9, Tables V-VI and the VI-B worked example.
    Secpb {
        /// A short run (5 M instructions per simulation) that finishes in
        /// minutes: its regions are short points (intervals of 10 M), not
        /// the paper's.
        #[arg(long)]
        quick: bool,
        /// Instructions per simulation (default 5 M with --quick, else
        /// 250 M: SecPB V-A simulates "the next 250 million instructions"
        /// of each representative region).
        #[arg(long)]
        instructions: Option<u64>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "results/secpb")]
        out: PathBuf,
        #[command(flatten)]
        points: PointsArgs,
        /// Run on the built-in stand-ins (micro-benchmarks and synthetic
        /// profiles) instead of the recorded real-program suite; needs
        /// neither valgrind nor Debian packages.
        #[arg(long)]
        builtin: bool,
        /// The suite definition (default: configs/suite/spec-upstream.toml,
        /// the upstream programs of the SPEC CPU2006 benchmarks SecPB V-A
        /// ran; configs/suite/programs.toml is the suite of other real
        /// programs). Traces are recorded into and read from the cache
        /// folder ($SPMSIM_CACHE, else ~/.cache/spmsim).
        #[arg(long = "programs", value_name = "FILE")]
        programs: Option<PathBuf>,
        /// Which regions of each recorded program run: `single` (the one
        /// simulation point nearest the run's mean, intervals of 10 M
        /// instructions; the default with --quick), `simpoints` (one
        /// weighted point per phase, intervals of at least 250 M as
        /// SecPB V-A's regions; the
        /// default otherwise) or `startup` (the window after the suite's
        /// fixed skip, as before simulation points).
        #[arg(long, value_parser = ["single", "simpoints", "startup"])]
        regions: Option<String>,
    },
    /// Secon: Figs. 9-14 and the claims of its section 4, against WB, WT
    /// and SuperMem.
    Secon {
        /// A smaller grid (fewer points per figure) with 300 k instructions
        /// per simulation.
        #[arg(long)]
        quick: bool,
        /// Instructions per simulation (default 300 k with --quick, else 2 M).
        #[arg(long)]
        instructions: Option<u64>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "results/secon")]
        out: PathBuf,
        #[command(flatten)]
        points: PointsArgs,
    },
    /// STAR: Figs. 10-14 and Table II, against WB, Anubis and strict
    /// persistence (single-core).
    Star {
        /// 2 M instructions per simulation and two metadata-cache sizes.
        #[arg(long)]
        quick: bool,
        /// Instructions per simulation (default 2 M with --quick, else 20 M).
        #[arg(long)]
        instructions: Option<u64>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "results/star")]
        out: PathBuf,
        #[command(flatten)]
        points: PointsArgs,
        /// Also judge Figs. 10-13's claims with the workloads' heaps at
        /// 8, 64 and 1024 MiB (STAR gives none): four times Figs. 10-13's
        /// runs again. Not part of `reproduce all`.
        #[arg(long)]
        sweep: bool,
    },
    /// Triad-NVM: Figs. 8-10 against no persistence and strict persistence
    /// (single-core, persistent workloads; recovery on machines of 1-64 TiB).
    Triad {
        /// 1 M instructions per simulation and three memory sizes.
        #[arg(long)]
        quick: bool,
        /// Instructions per simulation (default 1 M with --quick, else 20 M).
        #[arg(long)]
        instructions: Option<u64>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "results/triad")]
        out: PathBuf,
        #[command(flatten)]
        points: PointsArgs,
        /// Run the paper's SPEC2006 list (its twelve programs from the
        /// suites, recorded first where the cache lacks them) on this
        /// many cores, a copy on each, in place of the one-core stand-ins:
        /// 8 is Triad-NVM's machine. Not part of `reproduce all`.
        #[arg(long, value_name = "CORES", value_parser = clap::value_parser!(u32).range(1..=64))]
        spec_cores: Option<u32>,
    },
    /// Every paper's reproduction above, each into OUT/<paper>, then
    /// OUT/index.md and index.html: each paper's claims, ours beside the
    /// paper's, with a link to its report. A paper that fails
    /// is listed with its error and the others still run.
    All {
        /// Each paper's --quick run.
        #[arg(long)]
        quick: bool,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "results")]
        out: PathBuf,
    },
    /// The multiset-hash scheme (Kubo et al.): Figs. 7-9 and Table 2 against
    /// its baseline under each of three readings (5.1 does not say how the
    /// baseline's metadata cache writes), on stand-ins for its SPEC CPU2017
    /// programs (recorded first when the cache lacks them).
    Mset {
        /// 2 M instructions per simulation and three metadata-cache sizes.
        #[arg(long)]
        quick: bool,
        /// Instructions per simulation after the warm-up (default 2 M with
        /// --quick, else 8 M: 10 M with the warm-up, the paper's length).
        #[arg(long)]
        instructions: Option<u64>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "results/mset")]
        out: PathBuf,
        #[command(flatten)]
        points: PointsArgs,
    },
}

/// How a paper's grid runs: whole in this process (the default, resuming
/// from the records in OUT/points), one point, or listed.
#[derive(clap::Args, Clone, Default)]
pub struct PointsArgs {
    /// Print the grid's points as JSON (id, point, whether OUT/points
    /// holds its record), after recording the programs they need; run none.
    #[arg(long, conflicts_with_all = ["only_point", "dask"])]
    list_points: bool,
    /// Run only the point ID (of --list-points, with the same other
    /// arguments) and keep its record in OUT/points; no report.
    #[arg(long, value_name = "ID", conflicts_with = "dask")]
    only_point: Option<String>,
    /// Run the points on Dask: N local single-threaded workers, or the
    /// cluster whose scheduler is at ADDRESS (tcp://HOST:PORT), one
    /// `--only-point` process each, then the report here (run by the
    /// Python package: `python3 -m spmsim reproduce ...`).
    #[arg(long, value_name = "N|ADDRESS")]
    dask: Option<String>,
}

impl PointsArgs {
    /// Whether this process records the programs its grid needs first:
    /// one point's process (`--only-point`) takes the cache as the
    /// listing left it, installing and recording nothing.
    fn records_programs(&self) -> bool {
        self.only_point.is_none()
    }
}

/// SecPB V-A: "All models are fast-forwarded to representative regions
/// and the next 250 million instructions are simulated": the full run's
/// SimPoint interval and instructions per point.
const PAPER_REGION: u64 = 250_000_000;

/// The recorded suite, recording what the cache lacks first (the same
/// code path as `spmsim suite record`, at least
/// `suite::DEFAULT_INSTRUCTIONS` per program), then the programs'
/// simulation points unless `regions` is `startup`.
///
/// With `record` false (one point's process, `--only-point`, whose
/// listing recorded already) the cache is taken as it is: nothing is
/// installed or recorded, and a program that could not be recorded is not
/// tried again.
fn recorded_suite(instructions: u64, programs: Option<PathBuf>, regions: &str, record: bool) -> Result<Vec<secpb::SuiteEntry>> {
    use spmsim::suite;
    let path = programs.unwrap_or_else(suite::programs::spec_upstream_path);
    let s = suite::Suite::load(&path).map_err(|e| anyhow!(e))?;
    let cache = suite::cache_dir();
    let choice = match regions {
        "single" => Some(suite::points::Choice::Single),
        "simpoints" => Some(suite::points::Choice::All),
        _ => None,
    };
    if !record {
        return Ok(secpb::recorded_suite(&s, &cache, choice).0);
    }
    // At simulation points the start-up window is only the fallback for a
    // program whose points cannot be recorded, so it keeps the suite's
    // default length rather than being recorded again at a full run's.
    let startup = if regions == "startup" { instructions } else { instructions.min(suite::DEFAULT_INSTRUCTIONS) };
    let mut plan = suite::RecordPlan::new(cache.clone(), startup.max(suite::DEFAULT_INSTRUCTIONS));
    plan.accept_at_least = Some(startup);
    let outcomes = super::suite::record(&s, &plan)?;
    let failed: Vec<&suite::Outcome> = outcomes.iter().filter(|o| matches!(o.status, suite::Status::Failed(_))).collect();
    if outcomes.iter().any(|o| matches!(o.status, suite::Status::Recorded)) || !failed.is_empty() {
        eprint!("{}", super::suite::outcome_table(&outcomes));
    }
    // The simulation points: phases from the whole run, then
    // traces at the points, kept in the cache like the traces.
    if let Some(c) = choice {
        // SecPB V-A: representative regions of 250 M instructions; the
        // quick run's single point keeps short intervals (10 M) so that it
        // finishes in minutes, and its report says so.
        let interval = if c == suite::points::Choice::Single { 10_000_000u64.max(instructions) } else { PAPER_REGION.max(instructions) };
        let ms: Vec<suite::Manifest> = suite::cached(&s, &cache).into_values().collect();
        for (name, r) in super::suite::record_points(&cache, &ms, c, interval, instructions, false) {
            if let Err(e) = r {
                eprintln!(
                    "warning: {name} runs at its start-up window ({} M instructions at most): its points could not be recorded: {e}",
                    startup / 1_000_000
                );
                let _ = std::fs::remove_file(suite::points::PointsManifest::path(&cache, &name, c));
            }
        }
    }
    let (entries, missing) = secpb::recorded_suite(&s, &cache, choice);
    if entries.is_empty() {
        return Err(anyhow!(
            "no program of the suite could be recorded ({} failed; see above). The suite installs Debian packages and records under valgrind; `spmsim reproduce secpb --builtin` runs on the built-in stand-ins instead",
            failed.len()
        ));
    }
    if !missing.is_empty() {
        eprintln!("warning: running without {} (no trace could be recorded; see above)", missing.join(", "));
    }
    Ok(entries)
}

/// The memory-intensive suite (Triad-NVM's SPEC stand-ins), recording
/// what the cache lacks first: at least `instructions` per program.
fn recorded_stand_ins(instructions: u64) -> Result<()> {
    recorded_programs(&triad::stand_in_suite(), &[], instructions, "Triad-NVM's SPEC programs")
}

/// The multiset-hash paper's stand-ins, from whichever suite file defines
/// each, recorded first where the cache lacks them.
fn recorded_mset_stand_ins(instructions: u64) -> Result<()> {
    let (names, needed) = mset::stand_ins(instructions);
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    recorded_named(&names, needed, "the multiset-hash paper's SPEC CPU2017 programs")
}

/// The programs `names`, from whichever suite file defines each (the main
/// suite, Triad-NVM's, the SPEC CPU2017 stand-ins and SPEC CPU2006's
/// upstream programs), recorded first where the cache lacks them: at least
/// `instructions` each.
pub(crate) fn recorded_named(names: &[String], instructions: u64, what: &str) -> Result<()> {
    let main = spmsim::suite::programs::default_path();
    for file in std::iter::once(main).chain(spmsim::suite::stand_in_suite_files()) {
        let s = spmsim::suite::Suite::load(&file).map_err(|e| anyhow!(e))?;
        let only: Vec<String> = names.iter().filter(|n| s.programs.iter().any(|p| &p.name == *n)).cloned().collect();
        if !only.is_empty() {
            recorded_programs(&file, &only, instructions, what)?;
        }
    }
    Ok(())
}

/// Record the programs `only` (all when empty) of the suite at `path`
/// that the cache lacks: at least `instructions` each.
fn recorded_programs(path: &std::path::Path, only: &[String], instructions: u64, what: &str) -> Result<()> {
    use spmsim::suite;
    let s = suite::Suite::load(path).map_err(|e| anyhow!(e))?;
    let mut plan = suite::RecordPlan::new(suite::cache_dir(), instructions);
    plan.accept_at_least = Some(instructions);
    plan.only = only.to_vec();
    let outcomes = super::suite::record(&s, &plan)?;
    let failed: Vec<String> = outcomes
        .iter()
        .filter_map(|o| match &o.status {
            suite::Status::Failed(e) => Some(format!("{}: {e}", o.name)),
            _ => None,
        })
        .collect();
    if !failed.is_empty() {
        eprint!("{}", super::suite::outcome_table(&outcomes));
        return Err(anyhow!("the stand-ins for {what} ({}) could not be recorded: {}", path.display(), failed.join("; ")));
    }
    Ok(())
}

/// A progress bar over a reproduction's runs, finished with the run count
/// it was last told.
struct RunsBar {
    bar: crate::progress::Progress,
    runs: std::sync::atomic::AtomicU64,
}

impl RunsBar {
    fn new(label: &str) -> Self {
        RunsBar { bar: crate::progress::Progress::new(label, "runs", 0), runs: std::sync::atomic::AtomicU64::new(0) }
    }
    fn update(&self, done: usize, total: usize, what: &str) {
        self.runs.store(total as u64, std::sync::atomic::Ordering::Relaxed);
        self.bar.update(done as u64, total as u64, what)
    }
    fn finish(self) {
        self.bar.finish(self.runs.into_inner());
    }
}

pub fn run(cmd: ReproduceCmd) -> Result<ExitCode> {
    match cmd {
        ReproduceCmd::All { quick, seed, out } => all(quick, seed, &out),
        cmd => run_paper(cmd).map(|_| ExitCode::SUCCESS),
    }
}

/// `reproduce all`: each paper in turn, timed, then the index.
fn all(quick: bool, seed: u64, out: &std::path::Path) -> Result<ExitCode> {
    let start = std::time::Instant::now();
    let mut papers = Vec::new();
    for (id, title) in index::PAPERS {
        let dir = out.join(id);
        let cmd = match id {
            "secpb" => ReproduceCmd::Secpb {
                quick,
                instructions: None,
                seed,
                out: dir,
                points: PointsArgs::default(),
                builtin: false,
                programs: None,
                regions: None,
            },
            "secon" => ReproduceCmd::Secon { quick, instructions: None, seed, out: dir, points: PointsArgs::default() },
            "star" => ReproduceCmd::Star { quick, instructions: None, seed, out: dir, points: PointsArgs::default(), sweep: false },
            "triad" => ReproduceCmd::Triad { quick, instructions: None, seed, out: dir, points: PointsArgs::default(), spec_cores: None },
            "mset" => ReproduceCmd::Mset { quick, instructions: None, seed, out: dir, points: PointsArgs::default() },
            other => unreachable!("index::PAPERS names a paper with no reproduction: {other}"),
        };
        eprintln!("reproduce all: {id} ({} of {})", papers.len() + 1, index::PAPERS.len());
        let (t, started) = (std::time::Instant::now(), std::time::SystemTime::now());
        let outcome = run_paper(cmd).map_err(|e| {
            eprintln!("reproduce all: {id} failed: {e:#}");
            format!("{e:#}")
        });
        let mut summary = index::PaperSummary::new(id, title, t.elapsed().as_secs_f64(), outcome);
        // Only a page this run drew (an older one may be left over).
        summary.report_html = std::fs::metadata(out.join(id).join("report.html"))
            .and_then(|m| m.modified())
            .is_ok_and(|m| m >= started)
            .then(|| format!("{id}/report.html"));
        papers.push(summary);
    }
    let idx = index::Index { quick, seed, seconds: start.elapsed().as_secs_f64(), papers };
    idx.write(out).map_err(|e| anyhow!("reproduce all: {e}"))?;
    println!();
    for p in &idx.papers {
        match &p.error {
            Some(e) => println!("{:<6} failed after {:.0} s: {e}", p.paper, p.seconds),
            None => println!("{:<6} {} ({:.0} s)", p.paper, reproduce::claims::counts(&p.claims), p.seconds),
        }
    }
    println!("reproduce all: {:.0} s; index: {}", idx.seconds, out.join("index.html").display());
    // The index's plots (one per paper) come from the Python package,
    // which redraws index.html with them; the plain page stays otherwise.
    match super::python::report(out) {
        Ok(()) => println!("index with plots: {}", out.join("index.html").display()),
        Err(e) => eprintln!("note: index.html has no plots: {e}"),
    }
    Ok(if idx.papers.iter().any(|p| p.error.is_some()) { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// One paper's reproduction: its files written, its claims printed and
/// returned.
fn run_paper(cmd: ReproduceCmd) -> Result<Vec<ClaimResult>> {
    match cmd {
        ReproduceCmd::All { .. } => unreachable!("reproduce all runs each paper itself"),
        ReproduceCmd::Secpb { quick, instructions, seed, out, points, builtin, programs, regions } => {
            let n = instructions.unwrap_or(if quick { 5_000_000 } else { PAPER_REGION });
            let regions = regions.unwrap_or_else(|| if quick { "single" } else { "simpoints" }.into());
            let record = points.records_programs();
            let suite = if builtin { secpb::builtin_suite() } else { recorded_suite(n, programs, &regions, record)? };
            reproduce_paper(secpb::SecPb::new(suite, n, seed, quick).map_err(|e| anyhow!("reproduce secpb: {e}"))?, &out, &points)
        }
        ReproduceCmd::Secon { quick, instructions, seed, out, points } => {
            let n = instructions.unwrap_or(if quick { 300_000 } else { 2_000_000 });
            reproduce_paper(secon::Secon::new(n, seed, quick).map_err(|e| anyhow!("reproduce secon: {e}"))?, &out, &points)
        }
        ReproduceCmd::Star { quick, instructions, seed, out, points, sweep } => {
            let n = instructions.unwrap_or(if quick { 2_000_000 } else { 20_000_000 });
            let mut paper = star::Star::new(n, seed, quick).map_err(|e| anyhow!("reproduce star: {e}"))?;
            paper.sweep = sweep;
            reproduce_paper(paper, &out, &points)
        }
        ReproduceCmd::Triad { quick, instructions, seed, out, points, spec_cores } => {
            let n = instructions.unwrap_or(if quick { 1_000_000 } else { 20_000_000 });
            let mut paper = triad::Triad::new(n, seed, quick).map_err(|e| anyhow!("reproduce triad: {e}"))?;
            let record = points.records_programs();
            if record {
                recorded_stand_ins(triad::stand_in_instructions(n))?;
            }
            if let Some(c) = spec_cores {
                if record {
                    recorded_named(&triad::spec_programs(), triad::stand_in_instructions(n), "Triad-NVM's SPEC2006 list")?;
                }
                paper = paper.with_spec_cores(c as usize);
            }
            reproduce_paper(paper, &out, &points)
        }
        ReproduceCmd::Mset { quick, instructions, seed, out, points } => {
            let n = instructions.unwrap_or(if quick { 2_000_000 } else { 8_000_000 });
            let paper = mset::Mset::new(n, seed, quick).map_err(|e| anyhow!("reproduce mset: {e}"))?;
            if points.records_programs() {
                recorded_mset_stand_ins(n)?;
            }
            reproduce_paper(paper, &out, &points)
        }
    }
}

/// `--list-points`: the grid's points as one line of JSON on stdout.
fn list_points<P: Paper>(paper: &P, out: &std::path::Path) -> Result<()> {
    let dir = reproduce::points::dir(out);
    let listed = reproduce::list_points(paper, &dir).map_err(|e| anyhow!("reproduce {}: {e}", P::ID))?;
    let points: Vec<serde_json::Value> =
        listed.iter().map(|(k, done)| serde_json::json!({ "id": k.id, "point": k.point, "done": done })).collect();
    let doc = serde_json::json!({ "paper": P::ID, "points_dir": dir, "points": points });
    println!("{doc}");
    Ok(())
}

/// `--only-point ID`: that point's run, its record kept in OUT/points.
fn only_point<P: Paper>(paper: &P, out: &std::path::Path, id: &str) -> Result<()> {
    let dir = reproduce::points::dir(out);
    let (point, ran) = reproduce::run_point(paper, &dir, id, &|n| eprintln!("reproduce {}: {n}", P::ID)).map_err(|e| anyhow!(e))?;
    let done = if ran { "ran" } else { "was already kept" };
    println!("reproduce {}: point {id} ({point}) {done}: {}", P::ID, dir.join(format!("{id}.json")).display());
    Ok(())
}

/// Run `paper`'s grid under one progress bar, keeping each run's record
/// in OUT/points as it ends and taking those already there, write its
/// files (or, when a run failed, the runs that finished), print its
/// claims, and draw its page of plots where it has one. `--list-points`
/// and `--only-point` do only that.
fn reproduce_paper<P: Paper>(paper: P, out: &std::path::Path, how: &PointsArgs) -> Result<Vec<ClaimResult>> {
    if how.dask.is_some() {
        return Err(anyhow!("reproduce {} --dask is run by the Python package: python3 -m spmsim reproduce ...", P::ID));
    }
    if how.list_points {
        list_points(&paper, out)?;
        return Ok(Vec::new());
    }
    if let Some(id) = &how.only_point {
        only_point(&paper, out, id)?;
        return Ok(Vec::new());
    }
    let bar = RunsBar::new(&format!("reproduce {}", P::ID));
    let note = |n: String| eprintln!("reproduce {}: {n}", P::ID);
    let results = reproduce::run_kept(&paper, &reproduce::points::dir(out), &|d, t, w| bar.update(d, t, w), &note);
    bar.finish();
    let r = match results {
        Ok(r) => r,
        Err(f) => {
            if !f.completed.is_empty() {
                match reproduce::write_partial(&paper, &f, out) {
                    Ok(()) => eprintln!("the runs that finished are in {}", out.join("runs.csv").display()),
                    Err(e) => eprintln!("warning: the finished runs could not be written: {e}"),
                }
            }
            return Err(anyhow!("reproduce {}: {f}", P::ID));
        }
    };
    reproduce::write(&paper, &r, out).map_err(|e| anyhow!("reproduce {}: {e}", P::ID))?;
    let claims = paper.claims(&r);
    for c in &claims {
        println!("{:<30} paper {:>10}  ours {:>10}  {}", c.id, c.show_paper(), c.show(c.ours), c.outcome.label());
        if let Some(o) = &c.other_reading {
            println!("{:<30} paper {:>10}  ours {:>10}  under the reading of: {}", "", c.show(o.paper), c.show(o.ours), o.statement);
        }
    }
    println!("claims: {} (the rule is stated in the report)", reproduce::claims::counts(&claims));
    for line in paper.summary(&r) {
        println!("{line}");
    }
    println!("report: {}", out.join("report.md").display());
    if P::PLOTS {
        // The page with the plots comes from the Python package; the
        // results above stay whether or not it can be drawn.
        match super::python::report(out) {
            Ok(()) => println!("report with plots: {}", out.join("report.html").display()),
            Err(e) => eprintln!("note: no report.html: {e}"),
        }
    }
    Ok(claims)
}
