//! Commands that the Python package implements (`sweep`, `report`): the
//! binary hands them to `python3 -m spmsim SUB ARGS`, so both front ends
//! take the same command lines.

use anyhow::{anyhow, Result};
use std::ffi::OsString;
use std::process::{Command, ExitCode, Stdio};

/// The interpreter: `$SPMSIM_PYTHON` if set, else `python3` on the PATH.
fn interpreter() -> OsString {
    std::env::var_os("SPMSIM_PYTHON").filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into())
}

pub fn forward(sub: &str, args: &[String]) -> Result<ExitCode> {
    let python = interpreter();
    let shown = python.to_string_lossy().into_owned();
    let needs = |why: String| anyhow!("`spmsim {sub}` needs the Python package: pip install . ({why})");
    // Ask first whether the package imports, so that a missing package is
    // told apart from the command's own failures (which keep their code).
    let probe = Command::new(&python)
        .args(["-c", "import spmsim.cli"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| needs(format!("{shown}: {e}")))?;
    if !probe.status.success() {
        let err = String::from_utf8_lossy(&probe.stderr);
        let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("import failed").trim().to_string();
        return Err(needs(format!("{shown}: {last}")));
    }
    let status = Command::new(&python).args(["-m", "spmsim", sub]).args(args).status().map_err(|e| anyhow!("{shown}: {e}"))?;
    Ok(ExitCode::from(exit_byte(status)))
}

/// The child's exit code; a child killed by a signal gives 128 + signal,
/// as shells report it.
fn exit_byte(status: std::process::ExitStatus) -> u8 {
    if let Some(c) = status.code() {
        return u8::try_from(c).unwrap_or(1);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(s) = status.signal() {
            return u8::try_from(128 + s).unwrap_or(1);
        }
    }
    1
}
