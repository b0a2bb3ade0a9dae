"""A sweep's files: one JSON file per point under `points/`, written
atomically, and the manifest `sweep.json` (the grids asked for and the
points' order). `sweep` writes them; `load` reads them.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from typing import Any

POINTS_DIR = "points"
MANIFEST = "sweep.json"
FORMAT_VERSION = 1


def write_json_atomic(path: str, obj: Any) -> None:
    """Write JSON to `path` so that a reader sees the old file or the whole
    new one, never a part: a temporary file in the same directory, fsync,
    rename, fsync of the directory."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dfd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def point_path(out_dir: str, pid: str) -> str:
    return os.path.join(out_dir, POINTS_DIR, pid + ".json")


def read_point(path: str) -> dict | None:
    """A point file, or None if it is missing or unreadable."""
    try:
        with open(path, encoding="utf-8") as f:
            rec = json.load(f)
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) and "params" in rec else None


def write_manifest(out_dir: str, grid: dict, points: list[dict]) -> None:
    path = os.path.join(out_dir, MANIFEST)
    old = read_manifest(out_dir)
    order = list(old.get("order", [])) if old else []
    known = set(order)
    order += [p["id"] for p in points if p["id"] not in known]
    grids = list(old.get("grids", [])) if old else []
    if grid not in grids:
        grids.append(grid)
    write_json_atomic(path, {"format": FORMAT_VERSION, "grids": grids, "order": order})


def read_manifest(out_dir: str) -> dict | None:
    try:
        with open(os.path.join(out_dir, MANIFEST), encoding="utf-8") as f:
            m = json.load(f)
    except (OSError, ValueError):
        return None
    return m if isinstance(m, dict) else None
