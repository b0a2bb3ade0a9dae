//! A cached program run again: its recorded command in a fresh folder,
//! for what the trace alone cannot give (its phases over the whole run,
//! its simulation points).
//!
//! ```text
//!  Manifest (command, stdin, env, cwd) -> rerun_options(work): the cwd
//!      replaced by a fresh folder
//!  program_phases: valgrind --tool=spmtrace --bbv-interval=N -> bb.out
//!      -> phases::analyse (k-means over the basic-block vectors)
//! ```

use super::{phases, Manifest};
use std::path::{Path, PathBuf};

/// A cached program's recorded command, ready to run again in `work` (a
/// fresh folder) rather than where it was recorded.
pub fn rerun_options(m: &Manifest, work: &Path) -> crate::trace::lackey::RecordOptions {
    let w = work.display().to_string();
    crate::trace::lackey::RecordOptions {
        program: m.command.iter().map(|a| a.replace(&m.cwd, &w)).collect(),
        cwd: Some(work.to_path_buf()),
        stdin: m.stdin.as_ref().map(PathBuf::from),
        env: m.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        isolated: true,
        ..Default::default()
    }
}

/// Run a cached program's recorded command over its whole run under
/// spmtrace, writing a basic-block vector every `interval` instructions
/// (the inputs must be in `cache`, as after `suite record`; the tool is
/// built there too), and find its phases ([`phases::analyse`]). A
/// multi-threaded program's threads count into one vector.
#[cfg(unix)]
pub fn program_phases(m: &Manifest, cache: &Path, interval: u64, max_k: usize, scratch: &Path) -> Result<phases::Phases, String> {
    let _ = std::fs::remove_dir_all(scratch);
    std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let bbv = scratch.join("bb.out");
    let cwd = scratch.join("work");
    std::fs::create_dir_all(&cwd).map_err(|e| format!("{}: {e}", cwd.display()))?;
    let opts = rerun_options(m, &cwd);
    let tool = crate::trace::vgtool::ensure(cache)?;
    let stdin = match &opts.stdin {
        Some(p) => std::process::Stdio::from(std::fs::File::open(p).map_err(|e| format!("stdin file {}: {e}", p.display()))?),
        None => std::process::Stdio::null(),
    };
    let mut cmd = tool.command();
    cmd.arg(format!("--bbv-interval={interval}"))
        .arg(format!("--bbv-out={}", bbv.display()))
        .arg("--log-fd=2")
        .args(&opts.program)
        .current_dir(&cwd);
    crate::trace::lackey::program_env(&mut cmd, &opts.env, opts.isolated, Some(&cwd));
    let out = cmd
        .stdin(stdin)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| format!("cannot start valgrind (is it installed?): {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(10).collect();
        return Err(format!(
            "`{}` under spmtrace exited with {}: {}",
            opts.program.join(" "),
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ));
    }
    let text = std::fs::read_to_string(&bbv).map_err(|e| format!("{}: {e}", bbv.display()))?;
    let r = phases::analyse(&phases::parse_bbv(&text)?, interval, max_k);
    let _ = std::fs::remove_dir_all(scratch);
    r
}
