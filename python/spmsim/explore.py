"""`spmsim explore`: the exploration of compositions (`spmsim compare
--explore`) as a sweep, one shard per preset.

    presets (compare's, or --schemes)
      -> one sweep point per preset: `spmsim compare --explore --schemes P`
         into OUT/shards/P/ (one core each: RAYON_NUM_THREADS=1)
      -> executor: the local process pool (--workers N), a local Dask
         cluster (--dask N), the Dask cluster whose scheduler is at an
         address (--dask tcp://HOST:PORT; spmsim.executors), or any
         concurrent.futures.Executor
      -> `spmsim compare --merge OUT/shards/*` -> OUT/explore.md, explore.json

A shard's point file (OUT/points/<id>.json) is written when its shard
ends, so a killed exploration, run again, skips every finished shard and
runs the rest; nothing finished is lost. A shard counts as finished only
when its explore.json was computed with everything this run would compute
it with: its provenance (spmsim's version, the instructions, seed,
operations, workloads, front ends, batteries, models and trees, and a
digest of each file of the presets folder), which `spmsim compare
--explore --provenance` gives and the point's id includes. A shard
computed with anything else (another --ops, an edited preset, another
spmsim) is computed again, saying which parameter differs; its old
explore.json stays until the new one replaces it whole. The programs the workloads need
are recorded once before the shards start (they share the trace cache). Each shard times its own
insecure baselines (a few runs per front end and model), which the merge
keeps once. `OUT/timing.json` records the wall time of each run of the
exploration, its executor and workers.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import json
import os
import subprocess
import sys
import time
from typing import Any

from .executors import CONNECT_TIMEOUT, DaskError, DaskTarget, chosen_executor, dask_argument, parse_dask
from .sweep import expand, sweep
from .sweep_files import read_point, write_json_atomic

#: The point parameters of a shard: `task` keeps its id apart from a run's,
#: `provenance` is a digest of what shapes the result besides the flags.
SHARD_KEYS = ("task", "scheme", "quick", "workloads", "instructions", "fronts", "batteries", "ops", "shards_dir",
              "provenance")
#: How a field of a shard's provenance is named to the user: its flag.
PROVENANCE_NAMES = {"spmsim": "spmsim", "instructions": "--instructions", "seed": "--seed", "ops": "--ops",
                    "workloads": "--workloads", "fronts": "--fronts", "adr_batteries": "--batteries",
                    "models": "the models", "trees": "the trees", "crash_points": "crash points"}
#: What each shard must name: its preset.
SHARD_REQUIRED = ("scheme",)


def _die_with_parent() -> None:
    """In a shard's process, before it runs: end it when the worker that
    started it dies (Linux's PR_SET_PDEATHSIG), so that a killed
    exploration leaves no shard running on into its directory."""
    try:
        import ctypes  # noqa: PLC0415
        import signal  # noqa: PLC0415

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _spmsim(args: list[str], **kw: Any) -> subprocess.CompletedProcess:
    """`python -m spmsim ARGS` in a process of its own (the Rust CLI)."""
    return subprocess.run([sys.executable, "-m", "spmsim", *args], check=False, text=True, **kw)


def presets() -> list[str]:
    """The presets `spmsim compare` takes (`compare --list` without those
    left out)."""
    r = _spmsim(["compare", "--list"], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"spmsim compare --list failed: {r.stderr.strip()}")
    return [line.strip() for line in r.stdout.splitlines() if line.strip() and "(left out" not in line]


def shard_args(params: dict) -> list[str]:
    """The `spmsim compare --explore` arguments of one shard."""
    out = os.path.join(params["shards_dir"], params["scheme"])
    args = ["compare", "--explore", "--schemes", params["scheme"], "--out", out]
    if params.get("quick"):
        args.append("--quick")
    for key in ("workloads", "instructions", "fronts", "batteries", "ops"):
        if params.get(key) not in (None, ""):
            args += [f"--{key}", str(params[key])]
    return args


def provenance(args: list[str]) -> dict:
    """What shapes a shard's result with the `compare --explore` arguments
    `args` (its --schemes left out): `spmsim compare --explore
    --provenance`. Raises with spmsim's message when it refuses them (a
    count out of range, an unknown workload)."""
    r = _spmsim([*args, "--provenance"], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError((r.stderr or r.stdout).strip().removeprefix("error: "))
    return json.loads(r.stdout)


def _digest(obj: Any) -> str:
    canon = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16]


def _shown(key: str, value: Any) -> str:
    if key == "adr_batteries":
        return "front,adr" if value else "front"
    if isinstance(value, list):
        return ",".join(map(str, value)) or "(none)"
    return str(value)


def provenance_differences(was: dict, now: dict) -> list[str]:
    """Each field of provenance `was` that differs from `now`, as `--ops
    50, this run asks 100` (a file of the presets folder: its digests)."""
    out = []
    for key, name in PROVENANCE_NAMES.items():
        if was.get(key) != now.get(key):
            out.append(f"{name} {_shown(key, was.get(key))}, this run asks {_shown(key, now.get(key))}")
    old, new = was.get("inputs") or {}, now.get("inputs") or {}
    for f in sorted(set(old) | set(new)):
        if old.get(f) != new.get(f):
            out.append(f"the presets folder's {f} " + (f"of digest {old[f]}" if f in old else "absent") +
                       ", this run's " + (f"of digest {new[f]}" if f in new else "absent"))
    return out


def shard_stale(params: dict, expected: dict, done: bool) -> str | None:
    """Why the shard folder of `params` holds a result computed with another
    provenance than `expected` (or, for a finished point, no readable
    result); None when it holds this run's result, or nothing yet."""
    path = os.path.join(params["shards_dir"], params["scheme"], "explore.json")
    name = f"shard {params['scheme']}"
    if not done and not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            e = json.load(f)
    except (OSError, ValueError) as err:
        return f"{name}: its {path} cannot be read ({err})"
    was = e.get("provenance") if isinstance(e, dict) else None
    if not isinstance(was, dict):
        return f"{name} was computed by an spmsim that recorded no provenance (what its result was computed with)"
    diffs = provenance_differences(was, expected)
    return f"{name} was computed with {'; '.join(diffs)}" if diffs else None


