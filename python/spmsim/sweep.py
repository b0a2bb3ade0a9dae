"""Sweeps: the cross product of a parameter grid, one simulation per point.

    grid {scheme: [...], workload: [...], secpb.entries: [...], ...}
      -> points (deterministic order, each once, id = hash of its params)
      -> executor (local process pool, Dask, any concurrent.futures.Executor)
      -> worker runs the point and writes OUT_DIR/points/<id>.json itself
         (temporary name in the same directory, fsync, rename)

A grid maps each parameter to a list of values (a scalar is a one-value
list). The parameters `scheme`, `workload`, `instructions`,
`warmup_instructions` and `seed` choose the run, `name` is a free label, and every other key is a configuration key
path (`persistence.point.entries`) passed as an override.

Rerun policy: a point whose file holds a result is skipped, unless the
caller's `is_current` says why that result no longer stands (it is then
run again, saying why); a point whose
file holds an error is run again (`retry_failed=True`, the default), since
most failures worth a rerun are transient (a missing trace, a lost worker);
pass `retry_failed=False` to keep recorded failures.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import dataclasses
import glob
import hashlib
import itertools
import json
import math
import multiprocessing
import os
import socket
import sys
import threading
import time
import traceback
from typing import Any, Iterable, Mapping

from .sweep_files import FORMAT_VERSION, POINTS_DIR, point_path, read_point, write_json_atomic, write_manifest

#: Grid keys that are not configuration overrides.
RUN_KEYS = ("name", "scheme", "workload", "instructions", "warmup_instructions", "seed")


class GridError(ValueError):
    """A grid that cannot be expanded (the message names the key)."""


# --------------------------------------------------------------------------
# Grid expansion and point identity


def _scalar(value: Any, key: str) -> Any:
    # numpy scalars and the like expose .item(); JSON and TOML need Python ones.
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            pass
    if isinstance(value, bool) or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            raise GridError(f"grid key `{key}`: NaN is not a parameter value")
        return value
    raise GridError(f"grid key `{key}`: value {value!r} is a {type(value).__name__}; "
                    "values must be strings, integers, floats or booleans")


def _values(key: str, value: Any) -> list:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable) or isinstance(value, Mapping):
        if isinstance(value, Mapping):
            raise GridError(f"grid key `{key}`: a table is not a value (write nested keys as `{key}.sub`)")
        return [_scalar(value, key)]
    vals = [_scalar(v, key) for v in value]
    if not vals:
        raise GridError(f"grid key `{key}`: empty list of values")
    return vals


def normalize_grid(grid: Mapping[str, Any], required: tuple[str, ...] = ("scheme", "workload")) -> dict[str, list]:
    """The grid with every value a list of plain Python scalars, in the
    order given. Nested mappings are flattened into dotted key paths.
    `required`: the keys a point must have (a run's scheme and workload)."""
    if not isinstance(grid, Mapping):
        raise GridError(f"grid must be a mapping of parameter -> values, not {type(grid).__name__}")
    out: dict[str, list] = {}

    def walk(prefix: str, m: Mapping) -> None:
        for k, v in m.items():
            if not isinstance(k, str) or not k or any(not p for p in k.split(".")):
                raise GridError(f"grid key {prefix}{k!r}: keys are non-empty dotted names")
            key = prefix + k
            if isinstance(v, Mapping):
                if key in RUN_KEYS:
                    raise GridError(f"grid key `{key}`: a table is not a value")
                walk(key + ".", v)
            else:
                if key in out:
                    raise GridError(f"grid key `{key}` is given twice")
                out[key] = _values(key, v)

    walk("", grid)
    for key in required:
        if key not in out:
            raise GridError(f"grid key `{key}` is missing (the grid needs {' and '.join('a ' + k for k in required)})")
    for key in ("instructions", "warmup_instructions", "seed"):
        for v in out.get(key, []):
            if isinstance(v, bool) or not isinstance(v, int) or v < (1 if key == "instructions" else 0):
                raise GridError(f"grid key `{key}`: {v!r} is not a {'positive' if key == 'instructions' else 'non-negative'} integer")
    for key in ("scheme", "workload", "name"):
        for v in out.get(key, []):
            if not isinstance(v, str) or not v:
                raise GridError(f"grid key `{key}`: {v!r} is not a non-empty string")
    return out


def point_id(params: Mapping[str, Any]) -> str:
    """Stable id of a point: SHA-256 of its parameters as canonical JSON
    (sorted keys, no spaces), first 16 hex digits. The order of the grid's
    keys does not change it; the type of a value does (32 and 32.0 differ)."""
    canon = json.dumps(dict(params), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16]


def expand(grid: Mapping[str, Any], required: tuple[str, ...] = ("scheme", "workload")) -> list[dict]:
    """The points of a grid: the cross product in the grid's key order (the
    last key varies fastest), each distinct point once, first occurrence
    kept. Each point is {"id": ..., "params": {...}}."""
    g = normalize_grid(grid, required)
    keys = list(g)
    seen: set[str] = set()
    points = []
    for combo in itertools.product(*(g[k] for k in keys)):
        params = dict(zip(keys, combo))
        pid = point_id(params)
        if pid in seen:
            continue
        seen.add(pid)
        points.append({"id": pid, "params": params})
    return points


def overrides_of(params: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration overrides of a point: every key but the run keys."""
    return {k: v for k, v in params.items() if k not in RUN_KEYS}


# --------------------------------------------------------------------------
# Running one point (the only place that knows how)


def _run_point(params: Mapping[str, Any]) -> dict:
    """Run one point and return its stats (the JSON tree of `spmsim run
    --json`). Raises on failure."""
    import spmsim  # noqa: PLC0415  (the package, bound by the time a worker calls this)


    res = spmsim.run(scheme=params["scheme"], workload=params["workload"], instructions=params.get("instructions"),
                     seed=params.get("seed"), overrides=overrides_of(params),
                     warmup_instructions=params.get("warmup_instructions"))
    return dict(res.stats)


def _version() -> str:
    import spmsim  # noqa: PLC0415

    return str(getattr(spmsim, "__version__", "unknown"))


# --------------------------------------------------------------------------
# Files


def _run_and_write(point: dict, out_dir: str, runner=None) -> dict:
    """Worker side: run one point (with `runner`, default a simulation)
    and write its file. Never raises for a failed point; returns a small
    summary for the driver."""
    t0 = time.time()
    rec: dict[str, Any] = {"format": FORMAT_VERSION, "id": point["id"], "params": point["params"]}
    try:
        stats = (runner or _run_point)(point["params"])
        rec["status"] = "ok"
        rec["stats"] = stats
    except Exception as e:  # any failure of the point is recorded, not raised
        rec["status"] = "error"
        rec["error"] = str(e) if isinstance(e, (ValueError, RuntimeError)) and str(e) else f"{type(e).__name__}: {e}"
        rec["traceback"] = traceback.format_exc()
    rec["meta"] = {"host": socket.gethostname(), "pid": os.getpid(), "spmsim": _version(),
                   "elapsed_seconds": round(time.time() - t0, 6),
                   "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    write_json_atomic(point_path(out_dir, point["id"]), rec)
    return {"id": point["id"], "status": rec["status"], "error": rec.get("error")}


def _watch_driver(driver_pid: int) -> None:
    """Pool initializer: end this worker when the driver dies (a driver
    killed with SIGKILL would otherwise leave its workers blocked forever).
    A point being run is abandoned; its temporary file is never renamed."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(0)
            try:
                os.kill(driver_pid, 0)
            except ProcessLookupError:
                os._exit(0)
            except PermissionError:
                pass

    threading.Thread(target=watch, name="spmsim-watch-driver", daemon=True).start()


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def local_executor(workers: int | None = None) -> cf.ProcessPoolExecutor:
    """The default executor: a process pool of `workers` (default: the
    usable cores), started with `spawn` so that no thread state of the
    driver (the extension's thread pool, a progress bar) is forked."""
    return cf.ProcessPoolExecutor(max_workers=workers or default_workers(),
                                  mp_context=multiprocessing.get_context("spawn"),
                                  initializer=_watch_driver, initargs=(os.getpid(),))


# --------------------------------------------------------------------------
# Progress


class _Progress:
    """done / running / queued / failed: a tqdm bar on a terminal or in a
    notebook when tqdm is installed, else one line on stderr (rewritten in
    place on a terminal, every few seconds in a log)."""

    def __init__(self, total: int, skipped: int, enabled: bool):
        self.total, self.skipped, self.enabled = total, skipped, enabled
        self.bar = None
        self.last = 0.0
        self.last_text = ""
        self.tty = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
        if not enabled:
            return
        # tqdm on a terminal or in a notebook; in a log file (a batch job's
        # output) its carriage returns make one endless line, so plain lines.
        tqdm = None
        if self.tty or "ipykernel" in sys.modules:
            try:
                from tqdm.auto import tqdm  # noqa: PLC0415
            except ImportError:
                tqdm = None
        if tqdm is not None:
            self.bar = tqdm(total=total, initial=skipped, desc="spmsim sweep", unit="pt", file=sys.stderr,
                            dynamic_ncols=True)

    def update(self, done: int, running: int, queued: int, failed: int, final: bool = False) -> None:
        if not self.enabled:
            return
        text = f"running {running}, queued {queued}, failed {failed}"
        if self.bar is not None:
            self.bar.n = done
            self.bar.set_postfix_str(text, refresh=False)
            if final:
                self.bar.close()
            else:
                self.bar.refresh()
            return
        line = f"spmsim sweep: {done}/{self.total} done ({self.skipped} skipped), {text}"
        now = time.monotonic()
        if self.tty:
            if line != self.last_text or final:
                sys.stderr.write("\r" + line + ("\n" if final else ""))
                sys.stderr.flush()
        elif final or (line != self.last_text and now - self.last >= 5.0):
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
            self.last = now
        self.last_text = line


def _slots(executor: cf.Executor) -> int | None:
    """How many points the executor can run at once, if it can tell."""
    n = getattr(executor, "_max_workers", None)
    if isinstance(n, int):
        return n
    client = getattr(executor, "_client", None)  # distributed.cfexecutor.ClientExecutor
    if client is not None:
        with contextlib.suppress(Exception):
            return int(sum(client.nthreads().values()))
    return None


# --------------------------------------------------------------------------
# The sweep


@dataclasses.dataclass
class SweepSummary:
    """What a sweep did: `points` in the grid, `skipped` (already done),
    `ran`, and `failed`: the points of the grid whose file holds an error
    when the sweep ends (those kept by retry_failed=False included)."""

    out_dir: str
    points: int
    skipped: int
    ran: int
    failed: int
    failed_ids: list
    #: The points whose file held a result that no longer stood, run
    #: again: {"id": ..., "why": ...}.
    recomputed: list = dataclasses.field(default_factory=list)

    def to_pandas(self):
        from .results import load  # noqa: PLC0415

        return load(self.out_dir)


def _remove_stale_temps(out_dir: str, before: float) -> None:
    # Temporary files whose writer was killed before the rename.
    for tmp in glob.glob(os.path.join(out_dir, POINTS_DIR, ".*.tmp")) + glob.glob(os.path.join(out_dir, ".*.tmp")):
        with contextlib.suppress(OSError):
            if os.path.getmtime(tmp) < before:
                os.unlink(tmp)


def sweep(grid: Mapping[str, Any], out_dir: str, executor: cf.Executor | None = None, progress: bool = True, *,
          workers: int | None = None, retry_failed: bool = True, runner=None,
          required: tuple[str, ...] = ("scheme", "workload"), is_current=None) -> SweepSummary:
    """Run every point of `grid` not yet done in `out_dir`.

    `runner(params) -> dict` runs one point in a worker (a picklable
    top-level function; default: a simulation, `spmsim.run`), and
    `required` names the keys each point must have. `is_current(point,
    done) -> str | None`, called in the driver for each point (`done`: its
    file holds a result), returns None when nothing stands against it, or
    why the result it has (or the one its run would replace) does not
    stand: written to stderr, and the point is run.

    `executor` is any concurrent.futures.Executor (a Dask
    `Client.get_executor()` included); by default a local process pool of
    `workers` processes (default: the usable cores). Workers write the
    point files themselves, so whatever finished survives a killed driver.
    Returns a summary; `spmsim.load(out_dir)` gives the results.
    """
    points = expand(grid, required)
    norm = normalize_grid(grid, required)
    out_dir = os.path.abspath(os.fspath(out_dir))
    os.makedirs(os.path.join(out_dir, POINTS_DIR), exist_ok=True)
    started = time.time()
    write_manifest(out_dir, norm, points)

    todo, skipped, kept_failed, recomputed = [], 0, [], []
    for p in points:
        rec = read_point(point_path(out_dir, p["id"]))
        done = rec is not None and rec.get("status") == "ok"
        why = is_current(p, done) if is_current is not None else None
        if why is not None:
            print(f"{why}: recomputing", file=sys.stderr)
            recomputed.append({"id": p["id"], "why": why})
            todo.append(p)
        elif done:
            skipped += 1
        elif rec is not None and rec.get("status") == "error" and not retry_failed:
            skipped += 1
            kept_failed.append(p["id"])
        else:
            todo.append(p)

    own = executor is None
    ex = local_executor(workers) if own and todo else executor
    bar = _Progress(len(points), skipped, progress)
    failed_ids: list[str] = list(kept_failed)
    done = skipped
    rebuilds = 0
    pending: dict[cf.Future, dict] = {}
    try:
        for p in todo:
            pending[ex.submit(_run_and_write, p, out_dir, runner)] = p
        slots = _slots(ex) if ex is not None else None
        while pending:
            finished, _ = cf.wait(list(pending), timeout=0.5, return_when=cf.FIRST_COMPLETED)
            lost: list[dict] = []
            for fut in finished:
                p = pending.pop(fut)
                try:
                    summary = fut.result()
                except cf.process.BrokenProcessPool:
                    lost.append(p)
                    continue
                except Exception as e:  # the worker died or the executor failed the task
                    summary = _record_lost(out_dir, p, e)
                done += 1
                if summary["status"] != "ok":
                    failed_ids.append(p["id"])
            if lost:
                # A worker of our own pool died (killed, out of memory): start
                # a fresh pool and resubmit what had not finished, a few times.
                lost += list(pending.values())
                pending.clear()
                if own and rebuilds < 3:
                    rebuilds += 1
                    ex.shutdown(wait=False, cancel_futures=True)
                    ex = local_executor(workers)
                    for p in lost:
                        pending[ex.submit(_run_and_write, p, out_dir, runner)] = p
                else:
                    for p in lost:
                        _record_lost(out_dir, p, RuntimeError("the process pool broke (a worker process died)"))
                        failed_ids.append(p["id"])
                        done += 1
            # Dask's futures stay pending until done, so what runs is the
            # smaller of what is in flight and what the workers can hold.
            if slots is not None:
                n_running = min(len(pending), slots)
            else:
                n_running = sum(1 for f in pending if f.running()) or len(pending)
            bar.update(done, n_running, len(pending) - n_running, len(failed_ids))
    except BaseException:
        for fut in pending:
            fut.cancel()
        if own and ex is not None:
            ex.shutdown(wait=False, cancel_futures=True)
            own = False
        raise
    finally:
        if own and ex is not None:
            ex.shutdown(wait=True)
        bar.update(done, 0, 0, len(failed_ids), final=True)
    _remove_stale_temps(out_dir, started)
    return SweepSummary(out_dir=out_dir, points=len(points), skipped=skipped, ran=len(todo),
                        failed=len(failed_ids), failed_ids=failed_ids, recomputed=recomputed)


def _record_lost(out_dir: str, p: dict, e: BaseException) -> dict:
    """Driver side: a point whose task failed outside the simulation (its
    worker died). Its file is written unless a worker wrote one first."""
    path = point_path(out_dir, p["id"])
    rec = read_point(path)
    if rec is not None:
        return {"id": p["id"], "status": rec.get("status", "error"), "error": rec.get("error")}
    err = f"{type(e).__name__}: {e}"
    write_json_atomic(path, {"format": FORMAT_VERSION, "id": p["id"], "params": p["params"], "status": "error",
                             "error": err, "meta": {"host": socket.gethostname(), "runner": "driver"}})
    return {"id": p["id"], "status": "error", "error": err}


__all__ = ["sweep", "expand", "point_id", "normalize_grid", "GridError", "SweepSummary", "local_executor",
           "write_json_atomic", "read_point"]

