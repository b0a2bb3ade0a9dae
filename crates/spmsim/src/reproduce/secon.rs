//! Secon's evaluation (Secon 4): transaction latency and PM writes against
//! operations per transaction (Figs. 9, 10), throughput against cores
//! (Fig. 11), writes against value size (Fig. 12), the BMT hash latency
//! (Fig. 13) and the WPQ size (Fig. 14), with the claims the paper's text
//! prints (`configs/reference/secon.toml`) beside ours.
//!
//! ```text
//!  {wb, wt, supermem, secon-no-tep, secon} x micro-benchmarks x ops 1..16  -> Figs. 9, 10
//!  {wb, wt, supermem, secon} x {tpcc, ycsb} x cores                        -> Fig. 11
//!  {wb, wt, supermem, secon} x micro-benchmarks x value 64..1024 B         -> Fig. 12
//!  {wt, supermem, secon} x {hash, ycsb} x hash 40..100 ns                  -> Fig. 13
//!  secon x micro-benchmarks x WPQ 8..128                                   -> Fig. 14
//! ```
//! Latency is cycles per committed transaction; PM writes are the PCM
//! device's writes after WPQ merging (`roi.memory.device_writes`), per
//! transaction. Averages over workloads and points are geometric means of
//! the normalised values (arithmetic means are shown beside them).

use super::claims::{ClaimResult, Reference};
use super::grid::TimedRun;
use super::readings::{self, ReadingResult};
use super::report::{self as rp, Figure};
use super::{geomean, means, Paper};
use crate::engine::nvm::ByKind;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The micro-benchmarks (Secon 4.1), as the paper labels them.
pub const MICRO: [(&str, &str); 5] = [("Array", "array"), ("Queue", "queue"), ("Btree", "btree"), ("Hash", "hash"), ("RBtree", "rbtree")];
/// The macro-benchmarks of Fig. 11 (WHISPER's).
pub const MACRO: [(&str, &str); 2] = [("TPCC", "tpcc"), ("YCSB", "ycsb")];
/// Fig. 9's schemes, WB (the normalisation point) first.
pub const SCHEMES: [&str; 5] = ["wb", "wt", "supermem", "secon-no-tep", "secon"];
/// The schemes of Figs. 11-12 and Fig. 13.
const MAIN: [&str; 4] = ["wb", "wt", "supermem", "secon"];
const SENSITIVE: [&str; 3] = ["wt", "supermem", "secon"];

/// One grid's points: the x values of each figure.
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    pub ops: &'static [u64],
    pub values: &'static [u64],
    pub cores: &'static [u64],
    pub hash_ns: &'static [u64],
    pub wpq: &'static [u64],
}

/// The paper's points (`--quick`: the first, the last and one between;
/// Fig. 11's last, six cores, is one reading of 4.2.2's percentages).
pub const FULL: Grid = Grid {
    ops: &[1, 2, 4, 8, 16],
    values: &[64, 128, 256, 512, 1024],
    cores: &[1, 2, 4, 6],
    hash_ns: &[40, 60, 80, 100],
    wpq: &[8, 16, 32, 64, 128],
};
pub const QUICK: Grid = Grid { ops: &[1, 4, 16], values: &[64, 256, 1024], cores: &[1, 2, 6], hash_ns: &[40, 100], wpq: &[8, 32, 128] };

/// Secon's reproduction: its grid and how it runs.
pub struct Secon {
    pub instructions: u64,
    pub seed: u64,
    pub quick: bool,
    pub grid: Grid,
    reference: Reference,
    /// The root update's length on Secon's machine: one hash per level
    /// above the counter blocks, and the hash's cycles.
    root_update: (u64, u64),
    /// Cycles a PCM write holds its bank on Secon's machine.
    write_cycles: u64,
}

impl Secon {
    /// The paper's grid (`quick`: [`QUICK`]).
    pub fn new(instructions: u64, seed: u64, quick: bool) -> Result<Self, String> {
        Self::with_grid(instructions, seed, quick, if quick { QUICK } else { FULL })
    }

