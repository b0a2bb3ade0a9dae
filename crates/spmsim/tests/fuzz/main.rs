//! The CI fuzz driver (`docs/fuzzing.md`). For every entry of
//! `spmsim::verify::fuzz_targets`: replay each seed in `fuzz/corpus/TARGET` and each
//! regression in `fuzz/regressions/TARGET`, then run seeded mutants of the
//! seeds, bounded by a count and a time. A panic, a hang or unbounded
//! allocation fails the test and leaves the input in
//! `target/tmp/fuzz/TARGET/` to be committed as a regression.
//!
//! The replay test runs with the rest of the suite; the mutation tests
//! (`mutate_TARGET`) are ignored there and run by `scripts/fuzz ci`, each in
//! a child process so that an input that aborts it (the heap cap) or hangs
//! is reported with its file and the other targets still run. Knobs
//! (environment): `SPMSIM_FUZZ_ITERATIONS` mutants per target (default
//! 300), `SPMSIM_FUZZ_SECONDS` per target at most (default 30),
//! `SPMSIM_FUZZ_SEED` (default 1).

mod child;
mod guard;
mod mutate;

use guard::{Failure, Run};
use spmsim::verify::fuzz_targets::TARGETS;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Inputs that still fail, each with the defect that will fix it. The
/// replay test skips them; `pending_regressions` (ignored) runs them. When
/// a fix lands, delete the line: the replay test then guards the fix.
/// Entries are paths under `fuzz/`. A pending seed is still replayed for
/// panics but need not be accepted; a pending regression is not replayed.
// Empty: every regression file below fuzz/regressions replays cleanly.
const PENDING: &[(&str, &str)] = &[];

fn pending(kind: &str, target: &str, name: &str) -> bool {
    PENDING.iter().any(|p| p.0 == format!("{kind}/{target}/{name}"))
}

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn work_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz").join(target)
}

fn entry(target: &str) -> fn(&[u8]) -> Result<(), String> {
    TARGETS.iter().find(|t| t.0 == target).unwrap_or_else(|| panic!("no fuzz target `{target}`")).1
}

/// The files of `fuzz/KIND/TARGET`, sorted by name.
fn inputs(kind: &str, target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = fuzz_dir().join(kind).join(target);
    let mut v: Vec<(String, Vec<u8>)> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .map(|e| e.unwrap().path())
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
            .collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(s) => s.parse().unwrap_or_else(|_| panic!("{name}={s}: expected a whole number")),
        Err(_) => default,
    }
}

/// An error message without the scratch path and numbers, to group
/// rejections by kind (`SPMSIM_FUZZ_VERBOSE`).
fn reason(e: &str) -> String {
    let e = e.split_once("input.trace").map_or(e, |x| x.1);
    e.chars().filter(|c| !c.is_ascii_digit()).take(70).collect()
}

fn describe(target: &str, f: &Failure) -> String {
    format!("{target}: {} on {}: {}", f.kind, f.input.display(), f.message)
}

