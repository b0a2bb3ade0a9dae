//! SecPB's evaluation (SecPB VI): Table IV, Figs. 6-9 and the worked NoGap
//! IPC estimate of VI-B, run over a workload suite, with the paper's
//! published numbers beside ours (`configs/reference/secpb-performance.toml`).
//!
//! ```text
//!  suite.rs     the workloads: recorded programs (at their simulation points) or built-in stand-ins
//!  mod.rs       the grid:  suite x {bbb, sp, cobcm..nogap, BMF variants} at 32 entries
//!                          suite x {bbb, cm} at 8..512 entries
//!                          (+ every store persistent, the VI-B profile, a real-crypto sample)
//!               a program's points merged into one record by weighted CPI
//!  analysis.rs  -> Table IV, Figs. 6-9, VI-B, the claims (each cell judged by the one rule)
//!  causes.rs    -> the causes of the gaps, measured on the runs (report.md's last section)
//!  report.rs    -> report.md, runs.csv, one CSV per table
//! ```
//! Averages over the suite are geometric means of execution time
//! normalised to bbb (the arithmetic mean of the slowdowns is shown too).

mod analysis;
mod causes;
mod report;
mod suite;

pub use analysis::{claims, Cell, NogapCheck, Reference};
pub use report::report;
pub use suite::{builtin_suite, is_recorded, recorded_suite, SuiteEntry, GAMESS_LIKE, MAIN_POLICY};

use super::claims::ClaimResult;
use super::grid::TimedRun;
use super::published_ipc::PublishedIpc;
use super::Paper;
use crate::engine::nvm::ByKind;
use crate::workload::WorkloadKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use suite::GAMESS_PROFILE;

/// The presets of the six SecPB schemes, named as their variants, in
/// Table V's order (from the scheme registry, not a second list).
pub fn secpb_presets() -> [&'static str; 6] {
    crate::scheme::SecPbVariant::ALL.map(|v| v.name())
}
pub const SIZES: [u32; 7] = [8, 16, 32, 64, 128, 256, 512];
pub const BMF: [&str; 4] = ["cm-dbmf", "cm-sbmf", "sp-dbmf", "sp-sbmf"];
/// A sensitivity run beside the grid, outside every table: bbb and COBCM
/// at 32 entries again under spmsim's memory controller before the gem5
/// one (reads first, posted writes that hold no bank), which measures how
/// much of COBCM's overhead is the PCM's write bandwidth (the causes).
pub const CONTROLLER_SETTING: &str = "memory_controller.model=reads-first";
pub const CONTROLLER_SCHEMES: [&str; 2] = ["bbb", "cobcm"];
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    pub scheme: String,
    pub workload: String,
    pub entries: u32,
    pub instructions: u64,
    pub cycles: u64,
    pub ipc: f64,
    pub ppti: f64,
    pub nwpe: f64,
    pub bmt_root_updates: u64,
    pub secpb_drains: u64,
    pub wpq_full_waits: u64,
    pub store_buffer_stall_cycles: u64,
    pub secpb_full_stall_cycles: u64,
    pub pcm_write_utilisation: f64,
    /// The share of the run the PCM's busiest bank spent writing.
    #[serde(default)]
    pub busiest_bank_write_utilisation: f64,
    pub nvm_writes: ByKind,
    pub nvm_reads: ByKind,
    /// How the workload's events were obtained (trace source, derived values).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// A run of Table IV with every store persistent, beside the main
    /// grid's policy (recorded programs only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all_persistent: bool,
    /// `core.model` of the run.
    #[serde(default)]
    pub core_model: String,
    /// Branch mispredictions per 1000 instructions (`ooo` core only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mispredicts_pki: Option<f64>,
    /// A run of the real-crypto parity sample (outside every table).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub real_crypto: bool,
    /// The setting of a sensitivity run ([`CONTROLLER_SETTING`]), outside
    /// every table; none for the grid's runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Results {
    /// Runs outside every table that failed, and why (left out).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// Published IPC of the programs' SPEC counterparts (recorded suites).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_ipc: Option<PublishedIpc>,
    pub suite: Vec<SuiteEntry>,
    pub instructions: u64,
    pub seed: u64,
    pub quick: bool,
    pub runs: Vec<RunRecord>,
    pub table4: Vec<Cell>,
    pub table4_arith: BTreeMap<String, f64>,
    /// Table IV with every store persistent (empty for the built-in suite).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub table4_all: BTreeMap<String, f64>,
    pub fig6: Vec<Cell>,
    pub fig7: Vec<Cell>,
    pub fig8: Vec<Cell>,
    pub fig9: Vec<Cell>,
    pub nogap: NogapCheck,
    pub order_holds: bool,
    pub root_updates_fall: bool,
    /// The text's figures for single benchmarks the suite holds.
    pub per_benchmark: Vec<analysis::BenchmarkCell>,
    /// The benchmarks the text quotes that the suite has no program for.
    pub benchmarks_absent: Vec<String>,
    /// Markdown for Tables V and VI, supplied by the battery model.
    pub battery_markdown: Option<String>,
    /// The same tables' rows as data (empty when the model could not run).
    pub battery_rows: Vec<crate::battery::TableRow>,
    /// The grid runs timing-only crypto; these runs repeat some of it
    /// with real AES and HMAC.
    #[serde(default)]
    pub crypto_parity: Vec<CryptoParity>,
}

