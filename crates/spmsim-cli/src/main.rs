//! `spmsim`: the command-line front of the simulator.

mod commands;
mod table;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "spmsim", version, about = "Secure persistent memory simulator: crash and attack oracles over real cryptography")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Show or list configuration presets.
    Config {
        #[command(subcommand)]
        cmd: commands::config::ConfigCmd,
    },
    /// Crash after every event (or K sampled ones), drain, recover, and
    /// compare every touched block with what strict persistency promises.
    CheckCrash(commands::check::CheckCrashArgs),
    /// Tamper with a persisted image in every way the threat model allows
    /// and report which attacks the integrity checks detect.
    Attack(commands::attack::AttackArgs),
    /// Save, inspect and verify NVM images with their chip state.
    Image {
        #[command(subcommand)]
        cmd: commands::image::ImageCmd,
    },
    /// The crash and attack checks over every preset, as a table.
    CheckAll(commands::check_all::CheckAllArgs),
    /// One timed simulation; statistics as JSON with the resolved config.
    Run(commands::run::RunArgs),
    /// Battery or supercapacitor size needed to drain and secure the
    /// persistence domain (SecPB V-B), beside the paper's Tables V and VI.
    Battery(commands::battery::BatteryArgs),
    /// Simulation speed (instructions/s) and peak memory on a fixed trace.
    Bench(commands::bench::BenchArgs),
    /// The real-program suite: install from Debian's packages, generate
    /// inputs, record traces under valgrind lackey (`suite:NAME` workloads).
    Suite {
        #[command(subcommand)]
        cmd: commands::suite::SuiteCmd,
    },
    /// Record, inspect, convert and generate memory traces.
    Trace {
        #[command(subcommand)]
        cmd: commands::trace::TraceCmd,
    },
    /// Reproduce a paper's evaluation, with its numbers beside ours.
    Reproduce {
        #[command(subcommand)]
        cmd: commands::reproduce::ReproduceCmd,
    },
}

fn main() -> ExitCode {
    // Output piped into `head` or a closed pager must end the process
    // quietly, as other command-line tools do, not panic on a write error.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any
    // thread starts has no other effect on the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Config { cmd } => commands::config::run(cmd),
        Cmd::CheckCrash(a) => commands::check::run(a),
        Cmd::Attack(a) => commands::attack::run(a),
        Cmd::Image { cmd } => commands::image::run(cmd),
        Cmd::CheckAll(a) => commands::check_all::run(a),
        Cmd::Run(a) => commands::run::run(a),
        Cmd::Battery(a) => commands::battery::run(a),
        Cmd::Reproduce { cmd } => commands::reproduce::run(cmd),
        Cmd::Bench(a) => commands::bench::run(a),
        Cmd::Trace { cmd } => commands::trace::run(cmd),
        Cmd::Suite { cmd } => commands::suite::run(cmd),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
