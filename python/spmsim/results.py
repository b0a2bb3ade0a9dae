"""Sweep results as one pandas DataFrame.

    OUT_DIR/points/<id>.json  ->  one row per point:
        id | parameter columns | error | flattened stats (roi.core.ipc, roi.memory.writes.data, ...)

Stats are flattened into dotted column names. A top-level stats key that
has the name of a parameter (the stats repeat `scheme`, `workload` and
`seed`) is kept as `stats.<key>`, so the parameter column is the one the
grid gave. Rows follow the order of the sweep manifest (the grid's order);
points not in it come after, by id.
"""

from __future__ import annotations

import glob
import json
import os
import warnings
from typing import Any, Mapping

from .sweep_files import POINTS_DIR, read_manifest, read_point


def flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"roi": {"core": {"ipc": 1.2}, "memory": {"writes": {"data": 3}}}} ->
    {"roi.core.ipc": 1.2, "roi.memory.writes.data": 3}. Lists are kept as values."""
    out: dict[str, Any] = {}
    for k, v in tree.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            if v:
                out.update(flatten(v, key + "."))
            else:
                out[key] = None
        else:
            out[key] = v
    return out


def load_records(out_dir: str) -> list[dict]:
    """The point records of a sweep directory, in manifest order."""
    out_dir = os.fspath(out_dir)
    pdir = os.path.join(out_dir, POINTS_DIR)
    if not os.path.isdir(pdir):
        raise FileNotFoundError(f"{out_dir}: not a sweep directory (no {POINTS_DIR}/ in it)")
    recs = {}
    for path in glob.glob(os.path.join(pdir, "*.json")):  # glob skips the dot-named temporaries
        rec = read_point(path)
        if rec is None:
            warnings.warn(f"{path}: not a point file, skipped", stacklevel=2)
            continue
        recs[rec.get("id") or os.path.basename(path)[:-5]] = rec
    manifest = read_manifest(out_dir) or {}
    order = [i for i in manifest.get("order", []) if i in recs]
    seen = set(order)
    order += sorted(i for i in recs if i not in seen)
    return [recs[i] for i in order]


def param_names(records: list[dict], manifest: Mapping | None = None) -> list[str]:
    names: list[str] = []
    for g in (manifest or {}).get("grids", []):
        names += [k for k in g if k not in names]
    for r in records:
        names += [k for k in r["params"] if k not in names]
    return names


def load(out_dir: str):
    """One DataFrame, one row per point of the sweep in `out_dir`: an `id`
    column, the parameter columns, an `error` column (None for a point that
    ran) and the flattened stats. `df.attrs["params"]` lists the parameter
    columns."""
    import pandas as pd  # noqa: PLC0415

    recs = load_records(out_dir)
    params = param_names(recs, read_manifest(os.fspath(out_dir)))
    taken = set(params) | {"id", "error"}
    rows = []
    stat_cols: list[str] = []
    seen_cols: set[str] = set()
    for r in recs:
        row: dict[str, Any] = {"id": r.get("id")}
        row.update({k: r["params"].get(k) for k in params})
        row["error"] = r.get("error") if r.get("status") != "ok" else None
        stats = r.get("stats") or {}
        renamed = {("stats." + k if k in taken else k): v for k, v in stats.items()}
        flat = flatten(renamed)
        for c in flat:
            if c not in seen_cols:
                seen_cols.add(c)
                stat_cols.append(c)
        row.update(flat)
        rows.append(row)
    cols = ["id", *params, "error", *stat_cols]
    df = pd.DataFrame(rows, columns=cols)
    df.attrs["params"] = list(params)
    df.attrs["out_dir"] = os.path.abspath(os.fspath(out_dir))
    return df


def varied(df, candidates: list[str] | None = None) -> list[str]:
    """The parameter columns that take more than one value in `df`."""
    cols = candidates if candidates is not None else df.attrs.get("params", [])
    return [c for c in cols if c in df.columns and df[c].nunique(dropna=False) > 1]


def load_json(path: str) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)
