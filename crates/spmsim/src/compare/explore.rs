//! `spmsim compare --explore`: the compositions of the axes the mechanisms
//! can combine today, each crash-checked before it is timed.
//!
//! ```text
//!  every scheme compare takes, and each memory-controller scheme's
//!  metadata rules behind every other front end (`--fronts`; a persist
//!  buffer of SecPB's, eADR's caches: `scheme::Composed`)
//!    x persistency model {strict, epoch, tep}
//!    x integrity tree {bmt, sit}
//!      |  machine::common_under + the tree swapped; validate
//!      v
//!  refused (the two choices that conflict, from the validation)  -> listed
//!  the same machine as an earlier composition                     -> listed
//!  crash oracle (CRASH_POINTS points, the model's promise), then the
//!  attack harness (real cryptography)
//!      unsafe -> listed with its first violation or the attacks it
//!                missed, not timed
//!      safe   -> timed on the workloads against the insecure baseline under
//!                the same model; battery from SecPB's model
//!  Pareto front of slowdown against battery over the safe compositions
//! ```
//! A composition is named `PRESET+MODEL+TREE`, or `FRONT+PRESET+MODEL+TREE`
//! with another front end (`cobcm+star+strict+sit`: COBCM's persist buffer
//! before STAR's metadata rules), with `@adr` after the scheme when the
//! battery axis takes the front end's battery away (`--batteries adr`); it is a paper's own when its front end,
//! model and tree are its preset's (on the common machine). Each carries a
//! digest of its machine, so that explorations run in shards (one per
//! preset, `spmsim explore`) merge into one (`merge`).

use super::axes::{fronts, MODELS, TREES};
use super::provenance::Provenance;
use super::{attack_counts, crash_verdict, machine, timing_run, AttackCounts, CrashVerdict, Options, RunRecord, CRASH_OPS, MAX_OPS};
use crate::config::{PersistPoint, PersistencyModel, SimConfig, TreeConfig};
use crate::reproduce::geomean;
use crate::reproduce::grid::{self, Progress};
use crate::scheme::{Composed, FrontChoice};
use crate::util::digest::hex_digest as digest;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What became of one composition.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Outcome {
    /// The mechanisms cannot realise it: the choices that conflict, why.
    Refused { why: String },
    /// It resolves to the same machine as an earlier composition.
    Same { same_as: String },
    /// The crash check failed to run.
    Failed { why: String },
    /// The crash oracle found a violation, or the attack harness an attack
    /// no check detected or an untampered image refused; not timed.
    Unsafe {
        crash: CrashVerdict,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attacks: Option<AttackCounts>,
    },
    /// Crash-checked, attacked and timed.
    Safe {
        crash: CrashVerdict,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attacks: Option<AttackCounts>,
        slowdown_gmean: Option<f64>,
        slowdown: BTreeMap<String, f64>,
        battery_supercap_mm3: f64,
        notes: Vec<String>,
    },
}

/// One point of the space.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Composition {
    pub name: String,
    pub preset: String,
    /// The scheme: the preset's own, or its metadata rules behind another
    /// front end (`cobcm+star`).
    #[serde(default)]
    pub scheme: String,
    pub paper: String,
    pub front: String,
    pub model: String,
    pub tree: String,
    /// The model and tree are its preset's own (a paper evaluated it).
    pub papers_own: bool,
    /// Its preset's metadata rules behind another front end.
    #[serde(default)]
    pub refronted: bool,
    /// Its front end without its battery: the WPQ alone on battery (`@adr`).
    #[serde(default)]
    pub adr_battery: bool,
    /// Security on (an insecure baseline is on no front).
    pub secure: bool,
    /// A digest of the machine (its configuration without name and
    /// description), for merging shards; empty when refused.
    #[serde(default)]
    pub machine: String,
    pub outcome: Outcome,
}