def run_shard(params: dict) -> dict:
    """Worker side: explore one preset's compositions on one core. Returns
    the shard's counts and wall time; raises if the shard failed."""
    t0 = time.time()
    out = os.path.join(params["shards_dir"], params["scheme"])
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    with open(os.path.join(out, "explore.log"), "w", encoding="utf-8") as log:
        r = _spmsim(shard_args(params), stdout=log, stderr=subprocess.STDOUT, env=env, preexec_fn=_die_with_parent)
    if r.returncode != 0:
        with open(os.path.join(out, "explore.log"), encoding="utf-8") as f:
            tail = f.read().strip().splitlines()[-3:]
        raise RuntimeError(f"shard {params['scheme']} failed (exit {r.returncode}): {' / '.join(tail)}")
    with open(os.path.join(out, "explore.json"), encoding="utf-8") as f:
        e = json.load(f)
    counts: dict[str, int] = {}
    for c in e["compositions"]:
        counts[c["outcome"]["status"]] = counts.get(c["outcome"]["status"], 0) + 1
    return {"shard": out, "compositions": len(e["compositions"]), "counts": counts,
            "elapsed_seconds": round(time.time() - t0, 3)}


def explore(out_dir: str, schemes: list[str] | None = None, *, quick: bool = False, workloads: str | None = None,
            instructions: int | None = None, fronts: str | None = None, batteries: str | None = None,
            ops: int | None = None, workers: int | None = None,
            dask: int | str | DaskTarget | None = None, executor=None, progress: bool = True) -> dict:
    """Explore the compositions of `schemes` (default: compare's presets) as
    a sweep into `out_dir`, then merge the shards. The shards run on
    `executor` if given, else on Dask when `dask` is given (a count of
    local workers, or a scheduler's address: spmsim.executors), else on a
    process pool of `workers`. Returns a summary with the wall time;
    `out_dir`/explore.md and explore.json are the result."""
    out_dir = os.path.abspath(os.fspath(out_dir))
    shards_dir = os.path.join(out_dir, "shards")
    names = list(schemes) if schemes else presets()
    grid = {"task": "explore", "scheme": names, "quick": quick, "shards_dir": shards_dir}
    for key, value in (("workloads", workloads), ("instructions", instructions), ("fronts", fronts),
                       ("batteries", batteries), ("ops", ops)):
        if value is not None:
            grid[key] = value
    target = parse_dask(dask) if dask is not None and executor is None else None
    t0 = time.time()
    first = shard_args(expand(grid, SHARD_REQUIRED)[0]["params"])
    i = first.index("--schemes")
    common = [*first[:i], *first[i + 2:]]
    # What shapes every shard's result, from spmsim itself (which refuses a
    # bad count here, before any shard): in each point's id, and checked
    # against each finished shard's explore.json.
    expected = provenance(common)
    grid["provenance"] = _digest(expected)
    # The executor before the recording (which can take minutes), so that an
    # unreachable scheduler is told at once; a given executor is the caller's.
    with (contextlib.nullcontext((executor, "custom")) if executor is not None else
          chosen_executor(workers, target)) as (ex, label):
        # The shards share the trace cache: record the programs once, first.
        r = _spmsim([*common, "--record-only"], capture_output=True)
        if r.returncode != 0:
            raise RuntimeError(f"recording the programs failed: {(r.stderr or r.stdout).strip()[-2000:]}")
        s = sweep(grid, out_dir, executor=ex, workers=workers, progress=progress, runner=run_shard,
                  required=SHARD_REQUIRED, is_current=lambda p, done: shard_stale(p["params"], expected, done))
    swept = time.time() - t0
    summary: dict[str, Any] = {"shards": s.points, "skipped": s.skipped, "ran": s.ran, "failed": s.failed,
                               "recomputed": [r["why"] for r in s.recomputed], "executor": label,
                               "sweep_seconds": round(swept, 3)}
    if s.failed:
        summary["failed_ids"] = s.failed_ids
        return summary
    dirs = [os.path.join(shards_dir, n) for n in names]
    r = _spmsim(["compare", "--merge", *dirs, "--out", out_dir], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"merging the shards failed: {r.stderr.strip()}")
    summary["merge_output"] = r.stdout
    summary["wall_seconds"] = round(time.time() - t0, 3)
    shard_times = {}
    for path in glob.glob(os.path.join(out_dir, "points", "*.json")):
        rec = read_point(path)
        if rec and rec.get("status") == "ok":
            shard_times[rec["params"]["scheme"]] = rec["stats"]["elapsed_seconds"]
    summary["shard_seconds"] = dict(sorted(shard_times.items()))
    _record_timing(out_dir, summary)
    return summary


