//! `spmsim plan`: a designer's constraints answered with the safe schemes
//! that meet them, ranked by slowdown, over what `compare` measured (run
//! here, or read from an earlier run's directory).

use anyhow::{anyhow, Context, Result};
use spmsim::compare::{self, plan, Options};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct PlanArgs {
    /// An earlier `spmsim compare` output directory to answer over; without
    /// it, compare runs first (into OUT/compare).
    #[arg(long, conflicts_with = "explore")]
    pub from: Option<PathBuf>,
    /// An `spmsim explore` (or `compare --explore`) output directory: answer
    /// over its safe compositions, measuring the recoveries the answer needs.
    #[arg(long)]
    pub explore: Option<PathBuf>,
    /// The compare run's workloads, comma-separated (default its --quick set).
    #[arg(long, value_delimiter = ',')]
    pub workloads: Vec<String>,
    /// The compare run's presets, comma-separated (default every scheme).
    #[arg(long, value_delimiter = ',')]
    pub schemes: Vec<String>,
    /// Instructions per timing run of the compare run (default 1 M).
    #[arg(long, value_parser = crate::numbers::whole(1, u64::MAX), allow_negative_numbers = true)]
    pub instructions: Option<u64>,
    #[arg(long, default_value_t = 1, value_parser = crate::numbers::whole(0, u64::MAX), allow_negative_numbers = true)]
    pub seed: u64,
    /// At most this battery volume, mm3 of SuperCap.
    #[arg(long, value_parser = crate::numbers::finite_non_negative, allow_hyphen_values = true)]
    pub battery_mm3: Option<f64>,
    /// At most this battery energy, microjoules.
    #[arg(long, value_parser = crate::numbers::finite_non_negative, allow_hyphen_values = true)]
    pub battery_uj: Option<f64>,
    /// No battery beyond ADR: the battery drains the WPQ alone.
    #[arg(long)]
    pub adr_only: bool,
    /// At most this recovery time, seconds, at --recovery-at.
    #[arg(long, value_parser = crate::numbers::finite_non_negative, allow_hyphen_values = true)]
    pub recovery_s: Option<f64>,
    /// The memory size the recovery bound is at: 16GiB or 1TiB.
    #[arg(long, default_value = "1TiB")]
    pub recovery_at: String,
    /// At most this many bytes of on-chip non-volatile state.
    #[arg(long, value_parser = crate::numbers::whole(0, u64::MAX), allow_negative_numbers = true)]
    pub onchip_nv_bytes: Option<u64>,
    /// At most this many NVM writes per kilo-instruction (endurance).
    #[arg(long, value_parser = crate::numbers::finite_non_negative, allow_hyphen_values = true)]
    pub writes_pki: Option<f64>,
    #[arg(long, default_value = "results/plan")]
    pub out: PathBuf,
}