#[derive(Serialize)]
pub struct Spec {
    scheme: String,
    label: String,
    workload: String,
    entries: u32,
    all_persistent: bool,
    /// Scheduled by the `ooo` core (a recorded program has an instruction
    /// stream); generated workloads run the `interval` core.
    ooo: bool,
    /// Real AES and HMAC; the sweep runs timing-only crypto, whose cycles
    /// are the same (the parity sample checks it).
    real_crypto: bool,
    /// The point's weight in its program (1: the program's only run).
    weight: f64,
    /// A sensitivity run's setting ([`CONTROLLER_SETTING`]).
    setting: Option<&'static str>,
}

/// A run repeated with real cryptography: its cycles against the
/// timing-only run of the grid.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CryptoParity {
    pub scheme: String,
    pub workload: String,
    pub timing_only_cycles: u64,
    pub real_cycles: u64,
}

/// Schemes of the real-crypto parity sample, run on the suite's first workload.
const PARITY_SCHEMES: [&str; 3] = ["bbb", "cm", "cobcm"];

/// SecPB's reproduction: the suite it runs over and how.
pub struct SecPb {
    pub suite: Vec<SuiteEntry>,
    pub instructions: u64,
    pub seed: u64,
    pub quick: bool,
    reference: Reference,
    /// The SPEC counterparts' published IPC (a recorded suite only).
    published_ipc: Option<PublishedIpc>,
}

impl SecPb {
    pub fn new(suite: Vec<SuiteEntry>, instructions: u64, seed: u64, quick: bool) -> Result<Self, String> {
        let published_ipc = if is_recorded(&suite) { Some(PublishedIpc::load()?) } else { None };
        Ok(SecPb { suite, instructions, seed, quick, reference: Reference::load()?, published_ipc })
    }
}

/// What a run gave: its record, or, for a run outside every table and
/// average (the gamess-like profile on a program's stream), why it failed:
/// such a run is reported and left out, where any other failure ends the
/// reproduction.
#[derive(Serialize, Deserialize)]
pub enum Record {
    Ran(Box<RunRecord>),
    LeftOut(String),
}

impl Spec {
    fn new(scheme: &str, label: &str, workload: &str, entries: u32, ooo: bool, weight: f64) -> Spec {
        Spec {
            scheme: scheme.into(),
            label: label.into(),
            workload: workload.into(),
            entries,
            all_persistent: false,
            ooo,
            real_crypto: false,
            weight,
            setting: None,
        }
    }

    /// Outside every table and average.
    fn optional(&self) -> bool {
        self.label.starts_with(&format!("{GAMESS_LIKE}@"))
    }
}

impl Paper for SecPb {
    type Point = Spec;
    type Record = Record;
    type Results = Results;
    const ID: &'static str = "secpb";
    const PLOTS: bool = true;

