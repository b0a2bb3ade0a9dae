use anyhow::Result;
use clap::Subcommand;
use spmsim::config::{list_presets, load_preset, presets_dir};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum ConfigCmd {
    /// Print the fully resolved configuration of a preset.
    Show {
        preset: String,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// List the presets with their descriptions.
    List,
}

pub fn run(cmd: ConfigCmd) -> Result<ExitCode> {
    match cmd {
        ConfigCmd::Show { preset, overrides } => {
            let cfg = load_preset(&preset, &overrides)?;
            let mc = spmsim::scheme::controller(&cfg, 0);
            let l = mc.layout();
            print!("{}", cfg.to_toml());
            println!("\n# derived (not settable):");
            let per_level: Vec<String> = l.level_nodes.iter().map(|n| n.to_string()).collect();
            println!("# tree levels = {} (counter blocks + node levels; nodes per level {})", l.levels(), per_level.join(", "));
            println!("# root registers = {}", l.level_nodes.last().unwrap());
        }
        ConfigCmd::List => {
            println!("presets in {}:", presets_dir().display());
            for p in list_presets() {
                let d = load_preset(&p, &[]).map(|c| c.description).unwrap_or_else(|e| format!("(invalid: {e})"));
                println!("  {p:<22} {d}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
