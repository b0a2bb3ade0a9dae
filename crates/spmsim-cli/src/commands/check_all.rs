use super::attack::attack;
use super::check::{check, CheckCrashArgs};
use super::SimArgs;
use anyhow::Result;
use spmsim::config::{list_presets, load_preset};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CheckAllArgs {
    /// Transactions of array-swap for the crash oracle.
    #[arg(long, default_value_t = 300)]
    pub crash_ops: u64,
    /// Stores of random-writes for the attack harness.
    #[arg(long, default_value_t = 500)]
    pub attack_ops: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: CheckAllArgs) -> Result<ExitCode> {
    let mut rows = Vec::new();
    let mut json = Vec::new();
    let mut all_as_expected = true;
    for p in list_presets() {
        let cfg = load_preset(&p, &[])?;
        let sim = |workload: &str, ops| SimArgs { scheme: p.clone(), workload: workload.into(), ops, seed: a.seed, overrides: vec![] };
        let crash = check(&CheckCrashArgs { sim: sim("array-swap", a.crash_ops), crash_points: "all".into(), max_listed: 3, json: true })?;
        let att = attack(&sim("random-writes", a.attack_ops))?;
        let expected = if cfg.expect_crash_violations { "violations" } else { "consistent" };
        let crash_ok = (crash.violations > 0) == cfg.expect_crash_violations;
        // An insecure preset (bbb) is expected to let attacks through.
        let attacks_ok = if cfg.security.enabled { att.undetected == 0 } else { att.undetected > 0 };
        all_as_expected &= crash_ok && attacks_ok;
        let detected = att.attacks.iter().filter(|x| x.detected).count();
        let applicable = att.attacks.iter().filter(|x| x.ruled_out.is_none()).count();
        let checks: Vec<String> = crash.violations_by_check.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        rows.push(vec![
            p.clone(),
            crash.crash_points.to_string(),
            crash.violations.to_string(),
            if checks.is_empty() { "-".into() } else { checks.join(" ") },
            expected.into(),
            if cfg.security.enabled { format!("{detected}/{applicable}") } else { format!("{detected}/{applicable} (insecure)") },
            if crash_ok && attacks_ok { "yes".into() } else { "NO".into() },
        ]);
        json.push(serde_json::json!({"preset": p, "expected": expected, "crash": crash, "attack": att, "as_expected": crash_ok && attacks_ok}));
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        println!("crash oracle: array-swap, {} transactions, a crash after every event; attacks: random-writes, {} stores\n", a.crash_ops, a.attack_ops);
        print!(
            "{}",
            crate::table::render(&["preset", "crash points", "violations", "failed checks", "expected", "attacks detected", "as expected"], &rows)
        );
    }
    Ok(if all_as_expected { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
