//! `spmsim bench`: simulation speed and memory, each case in its own
//! process so its peak resident set is its own (SecPB issue: instructions
//! per second for bbb and cobcm, crypto on and timing-only; RSS against the
//! touched footprint, not the simulated capacity), on the synthetic
//! profile and on what users run: recorded programs and a generated
//! persistent data structure (a program not recorded here is skipped).

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
/// Targets on recorded programs and generated persistent data structures
/// (what users run must be fast too).
const TARGET_PROGRAM_REAL: f64 = 20e6;
const TARGET_PROGRAM_TIMING_ONLY: f64 = 40e6;
const TARGET_RSS_MIB: f64 = 1024.0;

/// The cases beside the synthetic profile: two recorded programs at their
/// own write rates (gcc: many small stack and heap stores; xz: a streaming
/// compressor with a large window) and a generated persistent B-tree with
/// undo-logged transactions, each under COBCM, the default SecPB design.
/// The programs as `reproduce secpb` runs them: stack volatile, and the
/// `ooo` core wherever the trace has its instruction stream.
pub const PROGRAM_WORKLOADS: [&str; 3] = ["suite:gcc#persistent=heap", "suite:xz#persistent=heap", "btree:size_mib=64"];

/// Program cases of other papers' schemes, real crypto: the multiset-hash
/// scheme on a stand-in as `reproduce mset` runs it, every
/// store non-persistent and the caches' write-backs through its write path.
pub const SCHEME_PROGRAM_CASES: [(&str, &str); 1] = [("mset", "suite:gcc#persistent=none")];

/// The multi-core case, `SCHEME:CRYPTO:Ncores`: the generated
/// B-tree above on N cores, one partitioned instance per thread, against
/// the same B-tree on one core. Its target: simulated instructions per
/// second (one host thread) at least this share of the one-core rate.
const MULTICORE_WORKLOAD: &str = "btree:size_mib=64";
const TARGET_MULTICORE_SHARE: f64 = 0.7;

/// N of an `Ncores` workload (2..=64).
fn cores_of(workload: &str) -> Option<usize> {
    workload.strip_suffix("cores")?.parse().ok().filter(|n| (2..=64).contains(n))
}

/// Which cases a bench runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Cases {
    /// The synthetic profile and the programs.
    All,
    /// Only bbb and cobcm on the synthetic profile (comparable across commits).
    Synthetic,
    /// Only the recorded programs and the generated data structure.
    Programs,
}

/// One case: a preset, a crypto mode and a workload.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Case {
    scheme: String,
    crypto: String,
    workload: String,
}

impl Case {
    fn cases(which: Cases) -> Vec<Case> {
        let case = |s: &str, c: &str, w: &str| Case { scheme: s.into(), crypto: c.into(), workload: w.into() };
        let mut v = Vec::new();
        if which != Cases::Programs {
            for s in ["bbb", "cobcm"] {
                for c in ["real", "timing-only"] {
                    v.push(case(s, c, BENCH_WORKLOAD));
                }
            }
        }
        if which != Cases::Synthetic {
            for w in PROGRAM_WORKLOADS {
                for c in ["real", "timing-only"] {
                    v.push(case("cobcm", c, w));
                }
            }
            for (s, w) in SCHEME_PROGRAM_CASES {
                v.push(case(s, "real", w));
            }
        }
        v
    }

    /// `SCHEME:CRYPTO:WORKLOAD` (the workload may hold colons itself).
    fn spec(&self) -> String {
        format!("{}:{}:{}", self.scheme, self.crypto, self.workload)
    }

    fn parse(s: &str) -> Result<Case> {
        let mut it = s.splitn(3, ':');
        match (it.next(), it.next(), it.next()) {
            (Some(scheme), Some(crypto @ ("real" | "timing-only")), w) if !scheme.is_empty() => {
                Ok(Case { scheme: scheme.into(), crypto: crypto.into(), workload: w.unwrap_or(BENCH_WORKLOAD).into() })
            }
            _ => bail!("--case takes SCHEME:real|timing-only[:WORKLOAD], got `{s}`"),
        }
    }

