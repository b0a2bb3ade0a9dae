//! `spmsim compare`'s report: the table, the best scheme per criterion, the
//! Pareto fronts (slowdown against recovery time and against battery
//! volume), and `report.md`. The plots are drawn by the Python package
//! (`spmsim report DIR`) from `results.json`.

use super::{Comparison, SchemeRow, RECOVERY_MEMORY, RECOVERY_READ_NS};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The best scheme by one criterion.
#[derive(Clone, Debug, Serialize)]
pub struct Best {
    pub criterion: String,
    pub preset: String,
    pub value: String,
}

/// A metric of a row (None: not measured).
type Metric = fn(&SchemeRow) -> Option<f64>;
/// How a criterion's best value is printed.
type Format = fn(f64) -> String;

/// The slowdown's x-axes of the Pareto fronts, by name.
fn pareto_axes() -> [(&'static str, Metric); 2] {
    [("recovery", |r| r.recovery_seconds.get(RECOVERY_MEMORY[1].0).copied().flatten()), ("battery", |r| Some(r.battery.supercap_mm3))]
}

/// Whether a row competes for the best and the fronts: a secure scheme
/// the crash oracle found no violation in (or did not check).
fn counts(r: &SchemeRow) -> bool {
    r.secure && r.crash.as_ref().is_none_or(|c| c.safe())
}

/// The names of the points `(name, x, slowdown)` no other point beats on
/// both (lower is better on each), in `x`'s order.
pub fn front(pts: &[(&str, f64, f64)]) -> Vec<String> {
    let mut on: Vec<(&str, f64, f64)> =
        pts.iter().filter(|&&(_, a, s)| !pts.iter().any(|&(_, b, t)| b <= a && t <= s && (b < a || t < s))).copied().collect();
    on.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(b.0)));
    on.into_iter().map(|(p, _, _)| p.to_string()).collect()
}

/// The secure schemes no other secure scheme beats on both slowdown and
/// the axis (lower is better on each), by axis, in the axis's order.
pub fn pareto(rows: &[SchemeRow]) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for (axis, x) in pareto_axes() {
        let pts: Vec<(&str, f64, f64)> =
            rows.iter().filter(|r| counts(r)).filter_map(|r| Some((r.preset.as_str(), x(r)?, r.slowdown_gmean?))).collect();
        out.insert(axis.to_string(), front(&pts));
    }
    out
}

/// The best secure scheme by each criterion (lowest value; ties all
/// named), unsafe ones left out.
pub fn best(rows: &[SchemeRow]) -> Vec<Best> {
    let criteria: [(&str, Metric, Format); 7] = [
        ("lowest slowdown (geometric mean)", |r| r.slowdown_gmean, |v| format!("{v:.3}x")),
        ("fewest NVM writes per kilo-instruction", |r| r.writes_pki.get("total").copied(), |v| format!("{v:.2}")),
        ("least energy per kilo-instruction", |r| r.energy_uj_per_kinstr, |v| format!("{v:.0} uJ")),
        ("smallest battery (SuperCap)", |r| Some(r.battery.supercap_mm3), |v| format!("{v:.3} mm3")),
        ("fastest recovery at 1 TiB", |r| r.recovery_seconds.get("1TiB").copied().flatten(), seconds),
        ("least on-chip NV state", |r| Some(r.onchip_nv_bytes as f64), |v| format!("{v:.0} B")),
        (
            "most attacks detected (share of those applicable)",
            |r| r.attacks.as_ref().map(|a| -share(a)),
            |v| format!("{:.0} %", -v * 100.0),
        ),
    ];
    let mut out = Vec::new();
    for (criterion, metric, fmt) in criteria {
        let vals: Vec<(&str, f64)> = rows.iter().filter(|r| counts(r)).filter_map(|r| Some((r.preset.as_str(), metric(r)?))).collect();
        let Some(min) = vals.iter().map(|v| v.1).min_by(f64::total_cmp) else { continue };
        let tied: Vec<&str> = vals.iter().filter(|v| v.1 <= min + min.abs() * 1e-9).map(|v| v.0).collect();
        out.push(Best { criterion: criterion.into(), preset: tied.join(", "), value: fmt(min) });
    }
    out
}

