//! `spmsim._native`: the PyO3 glue between the simulator and the `spmsim`
//! Python package (`python/spmsim/`). Nothing here simulates; every
//! function calls what the command line calls, so Python and the CLI give
//! the same statistics byte for byte.
//!
//! ```text
//!  Python thread (holds the GIL)            worker thread (no GIL)
//!  run(...) -- spawn ---------------------> spmsim::api::run(req, &stop)
//!     loop: release the GIL, park <= 50 ms      ... events; every 4096: stop?
//!           take it, check_signals()  <---- unpark when done
//!     Ctrl-C: stop = true, join, raise KeyboardInterrupt
//! ```

pub mod stubs;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use spmsim::api::{ApiError, RunRequest};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long a run goes between two looks at Python's pending signals.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

fn to_py_err(e: ApiError) -> PyErr {
    match e {
        ApiError::Invalid(m) => PyValueError::new_err(m),
        ApiError::Failed(m) => PyRuntimeError::new_err(m),
        // Only a pending signal sets the flag, and its exception is raised
        // instead; reaching here means someone else stopped the run.
        ApiError::Cancelled => PyRuntimeError::new_err("the run was cancelled"),
    }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Run `work` on a thread of its own while this one, the caller's, gives
/// the GIL away except for a look at pending signals every [`SIGNAL_POLL`].
/// A signal whose handler raises (SIGINT: KeyboardInterrupt) sets `stop`,
/// waits for `work` to notice it, and raises that exception.
fn interruptible<T: Send>(py: Python<'_>, stop: &AtomicBool, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    std::thread::scope(|s| {
        let caller = std::thread::current();
        let worker = s.spawn(move || {
            let r = work();
            caller.unpark();
            r
        });
        loop {
            py.detach(|| {
                if !worker.is_finished() {
                    std::thread::park_timeout(SIGNAL_POLL);
                }
            });
            if worker.is_finished() {
                return worker.join().map_err(|p| PyRuntimeError::new_err(format!("spmsim panicked: {}", panic_message(p))));
            }
            if let Err(e) = py.check_signals() {
                stop.store(true, Ordering::Relaxed);
                let _ = py.detach(|| worker.join());
                return Err(e);
            }
        }
    })
}

#[pyfunction]
#[pyo3(signature = (scheme, workload, instructions, seed, overrides, baseline=None, warmup_instructions=0))]
// Each parameter is one of Python's keyword arguments: PyO3 takes them one by one.
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    scheme: String,
    workload: String,
    instructions: Option<u64>,
    seed: u64,
    overrides: Vec<String>,
    baseline: Option<String>,
    warmup_instructions: u64,
) -> PyResult<(String, String)> {
    // None: the caller gave no count, so a short trace's note names the default.
    let req = RunRequest { scheme, workload, warmup_instructions, instructions, seed, overrides, baseline };
    let stop = AtomicBool::new(false);
    let out = interruptible(py, &stop, || spmsim::api::run(&req, &stop))?.map_err(to_py_err)?;
    Ok((out.stats_json(), out.config.to_toml()))
}

#[pyfunction]
fn config_toml(scheme: &str, overrides: Vec<String>) -> PyResult<String> {
    spmsim::api::resolve_config(scheme, &overrides).map(|c| c.to_toml()).map_err(to_py_err)
}

#[pyfunction]
fn schemes() -> Vec<String> {
    spmsim::config::list_presets()
}

#[pyfunction]
fn presets_dir() -> String {
    spmsim::config::presets_dir().display().to_string()
}

#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.detach(|| spmsim_cli::main_with_args(argv))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DEFAULT_INSTRUCTIONS", spmsim::api::DEFAULT_INSTRUCTIONS)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(config_toml, m)?)?;
    m.add_function(wrap_pyfunction!(schemes, m)?)?;
    m.add_function(wrap_pyfunction!(presets_dir, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    // The stub table must name exactly what is registered.
    for f in stubs::FUNCTIONS {
        m.getattr(f.name).map_err(|_| PyRuntimeError::new_err(format!("stubs.rs lists `{}`, which _native does not register", f.name)))?;
    }
    for c in stubs::CONSTANTS {
        m.getattr(c.name).map_err(|_| PyRuntimeError::new_err(format!("stubs.rs lists `{}`, which _native does not define", c.name)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::stubs::{stub_text, REGENERATE, STUB_PATH};
    use std::path::Path;

    #[test]
    fn stub_file_is_current() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(STUB_PATH);
        let want = stub_text();
        if std::env::var_os("SPMSIM_BLESS_STUBS").is_some() {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(have == want, "{STUB_PATH} is stale (it differs from what crates/spmsim-py/src/stubs.rs generates); regenerate it with\n    {REGENERATE}\nand commit it");
    }
}