/// A front member's recovery of 1 TiB: its seconds, or why not measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Exploration {
    pub kind: String,
    pub instructions: u64,
    pub seed: u64,
    pub crash_points: u64,
    pub crash_ops: u64,
    /// Operations of the recovery workload before each counted recovery
    /// (`plan --explore` measures more at the same count).
    pub recovery_ops: u64,
    pub workloads: Vec<String>,
    /// The front ends each memory-controller scheme was put behind.
    #[serde(default)]
    pub fronts: Vec<String>,
    /// Each front end was also explored with the WPQ alone on battery.
    #[serde(default)]
    pub adr_batteries: bool,
    pub compositions: Vec<Composition>,
    /// Safe compositions no other safe one beats on both slowdown and
    /// battery volume, in battery order.
    pub pareto_battery: Vec<String>,
    /// The front's compositions' counted recovery of 1 TiB, priced as
    /// compare prices it.
    pub front_recovery_1tib: BTreeMap<String, FrontRecovery>,
    pub runs: Vec<RunRecord>,
    /// Everything that shaped the result besides the presets' names (an
    /// exploration written before it was recorded has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

impl Exploration {
    pub fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.compositions.iter().filter(|c| f(&c.outcome)).count()
    }

    /// The numbers a plan or a merge reads, each in its range: a
    /// hand-edited file with a negative slowdown would otherwise rank
    /// first, and a `recovery_ops` beyond [`MAX_OPS`] would run a recovery
    /// for ever. The error names the field.
    pub fn check(&self) -> Result<(), String> {
        use super::plan::{is_quantity, is_slowdown};
        if !(1..=MAX_OPS).contains(&self.recovery_ops) {
            return Err(format!(
                "`recovery_ops` is {}, not between 1 and {MAX_OPS} (the operations a recovery runs at most, compare --ops)",
                self.recovery_ops
            ));
        }
        let bad = |at: String, v: f64, what: &str| Err(format!("{at} is {v}, not {what}"));
        let slowdown = "a slowdown (a finite number above 0)";
        let quantity = "a measured quantity (a finite number at least 0)";
        for (i, c) in self.compositions.iter().enumerate() {
            let at = |key: &str| format!("`compositions[{i}].outcome.{key}` (`{}`)", c.name);
            let Outcome::Safe { slowdown_gmean, slowdown: per, battery_supercap_mm3, .. } = &c.outcome else { continue };
            if let Some(v) = slowdown_gmean.filter(|v| !is_slowdown(*v)) {
                return bad(at("slowdown_gmean"), v, slowdown);
            }
            if let Some((w, v)) = per.iter().find(|(_, v)| !is_slowdown(**v)) {
                return bad(at(&format!("slowdown.{w}")), *v, slowdown);
            }
            if !is_quantity(*battery_supercap_mm3) {
                return bad(at("battery_supercap_mm3"), *battery_supercap_mm3, quantity);
            }
        }
        for (name, r) in &self.front_recovery_1tib {
            if let Some(v) = r.seconds.filter(|v| !is_quantity(*v)) {
                return bad(format!("`front_recovery_1tib.{name}.seconds`"), v, quantity);
            }
        }
        if let Some((i, r)) = self.runs.iter().enumerate().find(|(_, r)| r.instructions == 0) {
            return Err(format!("`runs[{i}].instructions` ({} on {}) is 0: a run counts at least one instruction", r.config, r.workload));
        }
        Ok(())
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
pub(crate) fn baseline_name(c: &SimConfig) -> String {
    format!("{}+{}", machine::insecure_name(c), c.persistence.model.name())
}

/// The point of persistency of front end `f`, with SecPB's geometry for a
/// persist buffer (SecPB Table I: 32 entries, 75/50 % watermarks).
fn point_of(f: FrontChoice) -> PersistPoint {
    let table: toml::Table = toml::from_str(&format!("type = '{}'", f.front().point_type())).expect("a point type");
    table.try_into().expect("every front end's point has defaults")
}

/// Preset `p`'s memory-controller metadata rules behind front end `f`
/// (named `FRONT+PRESET`), the battery draining `f`'s buffer or caches;
/// None when `p` is no memory-controller scheme with security, or `f` is
/// its own front end; an error naming both choices when they conflict.
fn refront(p: &SimConfig, f: FrontChoice) -> Option<Result<SimConfig, String>> {
    let own = Composed::of(p.scheme)?;
    if own.front != FrontChoice::MemoryController || f == own.front || !p.security.enabled {
        return None;
    }
    let kind = match (Composed { front: f, metadata: own.metadata }).resolve() {
        Ok(k) => k,
        Err(why) => return Some(Err(format!("`{}` ({}): {why}", p.name, own.metadata.name()))),
    };
    let mut c = p.clone();
    c.name = format!("{}+{}", f.short(), p.name);
    c.description = format!("{}'s metadata rules behind the front end {}", p.name, f.name());
    c.scheme = kind;
    c.persistence.point = point_of(f);
    c.persistence.battery.persist_buffer = matches!(f, FrontChoice::PersistBuffer(_));
    c.persistence.battery.caches = f == FrontChoice::CacheHierarchy;
    Some(Ok(c))
}

/// `c` with the WPQ alone on battery, named `NAME@adr`: a persist buffer's
/// or eADR's caches' stores are lost at a crash.
fn without_front_battery(c: &SimConfig) -> SimConfig {
    let mut c = c.clone();
    c.name = format!("{}@adr", c.name);
    c.persistence.battery.persist_buffer = false;
    c.persistence.battery.caches = false;
    c
}

/// Composition `c`'s machine rebuilt from its choices (preset, front end,
/// battery, model, tree), checked against the digest the exploration
/// recorded: a machine of another version of spmsim or of its presets is
/// an error, not a silently different answer.
pub fn machine_of(c: &Composition) -> Result<SimConfig, String> {
    let p = crate::config::load_preset(&c.preset, &[]).map_err(|e| format!("composition `{}`: preset `{}`: {e}", c.name, c.preset))?;
    let mut base = match c.refronted {
        false => p.clone(),
        true => {
            let f = FrontChoice::parse(&c.front).map_err(|e| format!("composition `{}`: {e}", c.name))?;
            refront(&p, f).ok_or_else(|| format!("composition `{}`: `{}` cannot go behind {}", c.name, c.preset, c.front))??
        }
    };
    if c.adr_battery {
        base = without_front_battery(&base);
    }
    let model = MODELS
        .into_iter()
        .find(|m| m.name() == c.model)
        .ok_or_else(|| format!("composition `{}`: no persistency model `{}` among the explored", c.name, c.model))?;
    let cfg = resolve(&base, model, &c.tree).map_err(|e| format!("composition `{}`: {e}", c.name))?;
    if cfg.name != c.name || machine_digest(&cfg) != c.machine {
        return Err(format!(
            "composition `{}`: the machine rebuilt from its choices (`{}`, digest {}) is not the one explored (digest {}): the exploration was written by another version of spmsim or of its presets; explore again",
            c.name,
            cfg.name,
            machine_digest(&cfg),
            c.machine
        ));
    }
    Ok(cfg)
}

/// A digest of `c`'s machine, whatever its name and description say.
fn machine_digest(c: &SimConfig) -> String {
    let unnamed = SimConfig { name: String::new(), description: String::new(), ..c.clone() };
    digest(toml::to_string(&unnamed).expect("a config serializes").as_bytes())
}

/// A scheme the exploration puts under every model and tree: a preset, or
/// its metadata rules behind another front end (or without its battery).
struct Base<'a> {
    preset: &'a SimConfig,
    name: String,
    front: String,
    /// Its machine, or why the mechanisms cannot build it.
    machine: Result<SimConfig, String>,
    /// The preset itself (its front end and battery are its paper's).
    own: bool,
    /// The preset's metadata rules behind another front end.
    refronted: bool,
    /// Its front end's battery taken away (`@adr`).
    adr: bool,
}

