//! `spmsim compare`: every scheme of the five papers and their baselines on
//! one common machine (`machine`), over one workload set, each measured
//! the same way.
//!
//! ```text
//!  config list -> every preset that is a scheme (role = "scheme") and no control
//!     |  machine::common (one per distinct common configuration)
//!     v
//!  timing runs (timing-only crypto)  x workloads, and the insecure baseline
//!     -> slowdown (per workload, geometric mean), NVM writes per kilo-
//!        instruction by kind, energy per kilo-instruction (Table III prices)
//!  battery::domain_estimate          -> battery energy and volume
//!  recovery::measure at 16 GiB, 1 TiB -> counted recovery, priced
//!  root registers + Scheme::onchip_nv_registers -> on-chip NV bytes
//!  attack::run (real crypto)         -> detected, at run time or at recovery
//!  each preset's own machine         -> its slowdown there, beside the common one
//!  each persistency model (ModelView) -> the timing runs again under epoch
//!     persistency and the paper's own model: slowdowns, best, Pareto fronts
//! ```

pub mod axes;
pub mod explore;
pub mod machine;
pub mod plan;
pub mod plan_explored;
pub mod provenance;
pub mod report;

use crate::config::{list_presets, load_preset, CryptoMode, PersistencyModel, SimConfig};
use crate::engine::nvm::ByKind;
use crate::reproduce::geomean;
use crate::reproduce::grid::{self, Progress};
use crate::timing::simulate_after_warmup;
use crate::workload::WorkloadKind;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

/// The persistent benchmarks: every store persistent (interval core).
pub const BENCHMARKS: [&str; 7] = ["btree", "hash", "array", "queue", "rbtree", "ycsb", "tpcc"];
pub const QUICK_BENCHMARKS: [&str; 3] = ["btree", "hash", "ycsb"];
/// The suite's programs (the multiset-hash paper's stand-ins, recorded by
/// `reproduce mset`), their heap persistent (out-of-order core).
pub const PROGRAMS: [&str; 9] = ["gcc", "xz", "mcf", "perl", "chess", "gnugo", "omnetpp", "x264", "xalan"];
pub const QUICK_PROGRAMS: [&str; 2] = ["gcc", "mcf"];
/// Instructions a program runs before its statistics start (the
/// reproductions' warm-up of a recorded program).
pub const PROGRAM_WARMUP: u64 = grid::PROGRAM_WARMUP;
/// Memory sizes recovery is timed at.
pub const RECOVERY_MEMORY: [(&str, u64); 2] = [("16GiB", 16 << 30), ("1TiB", 1 << 40)];
/// The workload run before each recovery and each attack run.
pub const RECOVERY_WORKLOAD: &str = "hash";
pub const ATTACK_WORKLOAD: &str = "btree";
/// The crash check each scheme gets under each persistency model before
/// its results count: crash points sampled (with the seed) from a run of
/// the attack workload, each drained, recovered and checked against the
/// model's promise (strict: every block's last store; epoch and TEP: the
/// last commit, after the undo log's replay).
pub const CRASH_POINTS: u64 = 64;
/// Operations of that run (at most; fewer when `--ops` says so).
pub const CRASH_OPS: u64 = 300;
/// Operations before each recovery and attack run at most (`--ops`, and an
/// exploration's `recovery_ops`). A counted recovery of 1 TiB grows with
/// them in time and memory: after the full comparison's 20000 operations
/// it takes about a minute and 1.7 GB (after 2000, 7 s and 0.3 GB), so this
/// bound, five times that, keeps one to minutes and about 9 GB, where an
/// unbounded count would run out of memory or never end.
pub const MAX_OPS: u64 = 100_000;
/// Prices of a counted recovery (STAR IV-F, after Anubis and Osiris: an
/// NVM read 100 ns); a hash costs the MAC latency at the core's clock.
pub const RECOVERY_READ_NS: f64 = 100.0;

/// A persistency model every scheme is put under: strict
/// (every store persists in program order), epoch (Pelley et al.: an
/// epoch's stores persist in any order and a barrier waits for all of
/// them), or each preset's own, the model of its paper's machine (TEP
/// for Secon; epoch for STAR's, Triad-NVM's and Secon's baselines; strict
/// for SecPB's and the multiset hash's). The recoveries and attacks run under strict only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelView {
    Strict,
    Epoch,
    Own,
}

impl ModelView {
    pub const ALL: [ModelView; 3] = [ModelView::Strict, ModelView::Epoch, ModelView::Own];

    pub fn name(self) -> &'static str {
        match self {
            ModelView::Strict => "strict",
            ModelView::Epoch => "epoch",
            ModelView::Own => "own",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        Self::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| format!("no persistency model `{s}`; models: strict, epoch, own"))
    }

    /// The model preset `p` runs under in this view.
    pub fn model_of(self, p: &SimConfig) -> PersistencyModel {
        match self {
            ModelView::Strict => PersistencyModel::Strict,
            ModelView::Epoch => PersistencyModel::Epoch,
            ModelView::Own => p.persistence.model,
        }
    }
}

