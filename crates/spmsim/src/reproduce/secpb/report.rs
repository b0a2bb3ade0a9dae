//! SecPB's report and files: report.md (the suite, Table IV, Figs. 6-9,
//! the VI-B example, the real-crypto sample, Tables V and VI, the paper's
//! claims, the causes of the gaps), runs.csv and one CSV per table.
//!
//! ```text
//!  Results --report()--> report.md     (# SecPB reproduction, ## Table IV .. ## The paper's claims, ## Causes of the gaps)
//!          --files()---> results.json runs.csv table4.csv fig6-9.csv battery.csv
//! ```

use super::analysis::Cell;
use super::suite::{is_recorded, regions_text, GAMESS_LIKE, MAIN_POLICY};
use super::{secpb_presets, Results, RunRecord};
use crate::reproduce::claims::ClaimResult;
use crate::reproduce::report::with_results_json;
use std::fmt::Write as _;

/// results.json, runs.csv, one CSV per table or figure, and report.md
/// (with `claims`, the paper's numbers judged against ours).
pub(super) fn files(r: &Results, claims: &[ClaimResult]) -> Result<Vec<(String, String)>, String> {
    let mut files: Vec<(String, String)> = vec![("runs.csv".into(), runs_csv(&r.runs))];
    for (name, cells) in [("table4", &r.table4), ("fig6", &r.fig6), ("fig7", &r.fig7), ("fig8", &r.fig8), ("fig9", &r.fig9)] {
        files.push((format!("{name}.csv"), cells_csv(cells)));
    }
    if !r.battery_rows.is_empty() {
        files.push(("battery.csv".into(), battery_csv(&r.battery_rows)));
    }
    files.push(("report.md".into(), report(r, claims)));
    with_results_json(r, files)
}

fn cells_csv(cells: &[Cell]) -> String {
    let mut s = String::from("row,column,paper,ours,difference\n");
    for c in cells {
        let p = c.paper.map(|x| format!("{x}")).unwrap_or_default();
        let d = c.diff().map(|x| format!("{x:.3}")).unwrap_or_default();
        let _ = writeln!(s, "{},{},{},{:.4},{}", c.row, c.column, p, c.ours, d);
    }
    s
}

fn battery_csv(rows: &[crate::battery::TableRow]) -> String {
    let mut s = String::from("table,scheme,entries,energy_uj,supercap_mm3,supercap_paper_mm3,supercap_residual_pct,li_thin_mm3,li_thin_paper_mm3,li_thin_residual_pct,matches\n");
    for r in rows {
        let n = r.entries.map(|n| n.to_string()).unwrap_or_default();
        let _ = writeln!(
            s,
            "{},{},{n},{:.3},{:.6},{},{:.3},{:.8},{},{:.3},{}",
            r.table,
            r.scheme,
            r.energy_uj,
            r.supercap_mm3,
            r.supercap_paper_mm3,
            r.supercap_residual_pct,
            r.li_thin_mm3,
            r.li_thin_paper_mm3,
            r.li_thin_residual_pct,
            r.matches
        );
    }
    s
}

pub(super) fn runs_csv(runs: &[RunRecord]) -> String {
    let mut s = String::from("scheme,workload,entries,instructions,cycles,ipc,ppti,nwpe,bmt_root_updates,secpb_drains,wpq_full_waits,pcm_write_utilisation,nvm_writes_data,nvm_writes_counter,nvm_writes_mac,nvm_writes_tree\n");
    for r in runs {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{:.5},{:.3},{:.3},{},{},{},{:.4},{},{},{},{}",
            r.scheme,
            r.workload,
            r.entries,
            r.instructions,
            r.cycles,
            r.ipc,
            r.ppti,
            r.nwpe,
            r.bmt_root_updates,
            r.secpb_drains,
            r.wpq_full_waits,
            r.pcm_write_utilisation,
            r.nvm_writes.data,
            r.nvm_writes.counter,
            r.nvm_writes.mac,
            r.nvm_writes.tree
        );
    }
    s
}

fn f(x: Option<f64>, prec: usize) -> String {
    x.map(|v| format!("{v:.prec$}")).unwrap_or_else(|| "n/a".into())
}

fn cell_table(out: &mut String, head: &str, cells: &[Cell], prec: usize) {
    let _ = writeln!(out, "| {head} | paper | ours | ours - paper |\n|---|---|---|---|");
    for c in cells {
        let _ = writeln!(out, "| {} | {} | {:.prec$} | {} |", c.row, f(c.paper, prec), c.ours, f(c.diff(), prec));
    }
}

