use super::SimArgs;
use anyhow::{anyhow, Result};
use spmsim::config::SimConfig;
use spmsim::verify::attack::AttackReport;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(
    after_help = "Exit codes: 0 as expected (a secure configuration detected every applicable attack; an insecure one, security.enabled = false, let some through), 1 not as expected, 2 bad input or error."
)]
pub struct AttackArgs {
    #[command(flatten)]
    pub sim: SimArgs,
    #[arg(long)]
    pub json: bool,
}

/// The attack run, with the configuration it ran (to judge the report).
pub fn attack(sim: &SimArgs) -> Result<(SimConfig, AttackReport)> {
    let (cfg, w, events) = sim.load()?;
    let rep = spmsim::verify::attack::run(&cfg, &w.name(), &events, sim.seed).map_err(|e| anyhow!(e))?;
    Ok((cfg, rep))
}

/// One line saying whether the report is what the configuration expects.
fn verdict(cfg: &SimConfig, rep: &AttackReport) -> String {
    if cfg.security.enabled && cfg.expect_undetected_attacks {
        return match rep.as_expected(cfg) {
            true => format!("as expected: {} attacks undetected on an ablation that leaves a check out (expect_undetected_attacks = true)", rep.undetected),
            false => "NOT AS EXPECTED: an ablation that leaves a check out (expect_undetected_attacks = true) let no attack through, or raised a false alarm".into(),
        };
    }
    match (cfg.security.enabled, rep.as_expected(cfg)) {
        (true, true) => "as expected: every applicable attack detected".into(),
        (true, false) => format!("NOT AS EXPECTED: {} applicable attacks undetected on a secure configuration", rep.undetected),
        (false, true) => format!("as expected: {} attacks undetected with security disabled (an insecure control)", rep.undetected),
        (false, false) => "NOT AS EXPECTED: every attack detected with security disabled, so the harness shows nothing".into(),
    }
}

pub fn run(a: AttackArgs) -> Result<ExitCode> {
    let (cfg, rep) = attack(&a.sim)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rep)?);
    } else {
        println!("scheme {}  workload {}", rep.scheme, rep.workload);
        let rows: Vec<Vec<String>> = rep
            .attacks
            .iter()
            .map(|x| {
                let status = match (&x.ruled_out, &x.skipped, x.detected) {
                    (Some(_), _, _) => "ruled out",
                    (None, Some(_), _) => "skipped",
                    (None, None, true) => "detected",
                    (None, None, false) => "UNDETECTED",
                };
                let why = x.ruled_out.clone().or_else(|| x.skipped.clone()).unwrap_or_else(|| x.where_.clone());
                vec![x.name.clone(), status.to_string(), why]
            })
            .collect();
        print!("{}", crate::table::render(&["attack", "result", "where"], &rows));
        println!("undetected: {}", rep.undetected);
        println!("{}", verdict(&cfg, &rep));
    }
    // With --json stdout holds the report alone; the verdict goes to stderr.
    if a.json && !rep.as_expected(&cfg) {
        eprintln!("{}", verdict(&cfg, &rep));
    }
    Ok(if rep.as_expected(&cfg) { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
