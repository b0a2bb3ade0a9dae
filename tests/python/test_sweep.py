"""Sweeps: grid expansion, point files, executors (local pool and Dask),
killed sweeps, failed points, TOML specs and load()."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from conftest import SMALL_GRID, TINY, package_path_env

from spmsim import results as results_mod
from spmsim import sweep_cli
from spmsim.sweep import GridError, expand, point_id, read_point, sweep


def point_files(out: Path) -> list[Path]:
    return sorted((out / "points").glob("*.json"))


def stats_by_id(out: Path) -> dict:
    recs = {}
    for f in point_files(out):
        rec = json.loads(f.read_text())
        assert f.name == rec["id"] + ".json"
        recs[rec["id"]] = (rec["params"], rec.get("stats"), rec["status"])
    return recs


# --------------------------------------------------------------------------
# Grid expansion


def test_expand_is_the_cross_product_in_grid_order_last_key_fastest():
    pts = expand({"scheme": ["a", "b"], "workload": "w", "seed": [1, 2, 3]})
    assert [(p["params"]["scheme"], p["params"]["seed"]) for p in pts] == [
        ("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("b", 3)]
    assert all(p["params"]["workload"] == "w" for p in pts)  # a scalar is a one-value list
    assert expand({"scheme": ["a", "b"], "workload": "w", "seed": [1, 2, 3]}) == pts  # deterministic


def test_point_id_is_stable_and_independent_of_key_order():
    a = {"scheme": "cobcm", "workload": "array-swap", "seed": 1, "persistence.point.entries": 16}
    b = dict(reversed(list(a.items())))
    assert point_id(a) == point_id(b)
    assert len(point_id(a)) == 16 and int(point_id(a), 16) >= 0
    # Pinned: a changed hash would make every rerun redo finished sweeps.
    assert point_id({"scheme": "bbb", "workload": "array-swap"}) == point_id({"workload": "array-swap", "scheme": "bbb"})
    assert point_id({"scheme": "bbb", "workload": "w", "seed": 1}) != point_id({"scheme": "bbb", "workload": "w", "seed": 2})
    assert point_id({"scheme": "s", "workload": "w", "k": 32}) != point_id({"scheme": "s", "workload": "w", "k": 32.0})


def test_each_point_runs_once_even_if_the_grid_repeats_a_value():
    pts = expand({"scheme": ["bbb", "bbb", "cm"], "workload": "w", "seed": [1, 1]})
    assert [p["params"]["scheme"] for p in pts] == ["bbb", "cm"]
    assert len({p["id"] for p in pts}) == len(pts)


def test_nested_tables_flatten_to_key_paths():
    pts = expand({"scheme": "cm", "workload": "w", "persistence": {"point": {"entries": [8, 16]}}})
    assert [p["params"]["persistence.point.entries"] for p in pts] == [8, 16]
    assert pts[0]["id"] == expand({"scheme": "cm", "workload": "w", "persistence.point.entries": 8})[0]["id"]


@pytest.mark.parametrize("grid, words", [
    ({"workload": "w"}, ["scheme", "missing"]),
    ({"scheme": "s"}, ["workload", "missing"]),
    ({"scheme": [], "workload": "w"}, ["scheme", "empty"]),
    ({"scheme": "s", "workload": "w", "seed": [-1]}, ["seed"]),
    ({"scheme": "s", "workload": "w", "instructions": 0}, ["instructions"]),
    ({"scheme": "s", "workload": "w", "tree.arity": [None]}, ["tree.arity", "None"]),
    ({"scheme": "s", "workload": "w", "tree.arity": [[8]]}, ["tree.arity"]),
    ({"scheme": 3, "workload": "w"}, ["scheme"]),
    ({"scheme": "s", "workload": "w", "a..b": 1}, ["a..b"]),
    ({"scheme": "s", "workload": "w", "k": float("nan")}, ["k", "NaN"]),
])
def test_bad_grids_name_the_key(grid, words):
    with pytest.raises(GridError) as e:
        expand(grid)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


# --------------------------------------------------------------------------
# Running


def test_small_sweep_writes_one_complete_file_per_point(small_sweep_dir):
    pts = expand(SMALL_GRID)
    files = point_files(small_sweep_dir)
    assert sorted(f.stem for f in files) == sorted(p["id"] for p in pts)
    assert not list((small_sweep_dir / "points").glob(".*")), "temporary files left behind"
    for p in pts:
        rec = read_point(str(small_sweep_dir / "points" / f"{p['id']}.json"))
        assert rec["params"] == p["params"] and rec["status"] == "ok"
        roi = rec["stats"]["roi"]
        assert TINY <= roi["core"]["instructions"] < TINY + 100 and roi["core"]["cycles"] > 0 and set(roi["memory"]["writes"]) >= {"data", "counter", "mac", "tree"}
        assert rec["stats"]["scheme"] == p["params"]["scheme"] and rec["stats"]["seed"] == p["params"]["seed"]
        assert rec["meta"]["pid"] != os.getpid(), "points must be run (and written) by the workers"


def test_rerun_skips_finished_points(small_sweep_dir):
    before = {f.name: f.stat().st_mtime_ns for f in point_files(small_sweep_dir)}
    s = sweep(SMALL_GRID, small_sweep_dir, progress=False, workers=2)
    assert (s.points, s.skipped, s.ran, s.failed) == (8, 8, 0, 0)
    assert {f.name: f.stat().st_mtime_ns for f in point_files(small_sweep_dir)} == before


def assert_same_points_written_by_workers(local_dir, dask_dir, worker_pids):
    """The 8 points of a Dask sweep in `dask_dir` equal the local pool's in
    `local_dir`, and every point file was written by one of `worker_pids`."""
    local, dask = stats_by_id(local_dir), stats_by_id(dask_dir)
    assert set(local) == set(dask) and len(dask) == 8
    for pid, (params, stats, status) in local.items():
        assert dask[pid] == (params, stats, status), f"point {params} differs between the local pool and Dask"
    writers = {json.loads(f.read_text())["meta"]["pid"] for f in point_files(dask_dir)}
    assert writers <= worker_pids, "the Dask workers write the point files themselves"


def test_dask_local_cluster_gives_identical_results(small_sweep_dir, tmp_path):
    distributed = pytest.importorskip("distributed", reason="pip install 'dask[distributed]' (the test extra)")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        worker_pids = set(client.run(os.getpid).values())
        s = sweep(SMALL_GRID, tmp_path, executor=client.get_executor(), progress=False)
    assert (s.points, s.ran, s.failed) == (8, 8, 0)
    assert_same_points_written_by_workers(small_sweep_dir, tmp_path, worker_pids)


def test_a_failed_point_records_its_error_and_the_others_finish(tmp_path):
    grid = {"scheme": ["bbb", "cobcm"], "workload": ["array-swap", "no-such-workload"], "instructions": TINY}
    s = sweep(grid, tmp_path, progress=False, workers=2)
    assert (s.points, s.failed) == (4, 2)
    recs = [read_point(str(f)) for f in point_files(tmp_path)]
    bad = [r for r in recs if r["status"] == "error"]
    assert len(bad) == 2 and all("no-such-workload" in r["error"] and "stats" not in r for r in bad)
    assert all(r["params"]["workload"] == "no-such-workload" for r in bad)
    assert sum(r["status"] == "ok" for r in recs) == 2
    # Rerun policy: failed points are run again by default ...
    s2 = sweep(grid, tmp_path, progress=False, workers=2)
    assert (s2.skipped, s2.ran, s2.failed) == (2, 2, 2)
    # ... and kept as they are with retry_failed=False.
    s3 = sweep(grid, tmp_path, progress=False, workers=2, retry_failed=False)
    assert (s3.skipped, s3.ran, s3.failed) == (4, 0, 2)


def test_a_bad_config_key_fails_only_its_points(tmp_path):
    grid = {"scheme": "cobcm", "workload": "array-swap", "instructions": TINY,
            "persistence.point.entries": [16, 32], "persistence.point.no_such_key": [1]}
    s = sweep(grid, tmp_path, progress=False, workers=1)
    assert s.failed == 2
    assert all("no_such_key" in read_point(str(f))["error"] for f in point_files(tmp_path))


def test_config_overrides_reach_the_simulator(tmp_path):
    grid = {"scheme": "cm", "workload": "array-swap", "instructions": TINY, "persistence.point.entries": [8, 128]}
    sweep(grid, tmp_path, progress=False, workers=2)
    df = results_mod.load(tmp_path)
    by = df.set_index("persistence.point.entries")
    assert by.loc[8, "roi.tree.root_updates"] != by.loc[128, "roi.tree.root_updates"]


DRIVER = textwrap.dedent("""
    import json, sys
    from spmsim.sweep import sweep

    if __name__ == "__main__":
        sweep(json.loads(sys.argv[1]), sys.argv[2], progress=False, workers=2)
