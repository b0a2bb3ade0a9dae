"""`spmsim reproduce PAPER ARGS --dask N|ADDRESS`: a reproduction's points
on Dask, then its report here.

    spmsim reproduce PAPER ARGS --list-points
        records the programs the grid needs (as the reproduction does
        first), then lists its points: id, description, whether
        OUT/points already holds its record
    one `spmsim reproduce PAPER ARGS --only-point ID` process per point
        not yet done, on a local Dask cluster of N single-threaded workers
        or the cluster whose scheduler is at ADDRESS (spmsim.executors);
        each keeps its record in OUT/points the moment it ends
    spmsim reproduce PAPER ARGS
        finds every record there: only the analysis and the report run

Killed and started again with the same arguments, it resumes: every
record kept stands (spmsim checks each against what this run would
compute it with) and only the other points run. The points share the
trace cache and the presets folder: $SPMSIM_CACHE and $SPMSIM_CONFIGS,
when set here, are handed to every point, so a cluster's workers read
what this machine does (on other machines, through a shared file system).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from .executors import DaskError, DaskValueError, dask_executor, parse_dask
from .explore import _die_with_parent

#: Variables handed from this process to every point's process.
SHARED_ENV = ("SPMSIM_CACHE", "SPMSIM_CONFIGS")


def spmsim_command() -> list[str]:
    """The spmsim that runs the steps: the binary that handed this command
    over ($SPMSIM_BIN), else this package's (`python -m spmsim`)."""
    exe = os.environ.get("SPMSIM_BIN")
    return [exe] if exe else [sys.executable, "-m", "spmsim"]


def split_dask(args: list[str]) -> tuple[list[str], str | None]:
    """`args` without `--dask VALUE` (or `--dask=VALUE`), and the value."""
    rest: list[str] = []
    value = None
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--dask":
            if i + 1 >= len(args):
                raise DaskValueError("--dask needs a value: a count of local workers or a scheduler's address")
            value = args[i + 1]
            i += 2
            continue
        if a.startswith("--dask="):
            value = a.split("=", 1)[1]
        else:
            rest.append(a)
        i += 1
    return rest, value


def list_points(cmd: list[str], reproduce: list[str]) -> dict:
    """The grid's points (`--list-points`), after the recording; raises
    with spmsim's message when it refuses the arguments."""
    r = subprocess.run([*cmd, *reproduce, "--list-points"], stdout=subprocess.PIPE, stderr=None, text=True,
                       check=False)
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    if r.returncode != 0 or not lines:
        raise RuntimeError(f"listing the points failed (exit {r.returncode}); see above")
    return json.loads(lines[-1])


def run_point(argv: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Worker side: one `--only-point` process; its exit code and the end
    of what it said."""
    r = subprocess.run(argv, env={**os.environ, **env}, capture_output=True, text=True, check=False,
                       preexec_fn=_die_with_parent if os.name == "posix" else None)
    return r.returncode, (r.stderr + r.stdout).strip()[-2000:]


class _Progress:
    """Points done of those to run, with an ETA from the mean time a point
    has taken so far: a tqdm bar on a terminal when tqdm is installed,
    else a line on stderr every 10 s and at the end."""

    def __init__(self, total: int, label: str):
        self.total, self.label, self.done, self.t0, self.last = total, label, 0, time.monotonic(), 0.0
        self.bar = None
        if sys.stderr.isatty():
            try:
                from tqdm.auto import tqdm  # noqa: PLC0415

                self.bar = tqdm(total=total, desc=label, unit="pt", file=sys.stderr, dynamic_ncols=True)
            except ImportError:
                pass

    def step(self, what: str) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix_str(what, refresh=False)
            self.bar.update(1)
            return
        now = time.monotonic()
        if now - self.last >= 10.0 or self.done == self.total:
            rate = (now - self.t0) / self.done
            eta = rate * (self.total - self.done)
            print(f"{self.label}: {self.done}/{self.total} points, ETA {eta / 60:.1f} min (last: {what})",
                  file=sys.stderr, flush=True)
            self.last = now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def reproduce(paper: str, args: list[str], dask: Any) -> int:
    """Run `spmsim reproduce PAPER ARGS` with its points on Dask; the final
    run's exit code, or 1 when a point failed (its error printed)."""
    target = parse_dask(dask)
    cmd = spmsim_command()
    base = ["reproduce", paper, *args]
    env = {k: os.environ[k] for k in SHARED_ENV if os.environ.get(k)}
    env["RAYON_NUM_THREADS"] = "1"
    # The executor first, so that an unreachable scheduler is told before
    # the recording (which can take hours).
    with dask_executor(target) as ex:
        listed = list_points(cmd, base)
        todo = [p for p in listed["points"] if not p["done"]]
        label = f"reproduce {paper} on {target.label}"
        print(f"{label}: {len(listed['points']) - len(todo)} of {len(listed['points'])} points already done in "
              f"{listed.get('points_dir', 'OUT/points')}", file=sys.stderr)
        failed = []
        if todo:
            from concurrent.futures import as_completed  # noqa: PLC0415

            futures = {ex.submit(run_point, [*cmd, *base, "--only-point", p["id"]], env): p for p in todo}
            bar = _Progress(len(todo), label)
            try:
                for f in as_completed(futures):
                    p = futures[f]
                    code, said = f.result()
                    if code != 0:
                        failed.append(f"{p['point']} ({p['id']}): {said}")
                    bar.step(p["point"])
            finally:
                bar.close()
    if failed:
        print(f"{label}: {len(failed)} of {len(todo)} points failed; the others are kept, rerun to retry:",
              file=sys.stderr)
        for f in failed[:5]:
            print(f"  {f}", file=sys.stderr)
        return 1
    return subprocess.run([*cmd, *base], check=False).returncode


def main(args: list[str]) -> int:
    """`spmsim reproduce PAPER ARGS --dask N|ADDRESS` (`args` after `reproduce`)."""
    try:
        rest, dask = split_dask(args)
    except DaskValueError as e:
        print(f"spmsim reproduce: error: {e}", file=sys.stderr)
        return 2
    if not rest or rest[0].startswith("-"):
        print("spmsim reproduce: error: --dask needs the paper first: spmsim reproduce PAPER ... --dask N|ADDRESS",
              file=sys.stderr)
        return 2
    paper, args = rest[0], rest[1:]
    if paper == "all":
        print("spmsim reproduce: error: `reproduce all --dask` is not supported: run each paper with --dask and "
              "--out OUT/PAPER (the same --quick and --seed), then `reproduce all --out OUT`, which finds their "
              "records", file=sys.stderr)
        return 2
    try:
        return reproduce(paper, args, dask)
    except KeyboardInterrupt:
        print(f"spmsim reproduce {paper}: interrupted; the points done are kept in OUT/points, rerun to go on",
              file=sys.stderr)
        return 130
    except (DaskValueError, DaskError) as e:
        print(f"spmsim reproduce {paper}: error: --dask: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"spmsim reproduce {paper}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
