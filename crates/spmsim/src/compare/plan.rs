//! `spmsim plan`: a designer's constraints over what `compare` measured,
//! answered with the safe schemes (under each persistency model) that
//! meet them, ranked by slowdown, with the Pareto fronts among them.
//!
//! ```text
//!  compare's results.json (run by plan, or read from --from)
//!    every row of every persistency model: secure, crash-checked safe
//!      |  each constraint: battery volume or energy, recovery time at a
//!      |  memory size, on-chip NV bytes, NVM writes per kilo-instruction,
//!      |  no battery beyond ADR (the WPQ alone)
//!      v
//!  answers (ranked by slowdown), the rows that miss with every reason,
//!  the Pareto fronts over the answers; plan.md, plan.json, and a
//!  compare-shaped results.json for the page with the plots
//! ```
//! The table is built from `serde_json::Value` so that a results.json
//! written by an earlier run is read the same way as one just measured.

use serde::Serialize;
use serde_json::Value;
use std::fmt::Write as _;

/// What a designer asks for; `None`: no bound.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Constraints {
    /// Battery volume, SuperCap, mm3 (SecPB's battery model).
    pub battery_mm3: Option<f64>,
    /// Battery energy, microjoules.
    pub battery_uj: Option<f64>,
    /// Recovery time, seconds, at [`Self::recovery_memory`].
    pub recovery_s: Option<f64>,
    /// The memory size recovery is bounded at: `16GiB` or `1TiB`.
    pub recovery_memory: String,
    /// On-chip non-volatile state, bytes.
    pub onchip_nv_bytes: Option<u64>,
    /// NVM writes per kilo-instruction (all kinds), for endurance.
    pub writes_pki: Option<f64>,
    /// No battery beyond ADR's: the battery drains the WPQ alone.
    pub adr_only: bool,
}

/// One candidate: a scheme under one persistency model.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    /// `preset` under strict, else `preset@model`.
    pub name: String,
    pub preset: String,
    pub model: String,
    pub paper: String,
    pub front: String,
    pub slowdown: Option<f64>,
    pub battery_mm3: Option<f64>,
    pub battery_uj: Option<f64>,
    pub recovery_s: Option<f64>,
    pub onchip_nv_bytes: Option<u64>,
    pub writes_pki: Option<f64>,
    /// Why it is not an answer (empty: it is one).
    pub misses: Vec<String>,
}

/// The planner's answer.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub kind: &'static str,
    pub constraints: Constraints,
    /// Meeting every constraint, lowest slowdown first.
    pub answers: Vec<Candidate>,
    /// Every other candidate, with what it misses.
    pub rejected: Vec<Candidate>,
    /// Pareto fronts over the answers: slowdown against battery volume and
    /// against recovery time.
    pub pareto_battery: Vec<String>,
    pub pareto_recovery: Vec<String>,
}

