//! Running the `spmsim` binary from the integration tests.
#![allow(dead_code)]

use std::process::Command;

/// Exit code, stdout and stderr of `spmsim ARGS`.
pub fn spmsim(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_spmsim")).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into())
}

/// stdout of a successful `spmsim ARGS`, parsed as JSON.
pub fn json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = spmsim(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// An empty scratch folder for test `name` of this process.
pub fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("spmsim-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
