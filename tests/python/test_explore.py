"""The exploration of compositions as a sweep (`spmsim explore`): shards
on a local Dask cluster, on a running Dask cluster given by its
scheduler's address and on the process pool give the same merged
exploration, and a killed exploration resumes with its finished shards
kept."""

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
                fronts=TINY["fronts"], ops=TINY["ops"], dask=2, progress=False)
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


#: One preset, its own front end only, few operations: a shard of a few seconds.
SMALL = {"workloads": "btree", "instructions": 10000, "fronts": "none", "workers": 1, "progress": False}


def test_an_exploration_on_a_running_dask_scheduler_matches_the_pool(dask_scheduler, tmp_path):
    address, worker_pids = dask_scheduler
    out = tmp_path / "on-dask"
    p = subprocess.run([sys.executable, "-m", "spmsim", "explore", "--out", str(out), "--schemes", "wt",
                        "--workloads", SMALL["workloads"], "--instructions", str(SMALL["instructions"]),
                        "--fronts", SMALL["fronts"], "--ops", "100", "--dask", address, "--no-progress"],
                       env=package_path_env(), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert f"explore: 1 shards (0 already done, 1 run) on dask:{address} in " in p.stdout, p.stdout
    assert json.loads((out / "timing.json").read_text())[-1]["executor"] == f"dask:{address}"
    rec = json.loads(next((out / "points").glob("*.json")).read_text())
    assert rec["status"] == "ok" and rec["meta"]["pid"] in worker_pids, "a worker of the cluster ran the shard"
    ref = tmp_path / "on-pool"
    s = explore(ref, ["wt"], ops=100, **SMALL)
    assert (s["ran"], s["failed"], s["executor"]) == (1, 0, "pool:1"), s
    assert merged(out) == merged(ref), "the shard on the Dask cluster differs from the one on the pool"


def test_an_unreachable_or_malformed_dask_address_is_refused_naming_the_flag(tmp_path, capsys):
    import socket

    from spmsim.explore import main

    pytest.importorskip("distributed", reason="pip install 'dask[distributed]' (the test extra)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    assert main(["--out", str(tmp_path / "x"), "--schemes", "wt", "--dask", f"127.0.0.1:{port}", "--no-progress"]) == 2
    assert time.monotonic() - t0 < 20
    err = capsys.readouterr().err
    assert f"spmsim explore: error: --dask: cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: " in err, err
    assert not (tmp_path / "x" / "points").exists()
    with pytest.raises(SystemExit) as exit_:
        main(["--out", str(tmp_path / "y"), "--schemes", "wt", "--dask", "tcp://127.0.0.1"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "argument --dask: `tcp://127.0.0.1` has no port" in err, err


def test_a_shard_computed_with_other_parameters_is_computed_again(tmp_path, monkeypatch, capfd):
    # A copy of the presets folder, so that one of its files can be edited.
    from spmsim import _native

    configs = tmp_path / "configs"
    shutil.copytree(_native.presets_dir(), configs, ignore=shutil.ignore_patterns("suite"))
    monkeypatch.setenv("SPMSIM_CONFIGS", str(configs))
    out = tmp_path / "out"
    s = explore(out, ["wt"], ops=100, **SMALL)
    assert (s["skipped"], s["ran"], s["recomputed"]) == (0, 1, []), s
    # --ops 50 is another point; its run replaces the --ops 100 result in
    # the shard's folder, and says so.
    s = explore(out, ["wt"], ops=50, **SMALL)
    assert (s["skipped"], s["ran"]) == (0, 1), s
    assert s["recomputed"] == ["shard wt was computed with --ops 100, this run asks 50"], s
    capfd.readouterr()
    # Back to --ops 100: its point file is there, but the shard's folder
    # holds the --ops 50 result, so it is computed again, saying why.
    s = explore(out, ["wt"], ops=100, **SMALL)
    assert (s["skipped"], s["ran"]) == (0, 1), s
    assert s["recomputed"] == ["shard wt was computed with --ops 50, this run asks 100"], s
    assert "shard wt was computed with --ops 50, this run asks 100: recomputing" in capfd.readouterr().err
    e = json.loads((out / "explore.json").read_text())
    assert (e["crash_ops"], e["recovery_ops"], e["provenance"]["ops"]) == (100, 100, 100)
    # A preset edited (a comment added to another one: compare chooses
    # among all of them): computed again, naming the file.
    with open(configs / "sp.toml", "a", encoding="utf-8") as f:
        f.write("# edited\n")
    s = explore(out, ["wt"], ops=100, **SMALL)
    assert s["ran"] == 1 and len(s["recomputed"]) == 1, s
    assert s["recomputed"][0].startswith("shard wt was computed with the presets folder's sp.toml of digest "), s
    # Nothing differs now: done.
    s = explore(out, ["wt"], ops=100, **SMALL)
    assert (s["skipped"], s["ran"], s["recomputed"]) == (1, 0, []), s


def test_provenance_differences_name_the_flag_and_the_file():
    from spmsim.explore import provenance_differences

    was = {"spmsim": "0.1.0", "ops": 50, "fronts": [], "adr_batteries": False, "inputs": {"a.toml": "01", "b.toml": "02"}}
    now = {"spmsim": "0.1.0", "ops": 100, "fronts": ["cache-hierarchy"], "adr_batteries": True,
           "inputs": {"a.toml": "01", "c.toml": "03"}}
    assert provenance_differences(was, now) == [
        "--ops 50, this run asks 100",
        "--fronts (none), this run asks cache-hierarchy",
        "--batteries front, this run asks front,adr",
        "the presets folder's b.toml of digest 02, this run's absent",
        "the presets folder's c.toml absent, this run's of digest 03",
    ]
    assert provenance_differences(now, now) == []


def test_counts_out_of_range_are_refused_naming_the_flag(tmp_path, capsys):
    from spmsim.explore import main

    for args, says in ((["--ops", "0"], "argument --ops: 0 is not at least 1"),
                       (["--instructions", "-5"], "argument --instructions: -5 is not at least 1"),
                       (["--workers", "0"], "argument --workers: 0 is not at least 1")):
        with pytest.raises(SystemExit) as exit_:
            main(["--out", str(tmp_path / "x"), "--schemes", "wt", *args])
        assert exit_.value.code == 2 and says in capsys.readouterr().err, args
    # Beyond spmsim's bound: refused by spmsim before any shard runs.
    assert main(["--out", str(tmp_path / "y"), "--schemes", "wt", "--ops", "200000", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--ops" in err and "from 1 to 100000" in err, err
    assert not (tmp_path / "y" / "points").exists()