/// What a composition's crash check and attacks found.
struct Checked {
    crash: CrashVerdict,
    attacks: Option<AttackCounts>,
}

impl Checked {
    fn safe(&self) -> bool {
        self.crash.safe() && self.attacks.as_ref().is_none_or(|a| a.undetected == 0 && a.false_alarms == 0)
    }
}

/// The crash oracle, then (if it found nothing, on a secure machine) the
/// attack harness: both with real cryptography, on `c`.
fn check(c: &SimConfig, ops: u64, seed: u64) -> Result<Checked, String> {
    let crash = crash_verdict(c, ops, seed)?;
    let attacks = match crash.safe() && c.security.enabled {
        true => Some(attack_counts(c, ops, seed)?),
        false => None,
    };
    Ok(Checked { crash, attacks })
}

/// The safe secure compositions no other beats on both slowdown and
/// battery volume, in battery order.
fn battery_front(compositions: &[Composition]) -> Vec<String> {
    let pts: Vec<(&str, f64, f64)> = compositions
        .iter()
        .filter_map(|c| match &c.outcome {
            Outcome::Safe { slowdown_gmean: Some(s), battery_supercap_mm3: b, .. } if c.secure => Some((c.name.as_str(), *b, *s)),
            _ => None,
        })
        .collect();
    super::report::front(&pts)
}

