//! `spmsim trace`: recording a program with a known number of accesses,
//! and the round trip generator -> trace -> convert -> simulation.

mod common;

use common::{json, spmsim};
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spmsim-trace-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A C program whose loop makes exactly `n` 8-byte stores and then `n`
/// 8-byte loads through a volatile pointer; the rest is start-up.
const KNOWN: &str = r#"
#include <stdlib.h>
static volatile long a[1 << 20];
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 0;
    volatile long *p = a;
    for (long i = 0; i < n; i++) p[i] = i;
    long s = 0;
    for (long i = 0; i < n; i++) s += p[i];
    return (int)(s & 1);
}
"#;

/// KNOWN compiled into `d`: the binary's path.
fn compile_known(d: &Path) -> PathBuf {
    std::fs::write(d.join("known.c"), KNOWN).unwrap();
    let bin = d.join("known");
    let st = Command::new("gcc").args(["-O1", "-o"]).arg(&bin).arg(d.join("known.c")).status().expect("gcc is needed for this test");
    assert!(st.success());
    bin
}

fn info(path: &Path) -> serde_json::Value {
    json(&["trace", "info", path.to_str().unwrap(), "--json"])
}

#[test]
fn a_recorded_program_shows_its_known_loads_and_stores() {
    let d = tmp("known");
    let bin = compile_known(&d);
    let rec = |n: &str| {
        let out = d.join(format!("k{n}.trace"));
        let (code, stdout, err) = spmsim(&["trace", "record", "-o", out.to_str().unwrap(), "--", bin.to_str().unwrap(), n]);
        assert_eq!(code, 0, "trace record failed: {err}");
        let i = info(&out);
        // `trace record` and `trace info` count the same instructions.
        let recorded = format!(": {} instructions recorded", i["instructions"]);
        assert!(stdout.contains(&recorded), "trace record says `{stdout}`, trace info {}", i["instructions"]);
        i
    };
    // Start-up noise: the dynamic loader and libc before and after main.
    // Measured here at about 28 400 loads and 11 500 stores; it moves by a
    // few accesses with the environment and the argument's length, so the
    // known counts are the difference of two runs whose arguments have
    // the same length.
    let base = rec("0");
    let count = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap();
    let (noise_loads, noise_stores) = (count(&base, "loads"), count(&base, "stores"));
    assert!(noise_loads > 0 && noise_loads < 200_000, "start-up loads {noise_loads}");
    assert!(noise_stores > 0 && noise_stores < 100_000, "start-up stores {noise_stores}");
    let small = rec("100000");
    let full = rec("300000");
    let n = 200_000u64;
    let dl = count(&full, "loads") as i64 - count(&small, "loads") as i64;
    let ds = count(&full, "stores") as i64 - count(&small, "stores") as i64;
    assert!((dl - n as i64).abs() < 50, "loads between the runs: {dl}, expected {n}");
    assert!((ds - n as i64).abs() < 50, "stores between the runs: {ds}, expected {n}");
    // Each run sees its own loop on top of roughly the start-up noise.
    let own = count(&small, "stores") as i64 - noise_stores as i64;
    assert!((own - 100_000).abs() < 1_000, "stores beyond start-up: {own}");
    assert_eq!(full["values"], "derived");
    // The recorder knows the stack: start-up stores to it, the
    // loop's stores (to a global array, `i` in a register) not.
    let stack = |v: &serde_json::Value| v["stack_stores"].as_u64().expect("the stack range is recorded");
    assert!(stack(&base) > 100, "start-up writes its stack: {}", stack(&base));
    assert!(stack(&full).abs_diff(stack(&small)) < 50, "the loop's stores are not stack stores: {} vs {}", stack(&full), stack(&small));
    assert!(count(&full, "footprint_bytes") >= 300_000 * 8);
    // The instruction stream beside each trace: one entry per
    // instruction; each of the two loops ends every iteration with a
    // conditional branch, taken back to its start but for the last.
    let st = |v: &serde_json::Value, k: &str| v["instruction_stream"][k].clone();
    assert_eq!(st(&full, "instructions"), full["instructions"]);
    let cond = |v: &serde_json::Value| st(v, "branches")["Conditional"].as_u64().unwrap() as i64;
    let taken = |v: &serde_json::Value| st(v, "conditional_taken").as_u64().unwrap() as i64;
    assert!((cond(&full) - cond(&small) - 2 * n as i64).abs() < 100, "conditional branches: {} vs {}", cond(&full), cond(&small));
    assert!((taken(&full) - taken(&small) - 2 * n as i64).abs() < 100, "taken: {} vs {}", taken(&full), taken(&small));
    let full_trace = d.join("k300000.trace");
    let r =
        json(&["run", "--scheme", "bbb", "--workload", &format!("trace:{}", full_trace.display()), "--set", "core.model=ooo", "--json"]);
    let ipc = r["roi"]["core"]["ipc"].as_f64().unwrap();
    assert!(ipc > 0.3 && ipc < 4.0, "ipc {ipc}");
    // The loops' branches are learnt: few mispredictions per iteration.
    let mis = r["roi"]["core"]["ooo"]["conditional_mispredicts"].as_u64().unwrap();
    assert!(mis < cond(&full) as u64 / 10, "{mis} of {} mispredicted", cond(&full));

    // --skip and --instructions bound the recording.
    let out = d.join("bounded.trace");
    let (code, stdout, err) = spmsim(&[
        "trace",
        "record",
        "--skip",
        "50000",
        "--instructions",
        "100000",
        "-o",
        out.to_str().unwrap(),
        "--",
        bin.to_str().unwrap(),
        "300000",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("100000 instructions recorded (50000 skipped)"), "{stdout}");
    let b = info(&out);
    assert_eq!(count(&b, "instructions"), 100_000, "{b}");
    assert_eq!(b["header"]["skipped_instructions"], 50000);
    std::fs::remove_dir_all(d).ok();
}

/// spmtrace: windows deep in a run, reached at valgrind's own
/// speed, hold what lackey would have printed there.
#[test]
fn windows_record_the_program_where_asked() {
    let d = tmp("windows");
    let bin = compile_known(&d);
    // 400 000 stores then 400 000 loads, five instructions per iteration
    // (measured), after about 0.1 M of start-up: the first window falls
    // in the stores, the second in the loads.
    let out = d.join("w.trace");
    let (code, stdout, err) = spmsim(&[
        "trace",
        "record",
        "--windows",
        "500000+30000,3000000+30000",
        "-o",
        out.to_str().unwrap(),
        "--",
        bin.to_str().unwrap(),
        "400000",
    ]);
    assert_eq!(code, 0, "trace record --windows failed: {err}");
    let count = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap();
    let w0 = info(&d.join("w.w0.trace"));
    let w1 = info(&d.join("w.w1.trace"));
    assert!(stdout.contains("w.w0.trace") && stdout.contains("w.w1.trace"), "{stdout}");
    // Each window starts where asked, to a superblock's precision.
    for (w, start) in [(&w0, 500_000u64), (&w1, 3_000_000)] {
        let skipped = w["header"]["skipped_instructions"].as_u64().unwrap();
        assert!(skipped >= start && skipped < start + 100, "window at {start} began after {skipped}");
        assert!((29_900..=30_100).contains(&count(w, "instructions")), "{w}");
    }
    // The first loop stores once per iteration and loads nothing; the
    // second loads once per iteration and stores nothing.
    assert!(count(&w0, "stores") > 5_000 && count(&w0, "loads") < 100, "{w0}");
    assert!(count(&w1, "loads") > 5_000 && count(&w1, "stores") < 100, "{w1}");
    // Same figures as lackey's recording of the same stretch.
    let lk = d.join("lk.trace");
    let (code, _, err) = spmsim(&[
        "trace",
        "record",
        "--skip",
        "500000",
        "--instructions",
        "30000",
        "-o",
        lk.to_str().unwrap(),
        "--",
        bin.to_str().unwrap(),
        "400000",
    ]);
    assert_eq!(code, 0, "{err}");
    let l = info(&lk);
    let per_k = |v: &serde_json::Value, k: &str| count(v, k) as f64 * 1000.0 / count(v, "instructions") as f64;
    assert!((per_k(&l, "stores") - per_k(&w0, "stores")).abs() < 2.0, "lackey {l} vs spmtrace {w0}");
    // A cap on the instructions per window: the trace stops there, and
    // the run ends with the last window rather than the program.
    let capped = d.join("c.trace");
    let (code, _, err) = spmsim(&[
        "trace",
        "record",
        "--windows",
        "500000+90000",
        "--instructions",
        "30000",
        "-o",
        capped.to_str().unwrap(),
        "--",
        bin.to_str().unwrap(),
        "400000",
    ]);
    assert_eq!(code, 0, "trace record --windows --instructions failed: {err}");
    let c = info(&d.join("c.w0.trace"));
    assert_eq!(count(&c, "instructions"), 30_000, "{c}");
    assert!((per_k(&c, "stores") - per_k(&w0, "stores")).abs() < 2.0, "capped {c} vs uncapped {w0}");
    // Windows must ascend.
    let (code, _, err) = spmsim(&["trace", "record", "--windows", "5000+10,100+10", "-o", out.to_str().unwrap(), "--", "/bin/true"]);
    assert_ne!(code, 0);
    assert!(err.contains("--windows"), "{err}");
    std::fs::remove_dir_all(d).ok();
}

#[test]
fn a_program_that_fails_is_a_clear_error() {
    let d = tmp("fail");
    let out = d.join("x.trace");
    let (code, _, err) = spmsim(&["trace", "record", "-o", out.to_str().unwrap(), "--", "/bin/false"]);
    assert_eq!(code, 2);
    assert!(err.contains("exited with"), "{err}");
    assert!(!out.exists(), "a failed recording must not leave a trace");
    assert!(!spmsim::trace::insn::path_for(&out).exists(), "nor an instruction stream");
    let (code, _, err) = spmsim(&["trace", "record", "--persistent-range", "0x10", "-o", out.to_str().unwrap(), "--", "/bin/true"]);
    assert_eq!(code, 2);
    assert!(err.contains("--persistent-range"), "{err}");
    std::fs::remove_dir_all(d).ok();
}

fn roi(args: &[&str]) -> serde_json::Value {
    json(args)["roi"].clone()
}

#[test]
fn generator_traces_round_trip_to_identical_stats() {
    let d = tmp("roundtrip");
    let n = "150000";
    let all = [
        "array-swap",
        "random-writes",
        "seq-writes",
        "synthetic:ppti=30,nwpe=2.5,miss_pti=5",
        "array",
        "queue",
        "btree",
        "hash",
        "rbtree",
        "ycsb",
        "tpcc",
        "daxbench-256-1:1",
    ];
    for w in all {
        let a = d.join("a.trace");
        let b = d.join("b.trace");
        let (code, _, err) = spmsim(&["trace", "generate", "--workload", w, "--instructions", n, "-o", a.to_str().unwrap()]);
        assert_eq!(code, 0, "{w}: {err}");
        let (code, _, err) = spmsim(&["trace", "convert", a.to_str().unwrap(), "-o", b.to_str().unwrap()]);
        assert_eq!(code, 0, "{w}: {err}");
        let ia = info(&a);
        assert_eq!(ia["values"], "recorded", "{w}");
        assert_eq!(ia, info(&b), "{w}: conversion changed the trace");
        let out = d.join("runs");
        let o = out.to_str().unwrap();
        let direct = roi(&["run", "--scheme", "cobcm", "--workload", w, "--instructions", n, "--json", "--out", o]);
        for t in [&a, &b] {
            let spec = format!("trace:{}", t.display());
            let via = roi(&["run", "--scheme", "cobcm", "--workload", &spec, "--instructions", n, "--json", "--out", o]);
            assert_eq!(direct, via, "{w}: stats differ through {}", t.display());
        }
        assert!(direct["core"]["stores"].as_u64().unwrap() > 0);
    }
    std::fs::remove_dir_all(d).ok();
}

#[test]
fn lackey_text_is_detected_and_bad_lines_name_their_number() {
    let d = tmp("lackey");
    let p = d.join("t.lackey");
    std::fs::write(&p, "==7== Lackey\nI  0400,3\n S 7ff000,8\nI  0403,2\n M 7ff008,4\n").unwrap();
    let i = info(&p);
    assert_eq!(
        (i["format"].as_str(), i["loads"].as_u64(), i["stores"].as_u64(), i["instructions"].as_u64()),
        (Some("lackey"), Some(1), Some(2), Some(2))
    );
    std::fs::write(&p, "==7== Lackey\nI  0400,3\n S 7ff000\n").unwrap();
    let (code, _, err) = spmsim(&["trace", "info", p.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("t.lackey:3:"), "{err}");
    let (code, _, err) = spmsim(&["run", "--scheme", "bbb", "--workload", &format!("trace:{}", p.display())]);
    assert_eq!(code, 2);
    assert!(err.contains(":3:"), "{err}");
    std::fs::remove_dir_all(d).ok();
}

/// `n` ChampSim `input_instr` records; every `every`-th makes one load, the
/// last `tail` make none.
fn champsim_bytes(n: u64, every: u64, tail: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let mut rec = [0u8; 64];
        rec[..8].copy_from_slice(&(0x40_1000 + 4 * i).to_le_bytes());
        if i % every == 0 && i < n - tail {
            rec[32..40].copy_from_slice(&(0x7ffd_0000_0000 + 8 * i).to_le_bytes());
        }
        out.extend_from_slice(&rec);
    }
    out
}

#[test]
fn instruction_counts_are_exact_across_info_and_run() {
    let d = tmp("exact");
    let champsim = d.join("t.champsim");
    std::fs::write(&champsim, champsim_bytes(3000, 7, 5)).unwrap();
    let mut lackey = String::from("==1== Lackey\n");
    for i in 0..3000u64 {
        lackey.push_str(&format!("I  {:x},3\n", 0x400000 + 3 * i));
        if i % 5 == 0 && i < 2996 {
            lackey.push_str(&format!(" S {:x},8\n", 0x7ff000 + 8 * i));
        }
    }
    let lackey_file = d.join("t.lackey");
    std::fs::write(&lackey_file, lackey).unwrap();
    let out = d.join("runs");
    for t in [&champsim, &lackey_file] {
        assert_eq!(info(t)["instructions"], 3000, "{}", t.display());
        let spec = format!("trace:{}", t.display());
        let ran = |n: &str| {
            roi(&["run", "--scheme", "cobcm", "--workload", &spec, "--instructions", n, "--json", "--out", out.to_str().unwrap()])["core"]
                ["instructions"]
                .as_u64()
                .unwrap()
        };
        assert_eq!(ran("10000"), 3000, "{}: the whole trace", t.display());
        for n in [1u64, 2, 6, 1234, 2999, 3000] {
            assert_eq!(ran(&n.to_string()), n, "{}: --instructions {n}", t.display());
        }
    }
    std::fs::remove_dir_all(d).ok();
}

/// Two worker threads that store into arrays on their own stacks, after a
/// barrier that all three threads pass once both workers have started.
/// A short-lived thread with a small stack runs and ends first, so the
/// first worker takes its thread slot in valgrind with another stack.
const THREADED: &str = r#"
#include <pthread.h>
#include <stdlib.h>
static pthread_barrier_t ready;
static void *brief(void *arg) { return arg; }
static void *work(void *arg) {
    volatile long buf[256];
    long n = (long)arg;
    pthread_barrier_wait(&ready);
    for (long i = 0; i < n; i++) buf[i & 255] = i;
    return (void *)buf[3];
}
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    pthread_t t[2];
    pthread_attr_t small;
    pthread_attr_init(&small);
    pthread_attr_setstacksize(&small, 1 << 18);
    pthread_t b;
    pthread_create(&b, &small, brief, 0);
    pthread_join(b, 0);
    pthread_barrier_init(&ready, 0, 3);
    for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, work, (void *)n);
    pthread_barrier_wait(&ready);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    return 0;
}
"#;

