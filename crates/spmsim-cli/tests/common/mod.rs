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

/// Exit code, stdout and stderr of `spmsim ARGS` with its cache in `cache`.
pub fn spmsim_in(cache: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_spmsim")).env("SPMSIM_CACHE", cache).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into())
}

/// An instruction stream of `n` independent instructions beside the trace
/// at `trace`, made from its present bytes (as `trace record` makes one).
pub fn stream_for(trace: &std::path::Path, n: u64) -> std::path::PathBuf {
    use spmsim::trace::insn::{path_for, Insn, InsnWriter};
    let mut w = InsnWriter::create(&path_for(trace)).unwrap();
    for _ in 0..n {
        w.write(&Insn::default()).unwrap();
    }
    w.finish(0, &spmsim::util::digest::file_digest(trace).unwrap()).unwrap();
    path_for(trace)
}
