//! `spmsim battery`: the SecPB battery model (V-B, Table III) beside the
//! paper's Tables V and VI, with the residual of every row.

use anyhow::{bail, Result};
use serde_json::{json, Value};
use spmsim::battery::{
    accounting, bmt_update_uj, compare, default_energy_path, default_reference_path, estimate, explain, not_charged, paper_rows,
    Comparison, EnergyConfig, Estimate, Explanation, Reference, SchemeKind, MATCH_RULE,
};
use std::path::PathBuf;
use std::process::ExitCode;

/// An estimate, the paper's row beside it, and (when the SuperCap volume
/// misses) the readings of the paper that would meet it.
type Row = (Estimate, Option<Comparison>, Option<Vec<Explanation>>);

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PaperTable {
    /// Every scheme at Table V's SecPB size.
    V,
    /// COBCM and NoGap at 8 to 512 entries.
    Vi,
}

#[derive(clap::Args)]
pub struct BatteryArgs {
    /// nogap, m, cm, bcm, obcm, cobcm, bbb, eadr, s-eadr, or all; or a
    /// preset (name or TOML path), whose scheme is sized.
    #[arg(long, default_value = "all", conflicts_with = "table")]
    pub scheme: String,
    /// SecPB (or BBB persist buffer) entries [default: structure.secpb_entries of the energy file, 32].
    #[arg(long, conflicts_with = "table")]
    pub entries: Option<u64>,
    /// Reproduce one of the paper's tables instead.
    #[arg(long, value_enum)]
    pub table: Option<PaperTable>,
    /// Energy constants [default: configs/energy/secpb-table3.toml].
    #[arg(long, value_name = "FILE")]
    pub energy: Option<PathBuf>,
    /// The paper's published values [default: configs/reference/secpb.toml].
    #[arg(long, value_name = "FILE")]
    pub reference: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

/// A Table V scheme by name, else the scheme of a preset (name or path).
fn scheme_named(name: &str) -> Result<SchemeKind> {
    match SchemeKind::from_name(name) {
        Ok(s) => Ok(s),
        Err(by_name) => match spmsim::config::load_preset(name, &[]) {
            Ok(cfg) => Ok(cfg.scheme),
            Err(e) => bail!("{by_name}; nor is `{name}` a preset: {e}"),
        },
    }
}

pub fn run(a: BatteryArgs) -> Result<ExitCode> {
    let energy_path = a.energy.clone().unwrap_or_else(default_energy_path);
    let reference_path = a.reference.clone().unwrap_or_else(default_reference_path);
    let cfg = EnergyConfig::load(&energy_path)?;
    let reference = Reference::load(&reference_path)?;
    let entries = a.entries.unwrap_or(cfg.structure.secpb_entries);
    if entries == 0 {
        bail!("--entries must be at least 1");
    }
    let rows: Vec<(SchemeKind, u64)> = match a.table {
        Some(PaperTable::V) => paper_rows(&reference)[..SchemeKind::table_v().len()].to_vec(),
        Some(PaperTable::Vi) => paper_rows(&reference)[SchemeKind::table_v().len()..].to_vec(),
        None if a.scheme.trim().eq_ignore_ascii_case("all") => SchemeKind::table_v().iter().map(|&s| (s, entries)).collect(),
        None => vec![(scheme_named(&a.scheme)?, entries)],
    };
    let rows: Vec<Row> = rows
        .into_iter()
        .map(|(s, n)| {
            let est = estimate(&cfg, s, n);
            let Some((table, row)) = reference.lookup(s, n) else { return (est, None, None) };
            let paper = compare(&cfg, &est, table, row);
            // Readings of the paper that would meet a missed row (shown, not applied).
            let readings = paper.gap.is_some().then(|| explain(&cfg, &est, row));
            (est, Some(paper), readings)
        })
        .collect();

    if a.json {
        let json_rows: Vec<Value> = rows
            .iter()
            .map(|(e, c, readings)| {
                let mut v = serde_json::to_value(e)?;
                v["paper"] = serde_json::to_value(c)?;
                if let Some(r) = readings {
                    v["paper_readings"] = serde_json::to_value(r)?;
                }
                Ok(v)
            })
            .collect::<Result<_>>()?;
        let doc = json!({
            "energy_file": energy_path.display().to_string(),
            "energy_description": cfg.description,
            "reference_file": reference_path.display().to_string(),
            "reference_source": reference.source,
            "reference_note": "the paper's published values, compared with only; the model never reads them",
            "table": a.table.map(|t| if t == PaperTable::V { "V" } else { "VI" }),
            "accounting": accounting(&cfg),
            "match_rule": MATCH_RULE,
            "bmt_update_uj": bmt_update_uj(&cfg),
            "not_charged": not_charged(&cfg),
            "all_match": rows.iter().all(|(_, c, _)| c.as_ref().is_none_or(|c| c.matches)),
            "rows": json_rows,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }

    println!("energy constants: {} ({})", energy_path.display(), cfg.description);
    println!("paper values:     {} (the paper's published numbers; compared with, never used)", reference_path.display());
    match a.table {
        Some(PaperTable::V) => println!("\n{}", reference.table_v.caption),
        Some(PaperTable::Vi) => println!("\n{}", reference.table_vi.caption),
        None => println!(),
    }
    print!("{}", render(&rows));
    let notes = notes(&cfg, &rows);
    if !notes.is_empty() {
        println!("\nRows off the paper (gap = paper - ours):");
        notes.iter().for_each(|n| println!("- {n}"));
    }
    println!("\n{}", accounting(&cfg));
    println!("Match rule: {MATCH_RULE}");
    Ok(ExitCode::SUCCESS)
}

/// Five significant digits, without exponent.
fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let decimals = (4 - x.abs().log10().floor() as i32).clamp(0, 9) as usize;
    format!("{x:.decimals$}")
}

fn render(rows: &[Row]) -> String {
    let with_ratios = rows.iter().any(|(_, c, _)| c.as_ref().is_some_and(|c| c.supercap_ratio_pct.is_some()));
    let mut header = vec!["scheme", "entries", "energy uJ", "SuperCap mm3", "paper", "res %", "Li-thin mm3", "paper", "res %"];
    if with_ratios {
        header.extend(["SuperCap/core %", "paper", "Li-thin/core %", "paper"]);
    }
    header.push("match");
    let body = rows
        .iter()
        .map(|(e, c, _)| {
            let paper = |f: &dyn Fn(&Comparison) -> Option<String>| c.as_ref().and_then(f).unwrap_or_else(|| "-".into());
            let mut r = vec![
                e.scheme.to_string(),
                e.entries.map_or_else(|| "-".into(), |n| n.to_string()),
                format!("{:.2}", e.energy_uj),
                sig(e.supercap.volume_mm3),
                paper(&|c| Some(c.supercap_mm3.printed.clone())),
                paper(&|c| Some(format!("{:+.2}", c.supercap_mm3.residual_pct))),
                sig(e.li_thin.volume_mm3),
                paper(&|c| Some(c.li_thin_mm3.printed.clone())),
                paper(&|c| Some(format!("{:+.2}", c.li_thin_mm3.residual_pct))),
            ];
            if with_ratios {
                r.push(format!("{:.2}", e.supercap.core_area_ratio_pct));
                r.push(paper(&|c| c.supercap_ratio_pct.as_ref().map(|p| p.printed.clone())));
                r.push(format!("{:.3}", e.li_thin.core_area_ratio_pct));
                r.push(paper(&|c| c.li_thin_ratio_pct.as_ref().map(|p| p.printed.clone())));
            }
            r.push(paper(&|c| Some(if c.matches { "yes" } else { "NO" }.into())));
            r
        })
        .collect::<Vec<_>>();
    crate::table::render(&header, &body)
}

/// One line per row that misses, and per paper row whose two volumes disagree.
fn notes(cfg: &EnergyConfig, rows: &[Row]) -> Vec<String> {
    let density_ratio = cfg.storage.supercap_wh_per_cm3 / cfg.storage.li_thin_wh_per_cm3;
    let mut out = Vec::new();
    for (e, c, readings) in rows {
        let Some(c) = c else { continue };
        let at = format!("{} at {} (Table {})", e.scheme, e.entries.map_or_else(|| "any size".into(), |n| format!("{n} entries")), c.table);
        for x in readings.iter().flatten() {
            out.push(format!(
                "{at}: the paper's SuperCap is met ({} mm3, {:+.2} %) if {} (a reading the other rows do not support; not applied)",
                sig(x.supercap_mm3),
                x.residual_pct,
                x.description
            ));
        }
        if let Some(g) = &c.gap {
            out.push(format!(
                "{at}: SuperCap {:+.1} %. The paper implies {} uJ ({} uJ per {unit}; ours {}); gap {:+.1} uJ = {:+.3} BMT \
                 updates, {:+.2} uJ = {:+.3} BMT updates per {unit} (one update = {:.2} uJ)",
                c.supercap_mm3.residual_pct,
                sig(g.paper_energy_uj),
                sig(g.paper_per_unit_uj),
                sig(e.per_unit_uj),
                g.gap_uj,
                g.gap_in_bmt_updates,
                g.gap_per_unit_uj,
                g.gap_per_unit_in_bmt_updates,
                bmt_update_uj(cfg),
                unit = e.unit,
            ));
        } else if !c.matches {
            out.push(format!("{at}: Li-thin {:+.1} % off the printed {}", c.li_thin_mm3.residual_pct, c.li_thin_mm3.printed));
        }
        if !c.paper_self_consistent {
            let sc: f64 = c.supercap_mm3.printed.parse().unwrap_or(f64::NAN);
            out.push(format!(
                "{at}: the paper's Li-thin {} disagrees with its own SuperCap {} (x {density_ratio} = {})",
                c.li_thin_mm3.printed,
                c.supercap_mm3.printed,
                sig(sc * density_ratio)
            ));
        }
    }
    out
}
