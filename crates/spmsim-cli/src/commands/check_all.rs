use super::attack::attack;
use super::check::{check, CheckCrashArgs};
use super::SimArgs;
use crate::progress::Progress;
use anyhow::{anyhow, Result};
use spmsim::config::{list_presets, load_preset};
use spmsim::verify::image::{crash_image_as_expected, verify_crash_image};
use spmsim::workload::WorkloadKind;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = "Exit codes: 0 every preset as expected, 1 some preset not as expected, 2 bad input or error.")]
pub struct CheckAllArgs {
    /// Transactions of array-swap for the crash oracle.
    #[arg(long, default_value_t = 300)]
    pub crash_ops: u64,
    /// Stores of random-writes for the attack harness and the crash image.
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
    let presets = list_presets();
    let bar = Progress::new("check-all", "presets", presets.len() as u64);
    for (done, p) in presets.iter().enumerate() {
        let cfg = load_preset(p, &[])?;
        let sim = |workload: &str, ops| SimArgs { scheme: p.clone(), workload: workload.into(), ops, seed: a.seed, overrides: vec![] };
        // The crash oracle takes most of a preset's time (about nine tenths
        // on the defaults); the share only shapes the ETA.
        let step = |part: f64, what: String| bar.update_partial(done as u64, part, presets.len() as u64, &format!("{p}: {what}"));
        let args = CheckCrashArgs {
            sim: sim("array-swap", a.crash_ops),
            crash_points: "all".into(),
            max_listed: 3,
            guarantee: None,
            reads: "incremental".into(),
            json: true,
        };
        let (_, crash) = check(&args, &|d, t| step(0.9 * d as f64 / t.max(1) as f64, format!("crash points {d}/{t}")))?;
        step(0.9, "attacks".into());
        // On a machine with persistent regions (Triad-NVM), random-writes
        // has no non-persistent data to lose or reuse pads for; array-swap's
        // transactions give the program its stack frames there.
        let stores = if cfg.memory.persistent_regions.is_empty() { WorkloadKind::RandomWrites } else { WorkloadKind::ArraySwap };
        let (_, att) = attack(&sim(&stores.name(), a.attack_ops))?;
        step(0.95, "crash image".into());
        let events = stores.generate_placed(a.attack_ops, a.seed, spmsim::workload::Placement::of(&cfg)).map_err(|e| anyhow!(e))?;
        let image = verify_crash_image(&cfg, &events, a.seed).map_err(|e| anyhow!("{p}: crash image: {e}"))?;
        let expected = if cfg.expect_crash_violations { "violations" } else { "consistent" };
        let crash_ok = crash.as_expected(&cfg);
        let attacks_ok = att.as_expected(&cfg);
        let image_ok = crash_image_as_expected(&cfg, &image);
        let as_expected = crash_ok && attacks_ok && image_ok;
        all_as_expected &= as_expected;
        let detected = att.attacks.iter().filter(|x| x.applicable() && x.detected).count();
        let applicable = att.attacks.iter().filter(|x| x.applicable()).count();
        let checks: Vec<String> = crash.violations_by_check.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        let image_verdict = match (image.ok, &image.recovery) {
            (true, None) => "intact".to_string(),
            (true, Some(_)) => "intact after recovery".to_string(),
            (false, _) => format!("{} failures", image.failures.len()),
        };
        rows.push(vec![
            p.clone(),
            crash.crash_points.to_string(),
            crash.violations.to_string(),
            if checks.is_empty() { "-".into() } else { checks.join(" ") },
            expected.into(),
            if cfg.security.enabled { format!("{detected}/{applicable}") } else { format!("{detected}/{applicable} (insecure)") },
            image_verdict,
            if as_expected { "yes".into() } else { "NO".into() },
        ]);
        json.push(serde_json::json!({"preset": p, "expected": expected, "crash": crash, "attack": att, "crash_image_verify": image, "as_expected": as_expected}));
    }
    bar.finish(presets.len() as u64);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        println!(
            "crash oracle: array-swap, {} transactions, a crash after every event; attacks: random-writes, {} stores (array-swap transactions on machines with persistent regions); crash image: the same, power cut, image verified\n",
            a.crash_ops, a.attack_ops
        );
        print!(
            "{}",
            crate::table::render(
                &["preset", "crash points", "violations", "failed checks", "expected", "attacks detected", "crash image", "as expected"],
                &rows
            )
        );
    }
    Ok(if all_as_expected { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
