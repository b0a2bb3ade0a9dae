//! Numbers given to `plan`, `compare` and `run`: a bound or count that is
//! no number in its range, and a hand-edited result out of range, are
//! refused with exit code 2, naming the flag, key or field (and the file);
//! a flag the chosen mode would ignore is refused naming it.

mod common;
use common::{scratch, spmsim};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `spmsim ARGS` that must end within `limit`: a loop without a bound
/// would otherwise hang the test suite.
fn spmsim_within(args: &[&str], limit: Duration) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spmsim"))
        .args(args)
        .env("SPMSIM_PYTHON", "/nonexistent/python")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return (status.code().unwrap_or(-1), err);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("spmsim {args:?} still ran after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_plan_bound_that_is_no_finite_number_at_least_zero_is_refused_naming_its_flag() {
    let dir = scratch("nan-bounds");
    let from = dir.to_str().unwrap();
    for (flag, value, says) in [
        ("--battery-mm3", "NaN", "NaN is not a number"),
        ("--battery-uj", "nan", "NaN is not a number"),
        ("--recovery-s", "NaN", "NaN is not a number"),
        ("--writes-pki", "NaN", "NaN is not a number"),
        ("--battery-mm3", "-1", "-1 is negative"),
        ("--recovery-s", "inf", "inf is not finite"),
        ("--writes-pki", "-inf", "-inf is not finite"),
        ("--onchip-nv-bytes", "-1", "-1 is negative"),
        ("--instructions", "0", "0 is out of range"),
    ] {
        // Both spellings: `--flag=-1` reached the parser before, `--flag -1` did not.
        for args in [vec![format!("{flag}={value}")], vec![flag.to_string(), value.to_string()]] {
            let mut a = vec!["plan", "--from", from, "--out", from];
            a.extend(args.iter().map(String::as_str));
            let (code, _, err) = spmsim(&a);
            assert_eq!(code, 2, "{a:?}: {err}");
            assert!(err.contains(&format!("for '{flag} <")) && err.contains(says), "{a:?}: {err}");
        }
    }
    assert!(!dir.join("plan.md").exists(), "nothing is planned");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_hand_edited_result_out_of_range_is_refused_naming_its_field_and_file() {
    let dir = scratch("edited");
    // compare's results.json with a row edited to a negative slowdown.
    let cmp = dir.join("cmp");
    std::fs::create_dir_all(&cmp).unwrap();
    let row = serde_json::json!({
        "preset": "cobcm", "secure": true, "slowdown_gmean": -3.0, "crash": {"violations": 0},
        "battery": {"supercap_mm3": 5.0}, "writes_pki": {"total": 40.0},
    });
    let doc = serde_json::json!({"kind": "compare", "models": [{"model": "strict", "schemes": [row]}]});
    std::fs::write(cmp.join("results.json"), doc.to_string()).unwrap();
    let out = dir.join("plan");
    let (code, _, err) = spmsim(&["plan", "--from", cmp.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cmp/results.json") && err.contains("(`cobcm`): `slowdown_gmean` is -3.0, not a slowdown"), "{err}");
    // An exploration whose recovery_ops would run a recovery for ever:
    // refused at once (the test fails if plan does not end).
    let exp = dir.join("exp");
    std::fs::create_dir_all(&exp).unwrap();
    let e = serde_json::json!({
        "kind": "explore", "instructions": 1000, "seed": 1, "crash_points": 64, "crash_ops": 300,
        "recovery_ops": 1_000_000_000_000_000u64, "workloads": ["btree"], "compositions": [],
        "pareto_battery": [], "front_recovery_1tib": {}, "runs": [],
    });
    std::fs::write(exp.join("explore.json"), e.to_string()).unwrap();
    let (code, err) = spmsim_within(
        &["plan", "--explore", exp.to_str().unwrap(), "--recovery-s", "100", "--out", out.to_str().unwrap()],
        Duration::from_secs(60),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("exp/explore.json") && err.contains("`recovery_ops` is 1000000000000000"), "{err}");
    assert!(!out.exists(), "no plan written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compare_refuses_zero_operations_and_flags_it_would_ignore() {
    let dir = scratch("compare-flags");
    let out = dir.join("out");
    let o = out.to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (&["--ops", "0"], "invalid value '0' for '--ops <OPS>': 0 is out of range: give a whole number from 1 to 100000"),
        (&["--ops=-5"], "-5 is negative"),
        (&["--ops", "1000000000000000"], "give a whole number from 1 to 100000"),
        (&["--instructions", "0"], "for '--instructions <INSTRUCTIONS>'"),
        (&["--batteries", "adr"], "--batteries is an axis of the exploration and needs --explore"),
        (&["--fronts", "persist-buffer:cobcm"], "--fronts is an axis of the exploration and needs --explore"),
        (&["--explore", "--models", "strict"], "--models does not apply to --explore"),
        (&["--explore", "--no-attacks"], "--no-attacks does not apply to --explore"),
    ];
    for (extra, says) in cases {
        let mut a = vec!["compare", "--schemes", "sp", "--workloads", "btree", "--out", o];
        a.extend_from_slice(extra);
        if !extra.contains(&"--instructions") {
            a.extend_from_slice(&["--instructions", "2000"]);
        }
        let (code, _, err) = spmsim(&a);
        assert_eq!(code, 2, "{a:?}: {err}");
        assert!(err.contains(says), "{a:?}: {err}");
    }
    assert!(!out.exists(), "nothing ran");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_set_integer_beyond_its_type_names_the_key_and_its_range() {
    let dir = scratch("set-range");
    let out = dir.join("r");
    for (set, says) in [
        ("security.mac_units=-1", "key `security.mac_units`: must be between 1 and 256, got -1"),
        ("security.mac_units=1099511627776", "key `security.mac_units`: must be between 1 and 256, got 1099511627776"),
        ("persistence.wpq_entries=-1", "key `persistence.wpq_entries`: must be between 1 and 65536, got -1"),
        ("memory.capacity_bytes=-4096", "key `memory.capacity_bytes`: must be between 0 and 18446744073709551615 (a u64), got -4096"),
    ] {
        let (code, _, err) = spmsim(&["run", "--scheme", "cobcm", "--workload", "btree", "--set", set, "--out", out.to_str().unwrap()]);
        assert_eq!(code, 2, "{set}: {err}");
        assert!(err.contains(says) && !err.contains("expected u"), "{set}: {err}");
    }
    assert!(!Path::new(&out).exists());
    let _ = std::fs::remove_dir_all(&dir);
}
