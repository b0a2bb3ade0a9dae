//! Golden statistics: a dozen timed runs whose stats JSON, as `spmsim run
//! --json` prints it, must stay byte-for-byte what `tests/golden/` holds.
//! This is the "results unchanged" check every optimisation and refactor is
//! held to; an intended model change regenerates the files in the same
//! commit and says why (tests/golden/README.md).
//!
//! ```text
//!  CASES[i] -> api::run (the entry point of `spmsim run`) -> stats_json()
//!           == tests/golden/<case>.json ?      SPMSIM_BLESS=1: write it instead
//! ```
//! The cases cover every front end (memory controller, persist buffer,
//! cache hierarchy), every tree (BMT, SIT, a Bonsai Merkle forest), both
//! crypto modes and most workload kinds, one of them read back from a
//! native trace under `suite:NAME`, so the trace reader is covered without
//! valgrind or the network.

use spmsim::api::{self, RunRequest};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// One golden run. `name` is its file's stem under `tests/golden/`.
struct Case {
    name: &'static str,
    preset: &'static str,
    workload: &'static str,
    seed: u64,
    instructions: u64,
    overrides: &'static [&'static str],
    /// Instructions run before the statistics start (`--warmup-instructions`).
    warmup: u64,
}

/// The suite program name the native-trace case reads (see [`make_trace`]).
const TRACE_PROGRAM: &str = "golden-hash";

const CASES: &[Case] = &[
    // SecPB schemes: persist buffer front end, BMT.
    Case {
        name: "nogap-random-writes",
        preset: "nogap",
        workload: "random-writes",
        seed: 1,
        instructions: 1_000_000,
        overrides: &[],
        warmup: 0,
    },
    Case { name: "m-seq-writes", preset: "m", workload: "seq-writes", seed: 2, instructions: 1_000_000, overrides: &[], warmup: 0 },
    Case { name: "cm-array-swap", preset: "cm", workload: "array-swap", seed: 3, instructions: 1_000_000, overrides: &[], warmup: 0 },
    Case { name: "bcm-btree", preset: "bcm", workload: "btree", seed: 4, instructions: 1_000_000, overrides: &[], warmup: 0 },
    Case {
        name: "obcm-synthetic",
        preset: "obcm",
        workload: "synthetic:ppti=10,nwpe=2",
        seed: 5,
        instructions: 1_000_000,
        overrides: &[],
        warmup: 0,
    },
    Case { name: "cobcm-hash", preset: "cobcm", workload: "hash", seed: 6, instructions: 1_000_000, overrides: &[], warmup: 0 },
    // The same run without cryptography: only `crypto_mode` may differ
    // from cobcm-hash (checked below, beside the goldens).
    Case {
        name: "cobcm-timing-only-hash",
        preset: "cobcm",
        workload: "hash",
        seed: 6,
        instructions: 1_000_000,
        overrides: &["security.crypto=timing-only"],
        warmup: 0,
    },
    // Insecure persist buffer (BBB).
    Case { name: "bbb-queue", preset: "bbb", workload: "queue", seed: 7, instructions: 1_000_000, overrides: &[], warmup: 0 },
    // Memory-controller front end: SP (BMT), the write-back battery baseline, SIT.
    Case { name: "sp-rbtree", preset: "sp", workload: "rbtree", seed: 8, instructions: 1_000_000, overrides: &[], warmup: 0 },
    Case {
        name: "secure-wb-battery-ycsb",
        preset: "secure-wb-battery",
        workload: "ycsb",
        seed: 9,
        instructions: 1_000_000,
        overrides: &[],
        warmup: 0,
    },
    Case {
        name: "sit-strict-daxbench",
        preset: "sit-strict",
        workload: "daxbench-64-1:1",
        seed: 11,
        instructions: 1_000_000,
        overrides: &[],
        warmup: 0,
    },
    // Cache-hierarchy front end (secure eADR): the timing model refuses it,
    // so its golden is the crash oracle's report (`instructions` are the
    // workload's operations there; see `run_case`).
    Case { name: "secure-eadr-tpcc-crash", preset: "secure-eadr", workload: "tpcc", seed: 10, instructions: 40, overrides: &[], warmup: 0 },
    // A region of interest after a warm-up (ChampSim's --warmup-instructions).
    Case { name: "cm-warmup-tpcc", preset: "cm", workload: "tpcc", seed: 10, instructions: 500_000, overrides: &[], warmup: 500_000 },
    // A Bonsai Merkle forest of two levels.
    Case { name: "cm-dbmf-array", preset: "cm-dbmf", workload: "array", seed: 12, instructions: 1_000_000, overrides: &[], warmup: 0 },
    // A native trace read back through `suite:NAME`.
    Case { name: "cm-trace-hash", preset: "cm", workload: "suite:golden-hash", seed: 13, instructions: 200_000, overrides: &[], warmup: 0 },
];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

/// Write the native trace the `suite:golden-hash` case reads, generated
/// from the built-in hash benchmark (seed 3), into a private trace cache,
/// and point `SPMSIM_CACHE` at it. The workload is named `suite:NAME`, so
/// its statistics carry no file path. Returns the cache folder.
fn make_trace() -> PathBuf {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("golden-cache-{}", std::process::id()));
    let trace = spmsim::suite::trace_file(&cache, TRACE_PROGRAM);
    std::fs::create_dir_all(trace.parent().unwrap()).unwrap();
    let hash = spmsim::workload::WorkloadKind::parse("hash").unwrap();
    let written = hash.write_trace(3, 200_000, &trace).unwrap();
    assert_eq!(written.instructions, 200_000, "the golden trace holds the instructions asked for");
    // No other test of this binary reads the environment, so no thread
    // reads it while it changes.
    std::env::set_var("SPMSIM_CACHE", &cache);
    cache
}

