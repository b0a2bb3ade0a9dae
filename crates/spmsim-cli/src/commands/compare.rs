//! `spmsim compare`: every scheme of the five papers and their baselines on
//! one common machine, with the table, the best scheme per criterion, and
//! (through the Python package) the Pareto plots.

use anyhow::{anyhow, Result};
use spmsim::compare::{self, report, Options};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CompareArgs {
    /// Three benchmarks and two programs, 1 M instructions each, 2000
    /// operations before each recovery.
    #[arg(long)]
    pub quick: bool,
    /// Instructions per timing run (default 1 M with --quick, else 10 M).
    #[arg(long, value_parser = crate::numbers::whole(1, u64::MAX), allow_negative_numbers = true)]
    pub instructions: Option<u64>,
    #[arg(long, default_value_t = 1, value_parser = crate::numbers::whole(0, u64::MAX), allow_negative_numbers = true)]
    pub seed: u64,
    /// Only these presets, comma-separated (default: every preset that is
    /// a scheme and no control; see --list).
    #[arg(long, value_delimiter = ',')]
    pub schemes: Vec<String>,
    /// Only these workloads, comma-separated (btree, suite:gcc#persistent=heap, ...).
    #[arg(long, value_delimiter = ',')]
    pub workloads: Vec<String>,
    /// Operations before each recovery and attack run (default 2000 with
    /// --quick, else 20000; at most 100000).
    #[arg(long, value_parser = crate::numbers::whole(1, compare::MAX_OPS), allow_negative_numbers = true)]
    pub ops: Option<u64>,
    /// Leave out the counted recoveries at 16 GiB and 1 TiB.
    #[arg(long)]
    pub no_recovery: bool,
    /// Leave out the attack harness.
    #[arg(long)]
    pub no_attacks: bool,
    /// Leave out the crash check of each scheme under each persistency model.
    #[arg(long)]
    pub no_crash: bool,
    /// Leave out the runs of each preset on its own paper's machine.
    #[arg(long)]
    pub no_paper_machine: bool,
    /// The persistency models to put every scheme under, comma-separated:
    /// strict, epoch, own (each preset's paper's); default all three.
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// Explore the compositions instead: every scheme under each
    /// persistency model with each tree, crash-checked before it is timed
    /// (explore.md and explore.json in --out).
    #[arg(long)]
    pub explore: bool,
    /// With --explore: the front ends each memory-controller scheme's
    /// metadata rules are also put behind, comma-separated
    /// (persist-buffer:cobcm, ..., cache-hierarchy; `none` for none).
    /// Default: cobcm, nogap and cache-hierarchy with --quick, else all seven.
    #[arg(long, value_delimiter = ',')]
    pub fronts: Vec<String>,
    /// With --explore: the battery domains of a front end that holds
    /// stores (persist buffer, eADR's caches), comma-separated: `front`
    /// (its buffer or caches drain on battery; the default) and `adr` (the
    /// WPQ alone: the compositions the crash oracle must find unsafe).
    #[arg(long, value_delimiter = ',')]
    pub batteries: Vec<String>,
    /// Merge the explore.json of each directory (the shards of
    /// `spmsim explore`) into one exploration in --out.
    #[arg(long, num_args = 1.., value_name = "DIR")]
    pub merge: Vec<PathBuf>,
    /// Record the programs the workloads need, then stop (what `spmsim
    /// explore` does once before its shards, which share the cache).
    #[arg(long)]
    pub record_only: bool,
    /// With --explore: print what shapes the exploration's result
    /// (spmsim's version, the counts, workloads and axes, a digest of each
    /// file of the presets folder it reads) as JSON, and run nothing: what
    /// `spmsim explore` checks a finished shard against before it counts
    /// it as done.
    #[arg(long, requires = "explore")]
    pub provenance: bool,
    /// List the presets compare takes and those it leaves out, with why; run nothing.
    #[arg(long)]
    pub list: bool,
    #[arg(long, default_value = "results/compare")]
    pub out: PathBuf,
}