    pub fn with_grid(instructions: u64, seed: u64, quick: bool, grid: Grid) -> Result<Self, String> {
        let wt = crate::config::load_preset("wt", &[]).map_err(|e| e.to_string())?;
        let levels = crate::engine::controller::layout_for(&wt, &crate::scheme::shape(&wt)).levels() as u64;
        let hash = wt.security.tree_hash_latency_cycles.unwrap_or(wt.security.mac_latency_cycles) as u64;
        let write_cycles = (wt.nvm.write_latency_ns * wt.core.frequency_ghz).round() as u64;
        Ok(Secon { instructions, seed, quick, grid, reference: Reference::load("secon")?, root_update: (levels, hash), write_cycles })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    /// The figure the run belongs to (`fig9` covers Figs. 9 and 10).
    pub fig: String,
    pub scheme: String,
    /// The paper's label of the workload.
    pub label: String,
    pub workload: String,
    /// The figure's x value: operations per transaction, cores, value
    /// bytes, hash nanoseconds or WPQ entries.
    pub x: u64,
    pub instructions: u64,
    pub cycles: u64,
    pub transactions: u64,
    pub transactions_per_second: f64,
    pub device_writes: ByKind,
    pub offered_writes: ByKind,
    /// Writes that found the WPQ full.
    pub wpq_full_waits: u64,
    /// Share of the run the bank with the most writes spent writing.
    pub busiest_bank_write_utilisation: f64,
}

impl RunRecord {
    /// Cycles per committed transaction.
    pub fn latency(&self) -> f64 {
        self.cycles as f64 / self.transactions.max(1) as f64
    }
    /// PCM writes per committed transaction.
    pub fn writes(&self) -> f64 {
        self.device_writes.total() as f64 / self.transactions.max(1) as f64
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Results {
    pub instructions: u64,
    pub seed: u64,
    pub quick: bool,
    pub source: String,
    pub claims: Vec<ClaimResult>,
    /// Every reading of what the paper leaves open, its claims judged (not
    /// counted), and the report's section of them.
    pub readings: Vec<ReadingResult>,
    pub readings_markdown: String,
    pub figures: Vec<Figure>,
    /// What the measurements say about the gaps (numbers from the runs).
    pub causes: Vec<String>,
    pub runs: Vec<RunRecord>,
}

/// One run of the grid: a scheme on a workload at one figure's x value,
/// with the overrides that x needs.
#[derive(Serialize)]
pub struct Spec {
    fig: &'static str,
    scheme: &'static str,
    label: &'static str,
    workload: String,
    x: u64,
    sets: Vec<String>,
}

/// Every figure's runs, figure by figure.
fn specs(g: &Grid) -> Vec<Spec> {
    let mut v = Vec::new();
    let spec = |fig, scheme, label, workload: String, x, sets: Vec<String>| Spec { fig, scheme, label, workload, x, sets };
    for &(label, w) in &MICRO {
        for &n in g.ops {
            for s in SCHEMES {
                v.push(spec("fig9", s, label, format!("{w}:ops_per_tx={n}"), n, vec![]));
            }
        }
        for &b in g.values {
            for s in MAIN {
                v.push(spec("fig12", s, label, format!("{w}:ops_per_tx=1,value_bytes={b}"), b, vec![]));
            }
        }
        for &e in g.wpq {
            v.push(spec("fig14", "secon", label, format!("{w}:ops_per_tx=1"), e, vec![format!("persistence.wpq_entries={e}")]));
        }
    }
    for &(label, w) in &MACRO {
        for &c in g.cores {
            for s in MAIN {
                let workload = if c == 1 { w.to_string() } else { format!("{w}:threads={c}") };
                v.push(spec("fig11", s, label, workload, c, vec![]));
            }
        }
    }
    for (label, w) in [("Hash", "hash:ops_per_tx=1"), ("YCSB", "ycsb")] {
        for &ns in g.hash_ns {
            for s in SENSITIVE {
                // Secon Table 1: 2 GHz, so a nanosecond is two cycles; the
                // BMT hash alone varies (Secon 4.4.1), not the data MAC.
                v.push(spec("fig13", s, label, w.to_string(), ns, vec![format!("security.tree_hash_latency_cycles={}", ns * 2)]));
            }
        }
    }
    v
}

impl Paper for Secon {
    type Point = Spec;
    type Record = RunRecord;
    type Results = Results;
    const ID: &'static str = "secon";
    const PLOTS: bool = true;

    fn grid(&self) -> Vec<Spec> {
        specs(&self.grid)
    }

    fn describe(&self, sp: &Spec) -> String {
        format!("{} {} {} {}", sp.fig, sp.scheme, sp.label, sp.x)
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::json!({ "instructions": self.instructions, "seed": self.seed })
    }

    fn run(&self, sp: &Spec) -> Result<RunRecord, String> {
        let mut o = vec!["security.crypto=timing-only".to_string(), "core.multicore_stats=true".to_string()];
        o.extend(sp.sets.iter().cloned());
        let s = TimedRun::new(sp.scheme, o, &sp.workload).time(self.instructions, self.seed)?.stats;
        let r = &s.roi;
        let m = r.multicore.as_ref().ok_or_else(|| format!("{} on {}: no transaction counts", sp.scheme, sp.workload))?;
        Ok(RunRecord {
            fig: sp.fig.into(),
            scheme: sp.scheme.into(),
            label: sp.label.into(),
            workload: sp.workload.clone(),
            x: sp.x,
            instructions: r.core.instructions,
            cycles: r.core.cycles,
            transactions: m.transactions,
            transactions_per_second: m.transactions_per_second,
            device_writes: r.memory.device_writes,
            offered_writes: r.memory.writes,
            wpq_full_waits: r.memory.wpq_full_waits,
            busiest_bank_write_utilisation: r.memory.busiest_bank_write_utilisation,
        })
    }

    fn analyse(&self, runs: Vec<(&Spec, RunRecord)>) -> Result<Results, String> {
        analyse(self, runs.into_iter().map(|(_, r)| r).collect())
    }

    fn claims(&self, r: &Results) -> Vec<ClaimResult> {
        r.claims.clone()
    }

    /// results.json, runs.csv, one CSV per figure and report.md.
    fn files(&self, r: &Results) -> Result<Vec<(String, String)>, String> {
        let mut files = vec![("runs.csv".to_string(), runs_csv(&r.runs))];
        files.extend(r.figures.iter().map(|f| (format!("{}.csv", f.name), f.csv())));
        files.push(("report.md".into(), report(r)));
        rp::with_results_json(r, files)
    }

    fn runs_csv(&self, finished: &[RunRecord]) -> String {
        runs_csv(finished)
    }
}

fn find<'a>(runs: &'a [RunRecord], fig: &str, scheme: &str, label: &str, x: u64) -> &'a RunRecord {
    runs.iter().find(|r| r.fig == fig && r.scheme == scheme && r.label == label && r.x == x).expect("every grid point ran")
}

/// Figs. 9-14 and the claims from the runs, and what measured the gaps.
fn analyse(p: &Secon, runs: Vec<RunRecord>) -> Result<Results, String> {
    let (g, rf, (tree_hashes, hash_cycles)) = (&p.grid, &p.reference, p.root_update);
    let micro: Vec<&str> = MICRO.iter().map(|m| m.0).collect();
    let norm = |fig: &str, s: &str, base: &str, label: &str, x: u64, f: fn(&RunRecord) -> f64| {
        f(find(&runs, fig, s, label, x)) / f(find(&runs, fig, base, label, x))
    };
    // Ratios of one scheme to another over every micro-benchmark and point.
    let over = |fig: &str, xs: &[u64], s: &str, base: &str, f: fn(&RunRecord) -> f64| -> Vec<f64> {
        micro.iter().flat_map(|l| xs.iter().map(move |&x| (l, x))).map(|(l, x)| norm(fig, s, base, l, x, f)).collect()
    };
    let lat = RunRecord::latency;
    let wr = RunRecord::writes;
    let tput = |r: &RunRecord| r.transactions_per_second;
    let mut found: Vec<(&str, (f64, f64))> = Vec::new();
    let ratio = |v: Vec<f64>| means(&v);
    let change = |v: Vec<f64>| {
        let (g, a) = means(&v);
        (g - 1.0, a - 1.0)
    };
    found.push(("wt_latency_vs_wb", ratio(over("fig9", g.ops, "wt", "wb", lat))));
    found.push(("wt_writes_vs_wb", ratio(over("fig9", g.ops, "wt", "wb", wr))));
    found.push(("supermem_latency_vs_wt", change(over("fig9", g.ops, "supermem", "wt", lat))));
    found.push(("secon_latency_vs_supermem", change(over("fig9", g.ops, "secon", "supermem", lat))));
    found.push(("secon_latency_vs_wt", change(over("fig9", g.ops, "secon", "wt", lat))));
    found.push(("secon_writes_vs_wt", change(over("fig9", g.ops, "secon", "wt", wr))));
    found.push(("tep_latency", change(over("fig9", g.ops, "secon", "secon-no-tep", lat))));
    // 4.2.1's 16-operation example and 4.2.2's +19 %/+43 %, under each
    // reading configs/reference/secon.toml declares.
    let (first, last) = (g.ops[0], *g.ops.last().expect("points"));
    let own = norm("fig9", "secon", "wb", "Hash", last, lat) / norm("fig9", "secon", "wb", "Hash", first, lat) - 1.0;
    let tep = norm("fig9", "secon", "secon-no-tep", "Hash", last, lat) - 1.0;
    let over_cores = |cores: &[u64]| -> readings::Found<'static> {
        [("secon_tput_vs_supermem_tpcc", "TPCC"), ("secon_tput_vs_supermem_ycsb", "YCSB")]
            .into_iter()
            .map(|(id, label)| {
                let v: Vec<f64> = cores
                    .iter()
                    .map(|&c| tput(find(&runs, "fig11", "secon", label, c)) / tput(find(&runs, "fig11", "supermem", label, c)))
                    .collect();
                (id, change(v))
            })
            .collect()
    };
    let most = *g.cores.last().expect("points");
    let measured: Vec<readings::Measured> = vec![
        ("hash_16_ops", "own-1-op", vec![("hash_16_vs_1", (own, own))]),
        ("hash_16_ops", "tep-gain", vec![("hash_16_vs_1", (tep, tep))]),
        ("fig11_cores", "mean-over-cores", over_cores(g.cores)),
        ("fig11_cores", "six-cores", over_cores(&[most])),
    ];
    let (vmin, vmax) = (g.values[0], *g.values.last().expect("points"));
    for (id, b) in [("secon_writes_vs_wt_64B", vmin), ("secon_writes_vs_wt_1024B", vmax)] {
        found.push((id, change(micro.iter().map(|l| norm("fig12", "secon", "wt", l, b, wr)).collect())));
    }
    let (ns0, ns1) = (g.hash_ns[0], *g.hash_ns.last().expect("points"));
    let growth = |s: &str| lat(find(&runs, "fig13", s, "Hash", ns1)) / lat(find(&runs, "fig13", s, "Hash", ns0)) - 1.0;
    // The throughput's change, signed: a decrease is negative.
    let tput_change = |s: &str| tput(find(&runs, "fig13", s, "YCSB", ns1)) / tput(find(&runs, "fig13", s, "YCSB", ns0)) - 1.0;
    for (id, v) in [
        ("secon_latency_100ns", growth("secon")),
        ("secon_tput_100ns", tput_change("secon")),
        ("wt_latency_100ns", growth("wt")),
        ("supermem_latency_100ns", growth("supermem")),
        ("wt_tput_100ns", tput_change("wt")),
        ("supermem_tput_100ns", tput_change("supermem")),
    ] {
        found.push((id, (v, v)));
    }
    let (found, readings) = readings::resolve(rf, &found, &measured)?;
    let claims = rf.evaluate(&found)?;
    let readings_markdown = readings::markdown(rf, &readings);