    fn grid(&self) -> Vec<Spec> {
        let mut specs = Vec::new();
        for w in &self.suite {
            let points = if w.points.is_empty() { vec![(w.workload.clone(), 1.0)] } else { w.points.clone() };
            let ooo = w.persistent.is_some();
            for (workload, weight) in points {
                for s in ["bbb", "sp"].iter().chain(secpb_presets().iter()).chain(BMF.iter()) {
                    specs.push(Spec::new(s, &w.label, &workload, 32, ooo, weight));
                }
                for s in CONTROLLER_SCHEMES {
                    specs.push(Spec { setting: Some(CONTROLLER_SETTING), ..Spec::new(s, &w.label, &workload, 32, ooo, weight) });
                }
                for &n in SIZES.iter().filter(|&&n| n != 32) {
                    specs.push(Spec::new("bbb", &w.label, &workload, n, ooo, weight));
                    specs.push(Spec::new("cm", &w.label, &workload, n, ooo, weight));
                }
                if w.persistent.is_some() {
                    let all = workload.replace(&format!("#persistent={MAIN_POLICY}"), "#persistent=all");
                    for s in ["bbb", "sp"].iter().chain(secpb_presets().iter()) {
                        specs.push(Spec { all_persistent: true, ..Spec::new(s, &w.label, &all, 32, ooo, weight) });
                    }
                }
            }
        }
        // The VI-B worked example needs the gamess-like profile; a suite
        // without it gets one NoGap run of it beside the grid, outside the averages.
        if !self.suite.iter().any(|w| w.label == GAMESS_LIKE) {
            specs.push(Spec::new("nogap", GAMESS_LIKE, GAMESS_PROFILE, 32, false, 1.0));
        }
        // The same profile on the `ooo` core, on the instruction stream of
        // each recorded program's first point in turn: the profile's stores on
        // real register dependences and branches, so that bbb's IPC on it is
        // no longer the issue width. Outside every average, as above.
        for w in self.suite.iter().filter(|w| w.persistent.is_some()) {
            let first = w.points.first().map_or(w.workload.as_str(), |p| p.0.as_str());
            let Ok(WorkloadKind::Trace(t)) = WorkloadKind::parse(first) else { continue };
            for s in ["bbb", "nogap"] {
                let profile = format!("{GAMESS_PROFILE},insns={}", t.path.display());
                specs.push(Spec::new(s, &format!("{GAMESS_LIKE}@{}", w.label), &profile, 32, true, 1.0));
            }
        }
        // The parity sample runs the first program's first point alone.
        if let Some(w) = self.suite.first() {
            for s in PARITY_SCHEMES {
                specs.push(Spec { real_crypto: true, ..Spec::new(s, &w.label, &w.workload, 32, w.persistent.is_some(), 1.0) });
            }
        }
        specs
    }

    fn describe(&self, sp: &Spec) -> String {
        match sp.setting {
            Some(x) => format!("{} {} {} ({x})", sp.scheme, sp.entries, sp.label),
            None => format!("{} {} {}", sp.scheme, sp.entries, sp.label),
        }
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::json!({ "instructions": self.instructions, "seed": self.seed })
    }

    fn run(&self, sp: &Spec) -> Result<Record, String> {
        match self.timed(sp) {
            Ok(r) => Ok(Record::Ran(Box::new(r))),
            Err(e) if sp.optional() => Ok(Record::LeftOut(e)),
            Err(e) => Err(e),
        }
    }