""")


def _pgroup_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigkill_half_way_then_rerun_gives_every_point_once_identical_to_an_uninterrupted_run(tmp_path):
    grid = {"scheme": ["bbb", "cobcm"], "workload": ["array-swap", "random-writes"], "instructions": 6_000_000,
            "seed": [1, 2, 3, 4, 5]}
    total = len(expand(grid))
    killed, ref = tmp_path / "killed", tmp_path / "reference"
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    proc = subprocess.Popen([sys.executable, str(driver), json.dumps(grid), str(killed)], env=package_path_env(),
                            start_new_session=True, stderr=subprocess.PIPE, text=True)
    pgid = proc.pid
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            n = len(list((killed / "points").glob("*.json"))) if (killed / "points").is_dir() else 0
            if n >= total // 4 or proc.poll() is not None:
                break
            time.sleep(0.01)
        assert proc.poll() is None, f"the sweep ended before it could be killed: {proc.stderr.read()[-2000:]}"
        os.kill(proc.pid, signal.SIGKILL)  # the driver only: its workers must notice and stop
        proc.wait()
        at_kill = len(point_files(killed))
        assert total // 4 <= at_kill < total, f"not killed half-way: {at_kill} of {total} points done"
        # Every file present is a complete point (the rename is atomic).
        for f in point_files(killed):
            assert read_point(str(f))["status"] == "ok"
        # The orphaned pool workers end by themselves within a few seconds.
        t0 = time.monotonic()
        while _pgroup_alive(pgid) and time.monotonic() - t0 < 15:
            time.sleep(0.1)
        assert not _pgroup_alive(pgid), "worker processes outlived the killed driver"
    finally:
        if _pgroup_alive(pgid):
            os.killpg(pgid, signal.SIGKILL)
        proc.stderr.close()
    s = sweep(grid, killed, progress=False, workers=2)
    assert s.skipped >= at_kill and s.skipped + s.ran == total and s.failed == 0
    sweep(grid, ref, progress=False, workers=2)
    got, want = stats_by_id(killed), stats_by_id(ref)
    assert len(point_files(killed)) == total and set(got) == {p["id"] for p in expand(grid)}
    assert got == want
    assert not list((killed / "points").glob(".*")), "stale temporary files were not cleaned up"


def test_a_worker_killed_mid_sweep_is_replaced_and_every_point_finishes(tmp_path):
    grid = {"scheme": ["bbb", "cobcm"], "workload": ["array-swap", "random-writes"], "instructions": 4_000_000,
            "seed": [1, 2, 3]}
    killed = []

    def kill_one_worker() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if len(list((tmp_path / "points").glob("*.json"))) >= 2:
                kids = multiprocessing.active_children()
                if kids:
                    os.kill(kids[0].pid, signal.SIGKILL)
                    killed.append(kids[0].pid)
                    return
            time.sleep(0.01)

    t = threading.Thread(target=kill_one_worker)
    t.start()
    try:
        s = sweep(grid, tmp_path, progress=False, workers=2)
    finally:
        t.join()
    assert killed, "no worker was killed: the sweep ended first"
    assert (s.points, s.failed) == (12, 0), s
    assert len(point_files(tmp_path)) == 12 and all(r[2] == "ok" for r in stats_by_id(tmp_path).values())


def test_progress_without_tqdm_is_a_plain_stderr_line(small_sweep_dir, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails as if tqdm were absent
    sweep(SMALL_GRID, small_sweep_dir, progress=True, workers=1)
    err = capsys.readouterr().err
    assert "spmsim sweep: 8/8 done (8 skipped), running 0, queued 0, failed 0" in err


def test_progress_with_tqdm_shows_running_and_failed(tmp_path, capsys, monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # tqdm draws on terminals only
    sweep({"scheme": "bbb", "workload": ["array-swap", "nope"], "instructions": TINY}, tmp_path, workers=1)
    err = capsys.readouterr().err
    assert "2/2" in err and "running" in err and "failed 1" in err and "|" in err  # a bar, not the plain line


def test_progress_in_a_log_is_plain_lines(tmp_path, capsys):
    sweep({"scheme": "bbb", "workload": ["array-swap", "nope"], "instructions": TINY}, tmp_path, workers=1)
    err = capsys.readouterr().err
    assert "\r" not in err and err.rstrip().endswith("spmsim sweep: 2/2 done (0 skipped), running 0, queued 0, failed 1")


# --------------------------------------------------------------------------
# TOML specs


def write(tmp_path: Path, text: str, name: str = "spec.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


@pytest.mark.parametrize("text, words", [
    ('out_dir = "x"\n', ["missing table `[grid]`"]),
    ('out_dir = "x"\n[grid]\nworkload = "w"\n', ["[grid]", "`scheme`", "missing"]),
    ('out_dir = "x"\n[grid]\nscheme = []\nworkload = "w"\n', ["[grid]", "`scheme`", "empty"]),
    ('out_dir = "x"\nworker = 2\n[grid]\nscheme = "s"\nworkload = "w"\n', ["unknown key `worker`"]),
    ('out_dir = "x"\nworkers = "two"\n[grid]\nscheme = "s"\nworkload = "w"\n', ["`workers`", "integer"]),
    ('out_dir = "x"\nworkers = 0\n[grid]\nscheme = "s"\nworkload = "w"\n', ["`workers`", "at least 1"]),
    ('out_dir = 3\n[grid]\nscheme = "s"\nworkload = "w"\n', ["`out_dir`", "string"]),
    ('grid = 3\n', ["`grid`", "table"]),
    ('out_dir = "x"\n[grid]\nscheme = "s"\nworkload = "w"\nseed = [1, "2"]\n', ["`seed`"]),
    ('out_dir = "x"\n[grid]\nscheme = "s"\nworkload = "w"\n"tree.arity" = [[2]]\n', ["`tree.arity`"]),
    ('out_dir = "x"\n[grid\nscheme = "s"\n', ["not valid TOML", "line 2"]),
    ('out_dir = "x"\ndask = "tcp://h"\n[grid]\nscheme = "s"\nworkload = "w"\n', ["key `dask`", "has no port"]),
    ('out_dir = "x"\ndask = "http://h:1"\n[grid]\nscheme = "s"\nworkload = "w"\n', ["key `dask`", "not http://"]),
    ('out_dir = "x"\ndask = 0\n[grid]\nscheme = "s"\nworkload = "w"\n', ["key `dask`", "at least 1"]),
    ('out_dir = "x"\ndask = true\n[grid]\nscheme = "s"\nworkload = "w"\n', ["`dask`", "an integer or a string"]),
    ('out_dir = "x"\nworkers = 2\ndask = 2\n[grid]\nscheme = "s"\nworkload = "w"\n', ["`workers` and `dask`"]),
])
def test_bad_specs_fail_with_file_and_key(tmp_path, capsys, text, words):
    spec = write(tmp_path, text)
    assert sweep_cli.main([str(spec)]) == 2
    err = capsys.readouterr().err
    assert str(spec) in err, err
    for w in words:
        assert w in err, (w, err)


def test_missing_spec_and_missing_out_dir(tmp_path, capsys):
    assert sweep_cli.main([str(tmp_path / "nope.toml")]) == 2
    assert "nope.toml: no such file" in capsys.readouterr().err
    spec = write(tmp_path, '[grid]\nscheme = "bbb"\nworkload = "array-swap"\n')
    assert sweep_cli.main([str(spec)]) == 2
    assert "no `out_dir`" in capsys.readouterr().err


def test_sweep_cli_runs_a_spec_and_skips_on_rerun(tmp_path, capsys):
    out = tmp_path / "out"
    spec = write(tmp_path, f"""
        out_dir = "{tmp_path / 'unused'}"
        [grid]
        scheme = ["bbb", "cobcm"]
        workload = "array-swap"
        instructions = {TINY}
        [grid.persistence.point]
        entries = [16, 32]
    """)
    assert sweep_cli.main([str(spec), "--out", str(out), "--workers", "2", "--no-progress"]) == 0
    assert "4 points: 0 already done, 4 run, 0 failed, on pool:2" in capsys.readouterr().out
    assert len(point_files(out)) == 4 and not (tmp_path / "unused").exists()
    assert sweep_cli.main([str(spec), "--out", str(out), "--no-progress"]) == 0
    assert "4 points: 4 already done, 0 run, 0 failed" in capsys.readouterr().out
    df = results_mod.load(out)
    assert list(df["persistence.point.entries"]) == [16, 32, 16, 32]


def test_sweep_cli_exit_code_1_when_a_point_fails(tmp_path, capsys):
    spec = write(tmp_path, f'out_dir = "{tmp_path / "o"}"\n[grid]\nscheme = "bbb"\nworkload = ["array-swap", "bogus"]\n'
                           f'instructions = {TINY}\n')
    assert sweep_cli.main([str(spec), "--no-progress"]) == 1
    assert "1 failed" in capsys.readouterr().out


def small_grid_spec(tmp_path: Path, out: Path, extra: str = "") -> Path:
    """SMALL_GRID as a spec writing to `out`, with `extra` keys."""
    g = SMALL_GRID
    return write(tmp_path, f"""
        out_dir = "{out}"
        {extra}
        [grid]
        scheme = {json.dumps(g["scheme"])}
        workload = {json.dumps(g["workload"])}
        instructions = {g["instructions"]}
        seed = {json.dumps(g["seed"])}
    """, name=f"spec-{out.name}.toml")


def spmsim_cli(args: list[str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spmsim", *args], env=package_path_env(), capture_output=True,
                          text=True, timeout=timeout)


def test_sweep_cli_on_a_running_dask_scheduler_gives_identical_results(small_sweep_dir, dask_scheduler, tmp_path):
    from distributed import Client

    address, worker_pids = dask_scheduler
    out = tmp_path / "out"
    spec = small_grid_spec(tmp_path, out)
    p = spmsim_cli(["sweep", str(spec), "--dask", address, "--no-progress"])
    assert p.returncode == 0, p.stderr[-3000:]
    assert f"8 points: 0 already done, 8 run, 0 failed, on dask:{address};" in p.stdout, p.stdout
    assert_same_points_written_by_workers(small_sweep_dir, out, worker_pids)
    # The spec's key does the same; the rerun skips every point.
    spec = small_grid_spec(tmp_path, out, extra=f'dask = "{address}"')
    p = spmsim_cli(["sweep", str(spec), "--no-progress"])
    assert p.returncode == 0, p.stderr[-3000:]
    assert f"8 points: 8 already done, 0 run, 0 failed, on dask:{address};" in p.stdout, p.stdout
    # The cluster is the user's: the sweeps leave it running.
    with Client(address, timeout=10) as client:
        assert len(client.scheduler_info()["workers"]) == 2


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sweep_cli_refuses_an_address_nothing_listens_on_at_once(tmp_path):
    pytest.importorskip("distributed", reason="pip install 'dask[distributed]' (the test extra)")
    out = tmp_path / "out"
    port = _free_port()
    t0 = time.monotonic()
    p = spmsim_cli(["sweep", str(small_grid_spec(tmp_path, out)), "--dask", f"127.0.0.1:{port}", "--no-progress"],
                   timeout=60)
    took = time.monotonic() - t0
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert f"spmsim sweep: error: --dask: cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: " in p.stderr
    assert took < 8, f"refused after {took:.1f} s"
    assert not out.exists(), "nothing is written before the scheduler answers"


def test_a_spec_address_nothing_listens_on_is_refused_naming_the_spec(tmp_path, capsys):
    pytest.importorskip("distributed", reason="pip install 'dask[distributed]' (the test extra)")
    port = _free_port()
    spec = small_grid_spec(tmp_path, tmp_path / "out", extra=f'dask = "tcp://127.0.0.1:{port}"')
    assert sweep_cli.main([str(spec), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"{spec}: key `dask`: cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in err, err
    # --workers on the command line chooses the executor over the spec's dask.
    assert sweep_cli.main([str(spec), "--workers", "2", "--no-progress"]) == 0
    assert "8 points: 0 already done, 8 run, 0 failed, on pool:2" in capsys.readouterr().out


def test_an_address_that_does_not_answer_as_a_scheduler_times_out(tmp_path):
    import socket

    pytest.importorskip("distributed", reason="pip install 'dask[distributed]' (the test extra)")
    from spmsim.executors import DaskUnreachable, dask_executor, parse_dask

    # A port that accepts connections and never answers (another service).
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        t0 = time.monotonic()
        with pytest.raises(DaskUnreachable) as e:
            with dask_executor(parse_dask(address), timeout=1.5):
                pytest.fail("connected to a port that never answered")
        took = time.monotonic() - t0
    assert f"{address} accepted a connection but did not answer as a Dask scheduler within 1.5 s" in str(e.value)
    assert took < 6, f"refused after {took:.1f} s"


@pytest.mark.parametrize("value, says", [
    ("0", "0 workers: a count of local workers is at least 1"),
    ("tcp://127.0.0.1", "`tcp://127.0.0.1` has no port"),
    ("http://127.0.0.1:8786",
     "`http://127.0.0.1:8786`: a scheduler's address starts with tcp:// or tls://, not http://"),
    ("127.0.0.1:99999", "`127.0.0.1:99999`: the port `99999` is not a number from 1 to 65535"),
    ("two workers", "`two workers` is neither a count of local workers"),
])
def test_a_malformed_dask_value_is_refused_naming_the_flag(tmp_path, capsys, value, says):
    spec = small_grid_spec(tmp_path, tmp_path / "out")
    with pytest.raises(SystemExit) as exit_:
        sweep_cli.main([str(spec), "--dask", value])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"argument --dask: {says}" in err, err
    assert not (tmp_path / "out").exists()


def test_dask_values_parse_to_a_count_or_an_address():
    from spmsim.executors import parse_dask

    assert parse_dask("3").label == "dask:3" and parse_dask(3).workers == 3
    assert parse_dask("tcp://10.0.0.5:8786").label == "dask:tcp://10.0.0.5:8786"
    assert parse_dask("scheduler.example:8786").address == "tcp://scheduler.example:8786"
    assert parse_dask("TLS://[::1]:9000").address == "tls://[::1]:9000"


def test_example_spec_is_valid():
    spec = Path(__file__).resolve().parents[2] / "examples" / "sweep.toml"
    s = sweep_cli.load_spec(str(spec))
    assert s["out_dir"] and len(expand(s["grid"])) >= 4


# --------------------------------------------------------------------------
# load()


def test_load_gives_one_row_per_point_with_params_error_and_flat_stats(small_sweep_dir):
    df = results_mod.load(small_sweep_dir)
    pts = expand(SMALL_GRID)
    assert len(df) == len(pts) and list(df["id"]) == [p["id"] for p in pts]  # grid order
    assert list(df.columns[:6]) == ["id", "scheme", "workload", "instructions", "seed", "error"]
    assert df.attrs["params"] == ["scheme", "workload", "instructions", "seed"]
    assert df["error"].isna().all()
    for c in ("roi.core.ipc", "roi.core.cycles", "roi.memory.writes.data", "roi.memory.writes.counter", "roi.memory.writes.mac",
              "roi.memory.writes.tree", "roi.tree.root_updates", "stats.scheme", "stats.seed"):
        assert c in df.columns, c
    assert (df["stats.scheme"] == df["scheme"]).all() and (df["stats.seed"] == df["seed"]).all()
    rec = read_point(str(small_sweep_dir / "points" / f"{pts[3]['id']}.json"))
    assert df.loc[3, "roi.core.ipc"] == rec["stats"]["roi"]["core"]["ipc"]
    assert results_mod.varied(df) == ["scheme", "workload", "seed"]


def test_load_marks_failed_points_in_the_error_column(param_sweep_dir):
    df = results_mod.load(param_sweep_dir)
    assert len(df) == 36
    bad = df[df["error"].notna()]
    assert len(bad) == 12 and set(bad["workload"]) == {"no-such-workload"}
    assert bad["roi.core.ipc"].isna().all() and df[df["error"].isna()]["roi.core.ipc"].notna().all()


def test_load_of_a_non_sweep_directory_fails(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a sweep directory"):
        results_mod.load(tmp_path)