/// The machine label of a timing run on the common machine (secure or
/// its insecure baseline) under `model`.
fn machine_label(model: PersistencyModel, insecure: bool) -> String {
    let base = if insecure { "common-insecure" } else { "common" };
    match model {
        PersistencyModel::Strict => base.to_string(),
        m => format!("{base}-{}", m.name()),
    }
}

/// How one preset runs under one view's model.
#[derive(Clone, Debug)]
enum UnderModel {
    /// Timed under this model.
    Timed(PersistencyModel),
    /// Its strict row stands, for this reason (None: the model is strict).
    Strict(Option<String>),
    /// It cannot run under the model: why.
    CannotRun(String),
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub quick: bool,
    /// Instructions per timing run (default 1 M quick, 10 M otherwise).
    pub instructions: Option<u64>,
    pub seed: u64,
    /// Only these presets (all that qualify when empty).
    pub only: Vec<String>,
    /// Only these workloads (the set of `quick` when empty).
    pub workloads: Vec<String>,
    /// Operations before each recovery and attack (default 2000 quick, 20000).
    pub ops: Option<u64>,
    pub recovery: bool,
    pub attacks: bool,
    /// Also run each preset on its own paper's machine.
    pub paper_machine: bool,
    /// The persistency models (all three when empty).
    pub models: Vec<ModelView>,
    /// Crash-check each scheme under each model ([`CRASH_POINTS`]).
    pub crash: bool,
    /// `--explore`: the front ends each memory-controller scheme's metadata
    /// rules are put behind (None: `axes::fronts`' default).
    pub fronts: Option<Vec<crate::scheme::FrontChoice>>,
    /// `--explore`: also each persist buffer and eADR's caches without
    /// their battery (the WPQ alone on it).
    pub adr_batteries: bool,
}

impl Options {
    pub fn instructions(&self) -> u64 {
        self.instructions.unwrap_or(if self.quick { 1_000_000 } else { 10_000_000 })
    }
    pub fn ops(&self) -> u64 {
        self.ops.unwrap_or(if self.quick { 2000 } else { 20000 })
    }
    /// The counts a run needs: at least one instruction, and 1 to
    /// [`MAX_OPS`] operations before each recovery and attack run (0 would
    /// crash-check a scheme at one point of an empty run).
    pub fn check(&self) -> Result<(), String> {
        if self.instructions() == 0 {
            return Err("--instructions must be at least 1".into());
        }
        let ops = self.ops();
        if !(1..=MAX_OPS).contains(&ops) {
            return Err(format!("--ops must be between 1 and {MAX_OPS} (operations before each recovery and attack run), got {ops}"));
        }
        Ok(())
    }
    /// The persistency models each scheme is put under, strict first.
    pub fn model_views(&self) -> Vec<ModelView> {
        ModelView::ALL.into_iter().filter(|m| self.models.is_empty() || self.models.contains(m)).collect()
    }
    /// The workloads run, as `WorkloadKind` names.
    pub fn workload_names(&self) -> Vec<String> {
        if !self.workloads.is_empty() {
            return self.workloads.clone();
        }
        let (b, p): (&[&str], &[&str]) = if self.quick { (&QUICK_BENCHMARKS, &QUICK_PROGRAMS) } else { (&BENCHMARKS, &PROGRAMS) };
        b.iter().map(|s| s.to_string()).chain(p.iter().map(|s| format!("suite:{s}#persistent=heap"))).collect()
    }
    /// The programs of the suite the workloads need recorded.
    pub fn programs(&self) -> Vec<String> {
        self.workload_names()
            .iter()
            .filter_map(|w| w.strip_prefix("suite:").map(|p| p.split('#').next().unwrap_or(p).to_string()))
            .collect()
    }
}

/// A preset `compare` takes, or leaves out and why.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    pub preset: String,
    /// Why it is left out; None when compared.
    pub left_out: Option<String>,
}

/// The presets `compare` runs: every preset that is a scheme (`role`) and
/// no control, each on the common machine; a preset whose common machine
/// is another's is listed under that one. A scheme added as a preset only
/// joins here with no code change.
pub fn candidates() -> Vec<(Candidate, Option<SimConfig>)> {
    let mut out: Vec<(Candidate, Option<SimConfig>)> = Vec::new();
    let mut seen: Vec<(String, SimConfig)> = Vec::new();
    for preset in list_presets() {
        let cand = |why: Option<String>| Candidate { preset: preset.clone(), left_out: why };
        let cfg = match load_preset(&preset, &[]) {
            Ok(c) => c,
            Err(e) => {
                out.push((cand(Some(format!("does not load: {e}"))), None));
                continue;
            }
        };
        let common = machine::common(&cfg);
        let base = machine::insecure(&common);
        let invalid = common.validate().and_then(|_| base.validate()).map_err(|(k, m)| format!("key `{k}`: {m}")).err();
        // Compared by what it runs, not by its name.
        let why = if cfg.expect_crash_violations || cfg.expect_undetected_attacks {
            Some("a control, built to fail the crash oracle or the attack harness".to_string())
        } else if !cfg.role.is_scheme() {
            Some(format!("role = {:?}: not a scheme of its own", cfg.role).to_lowercase())
        } else if let Some(e) = invalid {
            Some(format!("its scheme cannot run on the common machine: {e}"))
        } else {
            seen.iter()
                .find(|(_, c)| machine::same_machine(c, &common))
                .map(|(p, _)| format!("the same machine as `{p}` on the common configuration"))
        };
        if why.is_none() {
            seen.push((preset.clone(), common));
        }
        let keep = why.is_none();
        out.push((cand(why), keep.then_some(cfg)));
    }
    out
}