    let figures = figures_of(g, &runs, &micro);
    let mut causes = Vec::new();
    // How much of each scheme's Hash latency is BMT hashing: the latency
    // growth over the hash latency's growth (1 = all of it scales).
    let scale = ns1 as f64 / ns0 as f64 - 1.0;
    let share = |s: &str| growth(s) / scale;
    if let (Some(wt_p), Some(sc_p)) = (rf.paper("wt_latency_100ns"), rf.paper("secon_latency_100ns")) {
        causes.push(format!(
            "BMT hashing's share of the transaction latency (Fig. 13, Hash: latency growth over the hash latency's growth, {ns0} -> {ns1} ns): WT {:.0} %, SuperMem {:.0} %, Secon {:.0} % here; the paper's text implies WT {:.0} % and Secon under {:.0} %. WT and SuperMem complete a write once its root update is done, as the paper has them (Secon 2.3: each write \"is stalled until the BMT root of the log entry is updated\"; {} hashes of {} cycles, each level waiting for the one below on Secon's 16 GB BMT). WT's three lines per write (Secon 3.2's tuple: ciphertext with its data MAC, counter block, first-level BMT node) then wait for WPQ entries behind PCM writes that each hold their bank for {} cycles, so WT is bound by one bank's write time more than by hashing (its share above; the next cause) and runs at {:.1}x WB against the paper's 3x. SuperMem's coalescing in the WPQ cuts its PCM writes by {:.0} % against WT's, which takes most of that wait away: its latency falls by more than the paper's 26 %, down to the root update. (Claims: the Fig. 13 latency and throughput claims, WT's 3x latency.)",
            share("wt") * 100.0,
            share("supermem") * 100.0,
            share("secon") * 100.0,
            wt_p / scale * 100.0,
            sc_p / scale * 100.0,
            tree_hashes,
            hash_cycles,
            p.write_cycles,
            found.iter().find(|(id, _)| *id == "wt_latency_vs_wb").map_or(f64::NAN, |(_, (g, _))| *g),
            (1.0 - geomean(&over("fig9", g.ops, "supermem", "wt", wr))) * 100.0,
        ));
        causes.push(format!(
            "Secon against SuperMem (claims: Secon -41 % against SuperMem, Secon's Fig. 13 claims): {:+.0} % latency, {:+.0} % PCM writes. Secon persists its tuple before the root update and runs that update in the background (3.2), but an ACK is the end of the root update and a commit waits for every ACK of its transaction (3.3, the log state table), so a transaction's latency still holds its root updates: Secon's hashing share is {:.0} %, as high as SuperMem's. What Secon saves is the root updates its pending queue coalesces and the writes they would make; the paper's claim that Secon's latency grows under 5 % with the hash latency is at odds with that rule unless its root update is much shorter than ours relative to everything else.",
            (geomean(&over("fig9", g.ops, "secon", "supermem", lat)) - 1.0) * 100.0,
            (geomean(&over("fig9", g.ops, "secon", "supermem", wr)) - 1.0) * 100.0,
            share("secon") * 100.0,
        ));
    }
    causes.extend(bank_causes(p, &runs, rf));
    Ok(Results {
        instructions: p.instructions,
        seed: p.seed,
        quick: p.quick,
        source: rf.source.clone(),
        claims,
        readings,
        readings_markdown,
        figures,
        causes,
        runs,
    })
}