/// The Markdown report.
pub fn report(r: &Results, claims: &[ClaimResult]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# SecPB reproduction\n");
    let _ = writeln!(
        o,
        "Produced by `spmsim reproduce secpb{}`: {} simulated instructions per run, seed {}, {} runs. Paper numbers come from the text of SecPB section VI (`configs/reference/`); ours from the timing model with the presets in `configs/`.\n",
        if r.quick { " --quick" } else { "" },
        r.instructions,
        r.seed,
        r.runs.len()
    );
    suite_section(&mut o, r);
    let _ = writeln!(o, "\n## Table IV: slowdown against bbb, 32-entry SecPB\n");
    let _ = writeln!(o, "Geometric mean over the suite of execution time normalised to bbb, minus one. `sp` (strict persistency at the MC) is not in the paper's Table IV.\n");
    cell_table(&mut o, "scheme", &r.table4, 1);
    let _ = writeln!(
        o,
        "\nArithmetic mean of per-workload slowdowns (%): {}\n",
        r.table4_arith.iter().map(|(k, v)| format!("{k} {v:.1}")).collect::<Vec<_>>().join(", ")
    );
    if !r.table4_all.is_empty() {
        let _ = writeln!(
            o,
            "The programs ran with `#persistent={MAIN_POLICY}`: their stack stores are volatile. With every store persistent (`#persistent=all`), geometric mean (%): {}\n",
            r.table4_all.iter().map(|(k, v)| format!("{k} {v:.1}")).collect::<Vec<_>>().join(", ")
        );
    }
    let _ = writeln!(
        o,
        "Order COBCM < OBCM < BCM < CM < M < NoGap (VI-B: the overheads follow the eagerness of the metadata updates; a pair within 25 % of each other in the paper's Table IV, COBCM and OBCM, CM and M, may come either way): **{}**.\n",
        if r.order_holds { "holds" } else { "does not hold" }
    );
    let _ = writeln!(o, "## Fig. 6: execution time normalised to bbb, per workload (32 entries)\n");
    let cols: Vec<String> = secpb_presets().iter().chain(["sp"].iter()).map(|s| s.to_string()).collect();
    let _ = writeln!(o, "| workload | {} |\n|---|{}", cols.join(" | "), "---|".repeat(cols.len()));
    for s in &r.suite {
        let v: Vec<String> =
            cols.iter().map(|c| format!("{:.3}", r.fig6.iter().find(|x| x.row == s.label && &x.column == c).unwrap().ours)).collect();
        let _ = writeln!(o, "| {} | {} |", s.label, v.join(" | "));
    }
    let _ = writeln!(o, "\nThe paper shows Fig. 6 only as a chart; no per-benchmark numbers are in its text.\n");
    let _ = writeln!(o, "## Fig. 7: CM overhead against bbb (same SecPB size) by SecPB entries\n");
    cell_table(&mut o, "SecPB", &r.fig7, 1);
    let _ = writeln!(o, "\n## Fig. 8: CM BMT root updates as a share of sp's\n");
    let _ = writeln!(o, "`sp` is strict persistency at the memory controller, the paper's `sec_wt`.\n");
    cell_table(&mut o, "SecPB", &r.fig8, 2);
    let _ = writeln!(o, "\nRoot updates fall as the SecPB grows: **{}**.\n", if r.root_updates_fall { "yes" } else { "no" });
    let _ = writeln!(o, "## Fig. 9: Bonsai Merkle forests, overhead against bbb (32 entries)\n");
    cell_table(&mut o, "scheme", &r.fig9, 1);
    per_benchmark(&mut o, r);
    worked_example_section(&mut o, r);
    for e in &r.left_out {
        let _ = writeln!(o, "- Left out (failed): {e}");
    }
    if !r.crypto_parity.is_empty() {
        let _ = writeln!(o, "## Timing-only crypto: a real-crypto sample\n");
        let _ = writeln!(
            o,
            "The grid runs with `security.crypto = \"timing-only\"` (no AES or HMAC computed; every cache, queue and counter the same). These runs repeat part of it with real cryptography:\n"
        );
        let _ = writeln!(o, "| scheme | workload | cycles, timing-only | cycles, real crypto | same |\n|---|---|---|---|---|");
        for p in &r.crypto_parity {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} |",
                p.scheme,
                p.workload,
                p.timing_only_cycles,
                p.real_cycles,
                if p.timing_only_cycles == p.real_cycles { "yes" } else { "**no**" }
            );
        }
        let _ = writeln!(o);
    }
    if let Some(b) = &r.battery_markdown {
        let _ = writeln!(o, "## Tables V and VI: battery capacity\n\n{b}\n");
    }
    o.push_str(&ClaimResult::markdown(claims, "configs/reference/secpb-performance.toml, secpb.toml"));
    let _ = writeln!(o, "\n## Causes of the gaps\n");
    for c in super::causes::causes(r) {
        let _ = writeln!(o, "- {c}");
    }
    o
}

