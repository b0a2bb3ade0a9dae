"""spmsim.run and the command line from Python: the stats tree, pandas,
errors, determinism, parity with the CLI and the Rust API, the GIL and
Ctrl-C, the `spmsim` console script's dispatch.

Runs against the installed package (`pip install .`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

import pytest

import spmsim
from spmsim import cli

ROOT = Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "release" / "spmsim"
PARITY_DIR = BINARY.parent / "parity"
CASES = json.loads((Path(__file__).parent / "parity_cases.json").read_text())

SMALL = dict(scheme="cobcm", workload="random-writes", instructions=30_000)


def py(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, **kw)


# --------------------------------------------------------------------------
# The result


def test_run_returns_the_cli_stats_tree():
    r = spmsim.run(**SMALL, seed=3)
    s = r.stats
    assert (s["scheme"], s["workload"], s["seed"]) == ("cobcm", "random-writes", 3)
    roi = s["roi"]
    assert roi["core"]["cycles"] > 0 and roi["core"]["instructions"] >= 30_000
    assert roi["core"]["ipc"] == pytest.approx(roi["core"]["instructions"] / roi["core"]["cycles"])
    assert {"core", "caches", "persist_path", "metadata_caches", "tree", "crypto", "memory", "engine"} == roi.keys()
    assert "crash_at_end" in s and "baseline" not in s
    assert r.roi is s["roi"]
    assert json.loads(r.stats_json) == s
    # The resolved configuration, as a dict and as the TOML the CLI writes.
    assert r.config["name"] == "cobcm"
    assert "[memory]" in r.config_toml
    assert "cycles=" in repr(r)


def test_a_short_trace_names_the_default_count_only_when_none_was_given(tmp_path):
    trace = tmp_path / "short.trace"
    gen = py("-m", "spmsim", "trace", "generate", "--workload", "random-writes", "--instructions", "3000", "-o", str(trace))
    assert gen.returncode == 0, gen.stderr
    workload = f"trace:{trace}"
    defaulted = json.dumps(spmsim.run("cobcm", workload).stats)
    assert f"short of the default of {spmsim.DEFAULT_INSTRUCTIONS}" in defaulted, defaulted
    asked = json.dumps(spmsim.run("cobcm", workload, instructions=spmsim.DEFAULT_INSTRUCTIONS).stats)
    assert "requested" in asked and "short of the default" not in asked, asked


def test_baseline_adds_slowdown():
    r = spmsim.run(scheme="sp", workload="random-writes", instructions=30_000, baseline="bbb")
    b = r.stats["baseline"]
    assert b["scheme"] == "bbb"
    assert r.stats["slowdown"] == pytest.approx(r.roi["core"]["cycles"] / b["cycles"] - 1.0)


def test_to_pandas_is_one_row_with_dotted_columns():
    df = spmsim.run(**SMALL).to_pandas()
    assert len(df) == 1
    for col in ("scheme", "roi.core.cycles", "roi.core.ipc", "roi.memory.writes.data", "roi.caches.l1d.hit_rate",
                "crash_at_end.crypto.macs"):
        assert col in df.columns, col
    assert not any(isinstance(v, dict) for v in df.iloc[0])
    assert df.loc[0, "roi.core.cycles"] == spmsim.run(**SMALL).roi["core"]["cycles"]


def test_save_writes_what_the_cli_writes(tmp_path):
    r = spmsim.run(**SMALL)
    r.save(tmp_path)
    assert (tmp_path / "stats.json").read_text() == r.stats_json
    assert (tmp_path / "config.toml").read_text() == r.config_toml


# --------------------------------------------------------------------------
# Input


@pytest.mark.parametrize("kw, names", [
    (dict(scheme="no-such-scheme"), ["unknown preset `no-such-scheme`", "cobcm"]),
    (dict(overrides={"tree.arityy": 3}), ["arityy", "tree"]),
    (dict(overrides={"persistence.wpq_entries": "many"}), ["persistence", "wpq_entries"]),
    (dict(workload="no-such-workload"), ["unknown workload `no-such-workload`"]),
    (dict(instructions=0), ["instructions must be at least 1"]),
])
def test_bad_input_raises_value_error_naming_it(kw, names):
    with pytest.raises(ValueError) as e:
        spmsim.run(**{**SMALL, **kw})
    for n in names:
        assert n in str(e.value)


def test_value_error_carries_the_cli_message(tmp_path):
    with pytest.raises(ValueError) as e:
        spmsim.run(**{**SMALL, "overrides": ["tree.arityy=3"]})
    p = py("-m", "spmsim", "run", "--scheme", "cobcm", "--workload", "random-writes", "--set", "tree.arityy=3",
           "--out", str(tmp_path))
    assert p.returncode == 2
    assert p.stderr == f"error: {e.value}\n"


def test_bad_types_raise_type_error():
    with pytest.raises(TypeError):
        spmsim.run(**{**SMALL, "instructions": 1.5})
    with pytest.raises(TypeError):
        spmsim.run(**SMALL, overrides="tree.arity=8")
    with pytest.raises(ValueError):
        spmsim.run(**SMALL, seed=-1)


def test_dict_overrides_equal_cli_strings():
    as_dict = spmsim.run(**SMALL, overrides={"persistence.wpq_entries": 16, "nvm.write_model": "bank-serial"})
    as_cli = spmsim.run(**SMALL, overrides=["persistence.wpq_entries=16", 'nvm.write_model="bank-serial"'])
    assert as_dict.stats_json == as_cli.stats_json
    assert as_dict.config["persistence"]["wpq_entries"] == 16
    assert as_dict.stats_json != spmsim.run(**SMALL).stats_json


def test_toml_values():
    from spmsim._api import toml_value

    assert toml_value(True) == "true"
    assert toml_value(3) == "3"
    assert toml_value(2.5) == "2.5"
    assert toml_value(float("inf")) == "inf"
    assert toml_value('a"b\\c\n') == '"a\\"b\\\\c\\u000A"'
    assert toml_value([1, "x"]) == '[1, "x"]'
    assert toml_value({"type": "bmt", "arity": 8}) == '{ "type" = "bmt", "arity" = 8 }'
    with pytest.raises(TypeError):
        toml_value(object(), "k")


def test_schemes_and_config():
    names = spmsim.schemes()
    assert {"bbb", "cobcm", "secure-wt", "sp"} <= set(names) and names == sorted(names)
    c = spmsim.config("cobcm", {"persistence.wpq_entries": 48})
    assert c["name"] == "cobcm" and c["persistence"]["wpq_entries"] == 48
    assert spmsim.config_toml("cobcm") == spmsim.run(**SMALL).config_toml
    with pytest.raises(ValueError, match="unknown preset"):
        spmsim.config("nope")
    assert os.path.isdir(spmsim.presets_dir())


def test_a_seed_determines_the_run():
    a = spmsim.run(scheme="cm", workload="btree", instructions=60_000, seed=11)
    b = spmsim.run(scheme="cm", workload="btree", instructions=60_000, seed=11)
    c = spmsim.run(scheme="cm", workload="btree", instructions=60_000, seed=12)
    assert a.stats_json == b.stats_json
    assert a.stats_json != c.stats_json
    assert spmsim.run(**SMALL).stats_json == spmsim.run(**SMALL, seed=1).stats_json  # the default seed is 1


# --------------------------------------------------------------------------
# Parity: Python, `python -m spmsim run`, the binary and the Rust API


def _cli_args(case: dict, out: Path) -> list[str]:
    args = ["run", "--scheme", case["scheme"], "--workload", case["workload"],
            "--instructions", str(case["instructions"]), "--seed", str(case["seed"]), "--json", "--out", str(out)]
    if case.get("warmup_instructions"):
        args += ["--warmup-instructions", str(case["warmup_instructions"])]
    for o in case["overrides"]:
        args += ["--set", o]
    if case["baseline"]:
        args += ["--baseline", case["baseline"]]
    return args


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_parity_of_python_cli_binary_and_rust_api(case, tmp_path):
    r = spmsim.run(scheme=case["scheme"], workload=case["workload"], instructions=case["instructions"],
                   seed=case["seed"], overrides=case["overrides"], baseline=case["baseline"],
                   warmup_instructions=case.get("warmup_instructions"))
    texts = {"spmsim.run": r.stats_json + "\n"}

    p = py("-m", "spmsim", *_cli_args(case, tmp_path / "py"))
    assert p.returncode == 0, p.stderr
    texts["python -m spmsim run"] = p.stdout
    assert (tmp_path / "py" / "config.toml").read_text() == r.config_toml

    if BINARY.exists():
        b = subprocess.run([str(BINARY), *_cli_args(case, tmp_path / "bin")], capture_output=True, text=True,
                           timeout=120)
        assert b.returncode == 0, b.stderr
        texts["target/release/spmsim"] = b.stdout
        # Written by crates/spmsim-cli/tests/parity.rs from spmsim::api::run;
        # only a file at least as new as the binary belongs to its build.
        api = PARITY_DIR / f"{case['name']}.json"
        if api.exists() and api.stat().st_mtime >= BINARY.stat().st_mtime:
            texts["Rust API (cargo test)"] = api.read_text() + "\n"

    trees = {k: json.loads(v) for k, v in texts.items()}
    for k in texts:
        # No host or wall-clock field exists, so the whole tree must match.
        assert trees[k]["roi"] == r.stats["roi"], k
        assert trees[k] == r.stats, k
        assert texts[k] == texts["spmsim.run"], k
    print("compared:", ", ".join(texts))


# --------------------------------------------------------------------------
# The GIL and Ctrl-C

LONG = "spmsim.run(scheme='cobcm', workload='btree', instructions=10**10)"


def test_a_run_releases_the_gil():
    done = threading.Event()

    def work():
        spmsim.run(scheme="cobcm", workload="btree", instructions=2_000_000)
        done.set()

    t = threading.Thread(target=work)
    start = time.perf_counter()
    t.start()
    ticks, last, worst = 0, start, 0.0
    while not done.is_set():
        now = time.perf_counter()
        worst = max(worst, now - last)
        last = now
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert time.perf_counter() - start > 0.2, "the run was too short to tell"
    assert worst < 0.2, f"this thread waited {worst:.3f} s for the GIL"
    assert ticks > 50


def _start(code: str, *args: str) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, *args, "-c", code] if code else [sys.executable, *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "started"
    time.sleep(0.5)  # well inside the simulation
    return p


def test_ctrl_c_interrupts_a_long_run_quickly():
    code = ("import signal, spmsim\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            f"print('started', flush=True)\n{LONG}\n")
    p = _start(code)
    t = time.perf_counter()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    took = time.perf_counter() - t
    assert "KeyboardInterrupt" in err, err
    assert p.returncode != 0
    assert took < 3, f"{took:.2f} s from SIGINT to exit"


def test_the_interrupt_can_be_caught_and_spmsim_goes_on():
    code = ("import signal, spmsim\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "print('started', flush=True)\n"
            f"try:\n    {LONG}\nexcept KeyboardInterrupt:\n    print('caught', flush=True)\n"
            "print(spmsim.run(scheme='cobcm', workload='random-writes', instructions=20000).roi['core']['cycles'])\n")
    p = _start(code)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    lines = out.split()
    assert lines[0] == "caught" and int(lines[1]) > 0


def test_ctrl_c_ends_a_cli_run_like_the_binary():
    # `spmsim run` from Python runs the Rust command in this process; Ctrl-C
    # ends it with SIGINT's default action, as it ends the binary.
    code = ("import signal, sys, spmsim.cli\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "print('started', flush=True)\n"
            "spmsim.cli.main(['run', '--scheme', 'cobcm', '--workload', 'btree', '--instructions', '10000000000', "
            "'--out', sys.argv[1]])\n")
    p = subprocess.Popen([sys.executable, "-c", code, "/nonexistent-dir/unused"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "started"
    time.sleep(0.5)
    t = time.perf_counter()
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=30)
    assert p.returncode == -signal.SIGINT
    assert time.perf_counter() - t < 3


# --------------------------------------------------------------------------
# The console script


def test_python_m_spmsim_runs_the_rust_cli():
    p = py("-m", "spmsim", "--version")
    assert (p.returncode, p.stdout) == (0, f"spmsim {spmsim.__version__}\n")
    p = py("-m", "spmsim", "config", "list")
    assert p.returncode == 0 and "cobcm" in p.stdout
    p = py("-m", "spmsim", "no-such-command")
    assert p.returncode == 2 and "unrecognized subcommand" in p.stderr
    if BINARY.exists():
        b = subprocess.run([str(BINARY), "config", "list"], capture_output=True, text=True)
        assert b.stdout == py("-m", "spmsim", "config", "list").stdout


def test_console_script_is_installed():
    script = Path(sysconfig.get_path("scripts")) / "spmsim"
    if not script.exists():
        pytest.skip(f"{script} missing: the package was not installed with pip")
    p = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert (p.returncode, p.stdout) == (0, f"spmsim {spmsim.__version__}\n")


@pytest.mark.parametrize("sub, usage", [("sweep", "usage: spmsim sweep"), ("report", "usage: spmsim report")])
def test_sweep_and_report_go_to_python(sub, usage):
    p = py("-m", "spmsim", sub, "--help")
    assert p.returncode == 0 and usage in p.stdout, p.stderr
    if BINARY.exists():
        env = {**os.environ, "SPMSIM_PYTHON": sys.executable}
        b = subprocess.run([str(BINARY), sub, "--help"], capture_output=True, text=True, env=env)
        assert (b.returncode, b.stdout) == (0, p.stdout), b.stderr


def test_a_missing_python_command_module_is_a_clear_error(monkeypatch, capsys):
    monkeypatch.setitem(cli.PYTHON_COMMANDS, "sweep", "spmsim.no_such_module")
    assert cli.main(["sweep", "x.toml"]) == 2
    err = capsys.readouterr().err
    assert "`spmsim sweep` needs the module spmsim.no_such_module" in err and "pip install ." in err


def test_a_warmup_runs_before_the_statistics_start():
    r = spmsim.run(**SMALL, warmup_instructions=10_000)
    assert r.roi["core"]["instructions"] == SMALL["instructions"] and r.warmup_instructions == 10_000
    assert 10_000 <= r.stats["warmup"]["instructions"] < 11_000 and r.stats["warmup"]["cycles"] > 0
    assert "warmup" not in spmsim.run(**SMALL).stats
    with pytest.raises(ValueError, match="warmup_instructions"):
        spmsim.run(**SMALL, warmup_instructions=-1)


def test_bench_runs_its_cases_from_the_python_entry():
    # bench starts each case in a process of its own; under the package the
    # running executable is the interpreter, so the case must be started as
    # `python -m spmsim`, not as the interpreter with spmsim's arguments.
    out = subprocess.run(
        [sys.executable, "-m", "spmsim", "bench", "--cases", "synthetic", "--instructions", "20000", "--repeat", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    text = json.dumps(rows)
    assert "bbb" in text and "cobcm" in text, text