/// Figs. 9-14 as the runs give them, each normalised as the paper's is.
fn figures_of(g: &Grid, runs: &[RunRecord], micro: &[&str]) -> Vec<Figure> {
    let norm = |fig: &str, s: &str, base: &str, label: &str, x: u64, f: fn(&RunRecord) -> f64| {
        f(find(runs, fig, s, label, x)) / f(find(runs, fig, base, label, x))
    };
    let lat = RunRecord::latency;
    let wr = RunRecord::writes;
    let tput = |r: &RunRecord| r.transactions_per_second;
    let ns0 = g.hash_ns[0];
    let mut figures = Vec::new();
    let fig = |name: &str, title: &str, (x_label, y_label): (&str, &str), xs: &[u64], rows: Vec<(String, String, Vec<f64>)>| Figure {
        name: name.into(),
        title: title.into(),
        x_label: x_label.into(),
        y_label: y_label.into(),
        xs: xs.to_vec(),
        rows,
    };
    let per = |xs: &[u64], schemes: &[&str], labels: &[&str], f: &dyn Fn(&str, &str, u64) -> f64| -> Vec<(String, String, Vec<f64>)> {
        labels
            .iter()
            .flat_map(|l| schemes.iter().map(move |s| (l, s)))
            .map(|(l, s)| (l.to_string(), s.to_string(), xs.iter().map(|&x| f(l, s, x)).collect()))
            .collect()
    };
    figures.push(fig(
        "fig9",
        "Fig. 9: transaction latency against operations per transaction, normalised to WB",
        ("operations per transaction", "latency / WB"),
        g.ops,
        per(g.ops, &SCHEMES, micro, &|l, s, x| norm("fig9", s, "wb", l, x, lat)),
    ));
    figures.push(fig(
        "fig10",
        "Fig. 10: PM writes against operations per transaction, normalised to WB",
        ("operations per transaction", "PM writes / WB"),
        g.ops,
        per(g.ops, &SCHEMES, micro, &|l, s, x| norm("fig9", s, "wb", l, x, wr)),
    ));
    let wb1 = |l: &str| tput(find(runs, "fig11", "wb", l, 1));
    figures.push(fig(
        "fig11",
        "Fig. 11: transaction throughput against cores, normalised to WB on one core",
        ("cores", "throughput / WB on one core"),
        g.cores,
        per(g.cores, &MAIN, &["TPCC", "YCSB"], &|l, s, x| tput(find(runs, "fig11", s, l, x)) / wb1(l)),
    ));
    figures.push(fig(
        "fig12",
        "Fig. 12: PM writes against value size (1 operation per transaction), normalised to WB",
        ("value bytes", "PM writes / WB"),
        g.values,
        per(g.values, &MAIN, micro, &|l, s, x| norm("fig12", s, "wb", l, x, wr)),
    ));
    figures.push(fig(
        "fig13",
        "Fig. 13: latency growth (Hash) and throughput decrease (YCSB) against the 40 ns hash",
        ("BMT hash ns", "change against 40 ns"),
        g.hash_ns,
        per(g.hash_ns, &SENSITIVE, &["Hash", "YCSB"], &|l, s, x| {
            let (a, b) = (find(runs, "fig13", s, l, x), find(runs, "fig13", s, l, ns0));
            if l == "Hash" {
                lat(a) / lat(b) - 1.0
            } else {
                1.0 - tput(a) / tput(b)
            }
        }),
    ));
    let wpq0 = g.wpq[0];
    figures.push(fig(
        "fig14",
        "Fig. 14: Secon's PM writes against WPQ entries, normalised to the smallest WPQ",
        ("WPQ entries", "PM writes / smallest WPQ"),
        g.wpq,
        per(g.wpq, &["secon"], micro, &|l, s, x| wr(find(runs, "fig14", s, l, x)) / wr(find(runs, "fig14", s, l, wpq0))),
    ));
    figures
}

