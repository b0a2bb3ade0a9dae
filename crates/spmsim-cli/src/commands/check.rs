use super::SimArgs;
use crate::progress::Progress;
use anyhow::{anyhow, Result};
use spmsim::config::SimConfig;
use spmsim::verify::oracle::{CrashCheck, CrashPoints, CrashReport, Guarantee, Reads};
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(
    after_help = "Exit codes: 0 as expected (no violation; or, on a control marked expect_crash_violations = true, some), 1 not as expected (violations on a configuration that is not a control, or none on a control), 2 bad input or error."
)]
pub struct CheckCrashArgs {
    #[command(flatten)]
    pub sim: SimArgs,
    /// `all`, or a number of crash points sampled with the seed.
    #[arg(long, default_value = "all")]
    pub crash_points: String,
    /// List at most this many violations in full (all are counted).
    #[arg(long, default_value_t = 200)]
    pub max_listed: usize,
    /// `strict` (every block reads its last store) or `transactional`
    /// (after the undo log's replay, every block reads its value at the
    /// last commit; Secon 3.3). Default: the one the configuration's
    /// persistence.model gives (strict for strict, transactional for epoch
    /// and tep).
    #[arg(long)]
    pub guarantee: Option<String>,
    /// `incremental` (default: at each crash point, read again only the
    /// blocks whose read may have changed; Bonsai Merkle trees) or `full`
    /// (read every checked block at every point). The report is the same.
    #[arg(long, default_value = "incremental")]
    pub reads: String,
    #[arg(long)]
    pub json: bool,
}

/// The crash check, with the configuration it ran (to judge the report);
/// `progress(done, total)` hears of the crash points checked.
pub fn check(a: &CheckCrashArgs, progress: &dyn Fn(u64, u64)) -> Result<(SimConfig, CrashReport)> {
    let (cfg, w, events) = a.sim.load()?;
    let points: CrashPoints = a.crash_points.parse().map_err(|e: String| anyhow!(e))?;
    let guarantee = a.guarantee.as_deref().map(str::parse::<Guarantee>).transpose().map_err(|e| anyhow!(e))?;
    let c = CrashCheck {
        cfg: &cfg,
        workload_name: w.name(),
        events,
        ops: a.sim.ops,
        seed: a.sim.seed,
        points,
        max_listed: a.max_listed,
        guarantee,
    };
    let reads: Reads = a.reads.parse().map_err(|e: String| anyhow!(e))?;
    let rep = c.run_reads(reads, progress).map_err(|e| anyhow!(e))?;
    Ok((cfg, rep))
}

/// One line saying whether the report is what the configuration expects.
fn verdict(cfg: &SimConfig, rep: &CrashReport) -> String {
    match (cfg.expect_crash_violations, rep.violations > 0) {
        (false, false) => "as expected: no violation".into(),
        (false, true) => format!(
            "NOT AS EXPECTED: {} violations on a configuration that is not a control (expect_crash_violations = false)",
            rep.violations
        ),
        (true, true) => format!("as expected: {} violations on a control (expect_crash_violations = true)", rep.violations),
        (true, false) => "NOT AS EXPECTED: a control (expect_crash_violations = true) found no violation, so it shows nothing".into(),
    }
}

pub fn run(a: CheckCrashArgs) -> Result<ExitCode> {
    let bar = Progress::new("check-crash", "crash points", 0);
    let (cfg, rep) = check(&a, &|done, total| bar.update(done, total, ""))?;
    bar.finish(rep.crash_points);
    if a.json {
        // The library leaves a strict report's guarantee out (its bytes stay
        // as they were); the command always says which one it checked.
        let mut v = serde_json::to_value(&rep)?;
        if let Some(o) = v.as_object_mut() {
            o.entry("guarantee").or_insert_with(|| rep.guarantee.name().into());
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "scheme {}  workload {}  ops {}  events {}  crash points {}  guarantee {}",
            rep.scheme,
            rep.workload,
            rep.ops,
            rep.events,
            rep.crash_points,
            rep.guarantee.name()
        );
        let by_check: Vec<String> = rep.violations_by_check.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let by_check = if by_check.is_empty() { "none".to_string() } else { by_check.join(", ") };
        println!(
            "violations {} at {} crash points; recovery failures {}; by check: {by_check}",
            rep.violations, rep.violating_crash_points, rep.recovery_failures
        );
        if let Some(f) = rep.log_replay_failures {
            println!("undo-log replays that failed: {f}");
        }
        if let Some(t) = &rep.tep {
            println!(
                "TEP: {} stores, {} lines flushed ({} log), {} early, {} evictions, {} conflicts, {} overflows; {} paired and {} regular epochs; {} log-ACK waits, {} all-ACK waits, {} unordered data flushes",
                t.stores, t.lines_flushed, t.log_lines_flushed, t.early_flushes, t.evictions, t.conflict_flushes, t.overflow_flushes,
                t.paired_epochs, t.regular_epochs, t.log_ack_waits, t.all_ack_waits, t.unordered_data_flushes
            );
        }
        println!(
            "battery drain (max over points): {} data lines, {} metadata lines, {} WPQ entries, {} AES blocks, {} MACs, {} tree hashes, {} NVM writes",
            rep.drain.max_front_lines, rep.drain.max_metadata_lines, rep.drain.max_wpq_entries, rep.drain.max_aes_blocks, rep.drain.max_macs, rep.drain.max_tree_hashes, rep.drain.max_nvm_writes
        );
        for v in rep.violation_list.iter().take(10) {
            println!("  crash point {} after {}: {} {} ({})", v.crash_point, v.after_event, v.address, v.check, v.detail);
        }
        if rep.violations > 10 {
            println!("  ... (use --json for the list)");
        }
        println!("{}", verdict(&cfg, &rep));
    }
    // With --json stdout holds the report alone; the verdict goes to stderr.
    if a.json && !rep.as_expected(&cfg) {
        eprintln!("{}", verdict(&cfg, &rep));
    }
    Ok(if rep.as_expected(&cfg) { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