/// spmtrace says where each thread's stack is, so `persistent=heap`
/// leaves worker threads' stacks volatile as it does the main thread's
/// (a multi-threaded program's stack stores counted as the heap's
/// inflated povray's persists per kilo-instruction).
#[test]
fn worker_threads_stacks_are_in_the_header() {
    let d = tmp("threads");
    std::fs::write(d.join("threaded.c"), THREADED).unwrap();
    let bin = d.join("threaded");
    let st = Command::new("gcc")
        .args(["-O1", "-pthread", "-o"])
        .arg(&bin)
        .arg(d.join("threaded.c"))
        .status()
        .expect("gcc is needed for this test");
    assert!(st.success());
    let out = d.join("t.trace");
    let (code, _, err) =
        spmsim(&["trace", "record", "--windows", "1500000+30000", "-o", out.to_str().unwrap(), "--", bin.to_str().unwrap(), "1000000"]);
    assert_eq!(code, 0, "trace record --windows failed: {err}");
    let w = info(&d.join("t.w0.trace"));
    let stacks = w["header"]["thread_stacks"].as_array().unwrap_or_else(|| panic!("no thread stacks: {w}"));
    assert_eq!(stacks.len(), 3, "the brief thread's and the two workers': {w}");
    let main = &w["header"]["stack_range"];
    for s in stacks {
        let (lo, hi) = (s[0].as_u64().unwrap(), s[1].as_u64().unwrap());
        assert!(lo < hi && hi - lo <= 64 << 20, "a thread's stack is one mapping: {s}");
        assert!(hi <= main[0].as_u64().unwrap() || lo >= main[1].as_u64().unwrap(), "apart from the main stack: {s} {main}");
    }
    // The window is in a worker's loop: its stores are to its stack.
    let (stores, on_stack) = (w["stores"].as_u64().unwrap(), w["stack_stores"].as_u64().unwrap());
    assert!(stores > 5_000 && on_stack * 100 >= stores * 99, "{on_stack} of {stores} stores on a stack: {w}");
    std::fs::remove_dir_all(d).ok();
}

