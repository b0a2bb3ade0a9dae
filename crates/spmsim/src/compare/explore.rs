//! `spmsim compare --explore`: the compositions of the axes the mechanisms
//! can combine today, each crash-checked before it is timed (issue 41).
//!
//! ```text
//!  every scheme compare takes (its front end and metadata persistence,
//!  which one scheme runtime bundles)
//!    x persistency model {strict, epoch, tep}
//!    x integrity tree {bmt, sit}
//!      |  machine::common_under + the tree swapped; validate
//!      v
//!  refused (the two choices that conflict, from the validation)  -> listed
//!  the same machine as an earlier composition                     -> listed
//!  crash oracle (CRASH_POINTS points, the model's promise)
//!      unsafe -> listed with its first violation, not timed
//!      safe   -> timed on the workloads against the insecure baseline under
//!                the same model; battery from SecPB's model
//!  Pareto front of slowdown against battery over the safe compositions
//! ```
//! A composition is named `PRESET+MODEL+TREE`; it is a paper's own when
//! its model and tree are its preset's (on the common machine).
//! Recombining a front end with another scheme's metadata persistence (a
//! persist buffer before STAR's metadata cache) is not among the axes:
//! each scheme runtime holds both, so no such machine can be built yet.

use super::{crash_verdict, machine, timing_run, CrashVerdict, Options, RunRecord, CRASH_OPS};
use crate::config::{PersistencyModel, SimConfig, TreeConfig};
use crate::reproduce::geomean;
use crate::reproduce::grid::{self, Progress};
use serde::Serialize;
use std::collections::BTreeMap;

/// The persistency models explored.
pub const MODELS: [PersistencyModel; 3] = [PersistencyModel::Strict, PersistencyModel::Epoch, PersistencyModel::Tep];
/// The trees explored.
pub const TREES: [&str; 2] = ["bmt", "sit"];

/// What became of one composition.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Outcome {
    /// The mechanisms cannot realise it: the choices that conflict, why.
    Refused { why: String },
    /// It resolves to the same machine as an earlier composition.
    Same { same_as: String },
    /// The crash check failed to run.
    Failed { why: String },
    /// The crash oracle found a violation; not timed.
    Unsafe { crash: CrashVerdict },
    /// Crash-checked and timed.
    Safe {
        crash: CrashVerdict,
        slowdown_gmean: Option<f64>,
        slowdown: BTreeMap<String, f64>,
        battery_supercap_mm3: f64,
        notes: Vec<String>,
    },
}

/// One point of the space.
#[derive(Clone, Debug, Serialize)]
pub struct Composition {
    pub name: String,
    pub preset: String,
    pub paper: String,
    pub front: String,
    pub model: String,
    pub tree: String,
    /// The model and tree are its preset's own (a paper evaluated it).
    pub papers_own: bool,
    /// Security on (an insecure baseline is on no front).
    pub secure: bool,
    pub outcome: Outcome,
}

/// A front member's recovery of 1 TiB: its seconds, or why not measured.
#[derive(Clone, Debug, Serialize)]
pub struct FrontRecovery {
    pub seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl FrontRecovery {
    /// `12.345 s`, or `not measured (why)`.
    pub fn text(&self) -> String {
        match (self.seconds, &self.error) {
            (Some(s), _) => format!("{s:.3} s"),
            (None, Some(why)) => format!("not measured ({why})"),
            (None, None) => "not measured".into(),
        }
    }
}

/// The whole exploration.
#[derive(Clone, Debug, Serialize)]
pub struct Exploration {
    pub kind: &'static str,
    pub instructions: u64,
    pub seed: u64,
    pub crash_points: u64,
    pub crash_ops: u64,
    pub workloads: Vec<String>,
    pub compositions: Vec<Composition>,
    /// Safe compositions no other safe one beats on both slowdown and
    /// battery volume, in battery order.
    pub pareto_battery: Vec<String>,
    /// The front's compositions' counted recovery of 1 TiB, priced as
    /// compare prices it.
    pub front_recovery_1tib: BTreeMap<String, FrontRecovery>,
    pub runs: Vec<RunRecord>,
}

impl Exploration {
    pub fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.compositions.iter().filter(|c| f(&c.outcome)).count()
    }
}

fn tree_name(c: &SimConfig) -> &'static str {
    match c.tree {
        TreeConfig::Bmt { .. } => "bmt",
        TreeConfig::Sit { .. } => "sit",
    }
}