/// The paper a preset comes from, as its description names it first.
pub fn paper_of(cfg: &SimConfig) -> String {
    const NAMES: [(&str, &str); 6] = [
        ("SecPB", "SecPB"),
        ("Secon", "Secon"),
        ("STAR", "STAR"),
        ("Triad-NVM", "Triad-NVM"),
        ("multiset-hash", "multiset hash"),
        ("Kubo", "multiset hash"),
    ];
    NAMES.iter().filter_map(|(k, name)| cfg.description.find(k).map(|i| (i, *name))).min().map_or("-".into(), |(_, n)| n.to_string())
}

/// One step of a comparison, by its index in its own list.
#[derive(Clone, Copy)]
enum Step {
    Run(usize),
    Recovery(usize),
    Attack(usize),
    Crash(usize),
}

/// What a step gave.
enum Outcome {
    Run(Result<RunRecord, String>),
    Recovery(String, String, Result<RecoveryPoint, String>),
    Attack(String, Result<AttackCounts, String>),
    Crash(String, &'static str, Result<CrashVerdict, String>),
}

/// The crash oracle's verdict on a scheme under one persistency model.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct CrashVerdict {
    /// The model's promise checked: `strict` or `transactional`.
    pub guarantee: String,
    pub crash_points: u64,
    pub violations: u64,
    pub violating_crash_points: u64,
    /// The first violation found: its crash point, the event before it,
    /// the block and the check that failed.
    pub first_violation: Option<String>,
}

impl CrashVerdict {
    pub fn safe(&self) -> bool {
        self.violations == 0
    }
}

/// One timing run.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct RunRecord {
    /// `common`, `common-insecure`, `paper` or `paper-insecure`.
    pub machine: String,
    pub config: String,
    pub workload: String,
    pub instructions: u64,
    pub cycles: u64,
    pub device_writes: ByKind,
    pub reads: ByKind,
    pub aes_blocks: u64,
    pub hashes: u64,
    pub register_adds: u64,
}

impl RunRecord {
    pub fn cpi(&self) -> f64 {
        self.cycles as f64 / self.instructions.max(1) as f64
    }
}

/// Attacks of the harness, counted.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct AttackCounts {
    pub total: u64,
    pub detected: u64,
    pub ruled_out: u64,
    pub skipped: u64,
    pub undetected: u64,
    pub false_alarms: u64,
    /// Detected by a check of normal operation (a read's MAC or tree check).
    pub at_run_time: u64,
    /// Detected by the scheme's recovery (an attack on what recovery reads).
    pub at_recovery: u64,
}

/// One counted recovery, priced.
#[derive(Clone, Debug, Serialize)]
pub struct RecoveryPoint {
    pub memory: String,
    pub reads: u64,
    pub hashes: u64,
    pub writes: u64,
    pub seconds: f64,
    pub ok: bool,
}

/// A scheme's row: every metric measured on the common machine.
#[derive(Clone, Debug, Serialize)]
pub struct SchemeRow {
    pub preset: String,
    pub scheme: String,
    pub paper: String,
    pub front: String,
    pub secure: bool,
    pub baseline: String,
    /// Why a metric could not be measured, by metric.
    pub notes: Vec<String>,
    pub slowdown_gmean: Option<f64>,
    pub slowdown: BTreeMap<String, f64>,
    pub writes_pki: BTreeMap<String, f64>,
    pub energy_uj_per_kinstr: Option<f64>,
    pub battery: crate::battery::DomainEstimate,
    pub recovery: Vec<RecoveryPoint>,
    pub recovery_seconds: BTreeMap<String, Option<f64>>,
    pub onchip_nv: Vec<crate::engine::hooks::NvRegister>,
    pub onchip_nv_bytes: u64,
    pub attacks: Option<AttackCounts>,
    /// The crash oracle under this row's persistency model; an unsafe
    /// scheme is left out of the best and the Pareto fronts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash: Option<CrashVerdict>,
    pub paper_config: Option<PaperConfig>,
}

/// The same scheme on its own paper's machine.
#[derive(Clone, Debug, Serialize)]
pub struct PaperConfig {
    pub preset: String,
    pub slowdown_gmean: Option<f64>,
    pub slowdown: BTreeMap<String, f64>,
    /// Keys where the common machine differs from the preset's.
    pub differences: Vec<String>,
}

/// Everything `compare` measured.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub kind: &'static str,
    pub quick: bool,
    pub instructions: u64,
    pub seed: u64,
    pub ops: u64,
    /// Table III's price of moving a byte between the MC and PCM (energy
    /// and battery both use it).
    pub line_nj_per_byte: f64,
    pub common_machine: &'static str,
    pub workloads: Vec<String>,
    pub candidates: Vec<Candidate>,
    pub schemes: Vec<SchemeRow>,
    pub best: Vec<report::Best>,
    pub pareto: BTreeMap<String, Vec<String>>,
    /// The same under each persistency model asked for (`schemes`, `best`
    /// and `pareto` above are strict's).
    pub models: Vec<ModelResults>,
    pub runs: Vec<RunRecord>,
}

