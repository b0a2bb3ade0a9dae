//! `spmsim suite` and `spmsim reproduce secpb` on a recorded suite, through
//! the binary. Recording needs valgrind and bzip2.

mod common;
use common::{json, spmsim};
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn list_json_names_every_program_with_its_packages_and_inputs() {
    let v = json(&["suite", "list", "--json", "--cache", "/nonexistent/spmsim-cache"]);
    let progs = v["programs"].as_array().unwrap();
    assert!(progs.len() >= 12, "{} programs", progs.len());
    for p in progs {
        let name = p["name"].as_str().unwrap();
        assert!(!p["packages"].as_array().unwrap().is_empty(), "{name}");
        assert!(p["skip"].as_u64().is_some(), "{name}");
        assert!(!p["description"].as_str().unwrap().is_empty(), "{name}");
        assert!(!p["inputs"].as_array().unwrap().is_empty(), "{name} runs on a generated input");
        assert!(p["manifest"].is_null(), "{name}: nothing cached in a cache that does not exist");
    }
    for want in ["gcc", "xz", "bzip2", "perl", "python", "sqlite", "gnugo", "chess", "hmmer", "glpk"] {
        assert!(progs.iter().any(|p| p["name"] == want), "{want} is in the suite");
    }
}

#[test]
fn a_broken_programs_file_is_an_error_with_its_line() {
    let dir = std::env::temp_dir().join(format!("spmsim-suite-broken-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("programs.toml");
    std::fs::write(&f, "[[program]]\nname = \"x\"\npackages = [\"bzip2\"]\ndescription = \"d\"\ncommand = [\"/bin/bzip2\"]\nskip = -3\n")
        .unwrap();
    let (code, _, err) = spmsim(&["suite", "list", "--programs", f.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("programs.toml") && err.contains("line 6") && err.contains("skip"), "{err}");
    let (code, _, err) =
        spmsim(&["suite", "record", "--only", "nosuch", "--programs", f.to_str().unwrap(), "--cache", dir.join("c").to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("line 6"), "the file is checked before anything is installed: {err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Recording needs valgrind and bzip2 (both in Debian's base set that
/// `.ci/run` relies on); a missing tool fails the test with its name.
fn require_recording_tools() {
    let valgrind = Command::new("valgrind").arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    assert!(valgrind, "valgrind is needed to test suite recording (apt-get install valgrind)");
    assert!(Path::new("/bin/bzip2").is_file(), "/bin/bzip2 is needed to test suite recording (apt-get install bzip2)");
}

/// A two-program suite small enough to record in a second or two.
fn tiny_suite(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let f = dir.join("programs.toml");
    std::fs::write(
        &f,
        r#"tools = ["valgrind"]
[[input]]
name = "corpus"
kind = "text"
size = 300000
[[program]]
name = "bzip2"
packages = ["bzip2"]
description = "bzip2 compressing a small generated corpus"
command = ["/bin/bzip2", "-9", "-c", "{input:corpus}"]
skip = 200000
[[program]]
name = "bzip2-fast"
packages = ["bzip2"]
description = "bzip2 -1 on the same corpus"
command = ["/bin/bzip2", "-1", "-c", "{input:corpus}"]
skip = 200000
"#,
    )
    .unwrap();
    f
}

fn run_with_cache(cache: &Path, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_spmsim")).args(args).env("SPMSIM_CACHE", cache).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into())
}

/// The same programs recorded into two caches whose paths differ in
/// length give the same bytes: nothing the programs start with (their
/// arguments, environment, working folder, valgrind's preload library)
/// names the cache. Two programs are fast-forwarded by spmtrace (whose
/// folder valgrind hands on to the program), one is recorded by lackey.
#[test]
fn a_recording_does_not_depend_on_the_caches_path() {
    require_recording_tools();
    let dir = std::env::temp_dir().join(format!("spmsim-suite-paths-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let programs = tiny_suite(&dir);
    let mut text = std::fs::read_to_string(&programs).unwrap();
    text.push_str(
        r#"[[program]]
name = "bzip2-lackey"
packages = ["bzip2"]
description = "bzip2, recorded by lackey from its start"
command = ["/bin/bzip2", "-9", "-c", "{input:corpus}"]
skip = 200000
fast_forward = false
"#,
    );
    std::fs::write(&programs, text).unwrap();
    let short = dir.join("c");
    let long = dir.join("a-cache-folder-with-a-much-longer-path").join("c");
    for cache in [&short, &long] {
        let (code, _, err) =
            run_with_cache(cache, &["suite", "record", "--instructions", "100000", "--programs", programs.to_str().unwrap()]);
        assert_eq!(code, 0, "recording into {}: {err}", cache.display());
    }
    for name in ["bzip2", "bzip2-fast", "bzip2-lackey"] {
        let manifest = |cache: &Path| -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(cache.join(format!("suite/{name}.json"))).unwrap()).unwrap()
        };
        let (a, b) = (manifest(&short), manifest(&long));
        for k in ["skipped_instructions", "recorded_instructions", "loads", "stores", "trace_bytes", "command", "cwd"] {
            assert_eq!(a[k], b[k], "{name}: `{k}` differs between the caches");
        }
        assert!(a["recorded_instructions"].as_u64().unwrap() > 0);
        for ext in ["trace", "trace.insn"] {
            let bytes = |cache: &Path| std::fs::read(cache.join(format!("suite/{name}.{ext}"))).unwrap();
            assert!(bytes(&short) == bytes(&long), "{name}.{ext} differs between the caches");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn record_writes_trace_and_manifest_and_reproduce_runs_on_them() {
    require_recording_tools();
    let dir = std::env::temp_dir().join(format!("spmsim-suite-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let programs = tiny_suite(&dir);
    let p = programs.to_str().unwrap();
    let cache = dir.join("cache");
    let (code, out, err) = run_with_cache(&cache, &["suite", "record", "--instructions", "400000", "--programs", p]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("| bzip2 ") && out.contains("recorded"), "{out}");
    assert!(err.contains("bzip2: recorded 400000 instructions"), "{err}");
    let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(cache.join("suite/bzip2.json")).unwrap()).unwrap();
    assert_eq!(m["recorded_instructions"], 400_000);
    // The window is fast-forwarded to the first block boundary at or
    // after the skip (spmtrace), a few instructions later.
    let skipped = m["skipped_instructions"].as_u64().unwrap();
    assert!((200_000..200_100).contains(&skipped), "skipped {skipped}");
    assert_eq!(m["packages"][0]["name"], "bzip2");
    assert_eq!(m["inputs"][0]["sha256"].as_str().unwrap().len(), 64);
    assert!(m["command"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().ends_with("corpus.txt")));
    // trace info agrees with the manifest.
    let trace = cache.join("suite/bzip2.trace");
    let info = json(&["trace", "info", trace.to_str().unwrap(), "--json"]);
    assert_eq!(info["loads"], m["loads"]);
    assert_eq!(info["stores"], m["stores"]);
    let instr = info["instructions"].as_u64().unwrap();
    assert!(instr.abs_diff(400_000) < 10, "{instr}");
    let wpti = info["stores_pti"].as_f64().unwrap();
    assert!((20.0..600.0).contains(&wpti), "stores per kilo-instruction {wpti}");
    // Unchanged: up to date, not recorded again.
    let (code, out, _) = run_with_cache(&cache, &["suite", "record", "--instructions", "400000", "--programs", p, "--only", "bzip2"]);
    assert_eq!(code, 0);
    assert!(out.contains("up to date"), "{out}");
    // The suite is the default workload set of reproduce secpb.
    let res = dir.join("results");
    let (code, out, err) = run_with_cache(
        &cache,
        &["reproduce", "secpb", "--quick", "--instructions", "60000", "--programs", p, "--out", res.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("order COBCM"), "{out}");
    let md = std::fs::read_to_string(res.join("report.md")).unwrap();
    assert!(
        md.contains("real programs") && md.contains("under valgrind") && md.contains("simulation point") && md.contains("values derived"),
        "the report says what the workloads are"
    );
    assert!(
        md.contains("| bzip2 | bzip2 1.0.8") || md.contains("| bzip2 | bzip2 "),
        "the report names each program and its package version"
    );
    assert!(md.contains("| bzip2-fast |"));
    assert!(md.contains("Trace notes"), "trace notes in the report");
    assert!(md.contains("not part of any average"), "the NoGap example runs beside the suite");
    // The baseline beside published IPC of bzip2's SPEC counterpart, and
    // the gamess-like profile on bzip2's own instruction stream.
    let published = md.lines().find(|l| l.starts_with("| bzip2 |") && l.contains("401.bzip2")).expect("bzip2 beside 401.bzip2");
    assert!(published.contains("| 1.43 |"), "Core i7 920's CPI 0.70 as IPC: {published}");
    assert!(md.contains("Computer Organization and Design"), "the sources are cited");
    let on_stream = md.lines().find(|l| l.starts_with("| bzip2 |") && l.matches('|').count() == 4).expect("the profile on bzip2's stream");
    assert!(md.contains("instruction stream of"), "{on_stream}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(res.join("results.json")).unwrap()).unwrap();
    // Recorded programs run with their stack volatile, and Table IV again
    // with every store persistent.
    // --quick runs each program at its single simulation point.
    assert_eq!(r["suite"][0]["workload"], "suite:bzip2@single#persistent=heap");
    assert!(r["suite"][0]["regions"].as_str().is_some_and(|s| s.starts_with("single")), "{}", r["suite"][0]);
    assert_eq!(r["suite"][0]["persistent"], "heap");
    assert!(r["table4_all"]["cm"].as_f64().is_some(), "Table IV with every store persistent");
    assert!(md.contains("#persistent=all"), "the report gives both policies");
    assert!(r["nogap"]["ipc"].as_f64().unwrap() > 0.0);
    let _ = std::fs::remove_dir_all(&dir);
}