/// The workloads: the suite's programs (or the built-in stand-ins), the
/// traces' notes and the baseline core per program.
fn suite_section(o: &mut String, r: &Results) {
    if is_recorded(&r.suite) {
        let file = r.suite.iter().find_map(|e| e.suite_file.as_deref()).unwrap_or("spec-upstream.toml");
        let which = if file == "spec-upstream.toml" {
            "the upstream programs of SPEC CPU2006's benchmarks (the open-source programs SPEC took, as Debian packages them today, or a program of the same kind where none is packaged), each run on an input of the kind its reference run uses, which spmsim generates"
        } else {
            "other real programs: Debian's packages, each run on a fixed input that spmsim generates"
        };
        let _ = writeln!(
            o,
            "**Workloads.** The paper runs 18 SPEC CPU2006 benchmarks for 250 M instructions. spmsim cannot ship SPEC or its inputs; this report runs a suite of {} programs instead (`configs/suite/{file}`): {which}, traced under valgrind. {} Each simulation replays the first {} instructions of a trace. The traces record the address and size of every access but not the stored values, so the simulator derives each store's value from the seed (values derived; see the trace notes below). Heap and globals are persistent and the stack volatile (`#persistent={MAIN_POLICY}`); Table IV is also given with every store persistent. The programs and inputs are not SPEC's, so numbers are comparable in trend, not cell by cell.\n",
            r.suite.len(),
            regions_text(&r.suite),
            r.instructions
        );
        let _ = writeln!(
            o,
            "**Core.** The programs run on the `ooo` core model (`core.model = \"ooo\"`): each instruction is scheduled by its register dependences, functional unit and branch prediction, from the instruction stream recorded with the trace (valgrind's own decoding of each instruction); its parameters are gem5's O3 defaults (`configs/` and `CoreConfig`). Generated workloads (the gamess-like profile) have no instruction stream and run the `interval` core, which issues non-memory instructions at the full width.\n"
        );
        let _ =
            writeln!(o, "| program | package | instructions before its (first) region | regions | what it runs |\n|---|---|---|---|---|");
        for s in &r.suite {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} |",
                s.label,
                s.package.as_deref().unwrap_or("-"),
                s.skipped.map(|n| n.to_string()).unwrap_or_default(),
                s.regions.as_deref().unwrap_or("start-up window"),
                s.what
            );
        }
    } else {
        let _ = writeln!(o, "**Workloads.** The paper runs 18 SPEC CPU2006 benchmarks for 250 M instructions. This report runs spmsim's built-in stand-ins (`--builtin`), not its suite of real programs; the `syn-*` entries are synthetic profiles, not programs. Numbers are therefore comparable in trend, not cell by cell.\n");
        let _ = writeln!(o, "| label | workload | what it is |\n|---|---|---|");
        for s in &r.suite {
            let _ = writeln!(o, "| {} | `{}` | {} |", s.label, s.workload, s.what);
        }
    }
    let notes: Vec<(&str, &Vec<String>)> = r
        .suite
        .iter()
        .filter_map(|s| {
            r.runs
                .iter()
                .find(|x| x.workload == s.label && x.scheme == "bbb" && x.entries == 32 && x.setting.is_none())
                .map(|x| (s.label.as_str(), &x.notes))
        })
        .filter(|(_, n)| !n.is_empty())
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(o, "\n**Trace notes** (from the bbb runs; every scheme reads the same events):\n");
        for (label, n) in notes {
            let _ = writeln!(o, "- {label}: {}", n.join("; "));
        }
    }
    let base: Vec<&RunRecord> = r
        .suite
        .iter()
        .filter_map(|s| {
            r.runs
                .iter()
                .find(|x| x.workload == s.label && x.scheme == "bbb" && x.entries == 32 && !x.all_persistent && x.setting.is_none())
        })
        .collect();
    if base.iter().any(|x| x.mispredicts_pki.is_some()) {
        let _ = writeln!(o, "\n**The baseline core per program** (bbb, 32 entries):\n");
        let _ = writeln!(o, "| program | core | IPC | branch mispredictions per 1000 instructions |\n|---|---|---|---|");
        for x in &base {
            let _ = writeln!(o, "| {} | {} | {:.2} | {} |", x.workload, x.core_model, x.ipc, f(x.mispredicts_pki, 1));
        }
    }
    if let Some(p) = &r.published_ipc {
        o.push_str(&p.markdown(&base.iter().map(|x| (x.workload.clone(), x.ipc)).collect()));
    }
}

