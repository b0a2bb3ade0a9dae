"""The exploration of compositions as a sweep (`spmsim explore`): shards
on a local Dask cluster and on the process pool give the same merged
exploration, and a killed exploration resumes with its finished shards
kept."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import package_path_env

from spmsim.explore import explore

#: Two presets, one workload, a short run and compare --quick's operations
#: before each recovery and attack run: two shards of about twenty seconds.
TINY = {"schemes": ["sp", "secure-wt"], "workloads": "btree", "instructions": 20000,
        "fronts": "persist-buffer:cobcm", "ops": 2000}


def merged(out: Path) -> dict:
    e = json.loads((out / "explore.json").read_text())
    return {"compositions": e["compositions"], "runs": e["runs"], "front": e["pareto_battery"],
            "recovery": e["front_recovery_1tib"]}


@pytest.fixture(scope="module")
def on_dask(tmp_path_factory) -> tuple[Path, dict]:
    pytest.importorskip("distributed", reason="pip install 'dask[distributed]' (the test extra)")
    out = tmp_path_factory.mktemp("explore-dask")
    s = explore(out, TINY["schemes"], workloads=TINY["workloads"], instructions=TINY["instructions"],
                fronts=TINY["fronts"], ops=TINY["ops"], dask_workers=2, progress=False)
    return out, s


def test_an_exploration_on_dask_merges_its_shards(on_dask):
    out, s = on_dask
    assert (s["shards"], s["ran"], s["failed"], s["executor"]) == (2, 2, 0, "dask:2")
    assert set(s["shard_seconds"]) == {"sp", "secure-wt"} and all(t > 0 for t in s["shard_seconds"].values())
    e = json.loads((out / "explore.json").read_text())
    names = [c["name"] for c in e["compositions"]]
    # Each preset and its metadata rules behind COBCM's buffer, 3 models x 2 trees.
    assert len(names) == 24 and "cobcm+secure-wt+strict+bmt" in names and "sp+epoch+sit" in names
    # sp's rules behind COBCM's buffer are SecPB's COBCM: the merge keeps
    # each machine once, however many shards met it.
    digests = [c["machine"] for c in e["compositions"] if c["outcome"]["status"] in ("safe", "unsafe")]
    assert len(digests) == len(set(digests)) > 0
    assert e["pareto_battery"] and set(e["front_recovery_1tib"]) == set(e["pareto_battery"])
    assert "explore" in (out / "explore.md").read_text()
    timing = json.loads((out / "timing.json").read_text())
    assert timing[-1]["executor"] == "dask:2" and timing[-1]["wall_seconds"] >= max(s["shard_seconds"].values())


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def test_a_killed_exploration_resumes_and_matches_an_uninterrupted_one(on_dask, tmp_path):
    ref, _ = on_dask
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "spmsim", "explore", "--out", str(out), "--schemes", ",".join(TINY["schemes"]),
           "--workloads", TINY["workloads"], "--instructions", str(TINY["instructions"]), "--fronts", TINY["fronts"],
           "--ops", str(TINY["ops"]), "--workers", "1", "--no-progress"]
    proc = subprocess.Popen(cmd, env=package_path_env(), start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if len(list((out / "points").glob("*.json"))) >= 1 if (out / "points").is_dir() else False:
                break
            time.sleep(0.05)
        assert proc.poll() is None, f"the exploration ended before it could be killed: {proc.stderr.read()[-2000:]}"
        os.killpg(proc.pid, signal.SIGKILL)  # the driver, its worker and the shard running
        proc.wait()
    finally:
        if _alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.stderr.close()
    assert not (out / "explore.json").exists(), "killed before the merge"
    s = explore(out, TINY["schemes"], workloads=TINY["workloads"], instructions=TINY["instructions"],
                fronts=TINY["fronts"], ops=TINY["ops"], workers=2, progress=False)
    assert (s["skipped"], s["ran"], s["failed"]) == (1, 1, 0), s
    assert merged(out) == merged(ref), "the resumed exploration differs from the uninterrupted one"


def test_a_bad_preset_fails_its_shard_with_the_reason(tmp_path):
    s = explore(tmp_path, ["no-such-preset"], workloads="btree", instructions=1000, fronts="none", workers=1,
                progress=False)
    assert s["failed"] == 1
    rec = json.loads(next((tmp_path / "points").glob("*.json")).read_text())
    assert rec["status"] == "error" and "no-such-preset" in rec["error"]
