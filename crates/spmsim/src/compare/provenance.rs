//! What shapes an exploration's result besides which presets it
//! explores, recorded in its explore.json: a shard whose provenance differs
//! from a run's is another result (`spmsim explore` computes it again,
//! saying which value differs; `merge` refuses to mix it).
//!
//! ```text
//!  spmsim's version, the counts (instructions, seed, operations), the
//!  workloads, the axes (front ends, batteries, models, trees), the crash
//!  points, and a digest of each file of the presets folder the run reads
//!    -> Provenance::of(opts)            (`compare --explore --provenance`)
//!    -> Provenance::differences(other)  (what, here, there)
//! ```

use super::axes::{fronts, MODELS, TREES};
use super::Options;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What shapes an exploration's result besides which presets it explores:
/// a shard written under another value of any of these is another result
/// (`spmsim explore` recomputes it, [`super::explore::merge`] refuses to
/// mix it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// spmsim's version and its model's digest ([`crate::MODEL_DIGEST`]).
    pub spmsim: String,
    pub instructions: u64,
    pub seed: u64,
    /// Operations before each recovery and attack run (`--ops`).
    pub ops: u64,
    pub workloads: Vec<String>,
    pub fronts: Vec<String>,
    pub adr_batteries: bool,
    pub models: Vec<String>,
    pub trees: Vec<String>,
    pub crash_points: u64,
    /// The SHA-256 (first 12 bytes, hex) of each file of the presets folder
    /// the run reads, by its path there: every preset (compare chooses its
    /// schemes among all of them, leaving out one whose machine an earlier
    /// one has), the energy model the battery is priced with, and the
    /// suite's program list when a workload is a suite program.
    pub inputs: BTreeMap<String, String>,
}

impl Provenance {
    /// The provenance of an exploration with `opts`, on this spmsim and
    /// the presets folder as it is now.
    pub fn of(opts: &Options) -> Result<Provenance, String> {
        let workloads = opts.workload_names();
        let mut files = vec!["energy/secpb-table3.toml".to_string()];
        if workloads.iter().any(|w| w.starts_with("suite:")) {
            files.push("suite/programs.toml".into());
        }
        let inputs = crate::config::presets_digests(&files)?;
        Ok(Provenance {
            spmsim: format!("{} (model {})", env!("CARGO_PKG_VERSION"), crate::MODEL_DIGEST),
            instructions: opts.instructions(),
            seed: opts.seed,
            ops: opts.ops(),
            workloads,
            fronts: fronts(opts).iter().map(|f| f.name()).collect(),
            adr_batteries: opts.adr_batteries,
            models: MODELS.iter().map(|m| m.name().to_string()).collect(),
            trees: TREES.iter().map(|t| t.to_string()).collect(),
            crash_points: super::CRASH_POINTS,
            inputs,
        })
    }

    /// What differs from `other`: what (the flag that sets it, or the
    /// file), its value here and there.
    pub fn differences(&self, other: &Provenance) -> Vec<(String, String, String)> {
        let now = other;
        let mut d = Vec::new();
        let mut field = |what: &str, was: String, is: String| {
            if was != is {
                d.push((what.to_string(), was, is));
            }
        };
        let list = |v: &[String]| if v.is_empty() { "(none)".to_string() } else { v.join(",") };
        field("spmsim", self.spmsim.clone(), now.spmsim.clone());
        field("--instructions", self.instructions.to_string(), now.instructions.to_string());
        field("--seed", self.seed.to_string(), now.seed.to_string());
        field("--ops", self.ops.to_string(), now.ops.to_string());
        field("--workloads", list(&self.workloads), list(&now.workloads));
        field("--fronts", list(&self.fronts), list(&now.fronts));
        let batteries = |adr: bool| if adr { "front,adr" } else { "front" }.to_string();
        field("--batteries", batteries(self.adr_batteries), batteries(now.adr_batteries));
        field("models", list(&self.models), list(&now.models));
        field("trees", list(&self.trees), list(&now.trees));
        field("crash points", self.crash_points.to_string(), now.crash_points.to_string());
        let names: std::collections::BTreeSet<&String> = self.inputs.keys().chain(now.inputs.keys()).collect();
        for f in names {
            let text = |v: Option<&String>| v.map_or("absent".to_string(), |h| format!("digest {h}"));
            field(&format!("the presets folder's {f}"), text(self.inputs.get(f)), text(now.inputs.get(f)));
        }
        d
    }
}