/// Explore every composition of the schemes `opts` selects.
pub fn explore(opts: &Options, progress: Progress) -> Result<Exploration, String> {
    let ecfg = crate::battery::EnergyConfig::load(&crate::battery::default_energy_path()).map_err(|e| e.to_string())?;
    let provenance = Provenance::of(opts)?;
    let chosen: Vec<SimConfig> = super::selected(opts)?.into_iter().filter_map(|(_, c)| c).collect();
    let workloads = opts.workload_names();
    let (n, seed) = (opts.instructions(), opts.seed);
    let fronts = fronts(opts);
    let bases = bases_of(&chosen, &fronts, opts.adr_batteries);
    let mut comps = compositions_of(&bases);
    // First every realisable composition's crash check and attacks, then
    // the timing runs of the safe ones and of their baselines.
    let checked: Vec<usize> =
        (0..comps.len()).filter(|&i| comps[i].1.is_some() && matches!(comps[i].0.outcome, Outcome::Failed { .. })).collect();
    let total_crash = checked.len();
    let verdicts = grid::run(
        &checked,
        &|done, _, what| progress(done, total_crash, what),
        |&i| format!("{} crash check and attacks", comps[i].0.name),
        |&i| check(comps[i].1.as_ref().expect("realisable"), opts.ops().min(CRASH_OPS), seed),
    );
    let mut safe: Vec<usize> = Vec::new();
    for (&i, v) in checked.iter().zip(verdicts) {
        comps[i].0.outcome = match v {
            Err(why) => Outcome::Failed { why },
            Ok(c) if !c.safe() => Outcome::Unsafe { crash: c.crash, attacks: c.attacks },
            Ok(c) => {
                safe.push(i);
                Outcome::Safe {
                    crash: c.crash,
                    attacks: c.attacks,
                    slowdown_gmean: None,
                    slowdown: BTreeMap::new(),
                    battery_supercap_mm3: 0.0,
                    notes: Vec::new(),
                }
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
        record_slowdowns(&mut comps[i], &runs, &workloads, &ecfg);
    }
    let (compositions, configs): (Vec<Composition>, Vec<Option<SimConfig>>) = comps.into_iter().unzip();
    let front = battery_front(&compositions);
    // The front's recovery times, each a real recovery of 1 TiB.
    let on_front: Vec<(&Composition, &SimConfig)> = front
        .iter()
        .filter_map(|n| compositions.iter().zip(&configs).find(|(c, _)| &c.name == n))
        .filter_map(|(c, cfg)| Some((c, cfg.as_ref()?)))
        .collect();
    let before = total_crash + total_runs;
    let recovered = grid::run(
        &on_front,
        &|done, total, what| progress(before + done, before + total, what),
        |(c, _)| format!("{} recovery", c.name),
        |(_, cfg)| {
            let (label, bytes) = super::RECOVERY_MEMORY[1];
            super::recovery_point(cfg, label, bytes, opts.ops(), seed).map(|r| r.seconds)
        },
    );
    let front_recovery_1tib = on_front
        .iter()
        .zip(recovered)
        .map(|((c, _), r)| {
            let (seconds, error) = match r {
                Ok(s) => (Some(s), None),
                Err(e) => (None, Some(e)),
            };
            (c.name.clone(), FrontRecovery { seconds, error })
        })
        .collect();
    Ok(Exploration {
        kind: "explore".into(),
        instructions: n,
        seed,
        crash_points: super::CRASH_POINTS,
        crash_ops: opts.ops().min(CRASH_OPS),
        recovery_ops: opts.ops(),
        workloads,
        fronts: fronts.iter().map(|f| f.name()).collect(),
        adr_batteries: opts.adr_batteries,
        pareto_battery: front,
        front_recovery_1tib,
        compositions,
        runs,
        provenance: Some(provenance),
    })
}

/// Each preset, then its metadata rules behind each other front end of
/// `fronts`; with `adr_batteries`, each of those whose front end holds
/// stores persistent again with the WPQ alone on battery.
fn bases_of<'a>(chosen: &'a [SimConfig], fronts: &[FrontChoice], adr_batteries: bool) -> Vec<Base<'a>> {
    let mut bases: Vec<Base> = Vec::new();
    for p in chosen {
        bases.push(Base {
            preset: p,
            name: p.name.clone(),
            front: FrontChoice::of(&p.scheme.work()).name(),
            machine: Ok(p.clone()),
            own: true,
            refronted: false,
            adr: false,
        });
        for &f in fronts {
            if let Some(r) = refront(p, f) {
                bases.push(Base {
                    preset: p,
                    name: format!("{}+{}", f.short(), p.name),
                    front: f.name(),
                    machine: r,
                    own: false,
                    refronted: true,
                    adr: false,
                });
            }
        }
    }
    // The battery axis (`--batteries adr`): each front end that holds
    // stores persistent (a persist buffer, eADR's caches) with the WPQ
    // alone on battery, named `BASE@adr`.
    if adr_batteries {
        let mut without: Vec<Base> = Vec::new();
        for b in &bases {
            let Ok(c) = &b.machine else { continue };
            if !(c.persistence.battery.persist_buffer || c.persistence.battery.caches) {
                continue;
            }
            let c = without_front_battery(c);
            without.push(Base {
                preset: b.preset,
                name: c.name.clone(),
                front: b.front.clone(),
                machine: Ok(c),
                own: false,
                refronted: b.refronted,
                adr: true,
            });
        }
        bases.extend(without);
    }
    bases
}

