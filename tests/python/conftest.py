"""Shared fixtures of the Python tests.

The package is tested as installed (`pip install .`, or `maturin develop`);
when it is not importable, the sources under python/ are tried (they need
the extension built into them).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PY_SRC = REPO / "python"

try:
    import spmsim.sweep  # noqa: F401
except ImportError:
    sys.path.insert(0, str(PY_SRC))
    import spmsim.sweep  # noqa: F401

# Tiny runs keep the suite fast: a point takes well under a second.
TINY = 40_000

#: 2 schemes x 2 workloads x 2 seeds, the grid of the executor tests.
SMALL_GRID = {
    "scheme": ["bbb", "cobcm"],
    "workload": ["array-swap", "random-writes"],
    "instructions": TINY,
    "seed": [1, 2],
}


def package_path_env() -> dict:
    """Environment for a child Python that must import the same spmsim."""
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(spmsim.__file__)))
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def rust_cli(args: list[str], cwd: str | None = None) -> subprocess.CompletedProcess:
    """Run the Rust command line (`spmsim reproduce ...`) in a child Python
    through the extension, as the `spmsim` console script does."""
    code = "import sys, spmsim._native as n; sys.exit(n.cli_main(['spmsim'] + sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd or REPO, env=package_path_env(),
                          capture_output=True, text=True)


@pytest.fixture(scope="session")
def small_sweep_dir(tmp_path_factory) -> Path:
    """SMALL_GRID swept once on a local pool of two workers, shared by the
    tests that only read it."""
    from spmsim.sweep import local_executor, sweep

    out = tmp_path_factory.mktemp("small-sweep")
    with local_executor(2) as ex:
        s = sweep(SMALL_GRID, out, executor=ex, progress=False)
    assert s.failed == 0 and s.points == 8, s
    return out


@pytest.fixture(scope="session")
def param_sweep_dir(tmp_path_factory) -> Path:
    """Schemes x workloads x a config key x seeds, with one failing
    workload: the grid a report chooses line plots for."""
    from spmsim.sweep import sweep

    out = tmp_path_factory.mktemp("param-sweep")
    grid = {
        "scheme": ["bbb", "cobcm", "cm"],
        "workload": ["array-swap", "random-writes", "no-such-workload"],
        "persistence.point.entries": [8, 32],
        "instructions": TINY,
        "seed": [1, 2],
    }
    s = sweep(grid, out, progress=False, workers=2)
    assert s.points == 36 and s.failed == 12, s
    return out


@pytest.fixture(scope="session")
def reproduce_dir(tmp_path_factory) -> Path:
    """A `spmsim reproduce secpb` directory from tiny runs on the built-in
    stand-ins (about a second)."""
    out = tmp_path_factory.mktemp("reproduce") / "secpb"
    p = rust_cli(["reproduce", "secpb", "--builtin", "--instructions", "20000", "--out", str(out)])
    assert p.returncode == 0, p.stderr[-2000:]
    assert (out / "results.json").is_file() and (out / "report.md").is_file()
    json.loads((out / "results.json").read_text())
    return out


@pytest.fixture(scope="session")
def secon_dir(tmp_path_factory) -> Path:
    """A `spmsim reproduce secon --quick` directory from tiny runs (a few
    seconds)."""
    out = tmp_path_factory.mktemp("reproduce") / "secon"
    p = rust_cli(["reproduce", "secon", "--quick", "--instructions", "20000", "--out", str(out)])
    assert p.returncode == 0, p.stderr[-2000:]
    assert (out / "results.json").is_file() and (out / "report.md").is_file()
    return out


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("headless Chromium is needed for the screenshot tests and was not found: "
                "install Debian's package with `apt-get install -y chromium`")


def _stop_group(proc: subprocess.Popen) -> None:
    """End a process started in a session of its own, with its children
    (a Dask worker's nanny starts the worker process)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:
            pass


@pytest.fixture(scope="session")
def dask_scheduler(tmp_path_factory):
    """A Dask cluster as a user runs one: `dask scheduler` on a free port of
    this machine and two `dask worker` processes of one thread each, each
    a process of its own that imports the same spmsim. Yields the
    scheduler's address and the process ids of the two worker processes
    (those that run the tasks); stopped after the session."""
    pytest.importorskip("distributed", reason="pip install 'dask[distributed]' (the test extra)")
    from distributed import Client

    d = tmp_path_factory.mktemp("dask-cluster")
    scheduler_file = d / "scheduler.json"
    procs: list[subprocess.Popen] = []

    def start(module: str, args: list[str], log: str) -> None:
        with open(d / log, "w", encoding="utf-8") as out:
            procs.append(subprocess.Popen([sys.executable, "-m", module, *args], env=package_path_env(), cwd=d,
                                          stdout=out, stderr=subprocess.STDOUT, start_new_session=True))

    try:
        start("distributed.cli.dask_scheduler", ["--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                                 "--scheduler-file", str(scheduler_file)], "scheduler.log")
        address = None
        deadline = time.monotonic() + 60
        while address is None and time.monotonic() < deadline and procs[0].poll() is None:
            try:
                address = json.loads(scheduler_file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        assert address, f"the scheduler did not start: {(d / 'scheduler.log').read_text()[-2000:]}"
        for i in range(2):
            start("distributed.cli.dask_worker", [address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
                                                  "--host", "127.0.0.1", "--local-directory", str(d / f"worker-{i}")],
                  f"worker-{i}.log")
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=120)
            worker_pids = set(client.run(os.getpid).values())
        assert len(worker_pids) == 2, worker_pids
        yield address, worker_pids
    finally:
        for proc in reversed(procs):
            _stop_group(proc)