fn share(a: &super::AttackCounts) -> f64 {
    let applicable = a.detected + a.undetected;
    if applicable == 0 {
        0.0
    } else {
        a.detected as f64 / applicable as f64
    }
}

fn seconds(v: f64) -> String {
    match v {
        v if v >= 3600.0 => format!("{:.1} h", v / 3600.0),
        v if v >= 60.0 => format!("{:.1} min", v / 60.0),
        v if v >= 1.0 => format!("{v:.1} s"),
        v => format!("{:.2} ms", v * 1e3),
    }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or("n/a".into(), f)
}

/// The text table of the command line: one row per scheme.
pub fn table_rows(c: &Comparison) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let head = vec![
        "preset",
        "paper",
        "front",
        "slowdown",
        "writes/ki",
        "uJ/ki",
        "battery mm3",
        "rec. 16GiB",
        "rec. 1TiB",
        "on-chip NV B",
        "attacks det/appl (run/rec)",
    ];
    let rows = c
        .schemes
        .iter()
        .map(|r| {
            vec![
                r.preset.clone(),
                r.paper.clone(),
                r.front.clone(),
                opt(r.slowdown_gmean, |v| format!("{v:.3}x")),
                opt(r.writes_pki.get("total").copied(), |v| format!("{v:.2}")),
                opt(r.energy_uj_per_kinstr, |v| format!("{v:.0}")),
                format!("{:.3}", r.battery.supercap_mm3),
                opt(r.recovery_seconds.get("16GiB").copied().flatten(), seconds),
                opt(r.recovery_seconds.get("1TiB").copied().flatten(), seconds),
                r.onchip_nv_bytes.to_string(),
                r.attacks.as_ref().map_or("n/a".into(), |a| {
                    format!("{}/{} ({}/{})", a.detected, a.detected + a.undetected, a.at_run_time, a.at_recovery)
                }),
            ]
        })
        .collect();
    (head, rows)
}

/// The geometric-mean slowdown of every scheme under each persistency
/// model (`n/a`: not measured; `-`: it cannot run under that model).
pub fn model_rows(c: &Comparison) -> (Vec<String>, Vec<Vec<String>>) {
    let mut head = vec!["preset".to_string()];
    head.extend(c.models.iter().map(|m| format!("slowdown, {}", m.model.name())));
    let rows = c
        .schemes
        .iter()
        .map(|r| {
            let mut row = vec![r.preset.clone()];
            for m in &c.models {
                row.push(match m.schemes.iter().find(|x| x.preset == r.preset) {
                    Some(x) => {
                        let unsafe_ = x.crash.as_ref().is_some_and(|c| !c.safe());
                        opt(x.slowdown_gmean, |v| format!("{v:.3}x")) + if unsafe_ { " UNSAFE" } else { "" }
                    }
                    None => "-".into(),
                });
            }
            row
        })
        .collect();
    (head, rows)
}

