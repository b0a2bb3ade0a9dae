//! `spmsim plan --explore DIR`: a designer's constraints over the
//! compositions an exploration crash-checked, attacked and timed, not only
//! over the papers' presets.
//!
//! ```text
//!  explore.json: every composition and its outcome, the timing runs
//!    safe and secure ---- machine_of: its machine rebuilt from its choices
//!      |                  and checked against the digest explored
//!      |  a compare-shaped row: slowdown and runs (explored), battery and
//!      |  on-chip NV state (from the machine), recovery of 1 TiB (measured
//!      |  for the battery front by explore)
//!      v
//!  every constraint but recovery checked; the recovery at the asked size
//!  is then measured for those that meet all the others and lack it (a
//!  counted recovery, as compare prices it, with explore's operations)
//!      v
//!  answers ranked by slowdown, the Pareto fronts, what the others miss
//!  (an unsafe composition: its first violation)
//! ```

use super::explore::{self, Composition, Exploration, Outcome};
use super::plan::{self, Candidate, Constraints, Plan};
use super::RunRecord;
use crate::config::SimConfig;
use crate::engine::nvm::ByKind;
use crate::reproduce::grid::{self, Progress};
use serde_json::{json, Value};
use std::fmt::Write as _;

/// What became of the exploration's compositions before the constraints.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Counts {
    pub compositions: usize,
    pub refused: usize,
    pub same: usize,
    #[serde(rename = "unsafe")]
    pub unsafe_: usize,
    pub failed: usize,
    pub insecure: usize,
    pub safe: usize,
    /// Recoveries measured by the planner (the exploration measured the
    /// battery front's of 1 TiB).
    pub recoveries_measured: usize,
}

/// The plan over an exploration, its answers' rows for the page, and the
/// counts.
pub struct ExploredPlan {
    pub plan: Plan,
    pub rows: Vec<Value>,
    pub counts: Counts,
}

/// NVM writes per kilo-instruction of `name`'s runs, by kind.
fn writes_pki(runs: &[RunRecord], name: &str) -> Value {
    let mine: Vec<&RunRecord> = runs.iter().filter(|r| r.config == name).collect();
    if mine.is_empty() {
        return json!({});
    }
    let instructions: u64 = mine.iter().map(|r| r.instructions).sum();
    let w = mine.iter().fold(ByKind::default(), |mut a, r| {
        a.add(&r.device_writes);
        a
    });
    let per_k = |x: u64| x as f64 * 1000.0 / instructions.max(1) as f64;
    json!({
        "data": per_k(w.data), "counter": per_k(w.counter), "mac": per_k(w.mac),
        "tree": per_k(w.tree), "recovery": per_k(w.recovery), "total": per_k(w.total()),
    })
}

/// A safe composition as compare's row of a scheme, named by the
/// composition.
fn row(e: &Exploration, c: &Composition, cfg: &SimConfig, ecfg: &crate::battery::EnergyConfig) -> Value {
    let Outcome::Safe { crash, attacks, slowdown_gmean, slowdown, notes, .. } = &c.outcome else {
        unreachable!("rows are made of safe compositions")
    };
    let nv = super::onchip_nv(cfg);
    let recovery: serde_json::Map<String, Value> = super::RECOVERY_MEMORY
        .iter()
        .map(|(l, _)| {
            let s = if *l == "1TiB" { e.front_recovery_1tib.get(&c.name).and_then(|r| r.seconds) } else { None };
            (l.to_string(), json!(s))
        })
        .collect();
    json!({
        "preset": c.name,
        "scheme": c.scheme,
        "paper": if c.papers_own { c.paper.clone() } else { format!("none ({}'s rules)", c.paper) },
        "front": c.front,
        "secure": c.secure,
        "baseline": explore::baseline_name(cfg),
        "notes": notes,
        "slowdown_gmean": slowdown_gmean,
        "slowdown": slowdown,
        "writes_pki": writes_pki(&e.runs, &c.name),
        "battery": crate::battery::domain_estimate(ecfg, cfg),
        "recovery_seconds": recovery,
        "onchip_nv": nv,
        "onchip_nv_bytes": nv.iter().map(|r| r.bytes).sum::<u64>(),
        "attacks": attacks,
        "crash": crash,
    })
}

/// The miss a candidate shows while its recovery is unmeasured.
fn unmeasured(c: &Constraints) -> String {
    format!("recovery at {} not measured", c.recovery_memory)
}

