//! Running one test of this binary in a child process, so that an input
//! that aborts it (the heap cap of `guard`) or hangs it is reported with
//! its file while the other targets still run.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set in the child: the test does the work instead of spawning.
pub const CHILD: &str = "SPMSIM_FUZZ_CHILD";

pub fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Run the ignored test `test` in a child with `env`, killing it after
/// `seconds`. `Ok(stdout)` if it passed, else what went wrong, naming a
/// copy of `current` (the file the child saves each input to before it
/// runs it) when the child aborted or ran over.
pub fn run(test: &str, env: &[(&str, &str)], seconds: u64, current: &Path) -> Result<String, String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drain the pipes on their own threads so a chatty child never blocks.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let (out, err) = (drain(Box::new(child.stdout.take().unwrap())), drain(Box::new(child.stderr.take().unwrap())));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(seconds) {
            child.kill().ok();
            child.wait().ok();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    match status {
        Some(s) if s.success() => Ok(out),
        None => Err(format!("hang: the child ran over {seconds} s on {}", saved(current).display())),
        Some(s) if err.contains("fuzz: an allocation of") => {
            let why = err.lines().find(|l| l.starts_with("fuzz: an allocation of")).unwrap_or_default();
            Err(format!("unbounded allocation ({s}) on {}: {why}", saved(current).display()))
        }
        Some(s) => {
            // The test's own failure message: the lines after "panicked at".
            let why: Vec<&str> = err
                .lines()
                .skip_while(|l| !l.contains("panicked at"))
                .skip(1)
                .take_while(|l| !l.starts_with("stack backtrace") && !l.starts_with("note:"))
                .collect();
            Err(format!("the child failed ({s}):\n{}", why.join("\n")))
        }
    }
}

/// Keep a copy of `current` under a name of its own.
fn saved(current: &Path) -> PathBuf {
    let data = std::fs::read(current).unwrap_or_default();
    let p = current.with_file_name(format!("crash-{:016x}", super::guard::fnv1a(&data)));
    std::fs::write(&p, &data).unwrap();
    p
}
