//! A cached program run again: its recorded command from its stage, for
//! what the trace alone cannot give (its phases over the whole run, its
//! simulation points).
//!
//! ```text
//!  Manifest (command, stdin, env, cwd) -> rerun_options(stage): the
//!      recorded stage's folders replaced by this one's (the same unless
//!      another user recorded it, or an older spmsim ran it in the cache)
//!  program_phases: valgrind --tool=spmtrace --bbv-interval=N -> bb.out
//!      -> phases::analyse (k-means over the basic-block vectors)
//! ```

use super::stage::Stage;
use super::{phases, Manifest};
use std::path::{Path, PathBuf};

/// A cached program's recorded command, ready to run again from `stage`
/// (entered for the program), as it was recorded: its working folder and
/// inputs where the recording had them, and spmtrace reached through the
/// stage.
pub(super) fn rerun_options(m: &Manifest, stage: &Stage) -> crate::trace::lackey::RecordOptions {
    let work = stage.work().display().to_string();
    // The recording's stage: its working folder's parent, if it had one.
    let recorded_inputs = Path::new(&m.cwd).parent().map(|d| d.join("inputs").display().to_string());
    let inputs = stage.inputs().display().to_string();
    let here = |a: &str| match &recorded_inputs {
        Some(r) if a.starts_with(r.as_str()) => a.replacen(r.as_str(), &inputs, 1),
        _ => a.replace(&m.cwd, &work),
    };
    crate::trace::lackey::RecordOptions {
        program: m.command.iter().map(|a| here(a)).collect(),
        cwd: Some(stage.work()),
        stdin: m.stdin.as_deref().map(|s| PathBuf::from(here(s))),
        env: m.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        isolated: true,
        tool_link: Some(stage.tool_link()),
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
    let stage = Stage::enter(&m.program, cache)?;
    let cwd = stage.work();
    let opts = rerun_options(m, &stage);
    let tool = crate::trace::vgtool::ensure(cache)?.linked_at(&stage.tool_link())?;
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
    drop(stage);
    let text = std::fs::read_to_string(&bbv).map_err(|e| format!("{}: {e}", bbv.display()))?;
    let r = phases::analyse(&phases::parse_bbv(&text)?, interval, max_k);
    let _ = std::fs::remove_dir_all(scratch);
    r
}
