//! `spmsim`: the command-line front of the simulator, as a library so that
//! the binary and the Python package (`spmsim._native.cli_main`) run the
//! same commands with the same output.

mod commands;
mod interrupt;
mod numbers;
mod progress;
mod table;

use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::io::Write;
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
    /// Recovery time of a scheme that restores metadata (STAR, Anubis),
    /// from a real recovery's counted work (STAR Fig. 14).
    Recovery(commands::recovery::RecoveryArgs),
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
    /// Every scheme of the five papers and their baselines on one common
    /// machine: slowdown, NVM writes, energy, battery, recovery time,
    /// on-chip state and attacks detected, with the best per criterion.
    Compare(commands::compare::CompareArgs),
    /// A designer's constraints (battery, recovery time at a memory size,
    /// on-chip NV bytes, NVM writes per kilo-instruction, no battery beyond
    /// ADR) answered with the safe schemes that meet them under each
    /// persistency model, ranked by slowdown, with the Pareto fronts.
    Plan(commands::plan::PlanArgs),
    /// Reproduce a paper's evaluation, with its numbers beside ours.
    Reproduce {
        #[command(subcommand)]
        cmd: commands::reproduce::ReproduceCmd,
    },
    /// A sweep over schemes, workloads and parameters, from a TOML spec
    /// (run by the Python package: `python3 -m spmsim sweep ARGS`).
    #[command(disable_help_flag = true)]
    Sweep {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
        args: Vec<String>,
    },
    /// The exploration of compositions (compare --explore) as a sweep: one
    /// shard per preset on a process pool, a local Dask cluster or a
    /// running one's scheduler (`--dask N|ADDRESS`), resumable (run by the Python package: `python3 -m spmsim explore ARGS`).
    #[command(disable_help_flag = true)]
    Explore {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
        args: Vec<String>,
    },
    /// HTML and Markdown report of a sweep's results, with plots
    /// (run by the Python package: `python3 -m spmsim report ARGS`).
    #[command(disable_help_flag = true)]
    Report {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
        args: Vec<String>,
    },
}

/// Run the command line `args` (program name first) and return the exit
/// code: 0 on success, 1 when a check fails, 2 on bad input or an error.
pub fn main_with_args(args: Vec<String>) -> i32 {
    main_with_os_args(args)
}

/// [`main_with_args`] over arguments that need not be UTF-8 (paths), as
/// the binary gets them.
pub fn main_with_os_args<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    // A reproduction's points on Dask are run by the Python package.
    let is = |i: usize, s: &str| args.get(i).is_some_and(|a| a == s);
    if is(1, "reproduce") && args.iter().any(|a| a == "--dask" || a.to_string_lossy().starts_with("--dask=")) {
        let rest: Vec<String> = args[2..].iter().map(|a| a.to_string_lossy().into_owned()).collect();
        return match commands::python::forward("reproduce", &rest) {
            Ok(code) => code_of(code),
            Err(e) => {
                eprintln!("error: {e:#}");
                2
            }
        };
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with code 0, usage errors to
            // stderr with code 2, as `Cli::parse` would do before exiting.
            let _ = e.print();
            return e.exit_code();
        }
    };
    // Ctrl-C ends the command as before, leaving no unfinished result.
    let _signals = interrupt::install();
    let r = match cli.cmd {
        Cmd::Config { cmd } => commands::config::run(cmd),
        Cmd::CheckCrash(a) => commands::check::run(a),
        Cmd::Attack(a) => commands::attack::run(a),
        Cmd::Image { cmd } => commands::image::run(cmd),
        Cmd::CheckAll(a) => commands::check_all::run(a),
        Cmd::Run(a) => commands::run::run(a),
        Cmd::Battery(a) => commands::battery::run(a),
        Cmd::Reproduce { cmd } => commands::reproduce::run(cmd),
        Cmd::Compare(a) => commands::compare::run(a),
        Cmd::Plan(a) => commands::plan::run(a),
        Cmd::Bench(a) => commands::bench::run(a),
        Cmd::Recovery(a) => commands::recovery::run(a),
        Cmd::Trace { cmd } => commands::trace::run(cmd),
        Cmd::Suite { cmd } => commands::suite::run(cmd),
        Cmd::Sweep { args } => commands::python::forward("sweep", &args),
        Cmd::Report { args } => commands::python::forward("report", &args),
        Cmd::Explore { args } => commands::python::forward("explore", &args),
    };
    let code = match r {
        Ok(code) => code_of(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    };
    // Inside a Python process nothing flushes Rust's stdout at exit.
    let _ = std::io::stdout().flush();
    code
}

/// The number behind an `ExitCode`, which std keeps opaque; the commands
/// only ever build codes from a `u8`.
fn code_of(code: ExitCode) -> i32 {
    (0..=u8::MAX).find(|&c| ExitCode::from(c) == code).map_or(1, i32::from)
}