    fn analyse(&self, records: Vec<(&Spec, Record)>) -> Result<Results, String> {
        let mut left_out = Vec::new();
        let mut ran: Vec<(&Spec, RunRecord)> = Vec::new();
        for (sp, r) in records {
            match r {
                Record::Ran(r) => ran.push((sp, *r)),
                Record::LeftOut(e) => left_out.push(e),
            }
        }
        let real: Vec<RunRecord> = ran.iter().filter(|(_, r)| r.real_crypto).map(|(_, r)| r.clone()).collect();
        // The parity sample compares like with like: the first point's own
        // timing-only run beside its real-crypto run.
        let first = self.suite.first().map(|w| w.workload.clone()).unwrap_or_default();
        let timing_only: BTreeMap<String, u64> = ran
            .iter()
            .filter(|(sp, r)| !r.real_crypto && sp.entries == 32 && !sp.all_persistent && sp.setting.is_none() && sp.workload == first)
            .map(|(sp, r)| (sp.scheme.clone(), r.cycles))
            .collect();
        // Each program's points become one record per grid cell, in spec order.
        let mut groups: Vec<Vec<(RunRecord, f64)>> = Vec::new();
        let mut index: BTreeMap<(String, String, u32, bool, Option<String>), usize> = BTreeMap::new();
        for (sp, r) in ran {
            if r.real_crypto {
                continue;
            }
            let key = (r.scheme.clone(), r.workload.clone(), r.entries, r.all_persistent, r.setting.clone());
            let g = *index.entry(key).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push((r, sp.weight));
        }
        let runs: Vec<RunRecord> = groups.iter().map(|g| merge_points(g)).collect();
        let parity = real
            .into_iter()
            .map(|r| CryptoParity {
                timing_only_cycles: timing_only
                    .get(&r.scheme)
                    .copied()
                    .unwrap_or_else(|| analysis::find(&runs, &r.scheme, &r.workload, 32).cycles),
                scheme: r.scheme,
                workload: r.workload,
                real_cycles: r.cycles,
            })
            .collect();
        let mut res = analysis::analyse(&self.suite, self.instructions, self.seed, self.quick, runs, &self.reference);
        res.crypto_parity = parity;
        res.published_ipc = self.published_ipc.clone();
        res.left_out = left_out;
        (res.battery_markdown, res.battery_rows) = battery_tables();
        Ok(res)
    }

    fn claims(&self, r: &Results) -> Vec<ClaimResult> {
        claims(r, &self.reference)
    }

    fn files(&self, r: &Results) -> Result<Vec<(String, String)>, String> {
        report::files(r, &self.claims(r))
    }

    /// One line per point, timing-only and real-crypto alike.
    fn runs_csv(&self, finished: &[Record]) -> String {
        let ran: Vec<RunRecord> =
            finished.iter().filter_map(|r| if let Record::Ran(x) = r { Some(x.as_ref().clone()) } else { None }).collect();
        report::runs_csv(&ran)
    }

    fn summary(&self, r: &Results) -> Vec<String> {
        let mut v: Vec<String> = r
            .table4
            .iter()
            .map(|c| {
                format!("{:<6} slowdown {:>8.1} %  (paper {})", c.row, c.ours, c.paper.map(|p| format!("{p} %")).unwrap_or("-".into()))
            })
            .collect();
        v.push(format!(
            "order COBCM < OBCM < BCM < CM < M < NoGap (pairs within 25 % either way): {}",
            if r.order_holds { "holds" } else { "does NOT hold" }
        ));
        v.push(format!("BMT root updates fall as the SecPB grows: {}", if r.root_updates_fall { "yes" } else { "no" }));
        let paper = |x: Option<f64>| x.map_or("-".to_string(), |v| v.to_string());
        let n = &r.nogap;
        v.push(format!(
            "NoGap IPC at PPTI {:.1}, NWPE {:.2}: {:.3} (formula {:.3}; paper {} estimate, {} simulated)",
            n.ppti,
            n.nwpe,
            n.ipc,
            n.formula_ipc,
            paper(n.paper_estimate),
            paper(n.paper_actual)
        ));
        v
    }
}