/// `c` with its tree of type `tree` (the same arity; height derived).
fn with_tree(c: &SimConfig, tree: &str) -> SimConfig {
    let mut c = c.clone();
    if tree_name(&c) != tree {
        let arity = match c.tree {
            TreeConfig::Bmt { arity, .. } | TreeConfig::Sit { arity, .. } => arity,
        };
        c.tree =
            if tree == "sit" { TreeConfig::Sit { arity, levels: None } } else { TreeConfig::Bmt { arity, levels: None, onchip_levels: 0 } };
    }
    c
}

/// The configuration of `p` under `model` with `tree`, or the conflict.
fn resolve(p: &SimConfig, model: PersistencyModel, tree: &str) -> Result<SimConfig, String> {
    let mut c = with_tree(&machine::common_under(p, model), tree);
    c.name = format!("{}+{}+{}", p.name, model.name(), tree);
    if machine::same_as_strict(&c, model).is_some() {
        // A relaxed model changes nothing on this front end: the strict
        // composition stands for it (found as the same machine below).
        c.persistence.model = PersistencyModel::Strict;
        c.persistence.tep = Default::default();
    }
    let scheme = c.scheme.name();
    c.validate()
        .map_err(|(k, m)| format!("scheme `{scheme}` ({}) with {} persistency and a {tree} tree: key `{k}`: {m}", p.name, model.name()))?;
    machine::insecure(&c).validate().map_err(|(k, m)| format!("its insecure baseline: key `{k}`: {m}"))?;
    Ok(c)
}

/// The name of composition `c`'s insecure baseline: its front end's, under
/// its model.
fn baseline_name(c: &SimConfig) -> String {
    format!("{}+{}", machine::insecure_name(c), c.persistence.model.name())
}

