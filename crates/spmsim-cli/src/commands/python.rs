//! Commands that the Python package implements (`sweep`, `report`, `explore`): the
//! binary hands them to `python3 -m spmsim SUB ARGS`, so both front ends
//! take the same command lines.

use anyhow::{anyhow, Result};
use std::ffi::OsString;
use std::process::{Command, ExitCode, Stdio};

/// The interpreter: `$SPMSIM_PYTHON` if set, else `python3` on the PATH.
fn interpreter() -> OsString {
    std::env::var_os("SPMSIM_PYTHON").filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into())
}

/// Whether `python` imports the package; the error is the last line of
/// what the import printed.
fn importable(python: &OsString) -> std::result::Result<(), String> {
    let shown = python.to_string_lossy().into_owned();
    let probe = Command::new(python)
        .args(["-c", "import spmsim.cli"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("{shown}: {e}"))?;
    if probe.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&probe.stderr);
    let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("import failed").trim().to_string();
    Err(format!("{shown}: {last}"))
}

pub fn forward(sub: &str, args: &[String]) -> Result<ExitCode> {
    let python = interpreter();
    // Ask first whether the package imports, so that a missing package is
    // told apart from the command's own failures (which keep their code).
    importable(&python).map_err(|why| anyhow!("`spmsim {sub}` needs the Python package: pip install . ({why})"))?;
    let shown = python.to_string_lossy().into_owned();
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "spmsim", sub]).args(args);
    // The binary names itself, so that the commands the Python side runs
    // in turn (a reproduction's points) are this build's, not the
    // package's own native module.
    if let Ok(exe) = std::env::current_exe() {
        if exe.file_stem().is_some_and(|n| n.to_string_lossy().starts_with("spmsim")) {
            cmd.env("SPMSIM_BIN", exe);
        }
    }
    let status = cmd.status().map_err(|e| anyhow!("{shown}: {e}"))?;
    Ok(ExitCode::from(exit_byte(status)))
}

/// `spmsim report DIR` (the HTML page with the plots) for a directory
/// whose results are already written; an error says why the page is
/// missing and never touches those results.
pub fn report(dir: &std::path::Path) -> std::result::Result<(), String> {
    let python = interpreter();
    importable(&python).map_err(|why| format!("the HTML report needs the Python package: pip install . ({why})"))?;
    let out = Command::new(&python).args(["-m", "spmsim", "report"]).arg(dir).stdin(Stdio::null()).output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(format!("spmsim report failed: {}", err.trim()))
    }
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