impl SecPb {
    /// One run of the grid.
    fn timed(&self, sp: &Spec) -> Result<RunRecord, String> {
        let mut o = Vec::new();
        if !sp.scheme.starts_with("sp") {
            o.push(format!("persistence.point.entries={}", sp.entries));
        }
        if sp.ooo {
            o.push("core.model=ooo".into());
        }
        if !sp.real_crypto {
            o.push("security.crypto=timing-only".into());
        }
        o.extend(sp.setting.map(String::from));
        let s = TimedRun::new(&sp.scheme, o, &sp.workload).time(self.instructions, self.seed)?.stats;
        let r = &s.roi;
        let buffer = r.persist_path.buffer.clone().unwrap_or_default();
        Ok(RunRecord {
            scheme: sp.scheme.clone(),
            workload: sp.label.clone(),
            entries: sp.entries,
            instructions: r.core.instructions,
            cycles: r.core.cycles,
            ipc: r.core.ipc,
            ppti: r.core.ppti,
            nwpe: buffer.nwpe,
            bmt_root_updates: r.tree.root_updates,
            secpb_drains: buffer.drains,
            wpq_full_waits: r.memory.wpq_full_waits,
            store_buffer_stall_cycles: r.core.store_buffer_stall_cycles,
            secpb_full_stall_cycles: buffer.full_stall_cycles,
            pcm_write_utilisation: r.memory.write_utilisation,
            busiest_bank_write_utilisation: r.memory.busiest_bank_write_utilisation,
            nvm_writes: r.memory.writes,
            nvm_reads: r.memory.reads,
            notes: s.workload_notes.clone(),
            all_persistent: sp.all_persistent,
            core_model: if sp.ooo { "ooo" } else { "interval" }.into(),
            mispredicts_pki: r.core.ooo.map(|o| o.mispredicts as f64 * 1000.0 / r.core.instructions.max(1) as f64),
            real_crypto: sp.real_crypto,
            setting: sp.setting.map(String::from),
        })
    }
}

/// Tables V and VI from the battery model, as Markdown and as rows; the
/// Markdown says why when the model cannot run.
fn battery_tables() -> (Option<String>, Vec<crate::battery::TableRow>) {
    use crate::battery::{default_energy_path, default_reference_path, markdown_report, table_rows, EnergyConfig, Reference};
    let loaded = EnergyConfig::load(&default_energy_path()).and_then(|c| Reference::load(&default_reference_path()).map(|r| (c, r)));
    match loaded {
        Ok((cfg, rf)) => (Some(markdown_report(&cfg, &rf)), table_rows(&cfg, &rf)),
        Err(e) => (Some(format!("The battery model could not run: {e}\n")), Vec::new()),
    }
}