fn f(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// A slowdown: a finite number above 0.
pub(crate) fn is_slowdown(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// A measured quantity (a volume, an energy, a time, a rate): a finite
/// number at least 0.
pub(crate) fn is_quantity(v: f64) -> bool {
    v.is_finite() && v >= 0.0
}

/// The numbers of a row of compare's results.json that the plan reads,
/// each absent or null (not measured) or in its range: a hand-edited file
/// with a negative slowdown would otherwise rank first. `at` names the row.
fn check_row(row: &Value, at: &str) -> Result<(), String> {
    let number = |key: String, v: &Value, what: &str, ok: fn(f64) -> bool| match v {
        Value::Null => Ok(()),
        v if v.as_f64().is_some_and(ok) => Ok(()),
        v => Err(format!("{at}: `{key}` is {v}, not {what}")),
    };
    let slowdown = "a slowdown (a finite number above 0)";
    let quantity = "a measured quantity (a finite number at least 0)";
    number("slowdown_gmean".into(), &row["slowdown_gmean"], slowdown, is_slowdown)?;
    for (w, v) in row["slowdown"].as_object().into_iter().flatten() {
        number(format!("slowdown.{w}"), v, slowdown, is_slowdown)?;
    }
    for key in ["supercap_mm3", "energy_uj"] {
        number(format!("battery.{key}"), &row["battery"][key], quantity, is_quantity)?;
    }
    for (table, values) in [("recovery_seconds", &row["recovery_seconds"]), ("writes_pki", &row["writes_pki"])] {
        for (k, v) in values.as_object().into_iter().flatten() {
            number(format!("{table}.{k}"), v, quantity, is_quantity)?;
        }
    }
    for (key, v) in [("onchip_nv_bytes", &row["onchip_nv_bytes"]), ("crash.violations", &row["crash"]["violations"])] {
        if !v.is_null() && v.as_u64().is_none() {
            return Err(format!("{at}: `{key}` is {v}, not a count (a whole number at least 0)"));
        }
    }
    Ok(())
}

/// A row of compare's results.json (or a composition's, shaped alike)
/// under `model` as a candidate named `name`.
pub(crate) fn candidate(row: &Value, name: String, model: &str, c: &Constraints) -> Candidate {
    let preset = row["preset"].as_str().unwrap_or("?").to_string();
    let mut k = Candidate {
        name,
        preset,
        model: model.to_string(),
        paper: row["paper"].as_str().unwrap_or("-").to_string(),
        front: row["front"].as_str().unwrap_or("-").to_string(),
        slowdown: f(&row["slowdown_gmean"]),
        battery_mm3: f(&row["battery"]["supercap_mm3"]),
        battery_uj: f(&row["battery"]["energy_uj"]),
        recovery_s: f(&row["recovery_seconds"][&c.recovery_memory]),
        onchip_nv_bytes: row["onchip_nv_bytes"].as_u64(),
        writes_pki: f(&row["writes_pki"]["total"]),
        misses: Vec::new(),
    };
    let mut miss = |why: String| k.misses.push(why);
    if row["secure"].as_bool() != Some(true) {
        miss("insecure (a baseline)".into());
    }
    match row["crash"]["violations"].as_u64() {
        None => miss("not crash-checked".into()),
        Some(0) => {}
        Some(n) => miss(format!("unsafe: the crash oracle found {n} violations")),
    }
    if k.slowdown.is_none() {
        miss("no slowdown measured".into());
    }
    let mut bound = |what: &str, v: Option<f64>, max: Option<f64>, unit: &str| {
        if let Some(max) = max {
            match v {
                None => miss(format!("{what} not measured")),
                Some(v) if v > max => miss(format!("{what} {v:.4} {unit} > {max} {unit}")),
                _ => {}
            }
        }
    };
    bound("battery", k.battery_mm3, c.battery_mm3, "mm3");
    bound("battery energy", k.battery_uj, c.battery_uj, "uJ");
    bound(&format!("recovery at {}", c.recovery_memory), k.recovery_s, c.recovery_s, "s");
    bound("on-chip NV state", k.onchip_nv_bytes.map(|b| b as f64), c.onchip_nv_bytes.map(|b| b as f64), "B");
    bound("NVM writes per kilo-instruction", k.writes_pki, c.writes_pki, "");
    if c.adr_only {
        let parts = row["battery"]["parts"].as_array().cloned().unwrap_or_default();
        let beyond: Vec<String> =
            parts.iter().filter_map(|p| p["what"].as_str()).filter(|w| !w.starts_with("WPQ")).map(str::to_string).collect();
        if !beyond.is_empty() {
            miss(format!("a battery beyond ADR: {}", beyond.join(", ")));
        }
    }
    k
}

/// The names of the candidates no other beats on both slowdown and `x`.
fn front(answers: &[Candidate], x: impl Fn(&Candidate) -> Option<f64>) -> Vec<String> {
    let pts: Vec<(&str, f64, f64)> = answers.iter().filter_map(|a| Some((a.name.as_str(), x(a)?, a.slowdown?))).collect();
    super::report::front(&pts)
}

/// Answer `c` over compare's results `doc`: every row of every model it
/// gives (or the strict table alone, from a run before the models).
pub fn plan(doc: &Value, c: &Constraints) -> Result<Plan, String> {
    if doc["kind"] != "compare" {
        return Err("not compare's results.json (its `kind` is not \"compare\")".into());
    }
    check(c)?;
    let named = |row: &Value, model: &str| {
        let preset = row["preset"].as_str().unwrap_or("?");
        if model == "strict" {
            preset.to_string()
        } else {
            format!("{preset}@{model}")
        }
    };
    let mut all = Vec::new();
    let at = |table: String, i: usize, row: &Value| format!("{table}[{i}] (`{}`)", row["preset"].as_str().unwrap_or("?"));
    match doc["models"].as_array().filter(|m| !m.is_empty()) {
        Some(models) => {
            for (j, m) in models.iter().enumerate() {
                let model = m["model"].as_str().unwrap_or("?");
                for (i, row) in m["schemes"].as_array().into_iter().flatten().enumerate() {
                    check_row(row, &at(format!("models[{j}].schemes"), i, row))?;
                    all.push(candidate(row, named(row, model), model, c));
                }
            }
        }
        None => {
            for (i, row) in doc["schemes"].as_array().into_iter().flatten().enumerate() {
                check_row(row, &at("schemes".into(), i, row))?;
                all.push(candidate(row, named(row, "strict"), "strict", c));
            }
        }
    }
    // A scheme whose relaxed-model row is its strict one appears once.
    let mut seen: Vec<(String, Option<u64>, Option<u64>)> = Vec::new();
    all.retain(|k| {
        let key = (k.preset.clone(), k.slowdown.map(f64::to_bits), k.writes_pki.map(f64::to_bits));
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    Ok(ranked(all, c))
}

/// Every bound is a number at least 0 (a NaN bound would admit every
/// scheme, a negative one none), and `--recovery-at` names a size compare
/// recovers at.
pub fn check(c: &Constraints) -> Result<(), String> {
    for (flag, v) in
        [("--battery-mm3", c.battery_mm3), ("--battery-uj", c.battery_uj), ("--recovery-s", c.recovery_s), ("--writes-pki", c.writes_pki)]
    {
        if let Some(v) = v.filter(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(format!("{flag} must be a finite number at least 0, got {v}"));
        }
    }
    match super::RECOVERY_MEMORY.iter().any(|(l, _)| *l == c.recovery_memory) {
        true => Ok(()),
        false => Err(format!("--recovery-at must be 16GiB or 1TiB (the sizes compare recovers), got `{}`", c.recovery_memory)),
    }
}

/// The candidates that miss nothing, lowest slowdown first, the others,
/// and the Pareto fronts over the answers.
pub(crate) fn ranked(all: Vec<Candidate>, c: &Constraints) -> Plan {
    let (mut answers, rejected): (Vec<Candidate>, Vec<Candidate>) = all.into_iter().partition(|k| k.misses.is_empty());
    answers.sort_by(|a, b| a.slowdown.unwrap_or(f64::INFINITY).total_cmp(&b.slowdown.unwrap_or(f64::INFINITY)).then(a.name.cmp(&b.name)));
    Plan {
        kind: "plan",
        pareto_battery: front(&answers, |a| a.battery_mm3),
        pareto_recovery: front(&answers, |a| a.recovery_s),
        constraints: c.clone(),
        answers,
        rejected,
    }
}

/// The constraints in words.
pub fn asked(c: &Constraints) -> String {
    let mut parts = Vec::new();
    if let Some(v) = c.battery_mm3 {
        parts.push(format!("battery at most {v} mm3 of SuperCap"));
    }
    if let Some(v) = c.battery_uj {
        parts.push(format!("battery energy at most {v} uJ"));
    }
    if c.adr_only {
        parts.push("no battery beyond ADR (the WPQ alone)".into());
    }
    if let Some(v) = c.recovery_s {
        parts.push(format!("recovery of {} in at most {v} s", c.recovery_memory));
    }
    if let Some(v) = c.onchip_nv_bytes {
        parts.push(format!("at most {v} B of on-chip NV state"));
    }
    if let Some(v) = c.writes_pki {
        parts.push(format!("at most {v} NVM writes per kilo-instruction"));
    }
    if parts.is_empty() {
        "no constraint".into()
    } else {
        parts.join("; ")
    }
}

/// plan.md over a compare run.
pub fn markdown(p: &Plan, source: &str) -> String {
    markdown_over(
        p,
        &format!("Over {source}: every secure scheme under each persistency model compare ran, crash-checked safe, meeting every constraint; lowest slowdown first."),
    )
}

/// plan.md, `over` saying what was planned over.
pub(crate) fn markdown_over(p: &Plan, over: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# `spmsim plan`: {}\n", asked(&p.constraints));
    let _ = writeln!(s, "{over}\n");
    let opt = |v: Option<f64>, d: usize| v.map_or("n/a".to_string(), |v| format!("{v:.d$}"));
    let _ = writeln!(
        s,
        "| rank | scheme (model) | paper | front | slowdown | battery mm3 | recovery {} s | on-chip NV B | writes/ki |",
        p.constraints.recovery_memory
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
    for (i, a) in p.answers.iter().enumerate() {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {}x | {} | {} | {} | {} |",
            i + 1,
            a.name,
            a.paper,
            a.front,
            opt(a.slowdown, 3),
            opt(a.battery_mm3, 3),
            opt(a.recovery_s, 4),
            a.onchip_nv_bytes.map_or("n/a".into(), |b| b.to_string()),
            opt(a.writes_pki, 1)
        );
    }
    if p.answers.is_empty() {
        let _ = writeln!(s, "\nNo scheme meets every constraint.");
    }
    let _ = writeln!(s, "\n- Pareto front of slowdown against battery volume: {}", p.pareto_battery.join(", "));
    let _ = writeln!(s, "- Pareto front of slowdown against recovery time: {}", p.pareto_recovery.join(", "));
    let _ = writeln!(s, "\n## What the others miss\n");
    for r in &p.rejected {
        let _ = writeln!(s, "- {}: {}", r.name, r.misses.join("; "));
    }
    s
}

/// A compare-shaped results.json of the answers (their rows, renamed by
/// model, and the fronts), so that the compare page draws them.
pub fn page_doc(doc: &Value, p: &Plan) -> Value {
    page(doc, answer_rows(doc, p), p)
}

/// The answers' rows of compare's results `doc`, each named as its answer.
fn answer_rows(doc: &Value, p: &Plan) -> Vec<Value> {
    let mut rows = Vec::new();
    for a in &p.answers {
        let from = match doc["models"].as_array().filter(|m| !m.is_empty()) {
            Some(models) => models.iter().find(|m| m["model"] == a.model.as_str()).map(|m| m["schemes"].clone()),
            None => Some(doc["schemes"].clone()),
        };
        if let Some(row) = from.and_then(|rs| rs.as_array().and_then(|rs| rs.iter().find(|r| r["preset"] == a.preset.as_str()).cloned())) {
            let mut row = row;
            row["preset"] = Value::String(a.name.clone());
            rows.push(row);
        }
    }
    rows
}

/// The page's results.json: `rows` (the answers'), the fronts, and the
/// machine and workloads of `doc` (compare's results or an exploration).
pub(crate) fn page(doc: &Value, rows: Vec<Value>, p: &Plan) -> Value {
    serde_json::json!({
        "kind": "compare",
        "title": format!("spmsim plan: {}", asked(&p.constraints)),
        "quick": doc["quick"],
        "common_machine": doc["common_machine"],
        "workloads": doc["workloads"],
        "schemes": rows,
        "best": [],
        // The page's recovery axis is 1 TiB's; at another size it draws
        // its own front.
        "pareto": if p.constraints.recovery_memory == "1TiB" {
            serde_json::json!({ "battery": p.pareto_battery, "recovery": p.pareto_recovery })
        } else {
            serde_json::json!({ "battery": p.pareto_battery })
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn asking(f: impl FnOnce(&mut Constraints)) -> Constraints {
        let mut c = Constraints { recovery_memory: "1TiB".into(), ..Default::default() };
        f(&mut c);
        c
    }

    #[test]
    fn a_bound_that_is_no_number_at_least_zero_is_refused_naming_its_flag() {
        assert!(check(&asking(|c| c.battery_mm3 = Some(0.0))).is_ok());
        for (flag, c) in [
            ("--battery-mm3", asking(|c| c.battery_mm3 = Some(f64::NAN))),
            ("--battery-uj", asking(|c| c.battery_uj = Some(-1.0))),
            ("--recovery-s", asking(|c| c.recovery_s = Some(f64::INFINITY))),
            ("--writes-pki", asking(|c| c.writes_pki = Some(f64::NEG_INFINITY))),
        ] {
            let e = check(&c).unwrap_err();
            assert!(e.starts_with(flag) && e.contains("finite number at least 0"), "{e}");
        }
    }

    /// compare's results.json with one safe secure row, `edit`ed by hand.
    fn results(edit: impl FnOnce(&mut Value)) -> Value {
        let mut row = json!({
            "preset": "sp", "paper": "SecPB", "front": "memory-controller", "secure": true,
            "slowdown_gmean": 1.5, "slowdown": {"btree": 1.5},
            "battery": {"supercap_mm3": 0.06, "energy_uj": 1.0, "parts": []},
            "recovery_seconds": {"16GiB": 0.5, "1TiB": 30.0}, "onchip_nv_bytes": 8,
            "writes_pki": {"total": 40.0}, "crash": {"violations": 0},
        });
        edit(&mut row);
        json!({"kind": "compare", "models": [{"model": "strict", "schemes": [row]}]})
    }

    #[test]
    fn a_hand_edited_result_out_of_range_is_refused_naming_its_field() {
        let c = asking(|_| {});
        let p = plan(&results(|_| {}), &c).unwrap();
        assert_eq!(p.answers.len(), 1, "the unedited row is an answer");
        for (edit, field) in [
            (json!({"slowdown_gmean": -3.0}), "`slowdown_gmean` is -3.0"),
            (json!({"slowdown": {"btree": 0.0}}), "`slowdown.btree` is 0.0"),
            (json!({"battery": {"supercap_mm3": -1.0}}), "`battery.supercap_mm3` is -1.0"),
            (json!({"recovery_seconds": {"1TiB": -5}}), "`recovery_seconds.1TiB` is -5"),
            (json!({"writes_pki": {"total": "many"}}), "`writes_pki.total` is \"many\""),
            (json!({"onchip_nv_bytes": -8}), "`onchip_nv_bytes` is -8"),
            (json!({"crash": {"violations": 0.5}}), "`crash.violations` is 0.5"),
        ] {
            let doc = results(|row| {
                for (k, v) in edit.as_object().unwrap() {
                    row[k] = v.clone();
                }
            });
            let e = plan(&doc, &c).unwrap_err();
            assert!(e.starts_with("models[0].schemes[0] (`sp`): ") && e.contains(field), "{e}");
        }
        // Not measured (null) is no error: the row misses the bound instead.
        let doc = results(|row| row["recovery_seconds"]["1TiB"] = Value::Null);
        let p = plan(&doc, &asking(|c| c.recovery_s = Some(100.0))).unwrap();
        assert_eq!(p.rejected[0].misses, ["recovery at 1TiB not measured"]);
    }
}