    /// The cases named with `--case`; an `Ncores` case brings its
    /// one-core counterpart before it.
    fn chosen(specs: &[String]) -> Result<Vec<Case>> {
        let mut v: Vec<Case> = Vec::new();
        for spec in specs {
            let c = Case::parse(spec)?;
            if cores_of(&c.workload).is_some() {
                let one = Case { workload: MULTICORE_WORKLOAD.into(), ..c.clone() };
                if !v.contains(&one) {
                    v.push(one);
                }
            } else if c.workload.ends_with("cores") {
                bail!("--case {spec}: `{}` is not a core count from 2 to 64 (`8cores`)", c.workload);
            }
            if !v.contains(&c) {
                v.push(c);
            }
        }
        Ok(v)
    }

    /// The workload the case simulates (`Ncores` stands for the B-tree
    /// on N cores).
    fn workload_spec(&self) -> String {
        match cores_of(&self.workload) {
            Some(n) => format!("{MULTICORE_WORKLOAD},threads={n}"),
            None => self.workload.clone(),
        }
    }

    /// Why this case cannot run on this machine (a suite program whose
    /// trace was never recorded), with the command that fixes it.
    fn unavailable(&self) -> Option<String> {
        let name = self.workload.strip_prefix("suite:")?.split('#').next()?;
        spmsim::suite::trace_path(name).err().map(|_| format!("no recorded trace of `{name}`: run `spmsim suite record --only {name}`"))
    }

    fn target(&self) -> f64 {
        match (self.workload == BENCH_WORKLOAD, self.crypto == "real") {
            (true, true) => TARGET_REAL,
            (true, false) => TARGET_TIMING_ONLY,
            (false, true) => TARGET_PROGRAM_REAL,
            (false, false) => TARGET_PROGRAM_TIMING_ONLY,
        }
    }
}

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
    /// Which cases to run (programs whose trace is not recorded are skipped, saying how to record them).
    #[arg(long, value_enum, default_value_t = Cases::All)]
    pub cases: Cases,
    /// Run only these cases (repeatable): SCHEME:real|timing-only[:WORKLOAD],
    /// WORKLOAD as in `spmsim run`, or `Ncores` for the generated B-tree on
    /// N cores, which also runs its one-core counterpart and
    /// reports the rate per host core against it (target: at least 70 %).
    #[arg(long)]
    pub case: Vec<String>,
    /// Run one case in this process and print its result as JSON (how the
    /// parent runs each case).
    #[arg(long, hide = true)]
    pub one_case: Option<String>,
}

#[derive(Clone, Serialize, Deserialize)]
struct CaseResult {
    scheme: String,
    crypto: String,
    workload: String,
    /// `core.model`: `ooo` where the workload has an instruction stream.
    #[serde(default)]
    core: String,
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
    let c = Case::parse(case)?;
    let w = WorkloadKind::parse(&c.workload_spec()).map_err(|e| anyhow!(e))?;
    let core = if w.instruction_streams().is_ok() { "ooo" } else { "interval" };
    let cfg = load_preset(&c.scheme, &[format!("security.crypto=\"{}\"", c.crypto), format!("core.model=\"{core}\"")])?;
    let t = Instant::now();
    // The same instructions in all, split evenly over the cores.
    let per_core = (instructions / w.threads() as u64).max(1);
    let mut run = spmsim::timing::ResolvedRun::new(&cfg, &w, 0, per_core, 1).and_then(|r| r.build()).map_err(|e| anyhow!(e))?;
    run.run(&std::sync::atomic::AtomicBool::new(false)).map_err(|e| anyhow!(e))?;
    let blocks_touched = run.sim.sys.mc.st.nvm.image.len() as u64;
    let stats = run.finish();
    let seconds = t.elapsed().as_secs_f64();
    Ok(CaseResult {
        scheme: c.scheme,
        crypto: c.crypto,
        workload: c.workload,
        core: core.into(),
        instructions: stats.roi.core.instructions,
        seconds,
        instructions_per_second: stats.roi.core.instructions as f64 / seconds,
        peak_rss_mib: peak_rss_mib(),
        memory_capacity_bytes: cfg.memory.capacity_bytes,
        blocks_touched,
        ipc: stats.roi.core.ipc,
    })
}