/// Every scheme under one persistency model.
#[derive(Clone, Debug, Serialize)]
pub struct ModelResults {
    pub model: ModelView,
    pub schemes: Vec<SchemeRow>,
    pub best: Vec<report::Best>,
    pub pareto: BTreeMap<String, Vec<String>>,
    /// The schemes that cannot run under the model, and why.
    pub not_run: Vec<Candidate>,
}

/// A configuration as one workload runs it: the core model the
/// configuration names, or under `core.model = "auto"` the out-of-order
/// core for a recorded program with its instruction stream and the
/// interval core for a generated benchmark (decided at the run).
fn for_workload(cfg: &SimConfig) -> SimConfig {
    let mut c = cfg.clone();
    c.security.crypto = CryptoMode::TimingOnly;
    c
}

fn timing_run(machine: &str, cfg: &SimConfig, workload: &str, instructions: u64, seed: u64) -> Result<RunRecord, String> {
    let w = WorkloadKind::parse(workload)?;
    let c = for_workload(cfg);
    let warmup = if matches!(w, WorkloadKind::Trace(_)) { PROGRAM_WARMUP } else { 0 };
    let s = simulate_after_warmup(&c, &w, warmup, instructions, seed, &AtomicBool::new(false))
        .map_err(|e| format!("{} ({machine}) on {workload}: {e}", cfg.name))?;
    let r = &s.roi;
    Ok(RunRecord {
        machine: machine.into(),
        config: cfg.name.clone(),
        workload: workload.into(),
        instructions: r.core.instructions,
        cycles: r.core.cycles,
        device_writes: r.memory.device_writes,
        reads: r.memory.reads,
        aes_blocks: r.crypto.aes_blocks,
        hashes: r.crypto.macs + r.crypto.tree_hashes,
        register_adds: r.crypto.read_hash_adds + r.crypto.write_hash_adds,
    })
}

/// The presets `opts` selects (with those left out, and why), after
/// checking every name and count it gives: call before anything slow (recording the
/// programs), so that a typo fails at once.
pub fn selected(opts: &Options) -> Result<Vec<(Candidate, Option<SimConfig>)>, String> {
    opts.check()?;
    let mut cands = candidates();
    if !opts.only.is_empty() {
        for name in &opts.only {
            if !cands.iter().any(|(c, _)| &c.preset == name) {
                return Err(format!("--schemes: no preset `{name}` (see spmsim config list)"));
            }
        }
        cands.retain(|(c, _)| opts.only.contains(&c.preset));
    }
    if cands.iter().all(|(_, c)| c.is_none()) {
        return Err("no preset to compare (every one named is a control, an ablation, a sensitivity or a duplicate)".into());
    }
    for w in opts.workload_names() {
        // A suite program is recorded after this check: its name is
        // checked against the suites, not its trace.
        match w.strip_prefix("suite:").map(|p| p.split('#').next().unwrap_or(p)) {
            Some(p) if !crate::suite::known_program(p) => return Err(format!("--workloads `{w}`: no suite program `{p}`")),
            Some(_) => {}
            None => {
                WorkloadKind::parse(&w).map_err(|e| format!("--workloads `{w}`: {e}"))?;
            }
        }
    }
    Ok(cands)
}