pub fn run(a: CompareArgs) -> Result<ExitCode> {
    if a.list {
        for (c, _) in compare::candidates() {
            match c.left_out {
                None => println!("{}", c.preset),
                Some(why) => println!("{}  (left out: {why})", c.preset),
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    refuse_ignored(&a)?;
    let models =
        a.models.iter().map(|m| compare::ModelView::parse(m)).collect::<Result<Vec<_>, _>>().map_err(|e| anyhow!("--models: {e}"))?;
    let opts = Options {
        quick: a.quick,
        instructions: a.instructions,
        seed: a.seed,
        only: a.schemes,
        workloads: a.workloads,
        ops: a.ops,
        recovery: !a.no_recovery,
        attacks: !a.no_attacks,
        paper_machine: !a.no_paper_machine,
        models,
        crash: !a.no_crash,
        fronts: match a.fronts.as_slice() {
            [] => None,
            [none] if none == "none" => Some(Vec::new()),
            names => Some(
                names
                    .iter()
                    .map(|n| spmsim::scheme::FrontChoice::parse(n))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| anyhow!("--fronts: {e}"))?,
            ),
        },
        adr_batteries: a.batteries.iter().any(|b| b == "adr"),
    };
    if let Some(b) = a.batteries.iter().find(|b| !matches!(b.as_str(), "front" | "adr")) {
        return Err(anyhow!("--batteries: unknown battery domain `{b}`; known: front, adr"));
    }
    if !a.merge.is_empty() {
        let start = std::time::Instant::now();
        let e = compare::explore::merge(&a.merge).map_err(|e| anyhow!(e))?;
        return explore_summary(&e, &a.out, start);
    }
    // Every count and name checked before the programs are recorded (minutes).
    compare::selected(&opts).map_err(|e| anyhow!(e))?;
    if a.provenance {
        let p = compare::provenance::Provenance::of(&opts).map_err(|e| anyhow!(e))?;
        println!("{}", serde_json::to_string_pretty(&p)?);
        return Ok(ExitCode::SUCCESS);
    }
    let programs = opts.programs();
    if !programs.is_empty() {
        super::reproduce::recorded_named(
            &programs,
            spmsim::reproduce::grid::recording_for(compare::PROGRAM_WARMUP, opts.instructions()),
            "compare's programs",
        )?;
    }
    if a.record_only {
        return Ok(ExitCode::SUCCESS);
    }
    let start = std::time::Instant::now();
    if a.explore {
        return explore(&opts, &a.out, start);
    }
    let bar = crate::progress::Progress::new("compare", "steps", 0);
    let steps = std::sync::atomic::AtomicU64::new(0);
    let c = compare::run(&opts, &|done, total, what| {
        steps.store(total as u64, std::sync::atomic::Ordering::Relaxed);
        bar.update(done as u64, total as u64, what)
    })
    .map_err(|e| anyhow!(e))?;
    bar.finish(steps.into_inner());
    report::write(&c, &a.out).map_err(|e| anyhow!(e))?;
    let (head, rows) = report::table_rows(&c);
    print!("{}", crate::table::render_aligned(&head, &rows, 3));
    println!();
    for b in &c.best {
        println!("{}: {} ({})", b.criterion, b.preset, b.value);
    }
    for (axis, front) in &c.pareto {
        println!("Pareto front, slowdown against {axis}: {}", front.join(", "));
    }
    if c.models.len() > 1 {
        println!();
        let (head, rows) = report::model_rows(&c);
        let head: Vec<&str> = head.iter().map(String::as_str).collect();
        print!("{}", crate::table::render_aligned(&head, &rows, 1));
        for m in &c.models {
            for (axis, front) in &m.pareto {
                println!("{}: Pareto front, slowdown against {axis}: {}", m.model.name(), front.join(", "));
            }
            for n in &m.not_run {
                println!("{}: {} cannot run: {}", m.model.name(), n.preset, n.left_out.as_deref().unwrap_or_default());
            }
        }
    }
    let failed: Vec<&String> = c.schemes.iter().flat_map(|r| r.notes.iter()).collect();
    for n in &failed {
        eprintln!("note: {n}");
    }
    println!(
        "compare: {} schemes in {:.0} s; report: {}",
        c.schemes.len(),
        start.elapsed().as_secs_f64(),
        a.out.join("report.md").display()
    );
    // The page with the plots comes from the Python package; the results
    // above stay whether or not it can be drawn.
    match super::python::report(&a.out) {
        Ok(()) => println!("report with plots: {}", a.out.join("report.html").display()),
        Err(e) => eprintln!("note: no report.html: {e}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// A flag the chosen mode would ignore is refused, naming both: the axes
/// of an exploration mean nothing to a comparison, and an exploration
/// crash-checks, attacks and times every composition under each model.
fn refuse_ignored(a: &CompareArgs) -> Result<()> {
    for (flag, given) in [("--fronts", !a.fronts.is_empty()), ("--batteries", !a.batteries.is_empty())] {
        if given && !a.explore {
            return Err(anyhow!(
                "{flag} is an axis of the exploration and needs --explore (compare without --explore runs each preset on its own front end and battery)"
            ));
        }
    }
    let comparison_only = [
        ("--models", !a.models.is_empty()),
        ("--no-recovery", a.no_recovery),
        ("--no-attacks", a.no_attacks),
        ("--no-crash", a.no_crash),
        ("--no-paper-machine", a.no_paper_machine),
    ];
    for (flag, given) in comparison_only {
        if given && a.explore {
            return Err(anyhow!(
                "{flag} does not apply to --explore (an exploration crash-checks, attacks and times every composition under each of strict, epoch and tep persistency)"
            ));
        }
    }
    Ok(())
}

/// `compare --explore`: the compositions, crash-checked, then timed.
fn explore(opts: &Options, out: &std::path::Path, start: std::time::Instant) -> Result<ExitCode> {
    use compare::explore;
    let bar = crate::progress::Progress::new("explore", "steps", 0);
    let steps = std::sync::atomic::AtomicU64::new(0);
    let e = explore::explore(opts, &|done, total, what| {
        steps.store(total as u64, std::sync::atomic::Ordering::Relaxed);
        bar.update(done as u64, total as u64, what)
    })
    .map_err(|e| anyhow!(e))?;
    bar.finish(steps.into_inner());
    explore_summary(&e, out, start)
}

/// Write an exploration and print its counts, its unsafe compositions and
/// its front.
fn explore_summary(e: &compare::explore::Exploration, out: &std::path::Path, start: std::time::Instant) -> Result<ExitCode> {
    use compare::explore::{self, Outcome};
    explore::write(e, out).map_err(|e| anyhow!(e))?;
    let count = |f: fn(&Outcome) -> bool| e.count(f);
    println!(
        "compositions: {}; refused: {}; the same machine as another: {}; safe: {}; unsafe: {}; the check failed: {}",
        e.compositions.len(),
        count(|o| matches!(o, Outcome::Refused { .. })),
        count(|o| matches!(o, Outcome::Same { .. })),
        count(|o| matches!(o, Outcome::Safe { .. })),
        count(|o| matches!(o, Outcome::Unsafe { .. })),
        count(|o| matches!(o, Outcome::Failed { .. })),
    );
    for c in &e.compositions {
        if let Outcome::Unsafe { .. } = &c.outcome {
            println!("unsafe: {}: {}", c.name, explore::unsafe_cause(&c.outcome));
        }
    }
    println!("Pareto front, slowdown against battery: {}", e.pareto_battery.join(", "));
    for name in &e.pareto_battery {
        let Some(c) = e.compositions.iter().find(|c| &c.name == name) else { continue };
        if let Outcome::Safe { slowdown_gmean, battery_supercap_mm3, .. } = &c.outcome {
            let rec = e.front_recovery_1tib.get(name).map_or("not measured".into(), explore::FrontRecovery::text);
            println!(
                "  {name}{}: slowdown {}, battery {battery_supercap_mm3:.3} mm3, recovery of 1 TiB {rec}",
                if c.papers_own { " (a paper's own)" } else { " (no paper evaluated it)" },
                slowdown_gmean.map_or("n/a".into(), |v| format!("{v:.3}x"))
            );
        }
    }
    println!("explore: {:.0} s; report: {}", start.elapsed().as_secs_f64(), out.join("explore.md").display());
    Ok(ExitCode::SUCCESS)
}