pub fn run(a: BenchArgs) -> Result<ExitCode> {
    if a.instructions == 0 {
        bail!("--instructions must be at least 1");
    }
    if a.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    if let Some(case) = &a.one_case {
        println!("{}", serde_json::to_string(&one_case(case, a.instructions)?)?);
        return Ok(ExitCode::SUCCESS);
    }
    let exe = std::env::current_exe().context("finding the spmsim binary")?;
    // Each case runs in a process of its own (its peak memory is its own).
    // Under the Python package the running executable is the interpreter,
    // not spmsim: start the package again with the same interpreter.
    let self_command = || {
        let named_spmsim = exe.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("spmsim"));
        match std::env::var_os("SPMSIM_PYTHON") {
            Some(py) if !named_spmsim => {
                let mut c = Command::new(py);
                c.args(["-m", "spmsim"]);
                c
            }
            _ => Command::new(&exe),
        }
    };
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    let cases = if a.case.is_empty() { Case::cases(a.cases) } else { Case::chosen(&a.case)? };
    for case in cases {
        let spec = case.spec();
        if let Some(why) = case.unavailable() {
            eprintln!("skipping {spec}: {why}");
            skipped.push((spec, why));
            continue;
        }
        let mut runs = Vec::new();
        for k in 1..=a.repeat {
            if !a.json {
                eprintln!("running {spec} ({} instructions, run {k} of {})...", a.instructions, a.repeat);
            }
            let out = self_command().args(["bench", "--one-case", &spec, "--instructions", &a.instructions.to_string()]).output()?;
            if !out.status.success() {
                bail!("bench case {spec} failed: {}", String::from_utf8_lossy(&out.stderr));
            }
            let r: CaseResult = serde_json::from_slice(&out.stdout).with_context(|| format!("reading the result of bench case {spec}"))?;
            runs.push(r);
        }
        results.push((case, Repeated::of(runs)));
    }
    // An `Ncores` case's target is a share of its one-core counterpart's
    // rate (per host core: the run uses one host thread).
    let one_core_rate = |c: &Case| {
        results
            .iter()
            .find(|(o, _)| o.scheme == c.scheme && o.crypto == c.crypto && o.workload == MULTICORE_WORKLOAD)
            .map(|(_, rep)| rep.median().instructions_per_second)
    };
    let results: Vec<(CaseResult, f64, &Repeated)> = results
        .iter()
        .map(|(c, rep)| {
            let target = match cores_of(&c.workload) {
                Some(_) => one_core_rate(c).map_or(f64::NAN, |r| TARGET_MULTICORE_SHARE * r),
                None => c.target(),
            };
            (rep.median(), target, rep)
        })
        .collect();
    if a.json {
        let rows: Vec<serde_json::Value> = results
            .iter()
            .map(|(r, target, rep)| {
                let mut v = serde_json::to_value(r).expect("plain data");
                v["runs"] = rep.runs.len().into();
                v["seconds_each_run"] = rep.runs.iter().map(|x| x.seconds).collect::<Vec<_>>().into();
                v["target_instructions_per_second"] = (*target).into();
                v["meets_speed_target"] = (r.instructions_per_second >= *target).into();
                v["meets_rss_target"] = (r.peak_rss_mib < TARGET_RSS_MIB).into();
                v
            })
            .collect();
        let skipped: Vec<serde_json::Value> = skipped.iter().map(|(c, why)| serde_json::json!({ "case": c, "skipped": why })).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "cases": rows, "skipped": skipped, "rss_target_mib": TARGET_RSS_MIB }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "each case in its own process on one host thread, {} run(s) each: the median run's figures, the range of all runs (a trace shorter than --instructions runs whole)\n",
        a.repeat
    );
    let header = [
        "scheme",
        "crypto",
        "workload",
        "core",
        "instructions",
        "seconds",
        "range s",
        "M instr/s",
        "target",
        "peak RSS MiB",
        "blocks touched",
        "memory GiB",
    ];
    let body: Vec<Vec<String>> = results
        .iter()
        .map(|(r, target, rep)| {
            let (lo, hi) = rep.range();
            vec![
                r.scheme.clone(),
                r.crypto.clone(),
                r.workload.clone(),
                r.core.clone(),
                r.instructions.to_string(),
                format!("{:.2}", r.seconds),
                format!("{lo:.2}-{hi:.2}"),
                format!("{:.1}", r.instructions_per_second / 1e6),
                format!("{:.0} {}", target / 1e6, if r.instructions_per_second >= *target { "met" } else { "MISSED" }),
                format!("{:.0} {}", r.peak_rss_mib, if r.peak_rss_mib < TARGET_RSS_MIB { "(< 1 GiB)" } else { "(OVER 1 GiB)" }),
                r.blocks_touched.to_string(),
                format!("{}", r.memory_capacity_bytes >> 30),
            ]
        })
        .collect();
    print!("{}", crate::table::render(&header, &body));
    for (c, why) in &skipped {
        println!("skipped {c}: {why}");
    }
    for (r, target, _) in &results {
        if let Some(n) = cores_of(&r.workload) {
            let one = target / TARGET_MULTICORE_SHARE;
            println!(
                "{n} cores ({}, {} crypto): {:.1} M instr/s on one host thread, {:.0} % of the one-core rate of {:.1} M/s (target {:.0} %: {})",
                r.scheme,
                r.crypto,
                r.instructions_per_second / 1e6,
                100.0 * r.instructions_per_second / one,
                one / 1e6,
                100.0 * TARGET_MULTICORE_SHARE,
                if r.instructions_per_second >= *target { "met" } else { "MISSED" }
            );
        }
    }
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
            core: "interval".into(),
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
    fn cases_parse_with_their_workload_and_bad_ones_are_named() {
        let c = Case::parse("cobcm:real:suite:gcc").unwrap();
        assert_eq!((c.scheme.as_str(), c.crypto.as_str(), c.workload.as_str()), ("cobcm", "real", "suite:gcc"));
        assert_eq!(Case::parse(&c.spec()).unwrap(), c, "a spec round-trips");
        assert_eq!(Case::parse("bbb:timing-only").unwrap().workload, BENCH_WORKLOAD, "no workload: the synthetic profile");
        for bad in ["cobcm", "cobcm:fast:suite:gcc", ":real"] {
            assert!(Case::parse(bad).unwrap_err().to_string().contains(bad), "{bad}");
        }
        assert_eq!(Case::cases(Cases::Synthetic).len(), 4);
        assert!(Case::cases(Cases::Programs).iter().all(|c| c.workload != BENCH_WORKLOAD));
        assert!(Case::cases(Cases::Programs).iter().any(|c| c.scheme == "mset"), "the multiset-hash scheme on a program");
        assert_eq!(Case::cases(Cases::All).len(), 4 + 2 * PROGRAM_WORKLOADS.len() + SCHEME_PROGRAM_CASES.len());
    }

    #[test]
    fn a_program_without_a_trace_is_skipped_with_the_command_that_records_it() {
        let c = Case { scheme: "cobcm".into(), crypto: "real".into(), workload: "suite:no-such-program".into() };
        let why = c.unavailable().expect("no trace of a program that does not exist");
        assert!(why.contains("spmsim suite record --only no-such-program"), "{why}");
        let generated = Case { workload: "btree:size_mib=64".into(), ..c };
        assert_eq!(generated.unavailable(), None, "a generator needs no trace");
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