/// Run everything `opts` asks for; `progress(done, total, what)` after each step.
pub fn run(opts: &Options, progress: Progress) -> Result<Comparison, String> {
    let ecfg = crate::battery::EnergyConfig::load(&crate::battery::default_energy_path()).map_err(|e| e.to_string())?;
    let cands = selected(opts)?;
    let chosen: Vec<SimConfig> = cands.iter().filter_map(|(_, c)| c.clone()).collect();
    let workloads = opts.workload_names();
    let (n, seed) = (opts.instructions(), opts.seed);

    // The timing runs, each distinct configuration once per workload.
    let mut specs: Vec<(String, SimConfig)> = Vec::new();
    // Each configuration once per machine kind: names are unique per
    // content (the baselines are named below so that they are).
    let mut add = |machine: &str, c: SimConfig| {
        if machine::timed(&c) && !specs.iter().any(|(m, x)| m == machine && x.name == c.name) {
            specs.push((machine.to_string(), c));
        }
    };
    // How each preset runs under each view's model: timed under it, its
    // strict row standing, or not at all.
    let views = opts.model_views();
    let under: BTreeMap<(String, ModelView), UnderModel> =
        chosen.iter().flat_map(|p| views.iter().map(move |&v| ((p.name.clone(), v), under_model(p, v)))).collect();
    // The models each preset is timed under: strict, then each other a view asks for.
    let timed_models = |p: &SimConfig| {
        let mut models = vec![PersistencyModel::Strict];
        for v in &views {
            if let UnderModel::Timed(m) = under[&(p.name.clone(), *v)] {
                if !models.contains(&m) {
                    models.push(m);
                }
            }
        }
        models
    };
    let baseline = insecure_baselines(&chosen, &timed_models, &mut add);
    for p in &chosen {
        let common = machine::common(p);
        add("common", common.clone());
        if opts.paper_machine && !machine::differences(p, &common).is_empty() {
            add("paper", p.clone());
            add("paper-insecure", machine::paper_insecure(p));
        }
    }
    let timed: Vec<(&str, &SimConfig, &str)> =
        specs.iter().flat_map(|(m, c)| workloads.iter().map(move |w| (m.as_str(), c, w.as_str()))).collect();
    let recoveries: Vec<(&SimConfig, (&str, u64))> =
        if opts.recovery { chosen.iter().flat_map(|c| RECOVERY_MEMORY.iter().map(move |&m| (c, m))).collect() } else { Vec::new() };
    let attacked: Vec<&SimConfig> = if opts.attacks { chosen.iter().collect() } else { Vec::new() };
    // Each preset under strict and each other model a view times it under.
    let crashed: Vec<(&SimConfig, PersistencyModel)> =
        if opts.crash { chosen.iter().flat_map(|p| timed_models(p).into_iter().map(move |m| (p, m))).collect() } else { Vec::new() };
    let work = interleaved_steps(timed.len(), recoveries.len(), attacked.len(), crashed.len());
    // Each step's outcome under its scheme, an error included; a step
    // that panics (a bug of a scheme's model) gets that as its error, so
    // that every other scheme's results are kept.
    let outcome = |s: Step, r: Result<Outcome, String>| match (s, r) {
        (_, Ok(o)) => o,
        (Step::Run(_), Err(e)) => Outcome::Run(Err(e)),
        (Step::Recovery(i), Err(e)) => Outcome::Recovery(recoveries[i].0.name.clone(), recoveries[i].1 .0.to_string(), Err(e)),
        (Step::Attack(i), Err(e)) => Outcome::Attack(attacked[i].name.clone(), Err(e)),
        (Step::Crash(i), Err(e)) => Outcome::Crash(crashed[i].0.name.clone(), crashed[i].1.name(), Err(e)),
    };
    let describe = |s: &Step| match *s {
        Step::Run(i) => format!("{} ({}) on {}", timed[i].1.name, timed[i].0, timed[i].2),
        Step::Recovery(i) => format!("{} recovery", recoveries[i].0.name),
        Step::Attack(i) => format!("{} attacks", attacked[i].name),
        Step::Crash(i) => format!("{} crash check ({})", crashed[i].0.name, crashed[i].1.name()),
    };
    let outcomes = grid::run(&work, progress, describe, |s| {
        Ok(match *s {
            Step::Run(i) => {
                let (m, c, w) = timed[i];
                Outcome::Run(timing_run(m, c, w, n, seed))
            }
            Step::Recovery(i) => {
                let (p, (label, bytes)) = recoveries[i];
                Outcome::Recovery(p.name.clone(), label.to_string(), recovery_point(&machine::common(p), label, bytes, opts.ops(), seed))
            }
            Step::Attack(i) => {
                let p = attacked[i];
                Outcome::Attack(p.name.clone(), attack_counts(&machine::common(p), opts.ops().min(500), seed))
            }
            Step::Crash(i) => {
                let (p, m) = crashed[i];
                Outcome::Crash(p.name.clone(), m.name(), crash_verdict(&machine::common_under(p, m), opts.ops().min(CRASH_OPS), seed))
            }
        })
    });
    let (mut runs, mut failures, mut measured, mut attacks, mut crashes) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (s, o) in work.iter().zip(outcomes) {
        match outcome(*s, o) {
            Outcome::Run(Ok(r)) => runs.push(r),
            Outcome::Run(Err(e)) => failures.push(e),
            Outcome::Recovery(p, l, r) => measured.push((p, l, r)),
            Outcome::Attack(p, r) => attacks.push((p, r)),
            Outcome::Crash(p, m, r) => crashes.push((p, m, r)),
        }
    }

    let strict = PersistencyModel::Strict;
    let row_under = |p: &SimConfig, m: PersistencyModel| {
        let mut r = row(p, m, &baseline[&(p.name.clone(), m.name())], &ecfg, &runs, &failures, &measured, &attacks, &workloads);
        add_crash_check(&mut r, &crashes, &p.name, m);
        r
    };
    let rows: Vec<SchemeRow> = chosen.iter().map(|p| row_under(p, strict)).collect();
    let best = report::best(&rows);
    let pareto = report::pareto(&rows);
    let models = views
        .iter()
        .map(|&v| {
            let (mut schemes, mut not_run) = (Vec::new(), Vec::new());
            for (p, strict_row) in chosen.iter().zip(&rows) {
                match &under[&(p.name.clone(), v)] {
                    UnderModel::Timed(m) => schemes.push(row_under(p, *m)),
                    UnderModel::Strict(why) => {
                        let mut r = strict_row.clone();
                        r.notes.extend(why.iter().map(|w| format!("{}: {w}", v.name())));
                        schemes.push(r);
                    }
                    UnderModel::CannotRun(why) => not_run.push(Candidate { preset: p.name.clone(), left_out: Some(why.clone()) }),
                }
            }
            ModelResults { model: v, best: report::best(&schemes), pareto: report::pareto(&schemes), schemes, not_run }
        })
        .collect();
    Ok(Comparison {
        kind: "compare",
        quick: opts.quick,
        instructions: n,
        seed,
        ops: opts.ops(),
        line_nj_per_byte: ecfg.movement.mc_to_pm_nj_per_byte,
        common_machine: machine::DESCRIPTION,
        workloads,
        candidates: cands.into_iter().map(|(c, _)| c).collect(),
        schemes: rows,
        best,
        pareto,
        models,
        runs,
    })
}