/// VI-B's worked example: NoGap's IPC on the gamess-like profile, by the
/// paper's formula and simulated, and on each program's instruction stream.
fn worked_example_section(o: &mut String, r: &Results) {
    let n = &r.nogap;
    let _ = writeln!(
        o,
        "\n## VI-B worked example: NoGap IPC on the gamess-like synthetic workload\n{}",
        if r.suite.iter().any(|s| s.label == GAMESS_LIKE) {
            ""
        } else {
            "\nThe example needs gamess's PPTI and NWPE, which no program of the suite has, so it runs on a synthetic profile with the paper's figures beside the suite; that run is not part of any average above.\n"
        }
    );
    let _ = writeln!(o, "| quantity | paper | ours |\n|---|---|---|");
    let _ = writeln!(o, "| PPTI | {} | {:.2} |\n| NWPE | {} | {:.2} |", f(n.paper_ppti, 1), n.ppti, f(n.paper_nwpe, 1), n.nwpe);
    let _ =
        writeln!(o, "| IPC by the paper's formula 1000/(320 PPTI/NWPE + 40 PPTI) | {} | {:.3} |", f(n.paper_estimate, 2), n.formula_ipc);
    let _ = writeln!(o, "| simulated IPC | {} | {:.3} |\n", f(n.paper_actual, 2), n.ipc);
    let on_streams: Vec<(&str, f64, f64)> = r
        .suite
        .iter()
        .filter_map(|w| {
            let label = format!("{GAMESS_LIKE}@{}", w.label);
            let ipc = |s: &str| r.runs.iter().find(|x| x.workload == label && x.scheme == s).map(|x| x.ipc);
            Some((w.label.as_str(), ipc("bbb")?, ipc("nogap")?))
        })
        .collect();
    if !on_streams.is_empty() {
        let _ = writeln!(
            o,
            "The run above is on the `interval` core, where bbb issues at the full width (a synthetic profile has no instructions to schedule). The same profile on the `ooo` core, scheduled on the register dependences, units and branches of each program's recorded instruction stream (`insns=`; the profile's loads and stores take the places of the stream's own):\n"
        );
        let _ = writeln!(o, "| instruction stream of | bbb IPC | NoGap IPC |\n|---|---|---|");
        for (p, b, n) in &on_streams {
            let _ = writeln!(o, "| {p} | {b:.2} | {n:.3} |");
        }
        let (bl, bh) = crate::reproduce::range(&on_streams.iter().map(|x| x.1).collect::<Vec<_>>());
        let (nl, nh) = crate::reproduce::range(&on_streams.iter().map(|x| x.2).collect::<Vec<_>>());
        let _ = writeln!(
            o,
            "\nbbb runs at IPC {bl:.2}-{bh:.2} and NoGap at {nl:.3}-{nh:.3}: NoGap's IPC is set by its persist path, whatever the core.\n"
        );
    }
}

/// The text's figures for single benchmarks, for the programs that stand
/// for them, and the benchmarks the suite has no program for.
fn per_benchmark(o: &mut String, r: &Results) {
    let _ = writeln!(o, "\n## Single benchmarks the text quotes (VI-B, VI-D)\n");
    if !r.per_benchmark.is_empty() {
        let _ = writeln!(o, "| benchmark | our program | the paper's sentence | where | paper | ours | difference | outcome |\n|---|---|---|---|---|---|---|---|");
        for c in &r.per_benchmark {
            let k = &c.claim;
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                c.benchmark,
                c.program,
                k.text,
                k.where_,
                k.kind.show(k.paper),
                k.kind.show(c.ours),
                k.kind.show_difference(c.ours - k.paper),
                if c.reproduced() { "reproduced" } else { "missed" }
            );
        }
        let _ = writeln!(o);
    }
    if !r.benchmarks_absent.is_empty() {
        let _ = writeln!(o, "The text also quotes {}, which this suite has no program for.", r.benchmarks_absent.join(", "));
    }
}