/// Explore every composition of the schemes `opts` selects.
pub fn explore(opts: &Options, progress: Progress) -> Result<Exploration, String> {
    let ecfg = crate::battery::EnergyConfig::load(&crate::battery::default_energy_path()).map_err(|e| e.to_string())?;
    let chosen: Vec<SimConfig> = super::selected(opts)?.into_iter().filter_map(|(_, c)| c).collect();
    let workloads = opts.workload_names();
    let (n, seed) = (opts.instructions(), opts.seed);
    // Resolve every composition; the same machine twice is timed once.
    let mut comps: Vec<(Composition, Option<SimConfig>)> = Vec::new();
    for p in &chosen {
        let own_tree = tree_name(&machine::common(p));
        for model in MODELS {
            for tree in TREES {
                let name = format!("{}+{}+{}", p.name, model.name(), tree);
                let front = p.scheme.work().front.point_type().to_string();
                let papers_own = model == p.persistence.model && tree == own_tree;
                let (outcome, cfg) = match resolve(p, model, tree) {
                    Err(why) => (Outcome::Refused { why }, None),
                    Ok(c) => match comps.iter().find(|(_, o)| o.as_ref().is_some_and(|o| machine::same_machine(o, &c))) {
                        Some((first, _)) => (Outcome::Same { same_as: first.name.clone() }, None),
                        None => (Outcome::Failed { why: "not run".into() }, Some(c)),
                    },
                };
                let comp = Composition {
                    name,
                    preset: p.name.clone(),
                    paper: super::paper_of(p),
                    front,
                    model: model.name().into(),
                    tree: tree.into(),
                    papers_own,
                    secure: p.security.enabled,
                    outcome,
                };
                comps.push((comp, cfg));
            }
        }
    }
    // First every realisable composition's crash check, then the timing
    // runs of the safe ones and of their baselines.
    let checked: Vec<usize> = (0..comps.len()).filter(|&i| comps[i].1.is_some()).collect();
    let total_crash = checked.len();
    let verdicts = grid::run(
        &checked,
        &|done, _, what| progress(done, total_crash, what),
        |&i| format!("{} crash check", comps[i].0.name),
        |&i| crash_verdict(comps[i].1.as_ref().expect("realisable"), opts.ops().min(CRASH_OPS), seed),
    );
    let mut safe: Vec<usize> = Vec::new();
    for (&i, v) in checked.iter().zip(verdicts) {
        comps[i].0.outcome = match v {
            Err(why) => Outcome::Failed { why },
            Ok(crash) if !crash.safe() => Outcome::Unsafe { crash },
            Ok(crash) => {
                safe.push(i);
                Outcome::Safe { crash, slowdown_gmean: None, slowdown: BTreeMap::new(), battery_supercap_mm3: 0.0, notes: Vec::new() }
            }
        };
    }
    let mut specs: Vec<(String, SimConfig)> = Vec::new();
    for &i in &safe {
        let c = comps[i].1.clone().expect("realisable");
        let mut b = machine::insecure(&c);
        b.name = baseline_name(&c);
        if !specs.iter().any(|(_, x)| x.name == b.name) {
            specs.push(("insecure".into(), b));
        }
        specs.push(("composition".into(), c));
    }
    let timed: Vec<(usize, &str)> = (0..specs.len()).flat_map(|s| workloads.iter().map(move |w| (s, w.as_str()))).collect();
    let total_runs = timed.len();
    let runs: Vec<RunRecord> = grid::run(
        &timed,
        &|done, _, what| progress(total_crash + done, total_crash + total_runs, what),
        |&(s, w)| format!("{} on {w}", specs[s].1.name),
        |&(s, w)| timing_run(&specs[s].0, &specs[s].1, w, n, seed),
    )
    .into_iter()
    .filter_map(Result::ok)
    .collect();
    for &i in &safe {
        let c = comps[i].1.clone().expect("realisable");
        let c = &c;
        let base = baseline_name(c);
        let cpi = |name: &str, w: &str| runs.iter().find(|r| r.config == name && r.workload == w).map(RunRecord::cpi);
        let per: BTreeMap<String, f64> = workloads.iter().filter_map(|w| Some((w.clone(), cpi(&c.name, w)? / cpi(&base, w)?))).collect();
        let gmean = (per.len() == workloads.len() && !per.is_empty()).then(|| geomean(&per.values().copied().collect::<Vec<_>>()));
        let mut notes = Vec::new();
        if !machine::timed(c) {
            notes.push("the timing model has no rules for the data-cache front end (eADR): no slowdown".to_string());
        } else if gmean.is_none() {
            notes.push(format!("timed on {} of {} workloads", per.len(), workloads.len()));
        }
        if let Outcome::Safe { slowdown_gmean, slowdown, battery_supercap_mm3, notes: n, .. } = &mut comps[i].0.outcome {
            *slowdown_gmean = gmean;
            *slowdown = per;
            *battery_supercap_mm3 = crate::battery::domain_estimate(&ecfg, c).supercap_mm3;
            *n = notes;
        }
    }
    let compositions: Vec<Composition> = comps.into_iter().map(|(c, _)| c).collect();
    let pts: Vec<(&str, f64, f64)> = compositions
        .iter()
        .filter_map(|c| match &c.outcome {
            Outcome::Safe { slowdown_gmean: Some(s), battery_supercap_mm3: b, .. } if c.secure => Some((c.name.as_str(), *b, *s)),
            _ => None,
        })
        .collect();
    let front = super::report::front(&pts);
    // The front's recovery times, each a real recovery of 1 TiB.
    let on_front: Vec<&Composition> = front.iter().filter_map(|n| compositions.iter().find(|c| &c.name == n)).collect();
    let before = total_crash + total_runs;
    let recovered = grid::run(
        &on_front,
        &|done, total, what| progress(before + done, before + total, what),
        |c| format!("{} recovery", c.name),
        |c| {
            let p = chosen.iter().find(|p| p.name == c.preset).expect("a chosen preset");
            let model = MODELS.into_iter().find(|m| m.name() == c.model).expect("a model explored");
            let cfg = resolve(p, model, &c.tree)?;
            let (label, bytes) = super::RECOVERY_MEMORY[1];
            super::recovery_point(&cfg, label, bytes, opts.ops(), seed).map(|r| r.seconds)
        },
    );
    let front_recovery_1tib = on_front
        .iter()
        .zip(recovered)
        .map(|(c, r)| {
            let (seconds, error) = match r {
                Ok(s) => (Some(s), None),
                Err(e) => (None, Some(e)),
            };
            (c.name.clone(), FrontRecovery { seconds, error })
        })
        .collect();
    Ok(Exploration {
        kind: "explore",
        instructions: n,
        seed,
        crash_points: super::CRASH_POINTS,
        crash_ops: opts.ops().min(CRASH_OPS),
        workloads,
        pareto_battery: front,
        front_recovery_1tib,
        compositions,
        runs,
    })
}