/// Each distinct insecure baseline once, named by its front end and
/// model (and by the first preset needing it when another of that front
/// end differs, e.g. a smaller persist buffer), handed to `add` with the
/// common machine under each model other than strict; the name of each
/// preset's baseline under each model it is timed under.
fn insecure_baselines(
    chosen: &[SimConfig],
    timed_models: &dyn Fn(&SimConfig) -> Vec<PersistencyModel>,
    add: &mut dyn FnMut(&str, SimConfig),
) -> BTreeMap<(String, &'static str), String> {
    let mut named: Vec<(SimConfig, String)> = Vec::new();
    let mut baseline: BTreeMap<(String, &'static str), String> = BTreeMap::new();
    for p in chosen {
        for m in timed_models(p) {
            let mut b = machine::insecure(&machine::common_under(p, m));
            if m != PersistencyModel::Strict {
                b.name = format!("{}-{}", b.name, m.name());
            }
            let name = match named.iter().find(|(k, _)| machine::same_machine(k, &b)) {
                Some((_, n)) => n.clone(),
                None => {
                    let n = if named.iter().any(|(_, n)| *n == b.name) { format!("{}@{}", b.name, p.name) } else { b.name.clone() };
                    named.push((b.clone(), n.clone()));
                    n
                }
            };
            b.name = name.clone();
            baseline.insert((p.name.clone(), m.name()), name);
            add(&machine_label(m, true), b);
            if m != PersistencyModel::Strict {
                add(&machine_label(m, false), machine::common_under(p, m));
            }
        }
    }
    baseline
}

/// One list of every step, the few long ones (attack runs, recoveries)
/// spread evenly among the many short timing runs, so that the rate the
/// progress bar's ETA extrapolates holds over the whole run: each kind's
/// i-th of n steps goes at (i + 1/2) / n of the way.
fn interleaved_steps(runs: usize, recoveries: usize, attacks: usize, crashes: usize) -> Vec<Step> {
    let spread = |n: usize, step: fn(usize) -> Step| (0..n).map(move |i| ((2 * i + 1) as f64 / (2 * n) as f64, step(i)));
    let mut keyed: Vec<(f64, Step)> = spread(runs, Step::Run)
        .chain(spread(recoveries, Step::Recovery))
        .chain(spread(attacks, Step::Attack))
        .chain(spread(crashes, Step::Crash))
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
    keyed.into_iter().map(|(_, s)| s).collect()
}

/// The crash check of `preset` under model `m`, if one ran, into its row:
/// its verdict, and a note when it found the scheme unsafe or failed.
fn add_crash_check(r: &mut SchemeRow, crashes: &[(String, &'static str, Result<CrashVerdict, String>)], preset: &str, m: PersistencyModel) {
    match crashes.iter().find(|(n, model, _)| n == preset && *model == m.name()) {
        Some((_, _, Ok(v))) => {
            if let Some(first) = v.first_violation.as_ref().filter(|_| !v.safe()) {
                r.notes.push(format!(
                    "UNSAFE under {} persistency: the crash oracle found {} violations at {} of {} crash points; the first: {first}",
                    m.name(),
                    v.violations,
                    v.violating_crash_points,
                    v.crash_points
                ));
            }
            r.crash = Some(v.clone());
        }
        Some((_, _, Err(e))) => r.notes.push(format!("crash check under {} persistency: {e}", m.name())),
        None => {}
    }
}

/// How preset `p` runs under view `v`'s model.
fn under_model(p: &SimConfig, v: ModelView) -> UnderModel {
    let model = v.model_of(p);
    if model == PersistencyModel::Strict {
        return UnderModel::Strict(None);
    }
    let c = machine::common_under(p, model);
    if let Some(why) = machine::same_as_strict(&c, model) {
        return UnderModel::Strict(Some(why));
    }
    match c.validate().and_then(|_| machine::insecure(&c).validate()) {
        Ok(()) => UnderModel::Timed(model),
        Err((k, m)) => UnderModel::CannotRun(format!("{} persistency: key `{k}`: {m}", model.name())),
    }
}

/// Slowdowns of `machine`'s runs of `name` against `base`'s, per workload.
fn slowdowns(runs: &[RunRecord], machine: &str, name: &str, base_machine: &str, base: &str) -> BTreeMap<String, f64> {
    runs.iter()
        .filter(|r| r.machine == machine && r.config == name)
        .filter_map(|r| {
            let b = runs.iter().find(|b| b.machine == base_machine && b.config == base && b.workload == r.workload)?;
            Some((r.workload.clone(), r.cpi() / b.cpi()))
        })
        .collect()
}

fn gmean_of(m: &BTreeMap<String, f64>, workloads: &[String]) -> Option<f64> {
    (m.len() == workloads.len() && !m.is_empty()).then(|| geomean(&m.values().copied().collect::<Vec<_>>()))
}

#[allow(clippy::too_many_arguments)]
fn row(
    p: &SimConfig,
    model: PersistencyModel,
    base: &str,
    ecfg: &crate::battery::EnergyConfig,
    runs: &[RunRecord],
    failures: &[String],
    measured: &[(String, String, Result<RecoveryPoint, String>)],
    attacks: &[(String, Result<AttackCounts, String>)],
    workloads: &[String],
) -> SchemeRow {
    let common = machine::common_under(p, model);
    let (label, base_label) = (machine_label(model, false), machine_label(model, true));
    let mine_failed = format!("{} ({label})", p.name);
    let mut notes: Vec<String> = failures.iter().filter(|f| f.starts_with(&mine_failed)).cloned().collect();
    if !machine::timed(&common) {
        notes.push("the timing model has no rules for the data-cache front end (eADR): no slowdown, writes or energy".into());
    }
    let slowdown = slowdowns(runs, &label, &p.name, &base_label, base);
    let mine: Vec<&RunRecord> = runs.iter().filter(|r| r.machine == label && r.config == p.name).collect();
    let instructions: u64 = mine.iter().map(|r| r.instructions).sum();
    let per_k = |x: u64| x as f64 * 1000.0 / instructions.max(1) as f64;
    let mut writes_pki = BTreeMap::new();
    if !mine.is_empty() {
        let w = mine.iter().fold(ByKind::default(), |mut a, r| {
            a.add(&r.device_writes);
            a
        });
        for (k, v) in
            [("data", w.data), ("counter", w.counter), ("mac", w.mac), ("tree", w.tree), ("recovery", w.recovery), ("total", w.total())]
        {
            writes_pki.insert(k.to_string(), per_k(v));
        }
    }
    // Energy of the counted work at Table III's prices: each 64 B line
    // moved between MC and PCM, each pad, each MAC or tree hash (SHA-512
    // over 64 B; a multiset-hash increment priced as one).
    let energy = (!mine.is_empty()).then(|| {
        let b = ecfg.structure.block_bytes as f64;
        let lines: u64 = mine.iter().map(|r| r.device_writes.total() + r.reads.total()).sum();
        let aes: u64 = mine.iter().map(|r| r.aes_blocks).sum();
        let sha: u64 = mine.iter().map(|r| r.hashes + r.register_adds).sum();
        let nj = lines as f64 * b * ecfg.movement.mc_to_pm_nj_per_byte
            + aes as f64 * b * ecfg.crypto.aes192_nj_per_byte
            + sha as f64 * b * ecfg.crypto.sha512_mac_nj_per_byte;
        nj / instructions.max(1) as f64
    });
    let recovery: Vec<RecoveryPoint> =
        measured.iter().filter(|(n, _, _)| *n == p.name).filter_map(|(_, _, r)| r.as_ref().ok().cloned()).collect();
    for (_, label, r) in measured.iter().filter(|(n, _, _)| *n == p.name) {
        if let Err(e) = r {
            notes.push(format!("recovery at {label}: {e}"));
        }
    }
    let recovery_seconds =
        RECOVERY_MEMORY.iter().map(|(l, _)| (l.to_string(), recovery.iter().find(|r| r.memory == *l).map(|r| r.seconds))).collect();
    let onchip_nv = onchip_nv(&common);
    let attacks = match attacks.iter().find(|(n, _)| *n == p.name).map(|(_, r)| r) {
        Some(Ok(a)) => Some(a.clone()),
        Some(Err(e)) => {
            notes.push(format!("attacks: {e}"));
            None
        }
        None => None,
    };
    let paper_config = (model == PersistencyModel::Strict).then(|| {
        let differences = machine::differences(p, &common);
        let s = slowdowns(runs, "paper", &p.name, "paper-insecure", &machine::paper_insecure(p).name);
        (!differences.is_empty()).then(|| PaperConfig {
            preset: p.name.clone(),
            slowdown_gmean: gmean_of(&s, workloads),
            slowdown: s,
            differences,
        })
    });
    SchemeRow {
        preset: p.name.clone(),
        scheme: common.scheme.name().to_string(),
        paper: paper_of(p),
        front: common.scheme.work().front.point_type().to_string(),
        secure: common.security.enabled,
        baseline: base.to_string(),
        notes,
        slowdown_gmean: gmean_of(&slowdown, workloads),
        slowdown,
        writes_pki,
        energy_uj_per_kinstr: energy,
        battery: crate::battery::domain_estimate(ecfg, &common),
        recovery,
        recovery_seconds,
        onchip_nv_bytes: onchip_nv.iter().map(|r| r.bytes).sum(),
        onchip_nv,
        attacks,
        crash: None,
        paper_config: paper_config.flatten(),
    }
}

/// The on-chip non-volatile registers machine `c` keeps: the tree's root
/// and its scheme's own (none without security).
pub(crate) fn onchip_nv(c: &SimConfig) -> Vec<crate::engine::hooks::NvRegister> {
    if !c.security.enabled {
        return Vec::new();
    }
    let scheme = crate::scheme::describe(c);
    let layout = crate::engine::controller::layout_for(c, &crate::scheme::shape(c));
    let mut regs = crate::scheme::root_registers(c, &layout);
    regs.extend(scheme.onchip_nv_registers());
    regs
}

/// The crash oracle on `c` ([`CRASH_POINTS`] points of `ops` operations
/// of the attack workload), against the promise of `c`'s model.
pub(crate) fn crash_verdict(c: &SimConfig, ops: u64, seed: u64) -> Result<CrashVerdict, String> {
    let mut c = c.clone();
    c.security.crypto = CryptoMode::Real;
    let w = WorkloadKind::parse(ATTACK_WORKLOAD)?;
    let events = w.generate_placed(ops, seed, crate::workload::Placement::of(&c))?;
    let check = crate::verify::oracle::CrashCheck {
        cfg: &c,
        workload_name: w.name(),
        events,
        ops,
        seed,
        points: crate::verify::oracle::CrashPoints::Sample(CRASH_POINTS),
        max_listed: 1,
        guarantee: None,
    };
    let rep = check.run()?;
    Ok(CrashVerdict {
        guarantee: rep.guarantee.name().to_string(),
        crash_points: rep.crash_points,
        violations: rep.violations,
        violating_crash_points: rep.violating_crash_points,
        first_violation: rep
            .violation_list
            .first()
            .map(|v| format!("crash point {} (after {}), block {}: {} ({})", v.crash_point, v.after_event, v.address, v.check, v.detail)),
    })
}

/// A real recovery on the common machine grown to `bytes` of memory.
pub(crate) fn recovery_point(common: &SimConfig, label: &str, bytes: u64, ops: u64, seed: u64) -> Result<RecoveryPoint, String> {
    let mut c = common.clone();
    c.memory = machine::with_capacity(&common.memory, bytes);
    machine::fit_onchip_levels(&mut c);
    c.validate().map_err(|(k, m)| format!("key `{k}`: {m}"))?;
    let w = WorkloadKind::parse(RECOVERY_WORKLOAD)?;
    let m = crate::verify::recovery::measure(&c, &w, ops, seed, &|_, _| {})?;
    let prices =
        crate::verify::recovery::Prices { read_ns: RECOVERY_READ_NS, hash_ns: c.security.mac_latency_cycles as f64 / c.core.frequency_ghz };
    Ok(RecoveryPoint {
        memory: label.into(),
        reads: m.reads.total(),
        hashes: m.hashes,
        writes: m.writes.total(),
        seconds: m.estimate(prices).seconds,
        ok: m.ok,
    })
}

/// The attack harness on the common machine, with real cryptography.
pub(crate) fn attack_counts(common: &SimConfig, ops: u64, seed: u64) -> Result<AttackCounts, String> {
    let mut c = common.clone();
    c.security.crypto = CryptoMode::Real;
    let w = WorkloadKind::parse(ATTACK_WORKLOAD)?;
    let events = w.generate_placed(ops, seed, crate::workload::Placement::of(&c))?;
    let rep = crate::verify::attack::run(&c, &w.name(), &events, seed)?;
    let at_recovery_names = crate::scheme::describe(&c).recovery_attack_names();
    let mut a = AttackCounts { total: rep.attacks.len() as u64, false_alarms: rep.false_alarms, ..Default::default() };
    for r in &rep.attacks {
        if r.ruled_out.is_some() {
            a.ruled_out += 1;
        } else if r.skipped.is_some() {
            a.skipped += 1;
        } else if !r.detected {
            a.undetected += 1;
        } else {
            a.detected += 1;
            if at_recovery_names.contains(&r.name.as_str()) || r.where_.starts_with("recovery") {
                a.at_recovery += 1;
            } else {
                a.at_run_time += 1;
            }
        }
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_ops(ops: Option<u64>) -> Options {
        Options {
            quick: true,
            instructions: None,
            seed: 1,
            only: Vec::new(),
            workloads: Vec::new(),
            ops,
            recovery: true,
            attacks: true,
            paper_machine: true,
            models: Vec::new(),
            crash: true,
            fronts: None,
            adr_batteries: false,
        }
    }

    #[test]
    fn operations_are_one_to_the_stated_bound() {
        assert!(with_ops(None).check().is_ok() && with_ops(Some(1)).check().is_ok() && with_ops(Some(MAX_OPS)).check().is_ok());
        for ops in [0, MAX_OPS + 1, 1_000_000_000_000_000] {
            let e = with_ops(Some(ops)).check().unwrap_err();
            assert!(e.starts_with("--ops must be between 1 and 100000") && e.ends_with(&format!("got {ops}")), "{e}");
            assert_eq!(selected(&with_ops(Some(ops))).unwrap_err(), e, "checked before anything is selected");
        }
        let none = Options { instructions: Some(0), ..with_ops(None) };
        assert_eq!(none.check().unwrap_err(), "--instructions must be at least 1");
    }
}
