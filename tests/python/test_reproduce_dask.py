"""`spmsim reproduce PAPER --dask N|ADDRESS`: a tiny reproduction's points
on a local Dask cluster, on a running scheduler, and killed and resumed,
each giving the in-process run's files byte for byte."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, package_path_env

pytest.importorskip("distributed", reason="pip install 'dask[distributed]' (the test extra)")
try:
    import spmsim.reproduce_dask  # noqa: F401
except ImportError:
    pytest.skip("the spmsim package imported predates `reproduce --dask`: pip install .", allow_module_level=True)

BINARY = REPO / "target" / "release" / "spmsim"
if not BINARY.exists():
    pytest.skip("needs the binary of this tree: cargo build --release -p spmsim-cli", allow_module_level=True)

#: Secon's quick grid at 20 k instructions per run: 186 points of a fraction of a second.
ARGS = ["reproduce", "secon", "--quick", "--instructions", "20000"]
FILES = ("results.json", "report.md", "runs.csv")


def _env() -> dict:
    env = package_path_env()
    env["SPMSIM_PYTHON"] = sys.executable
    return env


def _spmsim(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(BINARY), *args], env=_env(), capture_output=True, text=True, timeout=900, **kw)


def _files(out: Path) -> dict[str, bytes]:
    return {f: (out / f).read_bytes() for f in FILES}


@pytest.fixture(scope="module")
def in_process(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("in-process") / "secon"
    r = _spmsim([*ARGS, "--out", str(out)])
    assert r.returncode == 0, r.stderr[-2000:]
    return out


def test_on_a_local_dask_cluster_the_files_are_the_in_process_runs(in_process, tmp_path):
    out = tmp_path / "secon"
    r = _spmsim([*ARGS, "--out", str(out), "--dask", "2"])
    assert r.returncode == 0, r.stderr[-3000:]
    points = len(list((out / "points").glob("*.json")))
    assert points == len(list((in_process / "points").glob("*.json"))) > 100
    assert f"reproduce secon on dask:2: 0 of {points} points already done" in r.stderr
    assert "ETA" in r.stderr, "the points' progress has an ETA"
    # The last run found every record and ran none.
    assert f"reproduce secon: {points} of {points} runs already done" in r.stderr
    assert _files(out) == _files(in_process)


def test_on_a_running_scheduler_the_files_are_the_in_process_runs(dask_scheduler, in_process, tmp_path):
    address, _ = dask_scheduler
    out = tmp_path / "secon"
    r = _spmsim([*ARGS, "--out", str(out), f"--dask={address}"])
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"reproduce secon on dask:{address}:" in r.stderr
    assert _files(out) == _files(in_process)


def test_a_killed_reproduction_on_dask_resumes_and_matches(in_process, tmp_path):
    out = tmp_path / "secon"
    proc = subprocess.Popen([str(BINARY), *ARGS, "--out", str(out), "--dask", "2"], env=_env(),
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / "points").is_dir() and len(list((out / "points").glob("*.json"))) >= 20:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the reproduction ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert not (out / "results.json").exists(), "killed before the report"
    time.sleep(1.0)  # a point process of the killed cluster may still be renaming its record
    kept = len(list((out / "points").glob("*.json")))
    r = _spmsim([*ARGS, "--out", str(out), "--dask", "2"])
    assert r.returncode == 0, r.stderr[-3000:]
    line = next(x for x in r.stderr.splitlines() if "points already done" in x)
    done = int(line.split(": ")[1].split(" of ")[0])
    assert 20 <= done <= kept, line
    assert _files(out) == _files(in_process)


def test_a_bad_dask_value_is_refused_naming_the_flag(tmp_path):
    r = _spmsim([*ARGS, "--out", str(tmp_path / "x"), "--dask", "0"])
    assert r.returncode == 2 and "--dask" in r.stderr and "at least 1" in r.stderr, r.stderr
    assert not (tmp_path / "x").exists()