/// The causes the banks' write time and WT's own writes explain: WT as
/// the base of five claims, Fig. 11's throughput, and TEP's gain.
fn bank_causes(p: &Secon, runs: &[RunRecord], rf: &Reference) -> Vec<String> {
    let g = &p.grid;
    let micro: Vec<&str> = MICRO.iter().map(|m| m.0).collect();
    let (lat, wr) = (RunRecord::latency as fn(&RunRecord) -> f64, RunRecord::writes as fn(&RunRecord) -> f64);
    let runs_of = |fig: &str, s: &str| -> Vec<&RunRecord> { runs.iter().filter(|r| r.fig == fig && r.scheme == s).collect() };
    let ratio = |fig: &str, xs: &[u64], s: &str, base: &str, f: fn(&RunRecord) -> f64| {
        let v: Vec<f64> = micro
            .iter()
            .flat_map(|l| xs.iter().map(move |&x| (l, x)))
            .map(|(l, x)| f(find(runs, fig, s, l, x)) / f(find(runs, fig, base, l, x)))
            .collect();
        geomean(&v)
    };
    let fig9 = |s: &str, base: &str, f: fn(&RunRecord) -> f64| ratio("fig9", g.ops, s, base, f);
    let paper = |id: &str| rf.paper(id).unwrap_or(f64::NAN);
    let wt_wb = paper("wt_latency_vs_wb");
    // WT's writes on its busiest bank: that bank's write time over a write's.
    let wt9 = runs_of("fig9", "wt");
    let hot: f64 = wt9.iter().map(|r| r.busiest_bank_write_utilisation * r.cycles as f64 / p.write_cycles as f64).sum::<f64>()
        / wt9.iter().map(|r| r.device_writes.total() as f64).sum::<f64>();
    let busiest = |rs: &[&RunRecord]| rs.iter().map(|r| r.busiest_bank_write_utilisation).sum::<f64>() / rs.len().max(1) as f64 * 100.0;
    let wb9 = runs_of("fig9", "wb");
    let wb_merged =
        1.0 - wb9.iter().map(|r| r.device_writes.data as f64).sum::<f64>() / wb9.iter().map(|r| r.offered_writes.data as f64).sum::<f64>();
    let (vmin, vmax) = (g.values[0], *g.values.last().expect("points"));
    let mut v = vec![format!(
        "WT, the base of five claims (WT's 3x latency, SuperMem -26 % and Secon -51 % against WT, Secon's writes -32 % and -17 % at {vmin} B against WT): against WB, SuperMem's latency is {:.2}x and Secon's {:.2}x, where the paper's own numbers put them at {:.2}x and {:.2}x ({wt_wb:.0}x WB less 26 % and less 51 %); Secon's writes are {:.2}x WB's against the paper's {:.2}x. So SuperMem's latency and Secon's writes are near the paper's, and the changes against WT miss because WT runs at {:.1}x WB's latency and {:.2}x its writes. WT's counter and first-level node writes never merge in the WPQ (the plain WT coalesces data only), while {:.0} % of WB's data writes merge there; and its writes crowd one bank: the busiest bank writes for {:.0} % of each Fig. 9 run (mean) and takes at least {:.0} % of WT's writes (16 banks), so WT waits on that bank's {} cycles a write. At {vmin} B WT writes {:.2}x WB and Secon {:.2}x ({vmax} B: {:.2}x and {:.2}x).",
        fig9("supermem", "wb", lat),
        fig9("secon", "wb", lat),
        wt_wb * (1.0 + paper("supermem_latency_vs_wt")),
        wt_wb * (1.0 + paper("secon_latency_vs_wt")),
        fig9("secon", "wb", wr),
        paper("wt_writes_vs_wb") * (1.0 + paper("secon_writes_vs_wt")),
        fig9("wt", "wb", lat),
        fig9("wt", "wb", wr),
        wb_merged * 100.0,
        busiest(&wt9),
        hot * 100.0,
        p.write_cycles,
        ratio("fig12", &[vmin], "wt", "wb", wr),
        ratio("fig12", &[vmin], "secon", "wb", wr),
        ratio("fig12", &[vmax], "wt", "wb", wr),
        ratio("fig12", &[vmax], "secon", "wb", wr),
    )];
    // Fig. 11: SuperMem's and Secon's busiest bank at every point.
    let f11 = |s: &str| runs_of("fig11", s);
    let least = f11("supermem").iter().chain(f11("secon").iter()).map(|r| r.busiest_bank_write_utilisation).fold(f64::INFINITY, f64::min);
    let per_tx = |s: &str| geomean(&f11(s).iter().map(|r| r.writes()).collect::<Vec<_>>());
    let most = *g.cores.last().expect("points");
    let waits = |s: &str| f11(s).iter().filter(|r| r.x == most).map(|r| r.wpq_full_waits).sum::<u64>();
    v.push(format!(
        "Throughput against SuperMem (Fig. 11, the TPCC and YCSB claims): at every core count run, under SuperMem and Secon alike, the busiest bank writes for at least {:.0} % of the run, so both are bound by one bank's write time and run at about the same rate. Secon releases the memory controller's register before the root update (3.2), which lets more writes queue, but they wait for the same bank: Secon writes {:+.0} % per transaction against SuperMem (geometric mean over Fig. 11's runs; it colocates counters with the log instead of coalescing them), and at {most} cores its writes found the WPQ full {} times against SuperMem's {}.",
        least * 100.0,
        (per_tx("secon") / per_tx("supermem") - 1.0) * 100.0,
        waits("secon"),
        waits("supermem"),
    ));
    let last = *g.ops.last().expect("points");
    let tep_at = |l: &str| {
        format!(
            "{l} {:+.0} %",
            (lat(find(runs, "fig9", "secon", l, last)) / lat(find(runs, "fig9", "secon-no-tep", l, last)) - 1.0) * 100.0
        )
    };
    let full = |l: &str, s: &str| find(runs, "fig9", s, l, last).wpq_full_waits;
    v.push(format!(
        "Paired epochs (TEP's -14 %): TEP's change at {last} operations per transaction: {}. TEP sends a line once its own log's ACK is back instead of after every earlier epoch's, so more of a transaction's lines reach the WPQ at once; where one bank is saturated they only wait there: on Hash at {last} operations Secon's writes found the WPQ full {} times against {} without TEP, behind a busiest bank writing {:.0} % of the run. Where its writes rarely find the WPQ full (Btree and RBtree at {last}: {} and {} times) TEP gains as the paper says.",
        micro.iter().map(|l| tep_at(l)).collect::<Vec<_>>().join(", "),
        full("Hash", "secon"),
        full("Hash", "secon-no-tep"),
        find(runs, "fig9", "secon", "Hash", last).busiest_bank_write_utilisation * 100.0,
        full("Btree", "secon"),
        full("RBtree", "secon"),
    ));
    v
}