def _record_timing(out_dir: str, summary: dict) -> None:
    path = os.path.join(out_dir, "timing.json")
    try:
        with open(path, encoding="utf-8") as f:
            runs = json.load(f)
    except (OSError, ValueError):
        runs = []
    runs.append({k: v for k, v in summary.items() if k != "merge_output"} |
                {"finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    write_json_atomic(path, runs)


def _at_least_one(text: str) -> int:
    """A count flag's value: a whole number at least 1 (argparse names the
    flag and exits with 2 otherwise)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} is not at least 1")
    return n


def main(args: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="spmsim explore", description="The exploration of compositions (compare "
                                 "--explore) as a sweep: one shard per preset on a process pool or a Dask cluster "
                                 "(local, or one you run), resumable, merged into OUT/explore.md and explore.json.")
    ap.add_argument("--out", required=True, metavar="DIR")
    ap.add_argument("--schemes", metavar="P,Q", help="presets (default: those compare takes)")
    ap.add_argument("--quick", action="store_true", help="compare --quick's workloads, instructions and fronts")
    ap.add_argument("--workloads", metavar="W,V")
    ap.add_argument("--instructions", type=_at_least_one, metavar="N")
    ap.add_argument("--fronts", metavar="F,G")
    ap.add_argument("--batteries", metavar="front,adr", help="also each buffer or cache front end with the WPQ "
                    "alone on battery (adr)")
    ap.add_argument("--ops", type=_at_least_one, metavar="N", help="operations before each recovery and attack run "
                    "(compare --ops)")
    ex = ap.add_mutually_exclusive_group()
    ex.add_argument("--workers", type=_at_least_one, metavar="N", help="local process pool of N workers (default: the "
                    "cores)")
    ex.add_argument("--dask", type=dask_argument, metavar="N|ADDRESS", help="a local Dask cluster of N "
                    "single-threaded workers, or the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:PORT, "
                    "tls://HOST:PORT, or HOST:PORT for tcp://), left running after; an address that does not answer "
                    f"as a scheduler within {CONNECT_TIMEOUT:g} s is refused (exit 2)")
    ap.add_argument("--no-progress", action="store_true")
    a = ap.parse_args(args)
    try:
        s = explore(a.out, a.schemes.split(",") if a.schemes else None, quick=a.quick, workloads=a.workloads,
                    instructions=a.instructions, fronts=a.fronts, batteries=a.batteries, ops=a.ops, workers=a.workers,
                    dask=a.dask, progress=not a.no_progress)
    except KeyboardInterrupt:
        print("spmsim explore: interrupted; finished shards are kept, rerun to go on", file=sys.stderr)
        return 130
    except DaskError as e:
        print(f"spmsim explore: error: --dask: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"spmsim explore: error: {e}", file=sys.stderr)
        return 2
    if s["failed"]:
        print(f"spmsim explore: {s['failed']} of {s['shards']} shards failed; their point files in {a.out}/points/ "
              "say why; rerun to retry them", file=sys.stderr)
        return 1
    print(s["merge_output"], end="")
    again = f", {len(s['recomputed'])} of them computed again" if s["recomputed"] else ""
    print(f"explore: {s['shards']} shards ({s['skipped']} already done, {s['ran']} run{again}) on {s['executor']} in "
          f"{s['wall_seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