/// A recorded program written as a ChampSim trace runs on the `ooo` core
/// with its registers and branches, as the program itself does; a ChampSim
/// trace without registers or branches gets the interval core, and the
/// run's notes say which core ran it.
#[test]
fn a_program_converted_to_champsim_runs_on_the_ooo_core() {
    let d = tmp("champsim");
    let bin = compile_known(&d);
    let trace = d.join("k.trace");
    let (code, _, err) = spmsim(&["trace", "record", "-o", trace.to_str().unwrap(), "--", bin.to_str().unwrap(), "30000"]);
    assert_eq!(code, 0, "{err}");
    let cs = d.join("k.champsim.xz");
    let (code, stdout, err) = spmsim(&["trace", "convert", trace.to_str().unwrap(), "--to", "champsim", "-o", cs.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("ChampSim input_instr records"), "{stdout}");
    let run = |w: &Path, core: &str| {
        json(&[
            "run",
            "--scheme",
            "bbb",
            "--workload",
            &format!("trace:{}", w.display()),
            "--instructions",
            "200000",
            "--set",
            &format!("core.model={core}"),
            "--json",
        ])
    };
    let (own, conv) = (run(&trace, "ooo"), run(&cs, "ooo"));
    let notes = conv["workload_notes"].to_string();
    assert!(notes.contains("the ooo core scheduled the instruction stream derived from the ChampSim trace"), "{notes}");
    let core = |v: &serde_json::Value, k: &str| v["roi"]["core"][k].as_u64().unwrap();
    assert_eq!(core(&own, "instructions"), core(&conv, "instructions"));
    // The branches and their mispredictions are the program's own: the
    // predictor sees the same pcs, directions and targets. Returns may miss
    // more: a call's length is learned from its first return.
    let ooo = |v: &serde_json::Value, k: &str| v["roi"]["core"]["ooo"][k].as_u64().unwrap();
    for k in ["branches", "conditional_branches", "conditional_mispredicts", "indirect_mispredicts"] {
        assert_eq!(ooo(&own, k), ooo(&conv, k), "{k}");
    }
    assert!(ooo(&conv, "return_mispredicts") >= ooo(&own, "return_mispredicts"));
    let interval = run(&cs, "interval");
    assert!(interval["roi"]["core"]["ooo"].is_null(), "{interval}");
    assert!(interval["workload_notes"].to_string().contains("the interval core ran it"), "{interval}");
    // Records without registers or branches: the interval core, said why.
    let mut bare = Vec::new();
    for k in 0..5000u64 {
        let mut r = [0u8; 64];
        r[..8].copy_from_slice(&(0x40_0000 + 4 * k).to_le_bytes());
        r[32..40].copy_from_slice(&(0x10_0000 + 64 * (k % 512)).to_le_bytes());
        bare.extend_from_slice(&r);
    }
    let bare_path = d.join("bare.champsim");
    std::fs::write(&bare_path, bare).unwrap();
    let b = json(&[
        "run",
        "--scheme",
        "bbb",
        "--workload",
        &format!("trace:{}#format=champsim", bare_path.display()),
        "--set",
        "core.model=ooo",
        "--json",
    ]);
    let notes = b["workload_notes"].to_string();
    assert!(b["roi"]["core"]["ooo"].is_null() && notes.contains("carries no register or branch fields"), "{notes}");
    let _ = std::fs::remove_dir_all(&d);
}
