"""`spmsim sweep SPEC.toml [--out DIR] [--workers N | --dask N|ADDRESS]`: a
sweep from a TOML spec.

    out_dir = "results/sweeps/example"   # relative to the current directory
    retry_failed = true                   # optional (default true)
    workers = 2                           # optional (default: the usable cores)
    dask = "tcp://scheduler:8786"         # optional, instead of workers: a Dask
                                          # scheduler's address, or a count of
                                          # local Dask workers (spmsim.executors)

    [grid]
    scheme = ["bbb", "cobcm"]
    workload = ["array-swap", "random-writes"]
    instructions = 200000
    seed = [1, 2]
    "persistence.point.entries" = [16, 32]   # or a nested [grid.persistence.point] table

Exit codes: 0 every point of the grid has a result, 1 some point's file
holds an error when the sweep ends, 2 bad spec or arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
import tomllib
from typing import Any

from .executors import (CONNECT_TIMEOUT, DaskError, DaskValueError, chosen_executor, dask_argument,
                        parse_dask)
from .sweep import GridError, normalize_grid, sweep

#: The keys of a spec and the types each takes.
SPEC_KEYS: dict[str, tuple[type, ...]] = {"out_dir": (str,), "workers": (int,), "dask": (int, str),
                                          "retry_failed": (bool,), "grid": (dict,)}


class SpecError(ValueError):
    """A bad sweep spec; the message names the file and the key."""


def load_spec(path: str) -> dict[str, Any]:
    """Read and check a sweep spec. Returns {"grid", "out_dir", "workers",
    "dask", "retry_failed"} with the grid normalised (lists of scalars) and
    `dask` a DaskTarget or None."""
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except FileNotFoundError:
        raise SpecError(f"{path}: no such file") from None
    except OSError as e:
        raise SpecError(f"{path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: not valid TOML: {e}") from None
    for key, value in doc.items():
        want = SPEC_KEYS.get(key)
        if want is None:
            raise SpecError(f"{path}: unknown key `{key}` (expected one of: {', '.join(SPEC_KEYS)})")
        ok = isinstance(value, want) and not (bool not in want and isinstance(value, bool))
        if not ok:
            kinds = " or ".join(_kind(t) for t in want)
            raise SpecError(f"{path}: key `{key}` must be {kinds}, not {_kind(type(value))} {value!r}")
    if "grid" not in doc:
        raise SpecError(f"{path}: missing table `[grid]` (the parameters to sweep)")
    if "workers" in doc and doc["workers"] < 1:
        raise SpecError(f"{path}: key `workers` must be at least 1, not {doc['workers']}")
    if "out_dir" in doc and not doc["out_dir"].strip():
        raise SpecError(f"{path}: key `out_dir` is empty")
    if "workers" in doc and "dask" in doc:
        raise SpecError(f"{path}: keys `workers` and `dask` both choose where the points run; give one")
    dask = None
    if "dask" in doc:
        try:
            dask = parse_dask(doc["dask"])
        except DaskValueError as e:
            raise SpecError(f"{path}: key `dask`: {e}") from None
    try:
        grid = normalize_grid(doc["grid"])
    except GridError as e:
        raise SpecError(f"{path}: [grid]: {_grid_message(e)}") from None
    return {"grid": grid, "out_dir": doc.get("out_dir"), "workers": doc.get("workers"), "dask": dask,
            "retry_failed": doc.get("retry_failed", True)}


def _grid_message(e: GridError) -> str:
    # GridError says "grid key `x`"; inside [grid] the key path is enough.
    return str(e).replace("grid key ", "key ", 1)


def _kind(t: type) -> str:
    return {str: "a string", int: "an integer", bool: "a boolean", dict: "a table", list: "an array",
            float: "a float"}.get(t, t.__name__)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="spmsim sweep", description="Run the cross product of a parameter grid; "
                                 "one JSON file per point in OUT_DIR/points/, finished points skipped on a rerun.")
    ap.add_argument("spec", metavar="SPEC.toml", help="sweep spec: a [grid] table and out_dir")
    ap.add_argument("--out", metavar="DIR", help="output directory (overrides out_dir of the spec)")
    ex = ap.add_mutually_exclusive_group()
    ex.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: workers of the "
                    "spec, else the usable cores)")
    ex.add_argument("--dask", type=dask_argument, metavar="N|ADDRESS", help="run the points on a local Dask cluster "
                    "of N single-threaded workers, or on the Dask cluster whose scheduler is at ADDRESS "
                    "(tcp://HOST:PORT, tls://HOST:PORT, or HOST:PORT for tcp://), which is left running; an address "
                    f"that does not answer as a scheduler within {CONNECT_TIMEOUT:g} s is refused (exit 2). "
                    "Default: dask of the spec; --workers overrides it")
    ap.add_argument("--keep-failed", action="store_true", help="do not rerun points that failed before")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ap


def main(args: list[str] | None = None) -> int:
    ap = build_parser()
    a = ap.parse_args(args)
    try:
        spec = load_spec(a.spec)
    except SpecError as e:
        print(f"spmsim sweep: error: {e}", file=sys.stderr)
        return 2
    out = a.out or spec["out_dir"]
    if not out:
        print(f"spmsim sweep: error: {a.spec}: no `out_dir` in the spec and no --out given", file=sys.stderr)
        return 2
    if a.workers is not None and a.workers < 1:
        print("spmsim sweep: error: --workers must be at least 1", file=sys.stderr)
        return 2
    # A flag of the command line chooses the executor over the spec's keys.
    if a.workers is not None or a.dask is not None:
        workers, dask = a.workers, a.dask
    else:
        workers, dask = spec["workers"], spec["dask"]
    try:
        with chosen_executor(workers, dask) as (executor, label):
            s = sweep(spec["grid"], out, executor=executor, progress=not a.no_progress, workers=workers,
                      retry_failed=spec["retry_failed"] and not a.keep_failed)
    except DaskError as e:
        source = "--dask" if a.dask is not None else f"{a.spec}: key `dask`"
        print(f"spmsim sweep: error: {source}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("spmsim sweep: interrupted; finished points are kept, rerun to go on", file=sys.stderr)
        return 130
    print(f"{s.points} points: {s.skipped} already done, {s.ran} run, {s.failed} failed, on {label}; results in "
          f"{os.path.relpath(s.out_dir)}/points/")
    if s.failed:
        print(f"failed points ({s.failed}): `spmsim.load({os.path.relpath(s.out_dir)!r})` shows them in its "
              "error column", file=sys.stderr)
    return 1 if s.failed else 0


if __name__ == "__main__":
    sys.exit(main())