/// Every seed is accepted (a seed its own reader rejects explores only
/// the error path: regenerate the corpus with `scripts/fuzz-corpus`), and
/// every seed and regression runs without a panic, hang or runaway heap.
#[test]
fn corpus_and_regressions_replay_cleanly() {
    let mut problems = Vec::new();
    for &(target, f) in TARGETS {
        let seeds = inputs("corpus", target);
        if seeds.is_empty() {
            problems.push(format!("{target}: no seed corpus in fuzz/corpus/{target}; run scripts/fuzz-corpus"));
        }
        let regressions: Vec<_> = inputs("regressions", target).into_iter().filter(|(n, _)| !pending("regressions", target, n)).collect();
        let run = Run::new(work_dir(target));
        let worker = {
            let run = run.clone();
            std::thread::spawn(move || {
                let mut out = Vec::new();
                for (kind, (name, data)) in seeds.iter().map(|s| ("corpus", s)).chain(regressions.iter().map(|r| ("regressions", r))) {
                    match run.one(f, data) {
                        Ok(Err(e)) if kind == "corpus" && !pending(kind, target, name) => {
                            out.push(format!("{target}: seed fuzz/corpus/{target}/{name} is rejected: {e}; run scripts/fuzz-corpus"))
                        }
                        Ok(_) => {}
                        Err(fail) => out.push(format!("fuzz/{kind}/{target}/{name}: {}", describe(target, &fail))),
                    }
                }
                out
            })
        };
        match run.watch(worker) {
            Ok(p) => problems.extend(p),
            Err(hang) => problems.push(describe(target, &hang)),
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// The inputs in [`PENDING`], each in a child process: each seed is
/// accepted, each regression runs without a panic, hang or runaway heap.
#[test]
#[ignore = "the inputs in PENDING fail until the defect named beside each is fixed"]
fn pending_regressions() {
    if let Ok(file) = std::env::var("SPMSIM_FUZZ_ONLY") {
        return replay_one(&file);
    }
    let mut problems = Vec::new();
    for &(file, defect) in PENDING {
        let target = file.split('/').nth(1).unwrap();
        if let Err(e) =
            child::run("pending_regressions", &[("SPMSIM_FUZZ_ONLY", file)], 2 * guard::HANG_SECONDS, &work_dir(target).join("current"))
        {
            problems.push(format!("fuzz/{file} [{defect}]: {e}"));
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// Run `fuzz/FILE` (`corpus/TARGET/NAME` or `regressions/TARGET/NAME`)
/// through its target; a seed must also be accepted.
fn replay_one(file: &str) {
    let mut parts = file.splitn(3, '/');
    let (kind, target) = (parts.next().unwrap(), parts.next().unwrap());
    let data = std::fs::read(fuzz_dir().join(file)).unwrap_or_else(|e| panic!("fuzz/{file}: {e}"));
    let run = Run::new(work_dir(target));
    let f = entry(target);
    let worker = {
        let run = run.clone();
        std::thread::spawn(move || run.one(f, &data))
    };
    match run.watch(worker) {
        Ok(Ok(Err(e))) if kind == "corpus" => panic!("fuzz/{file}: seed rejected: {e}"),
        Ok(Ok(_)) => {}
        Ok(Err(fail)) | Err(fail) => panic!("fuzz/{file}: {}", describe(target, &fail)),
    }
}

/// Seeded mutants of one target, in a child process ([`mutate_here`]).
fn mutate(target: &'static str) {
    if child::is_child() {
        return mutate_here(target);
    }
    let seconds = env_u64("SPMSIM_FUZZ_SECONDS", 30) + 2 * guard::HANG_SECONDS;
    let out = child::run(&format!("mutate_{target}"), &[], seconds, &work_dir(target).join("current"));
    // The child's summary, without the test harness's words around it.
    for line in out.as_deref().unwrap_or_default().lines() {
        if let Some(i) = line.find(&format!("fuzz {target}:")).or_else(|| line.find(&format!("{target} rejected"))) {
            println!("{}", &line[i..]);
        }
    }
    if let Err(e) = out {
        panic!("{target}: {e}");
    }
}

/// The mutation loop: fails with every distinct panic found (up to a few)
/// or the first hang.
fn mutate_here(target: &'static str) {
    let seeds: Vec<Vec<u8>> = inputs("corpus", target).into_iter().map(|s| s.1).collect();
    assert!(!seeds.is_empty(), "{target}: no seed corpus in fuzz/corpus/{target}; run scripts/fuzz-corpus");
    let iterations = env_u64("SPMSIM_FUZZ_ITERATIONS", 300);
    let budget = Duration::from_secs(env_u64("SPMSIM_FUZZ_SECONDS", 30));
    let seed = env_u64("SPMSIM_FUZZ_SEED", 1) ^ guard::fnv1a(target.as_bytes());
    let (count, bytes) = (seeds.len(), seeds.iter().map(Vec::len).sum::<usize>());
    let verbose = std::env::var_os("SPMSIM_FUZZ_VERBOSE").is_some();
    let run = Run::new(work_dir(target));
    let f = entry(target);
    let worker = {
        let run = run.clone();
        std::thread::spawn(move || {
            let mut m = mutate::Mutator::new(seed);
            let start = Instant::now();
            let (mut done, mut accepted, mut failures) = (0u64, 0u64, Vec::<Failure>::new());
            let mut reasons = std::collections::BTreeMap::new();
            while done < iterations && start.elapsed() < budget && !run.stopped() && failures.len() < 5 {
                let input = m.mutate(&seeds);
                match run.one(f, &input) {
                    Ok(Ok(())) => accepted += 1,
                    Ok(Err(e)) => {
                        if verbose {
                            *reasons.entry(reason(&e)).or_insert(0u64) += 1;
                        }
                    }
                    Err(fail) => {
                        if !failures.iter().any(|g| g.message == fail.message) {
                            failures.push(fail);
                        }
                    }
                }
                done += 1;
            }
            for (r, n) in &reasons {
                println!("  {target} rejected {n}: {r}");
            }
            (done, accepted, failures, start.elapsed())
        })
    };
    let (done, accepted, failures, took) = match run.watch(worker) {
        Ok(r) => r,
        Err(hang) => panic!("{}", describe(target, &hang)),
    };
    println!(
        "fuzz {target}: {done} mutants of {count} seeds ({bytes} bytes) in {:.1} s, {accepted} accepted, {} rejected, {} failures",
        took.as_secs_f64(),
        done - accepted - failures.len() as u64,
        failures.len()
    );
    let list: Vec<String> = failures.iter().map(|f| describe(target, f)).collect();
    assert!(list.is_empty(), "{} failures (copy each input into fuzz/regressions/{target}/):\n{}", list.len(), list.join("\n"));
}

macro_rules! fuzz_tests {
    ($($name:ident),* $(,)?) => {
        $(#[test]
        #[ignore = "mutation fuzzing: run by scripts/fuzz ci"]
        fn $name() {
            mutate(stringify!($name).strip_prefix("mutate_").unwrap());
        })*

        /// Every entry of `TARGETS` has a test above.
        #[test]
        fn every_target_is_fuzzed() {
            let tested = [$(stringify!($name)),*];
            for (t, _) in TARGETS {
                assert!(tested.contains(&format!("mutate_{t}").as_str()), "fuzz target `{t}` has no mutation test in tests/fuzz/main.rs");
            }
        }
    };
}

fuzz_tests!(
    mutate_trace_auto,
    mutate_trace_native,
    mutate_trace_champsim,
    mutate_trace_champsim_cloudsuite,
    mutate_trace_lackey,
    mutate_trace_gem5,
    mutate_trace_ramulator,
    mutate_trace_dramsim3,
    mutate_trace_insn,
    mutate_config,
    mutate_set,
    mutate_image,
);

/// The child of [`an_unbounded_allocation_is_reported_with_its_input`]:
/// an entry that asks for 2 GiB.
#[test]
#[ignore = "a self-test's child process; its parent test runs it"]
fn child_allocates_without_bound() {
    if child::is_child() {
        let run = Run::new(work_dir("self-test-heap"));
        let _ = run.one(|d| Err(vec![1u8; (2 << 30) + d.len()].len().to_string()), b"greedy input");
    }
}

#[test]
fn an_unbounded_allocation_is_reported_with_its_input() {
    let e = child::run("child_allocates_without_bound", &[], 60, &work_dir("self-test-heap").join("current")).unwrap_err();
    assert!(e.starts_with("unbounded allocation"), "{e}");
    let saved = e.split(" on ").nth(1).and_then(|s| s.split(':').next()).unwrap();
    assert_eq!(std::fs::read(saved).unwrap(), b"greedy input", "{e}");
}