/// Answer `c` over exploration `e`, measuring the recoveries it needs
/// (`progress` after each).
pub fn plan(e: &Exploration, c: &Constraints, progress: Progress) -> Result<ExploredPlan, String> {
    plan::check(c)?;
    e.check()?;
    let ecfg = crate::battery::EnergyConfig::load(&crate::battery::default_energy_path()).map_err(|e| e.to_string())?;
    let mut counts = Counts { compositions: e.compositions.len(), ..Default::default() };
    let mut rows: Vec<(Value, SimConfig, &Composition)> = Vec::new();
    let mut others: Vec<Candidate> = Vec::new();
    let listed = |comp: &Composition, why: String| Candidate {
        name: comp.name.clone(),
        preset: comp.preset.clone(),
        model: comp.model.clone(),
        paper: comp.paper.clone(),
        front: comp.front.clone(),
        slowdown: None,
        battery_mm3: None,
        battery_uj: None,
        recovery_s: None,
        onchip_nv_bytes: None,
        writes_pki: None,
        misses: vec![why],
    };
    for comp in &e.compositions {
        match &comp.outcome {
            Outcome::Refused { .. } => counts.refused += 1,
            Outcome::Same { .. } => counts.same += 1,
            Outcome::Failed { why } => {
                counts.failed += 1;
                others.push(listed(comp, format!("the crash check failed to run: {why}")));
            }
            Outcome::Unsafe { .. } => {
                counts.unsafe_ += 1;
                others.push(listed(comp, format!("unsafe: {}", explore::unsafe_cause(&comp.outcome))));
            }
            Outcome::Safe { .. } if !comp.secure => counts.insecure += 1,
            Outcome::Safe { .. } => {
                counts.safe += 1;
                let cfg = explore::machine_of(comp)?;
                rows.push((row(e, comp, &cfg, &ecfg), cfg, comp));
            }
        }
    }
    let candidates = |rows: &[(Value, SimConfig, &Composition)]| -> Vec<Candidate> {
        rows.iter().map(|(r, _, comp)| plan::candidate(r, comp.name.clone(), &comp.model, c)).collect()
    };
    // The recovery at the asked size, for those that meet every other
    // constraint and lack it.
    if c.recovery_s.is_some() {
        let need: Vec<usize> = candidates(&rows).iter().enumerate().filter(|(_, k)| k.misses == [unmeasured(c)]).map(|(i, _)| i).collect();
        let &(label, bytes) = super::RECOVERY_MEMORY.iter().find(|(l, _)| *l == c.recovery_memory).expect("checked above");
        let measured = grid::run(
            &need,
            progress,
            |&i| format!("{} recovery of {label}", rows[i].2.name),
            |&i| super::recovery_point(&rows[i].1, label, bytes, e.recovery_ops, e.seed).map(|r| r.seconds),
        );
        counts.recoveries_measured = need.len();
        for (&i, m) in need.iter().zip(measured) {
            match m {
                Ok(s) => rows[i].0["recovery_seconds"][label] = json!(s),
                Err(why) => rows[i].0["notes"].as_array_mut().expect("notes").push(json!(format!("recovery at {label}: {why}"))),
            }
        }
    }
    let mut all = candidates(&rows);
    // Why a recovery is unmeasured: it failed, or another miss came first.
    for (k, (r, _, _)) in all.iter_mut().zip(&rows) {
        let failed = r["notes"].as_array().and_then(|n| n.iter().filter_map(Value::as_str).find(|n| n.starts_with("recovery at")));
        let why = match failed {
            Some(failed) => format!("{} ({failed})", unmeasured(c)),
            None => format!("{} (it misses another constraint)", unmeasured(c)),
        };
        for m in k.misses.iter_mut().filter(|m| **m == unmeasured(c)) {
            *m = why.clone();
        }
    }
    all.extend(others);
    let p = plan::ranked(all, c);
    let answer_rows =
        p.answers.iter().filter_map(|a| rows.iter().find(|(_, _, comp)| comp.name == a.name).map(|(r, _, _)| r.clone())).collect();
    Ok(ExploredPlan { plan: p, rows: answer_rows, counts })
}

/// plan.md over exploration `source`.
pub fn markdown(x: &ExploredPlan, e: &Exploration, source: &str) -> String {
    let n = &x.counts;
    let mut over = String::new();
    let _ = write!(
        over,
        "Over the exploration {source} ({} instructions of each of {} workloads, {} crash points of {} operations): every safe secure composition meeting every constraint; lowest slowdown first. Of its {} compositions, {} are refused (the mechanisms cannot realise them), {} the same machine as another, {} unsafe, {} failed to run their check and {} safe insecure baselines; {} safe secure compositions are the candidates. ",
        e.instructions,
        e.workloads.len(),
        e.crash_points,
        e.crash_ops,
        n.compositions,
        n.refused,
        n.same,
        n.unsafe_,
        n.failed,
        n.insecure,
        n.safe
    );
    let _ = write!(
        over,
        "Slowdown and writes per kilo-instruction are the exploration's runs; battery and on-chip NV state come from each composition's machine, rebuilt from its choices and checked against the machine explored; recovery of 1 TiB was measured by the exploration for its battery front, and {} more recoveries of {} were measured here, for the candidates meeting every other constraint ({} operations of the recovery workload before each, as explored).",
        n.recoveries_measured,
        x.plan.constraints.recovery_memory,
        e.recovery_ops
    );
    plan::markdown_over(&x.plan, &over)
}

/// The page's results.json.
pub fn page_doc(x: &ExploredPlan, e: &Exploration) -> Value {
    let meta = json!({ "quick": false, "common_machine": super::machine::DESCRIPTION, "workloads": e.workloads });
    plan::page(&meta, x.rows.clone(), &x.plan)
}
