use super::SimArgs;
use anyhow::{anyhow, Result};
use spmsim::attack::AttackReport;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct AttackArgs {
    #[command(flatten)]
    pub sim: SimArgs,
    #[arg(long)]
    pub json: bool,
}

pub fn attack(sim: &SimArgs) -> Result<AttackReport> {
    let (cfg, w, events) = sim.load()?;
    spmsim::attack::run(&cfg, &w.name(), &events, sim.seed).map_err(|e| anyhow!(e))
}

pub fn run(a: AttackArgs) -> Result<ExitCode> {
    let rep = attack(&a.sim)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rep)?);
    } else {
        println!("scheme {}  workload {}", rep.scheme, rep.workload);
        let rows: Vec<Vec<String>> = rep
            .attacks
            .iter()
            .map(|x| {
                let status = match (&x.ruled_out, x.detected) {
                    (Some(_), _) => "ruled out".to_string(),
                    (None, true) => "detected".to_string(),
                    (None, false) => "UNDETECTED".to_string(),
                };
                vec![x.name.clone(), status, x.ruled_out.clone().unwrap_or_else(|| x.where_.clone())]
            })
            .collect();
        print!("{}", crate::table::render(&["attack", "result", "where"], &rows));
        println!("undetected: {}", rep.undetected);
    }
    Ok(ExitCode::SUCCESS)
}
