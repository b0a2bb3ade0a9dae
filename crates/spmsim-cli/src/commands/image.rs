use super::SimArgs;
use anyhow::{anyhow, Result};
use clap::{Subcommand, ValueEnum};
use spmsim::machine::System;
use spmsim::verify::image;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum)]
pub enum Shutdown {
    /// Orderly power-off: every buffer and cache is secured and written.
    Clean,
    /// Power failure: only the battery-backed domain drains.
    Crash,
}

#[derive(Subcommand)]
pub enum ImageCmd {
    /// Run a workload, power off, and write nvm.img + chip.json into DIR.
    Save {
        #[command(flatten)]
        sim: SimArgs,
        #[arg(short = 'o', long = "out")]
        out: PathBuf,
        #[arg(long, value_enum, default_value = "clean")]
        shutdown: Shutdown,
    },
    /// Describe a saved image.
    Inspect {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Check every block the root registers vouch for and every stored
    /// block through the secure read path (a crash image after the scheme's
    /// recovery). Exit codes: 0 intact, 1 integrity failure, 2 bad input.
    Verify {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: ImageCmd) -> Result<ExitCode> {
    match cmd {
        ImageCmd::Save { sim, out, shutdown } => {
            let (cfg, _, events) = sim.load()?;
            // The folder is made (and checked writable) before the run, and
            // removed again if the run fails or is interrupted.
            let folder = spmsim::util::output::ResultFiles::new(&out)?;
            let mut sys = System::new(&cfg, sim.seed);
            for (i, e) in events.iter().enumerate() {
                sys.apply(e).map_err(|err| anyhow!("event {}: {err}", i + 1))?;
            }
            match shutdown {
                Shutdown::Clean => sys.shutdown_clean().map_err(|e| anyhow!("shutdown: {e}"))?,
                Shutdown::Crash => {
                    sys.power_fail();
                }
            }
            image::save(&out, &cfg, &sys.mc)?;
            folder.commit()?;
            println!("saved {} NVM blocks and the chip state to {}", sys.mc.st.nvm.image.len(), out.display());
            Ok(ExitCode::SUCCESS)
        }
        ImageCmd::Inspect { dir, json } => {
            let (chip, mc) = image::open(&dir)?;
            let r = image::inspect(&chip, &mc);
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                println!("scheme {}  tree {}  capacity {} B  levels {}", r.scheme, r.tree, r.capacity_bytes, r.levels);
                println!(
                    "last power-off: {}",
                    if r.crashed { "power failure (a crash image; verify runs the scheme's recovery first)" } else { "orderly shutdown" }
                );
                let by_region: Vec<String> = r.records_by_region.iter().map(|(k, v)| format!("{k} {v}")).collect();
                println!("records {}: {}", r.records, by_region.join(", "));
                println!(
                    "layout: data blocks {}, counter base {:#x}, MAC base {:#x}, level bases {}",
                    r.layout.data_blocks,
                    r.layout.counter_base,
                    r.layout.mac_base,
                    r.layout.level_base.iter().map(|b| format!("{b:#x}")).collect::<Vec<_>>().join(", ")
                );
                let roots: Vec<String> = r.root_registers.iter().map(|(k, v)| format!("{k} {v}")).collect();
                println!("root registers (non-initial): {}", if roots.is_empty() { "none".to_string() } else { roots.join(", ") });
            }
            Ok(ExitCode::SUCCESS)
        }
        ImageCmd::Verify { dir, json } => {
            let (chip, mc) = image::open(&dir)?;
            let r = image::verify_saved(&chip.config, mc);
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                let verdict = match (r.ok, &r.recovery) {
                    (true, None) => "OK",
                    (true, Some(_)) => "OK after the scheme's recovery",
                    (false, _) => "INTEGRITY FAILURE",
                };
                if let Some(a) = &r.recovery {
                    println!("{}", a.action);
                }
                for f in &r.failures {
                    println!("FAIL {} [{}] {}: {}", f.address, f.region, f.check, f.detail);
                }
                println!(
                    "{}: {} metadata blocks and {} data blocks checked, {} failures",
                    verdict,
                    r.metadata_blocks_checked,
                    r.data_blocks_checked,
                    r.failures.len()
                );
            }
            Ok(if r.ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
    }
}
