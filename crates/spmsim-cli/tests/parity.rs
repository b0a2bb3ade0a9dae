//! Parity of the front ends, Rust side: for every case of
//! `tests/python/parity_cases.json`, the Rust API (`spmsim::api::run`) and
//! the binary (`spmsim run --json`) give the same statistics, byte for
//! byte. The API's output is left in `<target>/release/parity/NAME.json`,
//! where the Python tests (`tests/python/test_api.py`) compare Python's
//! against it; together they tie the Rust API, the binary, `python -m
//! spmsim run` and `spmsim.run` to one document.
//!
//! Also: the binary hands `sweep` and `report` to the Python package and
//! says how to install it when it is missing.

mod common;

use common::spmsim;
use spmsim::api::{run, RunRequest};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

fn cases() -> Vec<serde_json::Value> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/python/parity_cases.json");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

fn request(c: &serde_json::Value) -> RunRequest {
    let s = |k: &str| c[k].as_str().unwrap().to_string();
    RunRequest {
        scheme: s("scheme"),
        workload: s("workload"),
        warmup_instructions: c.get("warmup_instructions").map_or(0, |w| w.as_u64().unwrap()),
        instructions: Some(c["instructions"].as_u64().unwrap()),
        seed: c["seed"].as_u64().unwrap(),
        overrides: c["overrides"].as_array().unwrap().iter().map(|o| o.as_str().unwrap().to_string()).collect(),
        baseline: c["baseline"].as_str().map(String::from),
    }
}

/// Beside the binary this test runs: `target/release/parity` under
/// `cargo test --release`.
fn parity_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_spmsim")).parent().unwrap().join("parity")
}

#[test]
fn rust_api_and_binary_print_the_same_stats() {
    let out_root = std::env::temp_dir().join(format!("spmsim-parity-{}", std::process::id()));
    std::fs::create_dir_all(parity_dir()).unwrap();
    for c in cases() {
        let name = c["name"].as_str().unwrap();
        let req = request(&c);
        let api = run(&req, &AtomicBool::new(false)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let text = api.stats_json();

        let out = out_root.join(name);
        let (n, i) = (req.instruction_count().to_string(), req.seed.to_string());
        let mut args = vec!["run", "--scheme", &req.scheme, "--workload", &req.workload, "--instructions", &n, "--seed", &i, "--json"];
        let w = req.warmup_instructions.to_string();
        if req.warmup_instructions > 0 {
            args.extend(["--warmup-instructions", &w]);
        }
        for o in &req.overrides {
            args.extend(["--set", o]);
        }
        if let Some(b) = &req.baseline {
            args.extend(["--baseline", b]);
        }
        let o = out.to_str().unwrap();
        args.extend(["--out", o]);
        let (code, stdout, stderr) = spmsim(&args);
        assert_eq!(code, 0, "{name}: {stderr}");
        assert_eq!(stdout, format!("{text}\n"), "{name}: the binary and the Rust API differ");
        // What the binary writes beside the run is the same document and
        // the configuration the API resolved.
        assert_eq!(std::fs::read_to_string(out.join("stats.json")).unwrap(), text, "{name}");
        assert_eq!(std::fs::read_to_string(out.join("config.toml")).unwrap(), api.config.to_toml(), "{name}");
        std::fs::write(parity_dir().join(format!("{name}.json")), &text).unwrap();
    }
    let _ = std::fs::remove_dir_all(&out_root);
}

#[test]
fn python_commands_without_the_package_say_how_to_install_it() {
    for sub in ["sweep", "report"] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_spmsim"))
            .args([sub, "spec.toml"])
            .env("SPMSIM_PYTHON", "/nonexistent/python3")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{sub}: {err}");
        assert!(err.contains(&format!("`spmsim {sub}` needs the Python package: pip install .")), "{sub}: {err}");
    }
}

#[test]
fn bad_input_keeps_its_message_and_code() {
    let (code, _, err) = spmsim(&["run", "--scheme", "cm", "--workload", "random-writes", "--instructions", "0"]);
    assert_eq!((code, err.as_str()), (2, "error: --instructions must be at least 1\n"));
    let (code, _, err) = spmsim(&["run", "--scheme", "no-such", "--workload", "random-writes"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("error: unknown preset `no-such`; known presets: "), "{err}");
}