/// Every composition of `bases` under each persistency model and tree,
/// resolved: refused, the same machine as an earlier one, or to be run.
fn compositions_of(bases: &[Base]) -> Vec<(Composition, Option<SimConfig>)> {
    // The same machine twice is timed once.
    let mut comps: Vec<(Composition, Option<SimConfig>)> = Vec::new();
    for Base { preset: p, name: base_name, front, machine: base, own: own_front, refronted, adr } in bases {
        let own_tree = tree_name(&machine::common(p));
        for model in MODELS {
            for tree in TREES {
                let resolved = match base {
                    Ok(b) => resolve(b, model, tree),
                    Err(why) => Err(why.clone()),
                };
                let (outcome, cfg) = match resolved {
                    Err(why) => (Outcome::Refused { why }, None),
                    Ok(c) => match comps.iter().find(|(_, o)| o.as_ref().is_some_and(|o| machine::same_machine(o, &c))) {
                        Some((first, _)) => (Outcome::Same { same_as: first.name.clone() }, Some(c)),
                        None => (Outcome::Failed { why: "not run".into() }, Some(c)),
                    },
                };
                let comp = Composition {
                    name: format!("{base_name}+{}+{tree}", model.name()),
                    preset: p.name.clone(),
                    scheme: base.as_ref().map_or_else(|_| base_name.clone(), |b| b.scheme.name().to_string()),
                    paper: super::paper_of(p),
                    front: front.clone(),
                    model: model.name().into(),
                    tree: tree.into(),
                    papers_own: *own_front && model == p.persistence.model && tree == own_tree,
                    refronted: *refronted,
                    adr_battery: *adr,
                    secure: p.security.enabled,
                    machine: cfg.as_ref().map(machine_digest).unwrap_or_default(),
                    outcome,
                };
                comps.push((comp, cfg));
            }
        }
    }
    comps
}

/// A safe composition's slowdown on each workload against its insecure
/// baseline (`runs` holds both), their geometric mean, and its battery.
fn record_slowdowns(
    comp: &mut (Composition, Option<SimConfig>),
    runs: &[RunRecord],
    workloads: &[String],
    ecfg: &crate::battery::EnergyConfig,
) {
    let c = comp.1.clone().expect("realisable");
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
    if let Outcome::Safe { slowdown_gmean, slowdown, battery_supercap_mm3, notes: n, .. } = &mut comp.0.outcome {
        *slowdown_gmean = gmean;
        *slowdown = per;
        *battery_supercap_mm3 = crate::battery::domain_estimate(ecfg, c).supercap_mm3;
        *n = notes;
    }
}

/// Why a composition is unsafe: the crash oracle's first violation, or
/// the attacks the harness found undetected and the images it refused.
pub fn unsafe_cause(o: &Outcome) -> String {
    match o {
        Outcome::Unsafe { crash, .. } if !crash.safe() => format!(
            "{} violations ({}) at {} of {} crash points; first: {}",
            crash.violations,
            crash.guarantee,
            crash.violating_crash_points,
            crash.crash_points,
            crash.first_violation.as_deref().unwrap_or("-")
        ),
        Outcome::Unsafe { attacks: Some(a), .. } => format!(
            "the crash oracle found nothing, but the attack harness found {} of {} applicable attacks undetected and refused {} untampered image(s)",
            a.undetected,
            a.detected + a.undetected,
            a.false_alarms
        ),
        _ => String::new(),
    }
}

