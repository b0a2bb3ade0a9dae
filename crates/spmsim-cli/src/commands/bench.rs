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
    /// Runs of each case; the figures are those of the median run (a
    /// shared or virtual machine's noise moves single runs by a third).
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    #[arg(long)]
    pub json: bool,
    /// Run one case in this process (used by the parent): SCHEME:real|timing-only.
    #[arg(long, hide = true)]
    pub case: Option<String>,
}

#[derive(Clone, Serialize, Deserialize)]
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

/// Every run of one case.
struct Repeated {
    runs: Vec<CaseResult>,
}

impl Repeated {
    fn of(runs: Vec<CaseResult>) -> Self {
        assert!(!runs.is_empty(), "at least one run per case");
        Repeated { runs }
    }

    /// The run of median time (the slower middle one of an even count),
    /// with the highest peak RSS of all runs.
    fn median(&self) -> CaseResult {
        let mut by_time: Vec<&CaseResult> = self.runs.iter().collect();
        by_time.sort_by(|x, y| x.seconds.total_cmp(&y.seconds));
        let mut m = by_time[by_time.len() / 2].clone();
        m.peak_rss_mib = self.runs.iter().map(|r| r.peak_rss_mib).fold(f64::MIN, f64::max);
        m
    }

    /// Fastest and slowest run, in seconds.
    fn range(&self) -> (f64, f64) {
        let s = self.runs.iter().map(|r| r.seconds);
        (s.clone().fold(f64::INFINITY, f64::min), s.fold(0.0, f64::max))
    }
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
    let mut sim = spmsim::timing::TimingSim::new(&cfg, 1).map_err(anyhow::Error::msg)?;
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
    if a.repeat == 0 {
        bail!("--repeat must be at least 1");
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
            let mut runs = Vec::new();
            for k in 1..=a.repeat {
                if !a.json {
                    eprintln!("running {case} ({} instructions, run {k} of {})...", a.instructions, a.repeat);
                }
                let out = Command::new(&exe).args(["bench", "--case", &case, "--instructions", &a.instructions.to_string()]).output()?;
                if !out.status.success() {
                    bail!("bench case {case} failed: {}", String::from_utf8_lossy(&out.stderr));
                }
                let r: CaseResult =
                    serde_json::from_slice(&out.stdout).with_context(|| format!("reading the result of bench case {case}"))?;
                runs.push(r);
            }
            results.push(Repeated::of(runs));
        }
    }
    let target = |r: &CaseResult| if r.crypto == "real" { TARGET_REAL } else { TARGET_TIMING_ONLY };
    let results: Vec<(CaseResult, &Repeated)> = results.iter().map(|rep| (rep.median(), rep)).collect();
    if a.json {
        let rows: Vec<serde_json::Value> = results
            .iter()
            .map(|(r, rep)| {
                let mut v = serde_json::to_value(r).expect("plain data");
                v["runs"] = rep.runs.len().into();
                v["seconds_each_run"] = rep.runs.iter().map(|x| x.seconds).collect::<Vec<_>>().into();
                v["target_instructions_per_second"] = target(r).into();
                v["meets_speed_target"] = (r.instructions_per_second >= target(r)).into();
                v["meets_rss_target"] = (r.peak_rss_mib < TARGET_RSS_MIB).into();
                v
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "cases": rows, "rss_target_mib": TARGET_RSS_MIB }))?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("workload {BENCH_WORKLOAD}, one core, each case in its own process, {} run(s) each: the median run's figures, the range of all runs\n", a.repeat);
    let header =
        ["scheme", "crypto", "instructions", "seconds", "range s", "M instr/s", "target", "peak RSS MiB", "blocks touched", "memory GiB"];
    let body: Vec<Vec<String>> = results
        .iter()
        .map(|(r, rep)| {
            let (lo, hi) = rep.range();
            vec![
                r.scheme.clone(),
                r.crypto.clone(),
                r.instructions.to_string(),
                format!("{:.2}", r.seconds),
                format!("{lo:.2}-{hi:.2}"),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(seconds: f64, rss: f64) -> CaseResult {
        CaseResult {
            scheme: "cobcm".into(),
            crypto: "timing-only".into(),
            workload: BENCH_WORKLOAD.into(),
            instructions: 100,
            seconds,
            instructions_per_second: 100.0 / seconds,
            peak_rss_mib: rss,
            memory_capacity_bytes: 1 << 33,
            blocks_touched: 1,
            ipc: 1.0,
        }
    }

    #[test]
    fn the_median_run_speaks_for_the_case_with_the_highest_rss() {
        let rep = Repeated::of(vec![run(3.0, 10.0), run(1.0, 30.0), run(2.0, 20.0)]);
        let m = rep.median();
        assert_eq!((m.seconds, m.instructions_per_second, m.peak_rss_mib), (2.0, 50.0, 30.0));
        assert_eq!(rep.range(), (1.0, 3.0));
        let even = Repeated::of(vec![run(1.0, 1.0), run(4.0, 1.0)]);
        assert_eq!(even.median().seconds, 4.0, "the slower middle run of an even count");
    }
}
