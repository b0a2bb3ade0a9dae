use super::SimArgs;
use anyhow::{anyhow, Result};
use spmsim::oracle::{CrashCheck, CrashPoints, CrashReport};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CheckCrashArgs {
    #[command(flatten)]
    pub sim: SimArgs,
    /// `all`, or a number of crash points sampled with the seed.
    #[arg(long, default_value = "all")]
    pub crash_points: String,
    /// List at most this many violations in full (all are counted).
    #[arg(long, default_value_t = 200)]
    pub max_listed: usize,
    #[arg(long)]
    pub json: bool,
}

pub fn check(a: &CheckCrashArgs) -> Result<CrashReport> {
    let (cfg, w, events) = a.sim.load()?;
    let points: CrashPoints = a.crash_points.parse().map_err(|e: String| anyhow!(e))?;
    let c = CrashCheck { cfg: &cfg, workload_name: w.name(), events, ops: a.sim.ops, seed: a.sim.seed, points, max_listed: a.max_listed };
    c.run().map_err(|e| anyhow!(e))
}

pub fn run(a: CheckCrashArgs) -> Result<ExitCode> {
    let rep = check(&a)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rep)?);
    } else {
        println!("scheme {}  workload {}  ops {}  events {}  crash points {}", rep.scheme, rep.workload, rep.ops, rep.events, rep.crash_points);
        println!("violations {} at {} crash points; recovery failures {}; by check {:?}", rep.violations, rep.violating_crash_points, rep.recovery_failures, rep.violations_by_check);
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
    }
    Ok(ExitCode::SUCCESS)
}