/// One exploration from the shards of a sweep (each `DIR/explore.json`,
/// in the order given): the compositions of all, a machine met again
/// marked the same as where it was first met, the runs once each, the
/// front over all the safe ones. A member of the whole front is on its own
/// shard's front too (nothing anywhere beats it), so its shard measured
/// its recovery.
pub fn merge(dirs: &[std::path::PathBuf]) -> Result<Exploration, String> {
    let mut shards = Vec::new();
    for d in dirs {
        let path = d.join("explore.json");
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let e: Exploration = serde_json::from_str(&text).map_err(|e| format!("{}: not an exploration: {e}", path.display()))?;
        e.check().map_err(|m| format!("{}: {m}", path.display()))?;
        shards.push((path, e));
    }
    let Some((first_path, first)) = shards.first() else { return Err("no shard to merge".into()) };
    for (p, e) in &shards {
        let (Some(a), Some(b)) = (&first.provenance, &e.provenance) else {
            let old = if first.provenance.is_none() { first_path } else { p };
            return Err(format!(
                "{} records no provenance (what its result was computed with: it was written by an earlier spmsim), so it cannot be merged with confidence; explore it again",
                old.display()
            ));
        };
        let d = a.differences(b);
        if !d.is_empty() {
            let said: Vec<String> = d.iter().map(|(what, x, y)| format!("{what}: {x} in the first, {y} here")).collect();
            return Err(format!("{} was explored with other settings than {}: {}", p.display(), first_path.display(), said.join("; ")));
        }
    }
    let mut out = Exploration { compositions: Vec::new(), runs: Vec::new(), pareto_battery: Vec::new(), ..first.clone() };
    out.front_recovery_1tib.clear();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (_, e) in shards {
        for mut c in e.compositions {
            if !matches!(c.outcome, Outcome::Refused { .. } | Outcome::Same { .. }) && !c.machine.is_empty() {
                match seen.get(&c.machine) {
                    Some(first) => c.outcome = Outcome::Same { same_as: first.clone() },
                    None => {
                        seen.insert(c.machine.clone(), c.name.clone());
                    }
                }
            }
            out.compositions.push(c);
        }
        for r in e.runs {
            if !out.runs.iter().any(|x| x.config == r.config && x.workload == r.workload) {
                out.runs.push(r);
            }
        }
        out.front_recovery_1tib.extend(e.front_recovery_1tib);
    }
    let front = battery_front(&out.compositions);
    out.front_recovery_1tib.retain(|name, _| front.contains(name));
    for name in &front {
        out.front_recovery_1tib
            .entry(name.clone())
            .or_insert_with(|| FrontRecovery { seconds: None, error: Some("not measured in its shard".into()) });
    }
    out.pareto_battery = front;
    Ok(out)
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
        "Every scheme compare takes, and each memory-controller scheme's metadata rules behind the front ends {}, under each persistency model (strict, epoch, tep) with each integrity tree (bmt, sit), on the common machine. Each realisable composition is crash-checked first ({} crash points of {} operations of `{}`, against its model's promise), then attacked (the attack harness, real cryptography), and timed only if safe ({} instructions of each workload, seed {}, against its insecure baseline under the same model). Workloads: {}.\n",
        if e.fronts.is_empty() { "(none)".to_string() } else { e.fronts.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ") },
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
    let _ = writeln!(s, "- safe compositions no paper evaluated (front end, model or tree not its preset's own): {new_safe}");
    let composed = |f: fn(&Outcome) -> bool| e.compositions.iter().filter(|c| c.refronted && f(&c.outcome)).count();
    let _ = writeln!(
        s,
        "- of them with another front end before a scheme's metadata rules: {} compositions, {} refused, {} safe, {} unsafe",
        composed(|_| true),
        composed(|o| matches!(o, Outcome::Refused { .. })),
        composed(|o| matches!(o, Outcome::Safe { .. })),
        composed(|o| matches!(o, Outcome::Unsafe { .. }))
    );
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
            Outcome::Unsafe { .. } => (format!("UNSAFE: {}", unsafe_cause(&c.outcome)), String::new(), String::new()),
            Outcome::Safe { crash, attacks, slowdown_gmean, battery_supercap_mm3, notes, .. } => (
                format!(
                    "safe ({}, {} points{}){}",
                    crash.guarantee,
                    crash.crash_points,
                    attacks.as_ref().map_or(String::new(), |a| format!("; {} attacks detected, {} ruled out", a.detected, a.ruled_out)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_preset;
    use crate::scheme::{SchemeKind, SecPbVariant};

    #[test]
    fn a_memory_controller_scheme_goes_behind_each_other_front_end() {
        let sp = load_preset("sp", &[]).unwrap();
        // SP's rules behind COBCM's buffer are SecPB's COBCM, on its machine.
        let c = refront(&sp, FrontChoice::PersistBuffer(SecPbVariant::Cobcm)).unwrap().unwrap();
        assert_eq!(c.scheme, SchemeKind::secpb(SecPbVariant::Cobcm));
        assert!(machine::same_machine(&c, &load_preset("cobcm", &[]).unwrap()));
        // STAR's behind eADR's caches: a composed scheme, the caches on battery.
        let star = load_preset("star", &[]).unwrap();
        let c = refront(&star, FrontChoice::CacheHierarchy).unwrap().unwrap();
        assert_eq!((c.name.as_str(), c.scheme.name()), ("eadr+star", "eadr+star"));
        assert!(c.persistence.battery.caches && !c.persistence.battery.persist_buffer);
        // A conflict names both choices; a scheme's own front end, a front
        // end's own scheme and an insecure one are not re-fronted.
        let e = refront(&star, FrontChoice::PersistBuffer(SecPbVariant::Nogap)).unwrap().unwrap_err();
        assert!(e.contains("persist-buffer:nogap") && e.contains("`star`"), "{e}");
        assert!(refront(&star, FrontChoice::MemoryController).is_none());
        assert!(refront(&load_preset("cobcm", &[]).unwrap(), FrontChoice::CacheHierarchy).is_none());
        assert!(refront(&load_preset("bbb", &[]).unwrap(), FrontChoice::CacheHierarchy).is_none());
    }

    #[test]
    fn a_composition_machine_is_rebuilt_from_its_choices() {
        // STAR's rules behind COBCM's buffer without its battery, under
        // epoch persistency with a SIT, as explore builds it.
        let star = load_preset("star", &[]).unwrap();
        let f = FrontChoice::PersistBuffer(SecPbVariant::Cobcm);
        let base = without_front_battery(&refront(&star, f).unwrap().unwrap());
        let cfg = resolve(&base, PersistencyModel::Epoch, "sit").unwrap();
        let mut comp = Composition {
            name: "cobcm+star@adr+epoch+sit".into(),
            preset: "star".into(),
            scheme: cfg.scheme.name().into(),
            paper: "STAR".into(),
            front: f.name(),
            model: "epoch".into(),
            tree: "sit".into(),
            papers_own: false,
            refronted: true,
            adr_battery: true,
            secure: true,
            machine: machine_digest(&cfg),
            outcome: Outcome::Failed { why: "not run".into() },
        };
        let rebuilt = machine_of(&comp).unwrap();
        assert!(machine::same_machine(&rebuilt, &cfg) && !rebuilt.persistence.battery.persist_buffer);
        // Its battery back is another machine: the digest says so.
        comp.adr_battery = false;
        let e = machine_of(&comp).unwrap_err();
        assert!(e.contains("cobcm+star@adr+epoch+sit") && e.contains("explore again"), "{e}");
    }

    /// An exploration of one safe composition, as a shard writes it.
    fn explored(ops: u64) -> Exploration {
        let opts = Options {
            quick: true,
            instructions: Some(1000),
            seed: 1,
            only: vec!["sp".into()],
            workloads: vec!["btree".into()],
            ops: Some(ops),
            recovery: true,
            attacks: true,
            paper_machine: false,
            models: Vec::new(),
            crash: true,
            fronts: Some(Vec::new()),
            adr_batteries: false,
        };
        let crash =
            CrashVerdict { guarantee: "strict".into(), crash_points: 64, violations: 0, violating_crash_points: 0, first_violation: None };
        let outcome = Outcome::Safe {
            crash,
            attacks: None,
            slowdown_gmean: Some(1.5),
            slowdown: BTreeMap::from([("btree".to_string(), 1.5)]),
            battery_supercap_mm3: 0.06,
            notes: Vec::new(),
        };
        Exploration {
            kind: "explore".into(),
            instructions: 1000,
            seed: 1,
            crash_points: 64,
            crash_ops: ops.min(CRASH_OPS),
            recovery_ops: ops,
            workloads: vec!["btree".into()],
            fronts: Vec::new(),
            adr_batteries: false,
            compositions: vec![Composition {
                name: "sp+strict+bmt".into(),
                preset: "sp".into(),
                scheme: "sp".into(),
                paper: "SecPB".into(),
                front: "memory-controller".into(),
                model: "strict".into(),
                tree: "bmt".into(),
                papers_own: true,
                refronted: false,
                adr_battery: false,
                secure: true,
                machine: String::new(),
                outcome,
            }],
            pareto_battery: vec!["sp+strict+bmt".into()],
            front_recovery_1tib: BTreeMap::new(),
            runs: Vec::new(),
            provenance: Some(Provenance::of(&opts).unwrap()),
        }
    }

    #[test]
    fn an_exploration_out_of_range_is_refused_naming_its_field() {
        assert!(explored(100).check().is_ok());
        let e = explored(1_000_000_000_000_000).check().unwrap_err();
        assert!(e.contains("`recovery_ops` is 1000000000000000") && e.contains("at most"), "{e}");
        let mut x = explored(100);
        if let Outcome::Safe { slowdown_gmean, .. } = &mut x.compositions[0].outcome {
            *slowdown_gmean = Some(-3.0);
        }
        let e = x.check().unwrap_err();
        assert!(e.contains("`compositions[0].outcome.slowdown_gmean` (`sp+strict+bmt`) is -3"), "{e}");
        let mut x = explored(100);
        x.front_recovery_1tib.insert("sp+strict+bmt".into(), FrontRecovery { seconds: Some(f64::NAN), error: None });
        assert!(x.check().unwrap_err().contains("front_recovery_1tib.sp+strict+bmt.seconds"));
    }

    #[test]
    fn a_provenance_names_what_differs_and_merge_refuses_to_mix_them() {
        let (a, b) = (explored(100), explored(50));
        let d = a.provenance.as_ref().unwrap().differences(b.provenance.as_ref().unwrap());
        assert_eq!(d, [("--ops".to_string(), "100".to_string(), "50".to_string())]);
        let mut edited = b.provenance.clone().unwrap();
        edited.inputs.insert("sp.toml".into(), "0123".into());
        edited.inputs.remove("wt.toml");
        let d = a.provenance.as_ref().unwrap().differences(&edited);
        let files: Vec<&str> = d.iter().map(|(w, _, _)| w.as_str()).collect();
        assert_eq!(files, ["--ops", "the presets folder's sp.toml", "the presets folder's wt.toml"], "{d:?}");
        assert_eq!(d[2].2, "absent");
        // Two shards of other operations do not merge; nor does one that
        // records no provenance.
        let dir = std::env::temp_dir().join(format!("spmsim-merge-provenance-{}", std::process::id()));
        let shard = |name: &str, e: &Exploration| {
            let d = dir.join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("explore.json"), serde_json::to_string(e).unwrap()).unwrap();
            d
        };
        let (x, y) = (shard("x", &a), shard("y", &b));
        let e = merge(&[x.clone(), y.clone()]).unwrap_err();
        assert!(e.contains("y/explore.json was explored with other settings") && e.contains("--ops: 100 in the first, 50 here"), "{e}");
        assert!(merge(&[x.clone(), shard("z", &explored(100))]).is_ok());
        let old = shard("old", &Exploration { provenance: None, ..a.clone() });
        let e = merge(&[x, old]).unwrap_err();
        assert!(e.contains("old/explore.json records no provenance"), "{e}");
        let hand = shard("hand", &explored(1_000_000_000_000_000));
        let e = merge(&[hand]).unwrap_err();
        assert!(e.contains("hand/explore.json: `recovery_ops`"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_machine_digest_ignores_names_only() {
        let a = load_preset("cobcm", &[]).unwrap();
        let b = SimConfig { name: "x".into(), description: "y".into(), ..a.clone() };
        assert_eq!(machine_digest(&a), machine_digest(&b));
        let c = load_preset("cobcm", &["persistence.wpq_entries=16".into()]).unwrap();
        assert_ne!(machine_digest(&a), machine_digest(&c));
    }
}
