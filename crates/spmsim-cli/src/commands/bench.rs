//! `spmsim bench`: simulation speed and memory, each case in its own
//! process so its peak resident set is its own (SecPB issue: instructions
//! per second for bbb and cobcm, crypto on and timing-only; RSS against the
//! touched footprint, not the simulated capacity).

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use spmsim::config::load_preset;
use spmsim::workload::WorkloadKind;
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The fixed trace: about 10 SecPB persists per 1000 instructions over a
/// 64 MiB footprint of the default 8 GB memory.
pub const BENCH_WORKLOAD: &str = "synthetic:ppti=10,nwpe=2,footprint_mib=64";

/// Targets of the SecPB issue, in simulated instructions per second.
const TARGET_REAL: f64 = 20e6;
const TARGET_TIMING_ONLY: f64 = 50e6;
const TARGET_RSS_MIB: f64 = 1024.0;

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Simulated instructions per case.
    #[arg(long, default_value_t = 100_000_000)]
    pub instructions: u64,
    #[arg(long)]
    pub json: bool,
    /// Run one case in this process (used by the parent): SCHEME:real|timing-only.
    #[arg(long, hide = true)]
    pub case: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct CaseResult {
    scheme: String,
    crypto: String,
    workload: String,
    instructions: u64,
    seconds: f64,
    instructions_per_second: f64,
    peak_rss_mib: f64,
    memory_capacity_bytes: u64,
    blocks_touched: u64,
    ipc: f64,
}

/// Peak resident set of this process (Linux `VmHWM`), in MiB.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok()))
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

fn one_case(case: &str, instructions: u64) -> Result<CaseResult> {
    let (scheme, crypto) = case.split_once(':').ok_or_else(|| anyhow!("--case takes SCHEME:real|timing-only, got `{case}`"))?;
    let cfg = load_preset(scheme, &[format!("security.crypto=\"{crypto}\"")])?;
    let w = WorkloadKind::parse(BENCH_WORKLOAD).map_err(|e| anyhow!(e))?;
    let t = Instant::now();
    let mut sim = spmsim::timing::TimingSim::new(&cfg, 1);
    let mut stream = w.stream(1, instructions, cfg.memory.capacity_bytes).map_err(|e| anyhow!(e))?;
    sim.run(&mut stream).map_err(|e| anyhow!(e))?;
    stream.finish().map_err(|e| anyhow!(e))?;
    let blocks_touched = sim.sys.mc.st.nvm.image.len() as u64;
    let stats = sim.finish();
    let seconds = t.elapsed().as_secs_f64();
    Ok(CaseResult {
        scheme: scheme.into(),
        crypto: crypto.into(),
        workload: BENCH_WORKLOAD.into(),
        instructions: stats.roi.instructions,
        seconds,
        instructions_per_second: stats.roi.instructions as f64 / seconds,
        peak_rss_mib: peak_rss_mib(),
        memory_capacity_bytes: cfg.memory.capacity_bytes,
        blocks_touched,
        ipc: stats.roi.ipc,
    })
}

pub fn run(a: BenchArgs) -> Result<ExitCode> {
    if a.instructions == 0 {
        bail!("--instructions must be at least 1");
    }
    if let Some(case) = &a.case {
        println!("{}", serde_json::to_string(&one_case(case, a.instructions)?)?);
        return Ok(ExitCode::SUCCESS);
    }
    let exe = std::env::current_exe().context("finding the spmsim binary")?;
    let mut results = Vec::new();
    for scheme in ["bbb", "cobcm"] {
        for crypto in ["real", "timing-only"] {
            let case = format!("{scheme}:{crypto}");
            if !a.json {
                eprintln!("running {case} ({} instructions)...", a.instructions);
            }
            let out = Command::new(&exe).args(["bench", "--case", &case, "--instructions", &a.instructions.to_string()]).output()?;
            if !out.status.success() {
                bail!("bench case {case} failed: {}", String::from_utf8_lossy(&out.stderr));
            }
            let r: CaseResult = serde_json::from_slice(&out.stdout).with_context(|| format!("reading the result of bench case {case}"))?;
            results.push(r);
        }
    }
    let target = |r: &CaseResult| if r.crypto == "real" { TARGET_REAL } else { TARGET_TIMING_ONLY };
    if a.json {
        let rows: Vec<serde_json::Value> = results
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(r).expect("plain data");
                v["target_instructions_per_second"] = target(r).into();
                v["meets_speed_target"] = (r.instructions_per_second >= target(r)).into();
                v["meets_rss_target"] = (r.peak_rss_mib < TARGET_RSS_MIB).into();
                v
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "cases": rows, "rss_target_mib": TARGET_RSS_MIB }))?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("workload {BENCH_WORKLOAD}, one core, each case in its own process\n");
    let header = ["scheme", "crypto", "instructions", "seconds", "M instr/s", "target", "peak RSS MiB", "blocks touched", "memory GiB"];
    let body: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            vec![
                r.scheme.clone(),
                r.crypto.clone(),
                r.instructions.to_string(),
                format!("{:.2}", r.seconds),
                format!("{:.1}", r.instructions_per_second / 1e6),
                format!("{:.0} {}", target(r) / 1e6, if r.instructions_per_second >= target(r) { "met" } else { "MISSED" }),
                format!("{:.0} {}", r.peak_rss_mib, if r.peak_rss_mib < TARGET_RSS_MIB { "(< 1 GiB)" } else { "(OVER 1 GiB)" }),
                r.blocks_touched.to_string(),
                format!("{}", r.memory_capacity_bytes >> 30),
            ]
        })
        .collect();
    print!("{}", crate::table::render(&header, &body));
    Ok(ExitCode::SUCCESS)
}