/// explore.md: the counts, the front, then every composition.
pub fn markdown(e: &Exploration) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let n = e.compositions.len();
    let refused = e.count(|o| matches!(o, Outcome::Refused { .. }));
    let same = e.count(|o| matches!(o, Outcome::Same { .. }));
    let unsafe_ = e.count(|o| matches!(o, Outcome::Unsafe { .. }));
    let safe = e.count(|o| matches!(o, Outcome::Safe { .. }));
    let failed = e.count(|o| matches!(o, Outcome::Failed { .. }));
    let _ = writeln!(s, "# The explored space (`spmsim compare --explore`)\n");
    let _ = writeln!(
        s,
        "Every scheme compare takes, under each persistency model (strict, epoch, tep) with each integrity tree (bmt, sit), on the common machine. Each realisable composition is crash-checked first ({} crash points of {} operations of `{}`, against its model's promise) and timed only if safe ({} instructions of each workload, seed {}, against its insecure baseline under the same model). Workloads: {}.\n",
        e.crash_points,
        e.crash_ops,
        super::ATTACK_WORKLOAD,
        e.instructions,
        e.seed,
        e.workloads.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", ")
    );
    let _ = writeln!(s, "- compositions: {n}; refused (the mechanisms cannot realise them): {refused}; the same machine as another: {same}; realisable and distinct: {}", n - refused - same);
    let _ = writeln!(s, "- crash-checked: {}; safe: {safe}; unsafe: {unsafe_}; the check failed to run: {failed}", safe + unsafe_ + failed);
    let new_safe = e.compositions.iter().filter(|c| !c.papers_own && matches!(c.outcome, Outcome::Safe { .. })).count();
    let _ = writeln!(s, "- safe compositions no paper evaluated (model or tree not its preset's own): {new_safe}");
    let _ = writeln!(s, "- Pareto front of slowdown against battery volume (safe, secure): {}\n", e.pareto_battery.join(", "));
    for name in &e.pareto_battery {
        let Some(c) = e.compositions.iter().find(|c| &c.name == name) else { continue };
        if let Outcome::Safe { slowdown_gmean, battery_supercap_mm3, .. } = &c.outcome {
            let rec = format!("recovery of 1 TiB {}", e.front_recovery_1tib.get(name).map_or("not measured".into(), FrontRecovery::text));
            let _ = writeln!(
                s,
                "  - `{name}`{}: slowdown {}, battery {battery_supercap_mm3:.3} mm3 of SuperCap, {rec}",
                if c.papers_own { "" } else { " (no paper evaluated it)" },
                slowdown_gmean.map_or("n/a".into(), |v| format!("{v:.3}x"))
            );
        }
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "| composition | paper | front | own | outcome | slowdown | battery mm3 |\n|---|---|---|---|---|---|---|");
    for c in &e.compositions {
        let (outcome, slow, bat) = match &c.outcome {
            Outcome::Refused { why } => (format!("refused: {why}"), String::new(), String::new()),
            Outcome::Same { same_as } => (format!("the same machine as `{same_as}`"), String::new(), String::new()),
            Outcome::Failed { why } => (format!("crash check failed to run: {why}"), String::new(), String::new()),
            Outcome::Unsafe { crash } => (
                format!(
                    "UNSAFE ({}): {} violations at {} of {} points; first: {}",
                    crash.guarantee,
                    crash.violations,
                    crash.violating_crash_points,
                    crash.crash_points,
                    crash.first_violation.as_deref().unwrap_or("-")
                ),
                String::new(),
                String::new(),
            ),
            Outcome::Safe { crash, slowdown_gmean, battery_supercap_mm3, notes, .. } => (
                format!(
                    "safe ({}, {} points){}",
                    crash.guarantee,
                    crash.crash_points,
                    notes.iter().map(|n| format!("; {n}")).collect::<String>()
                ),
                slowdown_gmean.map_or("n/a".into(), |v| format!("{v:.3}x")),
                format!("{battery_supercap_mm3:.3}"),
            ),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {outcome} | {slow} | {bat} |",
            c.name,
            c.paper,
            c.front,
            if c.papers_own { "yes" } else { "" }
        );
    }
    s
}

/// Write explore.json and explore.md into `dir`.
pub fn write(e: &Exploration, dir: &std::path::Path) -> Result<(), String> {
    let json = serde_json::to_string_pretty(e).map_err(|e| e.to_string())?;
    crate::reproduce::report::write_files(dir, &[("explore.json".into(), json), ("explore.md".into(), markdown(e))])
}
