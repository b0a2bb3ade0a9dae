pub mod attack;
pub mod battery;
pub mod bench;
pub mod check;
pub mod check_all;
pub mod compare;
pub mod config;
pub mod image;
pub mod plan;
pub mod python;
pub mod recovery;
pub mod reproduce;
pub mod run;
pub mod suite;
pub mod trace;

use anyhow::{anyhow, Result};
use spmsim::config::{load_preset, SimConfig};
use spmsim::workload::{Event, WorkloadKind};

/// Options every simulation command shares.
#[derive(clap::Args, Clone, Debug)]
pub struct SimArgs {
    /// Preset name (see `spmsim config list`) or path to a TOML file.
    #[arg(long)]
    pub scheme: String,
    /// Built-in workload: random-writes, seq-writes, array-swap.
    #[arg(long)]
    pub workload: String,
    /// Workload operations (stores, or transactions for array-swap).
    #[arg(long, default_value_t = 500)]
    pub ops: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Override a config key: --set persistence.wpq_entries=64
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
}

impl SimArgs {
    pub fn load(&self) -> Result<(SimConfig, WorkloadKind, Vec<Event>)> {
        let cfg = load_preset(&self.scheme, &self.overrides)?;
        let w = WorkloadKind::parse(&self.workload).map_err(|e| anyhow!(e))?;
        let cfg = cfg.with_cores_for(w.threads()).map_err(|e| anyhow!(e))?;
        if self.ops == 0 {
            return Err(anyhow!("--ops must be at least 1"));
        }
        let events = w.generate_placed(self.ops, self.seed, spmsim::workload::Placement::of(&cfg)).map_err(|e| anyhow!(e))?;
        check_fits(&cfg, &events)?;
        Ok((cfg, w, events))
    }
}

/// Every address of the workload must lie inside the simulated memory.
pub fn check_fits(cfg: &SimConfig, events: &[Event]) -> Result<()> {
    if let Some(e) = events.iter().find(|e| e.addr + e.size as u64 > cfg.memory.capacity_bytes) {
        return Err(anyhow!(
            "workload touches {:#x}, beyond memory.capacity_bytes = {} of `{}`",
            e.addr,
            cfg.memory.capacity_bytes,
            cfg.name
        ));
    }
    Ok(())
}