fn runs_csv(runs: &[RunRecord]) -> String {
    let mut s = String::from(
        "fig,scheme,workload,label,x,instructions,cycles,transactions,tx_per_s,latency_cycles,writes_per_tx,device_data,device_counter,device_mac,device_tree\n",
    );
    for r in runs {
        let d = &r.device_writes;
        let _ = writeln!(
            s,
            "{},{},\"{}\",{},{},{},{},{},{:.1},{:.1},{:.3},{},{},{},{}",
            r.fig,
            r.scheme,
            r.workload,
            r.label,
            r.x,
            r.instructions,
            r.cycles,
            r.transactions,
            r.transactions_per_second,
            r.latency(),
            r.writes(),
            d.data,
            d.counter,
            d.mac,
            d.tree
        );
    }
    s
}

/// The report: every claim with the paper's number, ours, the difference
/// and what the measured cause of a gap is; then every figure's cells.
pub fn report(r: &Results) -> String {
    let method = format!(
        "{} instructions per run, seed {}{}. Latency is cycles per committed transaction; PM writes are the PCM's writes after WPQ merging, per transaction. Means over workloads and points are geometric (arithmetic beside them). Crypto is timing-only in these runs (the timing model prices the same work either way).\n",
        r.instructions,
        r.seed,
        if r.quick { ", --quick grid" } else { "" }
    );
    let mut s = rp::report_head("Secon", &r.source, method.trim_end());
    s.push_str(&ClaimResult::markdown(&r.claims, "configs/reference/secon.toml"));
    s.push_str(&r.readings_markdown);
    s.push_str(&rp::causes_and_figures(&r.causes, "", &r.figures, 3));
    s
}