/// One program's runs at its points merged into one record: per-instruction
/// figures (CPI, PPTI, NWPE, counts per instruction, utilisation) weighted
/// by the points' weights, over the points' instructions together.
fn merge_points(parts: &[(RunRecord, f64)]) -> RunRecord {
    if parts.len() == 1 {
        return parts[0].0.clone();
    }
    let mut r = parts[0].0.clone();
    let n: u64 = parts.iter().map(|(p, _)| p.instructions).sum();
    let wavg = |f: &dyn Fn(&RunRecord) -> f64| parts.iter().map(|(p, w)| w * f(p)).sum::<f64>();
    let per = |f: &dyn Fn(&RunRecord) -> u64| (wavg(&|p: &RunRecord| f(p) as f64 / p.instructions.max(1) as f64) * n as f64).round() as u64;
    r.instructions = n;
    r.cycles = per(&|p| p.cycles);
    r.ipc = n as f64 / r.cycles.max(1) as f64;
    r.ppti = wavg(&|p| p.ppti);
    r.nwpe = wavg(&|p| p.nwpe);
    r.bmt_root_updates = per(&|p| p.bmt_root_updates);
    r.secpb_drains = per(&|p| p.secpb_drains);
    r.wpq_full_waits = per(&|p| p.wpq_full_waits);
    r.store_buffer_stall_cycles = per(&|p| p.store_buffer_stall_cycles);
    r.secpb_full_stall_cycles = per(&|p| p.secpb_full_stall_cycles);
    r.pcm_write_utilisation = wavg(&|p| p.pcm_write_utilisation);
    r.busiest_bank_write_utilisation = wavg(&|p| p.busiest_bank_write_utilisation);
    let by_kind = |of: &dyn Fn(&RunRecord) -> &crate::engine::nvm::ByKind| crate::engine::nvm::ByKind {
        data: per(&|p| of(p).data),
        counter: per(&|p| of(p).counter),
        mac: per(&|p| of(p).mac),
        tree: per(&|p| of(p).tree),
        recovery: per(&|p| of(p).recovery),
    };
    r.nvm_writes = by_kind(&|p| &p.nvm_writes);
    r.nvm_reads = by_kind(&|p| &p.nvm_reads);
    r.mispredicts_pki = r.mispredicts_pki.map(|_| wavg(&|p| p.mispredicts_pki.unwrap_or(0.0)));
    r.notes = parts.iter().flat_map(|(p, _)| p.notes.iter().cloned()).fold(Vec::new(), |mut v, x| {
        if !v.contains(&x) {
            v.push(x);
        }
        v
    });
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(instructions: u64, cycles: u64, ppti: f64, writes: u64) -> RunRecord {
        RunRecord {
            scheme: "cm".into(),
            workload: "w".into(),
            entries: 32,
            instructions,
            cycles,
            ipc: instructions as f64 / cycles as f64,
            ppti,
            nwpe: 2.0,
            bmt_root_updates: 0,
            secpb_drains: 0,
            wpq_full_waits: 0,
            store_buffer_stall_cycles: 0,
            secpb_full_stall_cycles: 0,
            pcm_write_utilisation: 0.5,
            busiest_bank_write_utilisation: 0.5,
            nvm_writes: crate::engine::nvm::ByKind { data: writes, ..Default::default() },
            nvm_reads: Default::default(),
            notes: vec!["n".into()],
            all_persistent: false,
            core_model: "ooo".into(),
            mispredicts_pki: Some(1.0),
            real_crypto: false,
            setting: None,
        }
    }

    #[test]
    fn a_failed_run_keeps_the_finished_runs() {
        // Two workloads of the grid; the second cannot run (its trace does
        // not exist), so the reproduction fails, but the first one's runs
        // are handed back and written.
        let mut suite: Vec<SuiteEntry> = builtin_suite().into_iter().take(2).collect();
        suite[1].workload = "trace:/nonexistent/spmsim-missing.trace".into();
        let missing = suite[1].label.clone();
        let p = SecPb::new(suite.clone(), 5_000, 1, true).unwrap();
        let f = crate::reproduce::run(&p, &|_, _, _| {}).expect_err("a run on a missing trace fails");
        assert!(!f.failed.is_empty());
        assert!(f.failed.iter().all(|e| e.contains("spmsim-missing.trace")), "{:?}", f.failed);
        let ran: Vec<&RunRecord> =
            f.completed.iter().filter_map(|r| if let Record::Ran(x) = r { Some(x.as_ref()) } else { None }).collect();
        assert!(!ran.is_empty());
        assert!(ran.iter().any(|r| r.workload == suite[0].label));
        assert!(ran.iter().all(|r| r.workload != missing));
        assert!(f.to_string().contains("failed"));
        let dir = std::env::temp_dir().join(format!("spmsim-partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        crate::reproduce::write_partial(&p, &f, &dir).unwrap();
        let csv = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + ran.len());
        assert!(csv.contains(&format!(",{},", suite[0].label)));
        let failed = std::fs::read_to_string(dir.join("failed.txt")).unwrap();
        assert_eq!(failed.lines().count(), f.failed.len());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn points_merge_by_weighted_cpi() {
        // One point is the run itself.
        let a = rec(1000, 2000, 10.0, 50);
        assert_eq!(merge_points(&[(a.clone(), 1.0)]).cycles, 2000);
        // CPI 2 at weight 0.75 and CPI 6 at weight 0.25: CPI 3, over the
        // points' 2000 instructions; PPTI and writes per instruction alike.
        let b = rec(1000, 6000, 30.0, 250);
        let m = merge_points(&[(a, 0.75), (b, 0.25)]);
        assert_eq!(m.instructions, 2000);
        assert_eq!(m.cycles, 6000);
        assert!((m.ipc - 1.0 / 3.0).abs() < 1e-12);
        assert!((m.ppti - 15.0).abs() < 1e-12);
        assert_eq!(m.nvm_writes.data, 200);
        assert_eq!(m.notes, vec!["n".to_string()]);
    }
}