pub fn run(a: PlanArgs) -> Result<ExitCode> {
    let c = plan::Constraints {
        battery_mm3: a.battery_mm3,
        battery_uj: a.battery_uj,
        recovery_s: a.recovery_s,
        recovery_memory: a.recovery_at.clone(),
        onchip_nv_bytes: a.onchip_nv_bytes,
        writes_pki: a.writes_pki,
        adr_only: a.adr_only,
    };
    // Before minutes of compare runs or recoveries, not after.
    plan::check(&c).map_err(|e| anyhow!("plan: {e}"))?;
    if let Some(dir) = &a.explore {
        return run_explored(&a, &c, dir);
    }
    let (doc, source) = match &a.from {
        Some(dir) => {
            let path = dir.join("results.json");
            let text = std::fs::read_to_string(&path).with_context(|| format!("plan --from: {}", path.display()))?;
            let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| anyhow!("plan --from: {}: {e}", path.display()))?;
            (doc, format!("`{}`", path.display()))
        }
        None => {
            let opts = Options {
                quick: true,
                instructions: a.instructions,
                seed: a.seed,
                only: a.schemes.clone(),
                workloads: a.workloads.clone(),
                ops: None,
                recovery: true,
                attacks: false,
                paper_machine: false,
                models: Vec::new(),
                crash: true,
                fronts: None,
                adr_batteries: false,
            };
            compare::selected(&opts).map_err(|e| anyhow!(e))?;
            let programs = opts.programs();
            if !programs.is_empty() {
                super::reproduce::recorded_named(
                    &programs,
                    spmsim::reproduce::grid::recording_for(compare::PROGRAM_WARMUP, opts.instructions()),
                    "plan's programs",
                )?;
            }
            let bar = crate::progress::Progress::new("plan: compare", "steps", 0);
            let steps = std::sync::atomic::AtomicU64::new(0);
            let cmp = compare::run(&opts, &|done, total, what| {
                steps.store(total as u64, std::sync::atomic::Ordering::Relaxed);
                bar.update(done as u64, total as u64, what)
            })
            .map_err(|e| anyhow!(e))?;
            bar.finish(steps.into_inner());
            let dir = a.out.join("compare");
            compare::report::write(&cmp, &dir).map_err(|e| anyhow!(e))?;
            (serde_json::to_value(&cmp)?, format!("a compare run of {} workloads (`{}`)", cmp.workloads.len(), dir.display()))
        }
    };
    let p = plan::plan(&doc, &c).map_err(|e| anyhow!("plan: {source}: {e}"))?;
    let md = plan::markdown(&p, &source);
    let page = plan::page_doc(&doc, &p);
    write(&a.out, &md, serde_json::to_value(&p)?, &page)
}

/// `plan --explore DIR`: over an exploration's compositions.
fn run_explored(a: &PlanArgs, c: &plan::Constraints, dir: &std::path::Path) -> Result<ExitCode> {
    let path = dir.join("explore.json");
    let text = std::fs::read_to_string(&path).with_context(|| format!("plan --explore: {}", path.display()))?;
    let e: compare::explore::Exploration =
        serde_json::from_str(&text).map_err(|e| anyhow!("plan --explore: {}: not an exploration: {e}", path.display()))?;
    e.check().map_err(|e| anyhow!("plan --explore: {}: {e}", path.display()))?;
    let bar = crate::progress::Progress::new("plan: recoveries", "recoveries", 0);
    let done = std::sync::atomic::AtomicU64::new(0);
    let x = compare::plan_explored::plan(&e, c, &|d, total, what| {
        done.store(d as u64, std::sync::atomic::Ordering::Relaxed);
        bar.update(d as u64, total as u64, what)
    })
    .map_err(|e| anyhow!("plan --explore {}: {e}", dir.display()))?;
    bar.finish(done.into_inner());
    let md = compare::plan_explored::markdown(&x, &e, &format!("`{}`", path.display()));
    let mut json = serde_json::to_value(&x.plan)?;
    json["explored"] = serde_json::to_value(&x.counts)?;
    write(&a.out, &md, json, &compare::plan_explored::page_doc(&x, &e))
}

/// plan.md, plan.json and the page's results.json into `out`, then the page.
fn write(out: &std::path::Path, md: &str, plan: serde_json::Value, page: &serde_json::Value) -> Result<ExitCode> {
    spmsim::reproduce::report::write_files(
        out,
        &[
            ("plan.md".into(), md.to_string()),
            ("plan.json".into(), serde_json::to_string_pretty(&plan)?),
            ("results.json".into(), serde_json::to_string_pretty(page)?),
        ],
    )
    .map_err(|e| anyhow!(e))?;
    print!("{md}");
    match super::python::report(out) {
        Ok(()) => println!("page with plots: {}", out.join("report.html").display()),
        Err(e) => eprintln!("note: no report.html: {e}"),
    }
    Ok(ExitCode::SUCCESS)
}