/// report.md.
pub fn markdown(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Every scheme on one machine (`spmsim compare{}`)\n", if c.quick { " --quick" } else { "" });
    let _ = writeln!(s, "**Common machine.** {}\n", c.common_machine);
    let _ = writeln!(
        s,
        "**Method.** Each scheme runs {} instructions of each workload (seed {}), its cryptography timing-only, against the insecure baseline of its front end on the same machine (`bbb` for a persist buffer, `eadr` for the data caches, `insecure-mc`, a flush per store at the memory controller with security off). Slowdown is cycles per instruction over the baseline's; the mean is geometric. Writes are the PCM's device writes by kind. Energy prices the counted work with SecPB's Table III: each 64 B line between the MC and PCM at {} nJ/B, each pad at AES-192's, each MAC, tree hash or multiset-hash increment at SHA-512's. The battery is SecPB's model over everything the scheme keeps in the battery domain, worst case (the WPQ, which SecPB's tables leave out, is charged to every scheme). Recovery runs {} operations of `{}` on the common machine grown to each memory size, cuts the power, and runs the scheme's own recovery; its counted NVM reads are priced at {} ns and its hashes at the MAC latency, serially; its writes are counted, not priced. On-chip NV state is the registers the scheme keeps without a battery. Attacks are the harness's (`spmsim attack`) on `{}`, real cryptography: detected at run time (a read's check) or by recovery.\n",
        c.instructions,
        c.seed,
        c.line_nj_per_byte,
        c.ops,
        super::RECOVERY_WORKLOAD,
        RECOVERY_READ_NS,
        super::ATTACK_WORKLOAD,
    );
    let _ = writeln!(s, "Workloads: {}.\n", c.workloads.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", "));
    let _ = writeln!(s, "## Best per criterion (secure schemes)\n");
    for b in &c.best {
        let _ = writeln!(s, "- {}: **{}** ({})", b.criterion, b.preset, b.value);
    }
    for (axis, front) in &c.pareto {
        let what = if axis == "recovery" { "recovery time at 1 TiB" } else { "battery volume" };
        let _ = writeln!(s, "- Pareto front of slowdown against {what}: {}", front.join(", "));
    }
    if c.models.len() > 1 || c.models.iter().any(|m| m.model != super::ModelView::Strict) {
        let _ = writeln!(s, "\n## Under each persistency model\n");
        let _ = writeln!(s, "The timing runs again with only the persistency model changed, each against its insecure baseline under the same model, and each scheme is crash-checked under it first ({} crash points of {} operations of `{}`, against the model's promise: the last store of every block under strict, the last commit after the undo log's replay under epoch and TEP; an UNSAFE scheme is left out of the best and the fronts): strict (every store persists in program order), epoch (an epoch's stores persist in any order, and a barrier waits for all of them: the workloads' fences) and each preset's own, the model of its paper's machine (TEP for Secon; epoch for STAR's, Triad-NVM's and Secon's baselines; strict for SecPB's and the multiset hash's). A persist buffer or battery-backed caches hold a store persistent as it enters them, so the relaxed models change nothing there: their strict rows stand. Recovery, battery and attacks are strict's.\n", super::CRASH_POINTS, super::CRASH_OPS, super::ATTACK_WORKLOAD);
        let (head, rows) = model_rows(c);
        let _ = writeln!(s, "| {} |", head.join(" | "));
        let _ = writeln!(s, "|{}|", head.iter().map(|_| "---").collect::<Vec<_>>().join("|"));
        for r in rows {
            let _ = writeln!(s, "| {} |", r.join(" | "));
        }
        let _ = writeln!(s);
        for m in &c.models {
            for b in m.best.iter().filter(|b| b.criterion.starts_with("lowest slowdown")) {
                let _ = writeln!(s, "- {}: lowest slowdown **{}** ({})", m.model.name(), b.preset, b.value);
            }
            for (axis, front) in &m.pareto {
                let what = if axis == "recovery" { "recovery time at 1 TiB" } else { "battery volume" };
                let _ = writeln!(s, "- {}: Pareto front of slowdown against {what}: {}", m.model.name(), front.join(", "));
            }
            for n in &m.not_run {
                let _ = writeln!(s, "- {}: `{}` cannot run: {}", m.model.name(), n.preset, n.left_out.as_deref().unwrap_or_default());
            }
            for r in &m.schemes {
                if let Some(c) = r.crash.as_ref().filter(|c| !c.safe()) {
                    let _ = writeln!(
                        s,
                        "- {}: `{}` is UNSAFE ({} guarantee): {} violations at {} of {} crash points; the first: {}",
                        m.model.name(),
                        r.preset,
                        c.guarantee,
                        c.violations,
                        c.violating_crash_points,
                        c.crash_points,
                        c.first_violation.as_deref().unwrap_or("-")
                    );
                }
            }
            let checked: Vec<&SchemeRow> = m.schemes.iter().filter(|r| r.crash.is_some()).collect();
            if !checked.is_empty() {
                let safe = checked.iter().filter(|r| r.crash.as_ref().is_some_and(|c| c.safe())).count();
                let _ = writeln!(s, "- {}: crash-checked {} schemes, {safe} safe", m.model.name(), checked.len());
            }
        }
    }
    let (head, rows) = table_rows(c);
    let _ = writeln!(s, "\n## The table\n");
    let _ = writeln!(s, "| {} |", head.join(" | "));
    let _ = writeln!(s, "|{}|", head.iter().map(|_| "---").collect::<Vec<_>>().join("|"));
    for r in rows {
        let _ = writeln!(s, "| {} |", r.join(" | "));
    }
    let _ = writeln!(s, "\n## NVM writes per kilo-instruction by kind\n");
    let _ = writeln!(s, "| preset | data | counter | mac | tree | recovery | total |\n|---|---|---|---|---|---|---|");
    for r in &c.schemes {
        let k = |n: &str| opt(r.writes_pki.get(n).copied(), |v| format!("{v:.2}"));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.preset,
            k("data"),
            k("counter"),
            k("mac"),
            k("tree"),
            k("recovery"),
            k("total")
        );
    }
    let _ = writeln!(s, "\n## Slowdown per workload\n");
    let _ = writeln!(s, "| preset | {} | gmean |", c.workloads.join(" | "));
    let _ = writeln!(s, "|---|{}---|", c.workloads.iter().map(|_| "---|").collect::<String>());
    for r in &c.schemes {
        let cells: Vec<String> = c.workloads.iter().map(|w| opt(r.slowdown.get(w).copied(), |v| format!("{v:.3}"))).collect();
        let _ = writeln!(s, "| {} | {} | {} |", r.preset, cells.join(" | "), opt(r.slowdown_gmean, |v| format!("{v:.3}")));
    }
    let _ = writeln!(s, "\n## Each scheme on its own paper's machine\n");
    let _ = writeln!(s, "Where a preset's machine differs from the common one, the scheme also ran on its own, against the insecure baseline of that machine.\n");
    let _ = writeln!(s, "| preset | slowdown, common | slowdown, own machine | how its machine differs |\n|---|---|---|---|");
    for r in &c.schemes {
        let Some(p) = &r.paper_config else { continue };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            r.preset,
            opt(r.slowdown_gmean, |v| format!("{v:.3}x")),
            opt(p.slowdown_gmean, |v| format!("{v:.3}x")),
            p.differences.iter().map(|d| format!("`{d}`")).collect::<Vec<_>>().join("; ")
        );
    }
    let _ = writeln!(s, "\n## Battery, recovery and on-chip state by part\n");
    for r in &c.schemes {
        let parts: Vec<String> = r.battery.parts.iter().map(|p| format!("{} {:.1} uJ", p.what, p.energy_uj)).collect();
        let rec: Vec<String> = r
            .recovery
            .iter()
            .map(|p| {
                format!(
                    "{}: {} reads, {} hashes, {} writes{}",
                    p.memory,
                    p.reads,
                    p.hashes,
                    p.writes,
                    if p.ok { "" } else { " (its check FAILED)" }
                )
            })
            .collect();
        let nv: Vec<String> = r.onchip_nv.iter().map(|n| format!("{} {} B", n.what, n.bytes)).collect();
        let _ = writeln!(s, "- **{}**: battery {}; recovery {}; on-chip {}.", r.preset, parts.join(", "), rec.join("; "), nv.join(", "));
        for n in &r.notes {
            let _ = writeln!(s, "  - note: {n}");
        }
    }
    let _ = writeln!(s, "\n## Presets left out\n");
    for cand in c.candidates.iter().filter(|c| c.left_out.is_some()) {
        let _ = writeln!(s, "- `{}`: {}", cand.preset, cand.left_out.as_deref().unwrap_or_default());
    }
    s
}

/// Write results.json and report.md into `dir`: both or neither.
pub fn write(c: &Comparison, dir: &std::path::Path) -> Result<(), String> {
    let json = serde_json::to_string_pretty(c).map_err(|e| e.to_string())?;
    crate::reproduce::report::write_files(dir, &[("results.json".into(), json), ("report.md".into(), markdown(c))])
}