/// The first line where `got` and `want` differ, 1-based, with both lines.
fn first_difference(got: &str, want: &str) -> String {
    let (mut g, mut w) = (got.lines(), want.lines());
    let mut n = 1;
    loop {
        match (g.next(), w.next()) {
            (Some(a), Some(b)) if a == b => n += 1,
            (None, None) => return "the texts differ only in line endings or the final newline".into(),
            (a, b) => {
                let show = |l: Option<&str>| l.map(|s| format!("`{}`", s.trim_start())).unwrap_or_else(|| "(end of file)".into());
                return format!("line {n}: golden {}, run {}", show(b), show(a));
            }
        }
    }
}

fn run_case(c: &Case) -> String {
    let cfg = spmsim::config::load_preset(c.preset, &c.overrides.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    if spmsim::timing::TimingSim::new(&cfg, c.seed).is_err() {
        // What the timing model cannot price is goldened functionally: the
        // crash oracle's report over sampled crash points.
        let w = spmsim::workload::WorkloadKind::parse(c.workload).unwrap();
        let events = w.generate(c.instructions, c.seed).unwrap();
        let points = spmsim::verify::oracle::CrashPoints::Sample(25);
        let check = spmsim::verify::oracle::CrashCheck {
            cfg: &cfg,
            workload_name: w.name(),
            events,
            ops: c.instructions,
            seed: c.seed,
            points,
            max_listed: 5,
            guarantee: None,
        };
        let report = check.run().unwrap_or_else(|e| panic!("case {}: the crash check failed: {e}", c.name));
        return format!("{}\n", serde_json::to_string_pretty(&report).unwrap());
    }
    let req = RunRequest {
        warmup_instructions: c.warmup,
        scheme: c.preset.into(),
        workload: c.workload.into(),
        instructions: Some(c.instructions),
        seed: c.seed,
        overrides: c.overrides.iter().map(|s| s.to_string()).collect(),
        baseline: None,
    };
    let out = api::run(&req, &AtomicBool::new(false)).unwrap_or_else(|e| panic!("case {}: the run failed: {e}", c.name));
    // As `spmsim run --json` prints it: the document and a newline.
    format!("{}\n", out.stats_json())
}

#[test]
fn stats_match_the_committed_goldens() {
    let bless = std::env::var_os("SPMSIM_BLESS").is_some_and(|v| v == "1");
    let cache = make_trace();
    let dir = golden_dir();
    let t0 = Instant::now();
    let mut docs = std::collections::BTreeMap::new();
    let mut failures = Vec::new();
    for c in CASES {
        let got = run_case(c);
        let path = dir.join(format!("{}.json", c.name));
        if bless {
            std::fs::write(&path, &got).unwrap_or_else(|e| panic!("case {}: cannot write {}: {e}", c.name, path.display()));
        } else {
            match std::fs::read_to_string(&path) {
                Ok(want) if want == got => {}
                Ok(want) => failures.push(format!("case {} (tests/golden/{}.json): {}", c.name, c.name, first_difference(&got, &want))),
                Err(e) => failures.push(format!("case {}: no golden at tests/golden/{}.json ({e})", c.name, c.name)),
            }
        }
        docs.insert(c.name, got);
    }
    eprintln!("golden: {} cases in {:.1} s", CASES.len(), t0.elapsed().as_secs_f64());
    let _ = std::fs::remove_dir_all(cache);
    assert!(
        failures.is_empty(),
        "{} of {} golden cases differ (an intended model change regenerates them: \
         SPMSIM_BLESS=1 cargo test --release -p spmsim --test golden, and the commit says why):\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
    // Timing-only skips the cryptography but keeps every cache, queue and
    // counter decision (config: SecurityConfig::crypto), so its statistics
    // are the real run's but for the mode's name.
    let without_mode = |doc: &str| doc.lines().filter(|l| !l.contains("\"crypto_mode\"")).collect::<Vec<_>>().join("\n");
    let (real, timing_only) = (without_mode(&docs["cobcm-hash"]), without_mode(&docs["cobcm-timing-only-hash"]));
    assert!(docs["cobcm-timing-only-hash"].contains("\"crypto_mode\": \"timing-only\""), "the override took effect");
    assert_eq!(real, timing_only, "timing-only must change nothing but crypto_mode");
}

#[test]
fn every_golden_file_belongs_to_a_case() {
    let names: Vec<String> = CASES.iter().map(|c| format!("{}.json", c.name)).collect();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "case names are unique");
    for e in std::fs::read_dir(golden_dir()).unwrap() {
        let f = e.unwrap().file_name().to_string_lossy().into_owned();
        if f.ends_with(".json") {
            assert!(names.contains(&f), "tests/golden/{f} belongs to no case: remove it or add its case");
        }
    }
}

#[test]
fn a_difference_names_its_first_line() {
    assert_eq!(first_difference("a\nb\nc\n", "a\nx\nc\n"), "line 2: golden `x`, run `b`");
    assert_eq!(first_difference("a\n", "a\nb\n"), "line 2: golden `b`, run (end of file)");
    assert_eq!(first_difference("a\r\n", "a\n"), "the texts differ only in line endings or the final newline");
}
