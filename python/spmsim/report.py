"""`spmsim report OUT_DIR`: an HTML page and Markdown from a results directory.

    sweep directory (points/*.json)       -> OUT_DIR/report.html, OUT_DIR/report.md
    reproduce directory (results.json of  -> OUT_DIR/report.html beside the
      `spmsim reproduce secpb`)              report.md the Rust side wrote
    compare directory (results.json of    -> OUT_DIR/report.html beside the
      `spmsim compare`, "kind": "compare")   report.md the Rust side wrote
    reproduce-all directory (index.json   -> OUT_DIR/index.html: index.md with
      of `spmsim reproduce all`)             one log-log plot of claims per paper
    figures (PNG + SVG)                   -> OUT_DIR/figures/

The page is self-contained: CSS inline, every plot an SVG in a data URI, no
script and nothing fetched. The plots are chosen from what the sweep
varied: execution time normalised to a baseline scheme per workload with a
geometric mean (SecPB Fig. 6) when schemes vary, NVM writes by kind (STAR
Fig. 11), and lines against every other varied parameter (SecPB Figs. 7
and 8). For a SecPB reproduction: Figs. 6-9, Table IV and Table V (battery)
as plots, inside the Rust report's text and tables. For a comparison of
schemes: a table of every scheme and two Pareto plots (compare_report.py).
For every paper's reproduction: each paper's claims, ours against the
paper's (index_report.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any

from . import _report_render as R
from ._report_render import ReportError, write as _write
from . import plots
from .results import load, varied

RUN_LIKE = ("scheme", "workload", "seed", "name")
KINDS = ("data", "counter", "mac", "tree")
MAX_ROWS = 1000


# --------------------------------------------------------------------------
# Kinds of directory


def _results_json(out_dir: str, name: str = "results.json") -> Any:
    """OUT_DIR/NAME parsed, or None when it is missing or not JSON."""
    path = os.path.join(out_dir, name)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def is_compare_dir(out_dir: str) -> bool:
    """A directory written by `spmsim compare` (results.json with
    "kind": "compare")."""
    doc = _results_json(out_dir)
    return isinstance(doc, dict) and doc.get("kind") == "compare"


def is_reproduce_dir(out_dir: str) -> bool:
    """A directory written by `spmsim reproduce secpb` (results.json with
    runs, table4 and figs 6-8) or `spmsim reproduce secon` (runs, claims
    and figures)."""
    doc = _results_json(out_dir)
    return isinstance(doc, dict) and (all(k in doc for k in ("runs", "table4", "fig6", "fig7", "fig8"))
                                      or all(k in doc for k in ("runs", "claims", "figures")))


def is_sweep_dir(out_dir: str) -> bool:
    return os.path.isdir(os.path.join(out_dir, "points"))


def write_report(out_dir: str, baseline: str | None = None, title: str | None = None) -> list[str]:
    """Write the report of a sweep, reproduce or compare directory; returns the paths
    of the page(s) written."""
    out_dir = os.fspath(out_dir)
    if not os.path.isdir(out_dir):
        raise ReportError(f"{out_dir}: no such directory")
    if is_compare_dir(out_dir):
        from .compare_report import compare_report  # noqa: PLC0415  (it imports this module)

        return compare_report(out_dir, _results_json(out_dir), title=title)
    from .index_report import index_report, is_index_dir  # noqa: PLC0415  (it imports this module)

    index = _results_json(out_dir, "index.json")
    if is_index_dir(index):
        return index_report(out_dir, index, title=title)
    if is_reproduce_dir(out_dir):
        return reproduce_report(out_dir, title=title)
    if is_sweep_dir(out_dir):
        return sweep_report(out_dir, baseline=baseline, title=title)
    raise ReportError(f"{out_dir}: neither a sweep directory (points/) nor a reproduce directory (results.json "
                      "with runs and table4, fig6-8 or claims, figures) nor a compare directory (results.json "
                      "with \"kind\": \"compare\") nor a `reproduce all` directory (index.json with papers)")


# --------------------------------------------------------------------------
# Sweep report


def _first_values(df, cols: list[str]) -> dict[str, Any]:
    return {c: df[c].iloc[0] for c in cols if len(df)}


def _slice(df, fixed: dict[str, Any]):
    m = None
    for c, v in fixed.items():
        cond = df[c] == v
        m = cond if m is None else (m & cond)
    return df if m is None else df[m]


def _is_numeric(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _describe(fixed: dict[str, Any]) -> str:
    return ", ".join(f"`{k}` = {R.fmt(v)}" for k, v in fixed.items())


def sweep_report(out_dir: str, baseline: str | None = None, title: str | None = None) -> list[str]:
    df = load(out_dir)
    if not len(df):
        raise ReportError(f"{out_dir}: the sweep has no finished points yet")
    params = df.attrs["params"]
    figdir = os.path.join(out_dir, "figures")
    ok = df[df["error"].isna()].copy()
    failed = df[df["error"].notna()]
    vary = varied(df)
    fixed = [p for p in params if p not in vary]
    title = title or f"spmsim sweep: {os.path.basename(os.path.abspath(out_dir))}"
    blocks: list[dict] = [R.heading(title, 1)]
    blocks.append(R.paragraph(
        f"{len(df)} points in `{os.path.abspath(out_dir)}`: {len(ok)} ran, {len(failed)} failed. "
        + (f"Varied: {', '.join(f'`{p}`' for p in vary)}. " if vary else "Nothing varied. ")
        + (f"Fixed: {_describe({p: df[p].iloc[0] for p in fixed})}." if fixed else "")))
    blocks.append(R.heading("Grid", 2))
    blocks.append(R.table(["parameter", "values"],
                          [[p, ", ".join(R.fmt(v) for v in plots._order(df[p].dropna()))] for p in params]))
    if len(failed):
        blocks.append(R.heading("Failed points", 2))
        blocks.append(R.paragraph("A failed point keeps its error in its file and is run again by the next "
                                  "`spmsim sweep` over the same directory."))
        rows = [[r["id"], *[r[p] for p in vary], _one_line(r["error"])] for _, r in failed.head(MAX_ROWS).iterrows()]
        blocks.append(R.table(["id", *vary, "error"], rows))

    others = [p for p in vary if p not in RUN_LIKE]
    fixed_others = _first_values(ok, others)
    schemes = plots._order(ok["scheme"]) if "scheme" in ok else []
    base = baseline or ("bbb" if "bbb" in schemes else (schemes[0] if schemes else None))
    if baseline and baseline not in schemes:
        raise ReportError(f"baseline {baseline!r} is not a scheme of the sweep: {', '.join(schemes)}")
    figures: list[dict] = []
    if len(ok) and "roi.core.cycles" in ok:
        sl = _slice(ok, fixed_others)
        where = f" at {_describe(fixed_others)}" if fixed_others else ""
        seeds = " Mean over seeds." if "seed" in vary else ""
        if len(schemes) > 1:
            figures.append(R.figure(
                f"Execution time (cycles) per workload normalised to {base}, with the geometric mean over "
                f"workloads (SecPB Fig. 6 style){where}.{seeds}",
                plots.normalized_bars(sl, value="roi.core.cycles", baseline=base, out=os.path.join(figdir, "exec_time"),
                                      title=f"Execution time normalised to {base}",
                                      ylabel=f"execution time / {base}"), "exec_time"))
        elif ok["workload"].nunique() > 1:
            figures.append(R.figure(f"IPC per workload{where}.{seeds}",
                                    plots.normalized_bars(sl, value="roi.core.ipc", baseline=None,
                                                          out=os.path.join(figdir, "ipc"), title="IPC",
                                                          ylabel="IPC"), "ipc"))
        if all(f"roi.memory.writes.{k}" in ok for k in KINDS):
            norm = base if len(schemes) > 1 else None
            figures.append(R.figure(
                "NVM writes by kind (data, counter, MAC, tree)" + (f" normalised to {norm}'s total" if norm else "")
                + f" per workload and scheme (STAR Fig. 11 style){where}.{seeds}",
                plots.write_traffic_bars(sl, normalize_to=norm, out=os.path.join(figdir, "nvm_writes"),
                                         title="NVM write traffic by kind"), "nvm_writes"))
        for p in others:
            rest = {k: v for k, v in fixed_others.items() if k != p}
            sp = _slice(ok, rest).copy()
            where_p = f" at {_describe(rest)}" if rest else ""
            name = R.slug(p)
            if len(schemes) > 1:
                nm = _normalise_to(sp, base, [p])
                figures.append(R.figure(
                    f"Execution time normalised to {base} at the same `{p}`, geometric mean over workloads, "
                    f"against `{p}` (SecPB Fig. 7 style){where_p}.",
                    plots.lines(nm[nm["scheme"] != base], x=p, y="norm_cycles", series="scheme", agg="gmean",
                                out=os.path.join(figdir, f"norm_vs_{name}"), ylabel=f"execution time / {base}",
                                title=f"Execution time against {p}"), f"norm_vs_{name}"))
            else:
                figures.append(R.figure(
                    f"IPC, geometric mean over workloads, against `{p}`{where_p}.",
                    plots.lines(sp, x=p, y="roi.core.ipc", series="scheme" if "scheme" in sp else None, agg="gmean",
                                out=os.path.join(figdir, f"ipc_vs_{name}"), ylabel="IPC",
                                title=f"IPC against {p}"), f"ipc_vs_{name}"))
            if "roi.tree.root_updates" in sp:
                per = sp.groupby([c for c in ("scheme", p, "workload") if c in sp], sort=False)["roi.tree.root_updates"].mean().reset_index()
                figures.append(R.figure(
                    f"BMT root updates, summed over workloads (mean over seeds), against `{p}` "
                    f"(SecPB Fig. 8 style){where_p}.",
                    plots.lines(per, x=p, y="roi.tree.root_updates", series="scheme" if "scheme" in per else None,
                                agg="sum", out=os.path.join(figdir, f"root_updates_vs_{name}"),
                                ylabel="BMT root updates", title=f"BMT root updates against {p}"),
                    f"root_updates_vs_{name}"))
    if figures:
        blocks.append(R.heading("Plots", 2))
        blocks += figures
    if len(ok) and "roi.core.ipc" in ok and len(schemes) > 1 and "workload" in ok:
        sl = _slice(ok, fixed_others)
        pv = sl.groupby(["workload", "scheme"], sort=False)["roi.core.ipc"].mean().unstack("scheme")
        pv = pv.reindex(index=plots._order(sl["workload"]), columns=[s for s in schemes if s in pv.columns])
        blocks.append(R.heading("IPC by workload and scheme", 2))
        rows = [[w, *pv.loc[w].tolist()] for w in pv.index]
        rows.append(["gmean", *[plots.geomean(pv[c]) for c in pv.columns]])
        blocks.append(R.table(["workload", *pv.columns], rows,
                              note=(f"At {_describe(fixed_others)}. " if fixed_others else "")
                              + ("Mean over seeds." if "seed" in vary else "")))
    blocks.append(R.heading("All points", 2))
    show = [c for c in ("roi.core.cycles", "roi.core.ipc", "roi.core.ppti", "roi.persist_path.buffer.nwpe", "roi.tree.root_updates") if c in df]
    wcols = [f"roi.memory.writes.{k}" for k in KINDS if f"roi.memory.writes.{k}" in df]
    rows = []
    for _, r in df.head(MAX_ROWS).iterrows():
        bad = _failed(r["error"])
        total = sum(r[c] for c in wcols) if wcols and not bad else None
        rows.append([r["id"], *[r[p] for p in params], *[r[c] for c in show], total,
                     _one_line(r["error"]) if bad else ""])
    blocks.append(R.table(["id", *params, *show, "roi.memory.writes (all kinds)", "error"], rows,
                          note=f"First {MAX_ROWS} of {len(df)} points; `spmsim.load()` has them all."
                          if len(df) > MAX_ROWS else None))
    html_path = os.path.join(out_dir, "report.html")
    md_path = os.path.join(out_dir, "report.md")
    _write(html_path, R.to_html(title, blocks))
    _write(md_path, R.to_markdown(blocks, out_dir))
    return [html_path, md_path]


def _failed(err: Any) -> bool:
    return isinstance(err, str) and err != ""


def _one_line(s: str, n: int = 240) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _normalise_to(df, base: str, keys: list[str]):
    """norm_cycles = cycles / the baseline scheme's cycles at the same
    workload and `keys` (mean over seeds on both sides)."""
    by = [c for c in ("workload", *keys) if c in df]
    g = df.groupby(by + ["scheme"], sort=False)["roi.core.cycles"].mean().reset_index()
    b = g[g["scheme"] == base].drop(columns="scheme").rename(columns={"roi.core.cycles": "base_cycles"})
    g = g.merge(b, on=by, how="left")
    g["norm_cycles"] = g["roi.core.cycles"] / g["base_cycles"]
    return g


# --------------------------------------------------------------------------
# SecPB reproduce report


def battery_frame(results: dict, table: str = "V"):
    """The rows of Table V (or VI) of a `spmsim reproduce secpb` results.json:
    from its `battery_rows` data, or, for results written before those
    existed, from the battery Markdown (see `battery_table`)."""
    import pandas as pd  # noqa: PLC0415

    rows = [r for r in results.get("battery_rows") or [] if r.get("table") == table]
    if rows:
        return pd.DataFrame(rows).drop(columns=["table"])
    return battery_table(results.get("battery_markdown") or "", table)


def battery_table(markdown: str, table: str = "V"):
    """The rows of Table V (or VI) from the battery Markdown that
    `spmsim reproduce secpb` keeps in results.json: scheme, entries,
    energy_uj, and for each technology `<tech>_mm3` and `<tech>_paper_mm3`."""
    import pandas as pd  # noqa: PLC0415

    blocks = R.parse_markdown(markdown or "")
    found = False
    for b in blocks:
        if b["kind"] == "heading" and re.match(rf"^Table {table}\b", b["text"]):
            found = True
        elif found and b["kind"] == "table":
            names, tech = [], None
            for c in b["columns"]:
                m = re.match(r"^(.*?)\s*mm3\s*ours$", c)
                if m:
                    tech = R.slug(m.group(1)).replace("-", "_")
                    names.append(f"{tech}_mm3")
                elif c == "paper" and tech:
                    names.append(f"{tech}_paper_mm3")
                elif c.startswith("residual") and tech:
                    names.append(f"{tech}_residual_pct")
                else:
                    names.append(R.slug(c).replace("-", "_"))
            rows = []
            for r in b["rows"]:
                rows.append({n: _number(v) if n != "scheme" else v for n, v in zip(names, r)})
            return pd.DataFrame(rows)
    return None


def _number(s: str):
    t = re.sub(r"[*`%\s]", "", s or "")
    try:
        return float(t)
    except ValueError:
        return s if s not in ("-", "n/a", "") else float("nan")


def _insert_after_section(blocks: list[dict], pattern: str, new: list[dict]) -> bool:
    """Put `new` at the end of the section whose heading matches `pattern`."""
    for i, b in enumerate(blocks):
        if b["kind"] == "heading" and re.match(pattern, b["text"]):
            j = i + 1
            while j < len(blocks) and not (blocks[j]["kind"] == "heading" and blocks[j]["level"] <= b["level"]):
                j += 1
            blocks[j:j] = new
            return True
    return False


def _entries(row: str) -> int | None:
    m = re.match(r"^\s*(\d+)", str(row))
    return int(m.group(1)) if m else None


def _place_and_write(out_dir: str, title: str, blocks: list[dict], placed: list[tuple[str, list[dict]]]) -> list[str]:
    """Put each figure after the section its pattern names (a section of
    its own when none does) and write OUT_DIR/report.html."""
    for pat, figs in placed:
        if not _insert_after_section(blocks, pat, figs):
            blocks.append(R.heading(figs[0]["caption"].split(":")[0], 2))
            blocks += figs
    html_path = os.path.join(out_dir, "report.html")
    _write(html_path, R.to_html(title, blocks))
    return [html_path]


def secon_report(out_dir: str, r: dict, title: str | None = None) -> list[str]:
    """The page of a `spmsim reproduce secon` directory: report.md with each
    figure drawn (per scheme, the geometric mean over the workloads) and the
    paper's printed claims beside ours."""
    import pandas as pd  # noqa: PLC0415

    figdir = os.path.join(out_dir, "figures")
    with open(os.path.join(out_dir, "report.md"), encoding="utf-8") as f:
        blocks = R.parse_markdown(f.read())
    title = title or next((b["text"] for b in blocks if b["kind"] == "heading" and b["level"] == 1), "Secon reproduction")
    placed: list[tuple[str, list[dict]]] = []
    claims = pd.DataFrame(r["claims"])
    for kind, unit, scale in (("change", "change (%)", 100.0), ("factor", "factor (x)", 1.0)):
        c = claims[claims["kind"] == kind].copy()
        if len(c):
            c["ours_v"], c["paper_v"] = c["ours"] * scale, c["paper"] * scale
            placed.append((r"^The paper's claims", [R.figure(
                f"The paper's claims ({unit}): ours beside the paper's.",
                plots.compare_bars(c, label="id", ours="ours_v", paper="paper_v", out=os.path.join(figdir, f"claims_{kind}"),
                                   ylabel=unit, title=f"Secon claims: {kind}"), f"claims_{kind}")]))
    for fig in r["figures"]:
        rows = [{"workload": w, "scheme": s, "x": x, "y": y}
                for w, s, ys in fig["rows"] for x, y in zip(fig["xs"], ys)]
        d = pd.DataFrame(rows)
        agg = "mean" if fig["name"] == "fig13" else "gmean"
        placed.append((r"^" + re.escape(fig["title"].split(":")[0]) + r"\b", [R.figure(
            f"{fig['title']} ({'arithmetic' if agg == 'mean' else 'geometric'} mean over the workloads).",
            plots.lines(d, x="x", y="y", series="scheme", agg=agg, out=os.path.join(figdir, fig["name"]),
                        xlabel=fig["x_label"], ylabel=fig.get("y_label", ""), title=fig["title"].split(":")[0]),
            fig["name"])]))
    return _place_and_write(out_dir, title, blocks, placed)


def reproduce_report(out_dir: str, title: str | None = None) -> list[str]:
    import pandas as pd  # noqa: PLC0415

    with open(os.path.join(out_dir, "results.json"), encoding="utf-8") as f:
        r = json.load(f)
    if "claims" in r and "figures" in r:
        return secon_report(out_dir, r, title)
    figdir = os.path.join(out_dir, "figures")
    md_path = os.path.join(out_dir, "report.md")
    if os.path.isfile(md_path):
        with open(md_path, encoding="utf-8") as f:
            blocks = R.parse_markdown(f.read())
    else:
        blocks = [R.heading("SecPB reproduction", 1),
                  R.paragraph("results.json without its report.md: the plots alone.")]
    title = title or next((b["text"] for b in blocks if b["kind"] == "heading" and b["level"] == 1),
                          "SecPB reproduction")

    placed: list[tuple[str, list[dict]]] = []
    t4 = pd.DataFrame(r["table4"])
    placed.append((r"^Table IV\b", [R.figure(
        "Table IV: slowdown against bbb (geometric mean over the suite, 32-entry SecPB), ours beside the paper's.",
        plots.compare_bars(t4, label="row", ours="ours", paper="paper", out=os.path.join(figdir, "table4"),
                           ylabel="slowdown against bbb (%)", title="Table IV"), "table4")]))
    f6 = pd.DataFrame(r["fig6"])
    placed.append((r"^Fig\. 6\b", [R.figure(
        "Fig. 6: execution time normalised to bbb per workload (32 entries), with the geometric mean.",
        plots.normalized_bars(f6, value="ours", x="row", series="column", baseline="bbb", normalized=True,
                              out=os.path.join(figdir, "fig6"), title="Fig. 6: execution time normalised to bbb",
                              ylabel="execution time / bbb"), "fig6")]))
    for key, pat, ylabel, what in (
            ("fig7", r"^Fig\. 7\b", "CM overhead against bbb (%)", "Fig. 7: CM overhead against bbb by SecPB entries"),
            ("fig8", r"^Fig\. 8\b", "CM root updates (% of sp)", "Fig. 8: CM BMT root updates as a share of sp's")):
        d = pd.DataFrame(r[key])
        d["entries"] = [_entries(x) for x in d["row"]]
        d["paper"] = pd.to_numeric(d["paper"], errors="coerce")
        placed.append((pat, [R.figure(f"{what}; ours (line) and the paper's values (crosses) where its text gives one.",
                                      plots.lines(d, x="entries", y="ours", reference="paper",
                                                  out=os.path.join(figdir, key), xlabel="SecPB entries",
                                                  ylabel=ylabel, title=what.split(":")[0]), key)]))
    if r.get("fig9"):
        f9 = pd.DataFrame(r["fig9"])
        placed.append((r"^Fig\. 9\b", [R.figure(
            "Fig. 9: Bonsai Merkle forests, overhead against bbb (32 entries), ours beside the paper's.",
            plots.compare_bars(f9, label="row", ours="ours", paper="paper", out=os.path.join(figdir, "fig9"),
                               ylabel="overhead against bbb (%)", title="Fig. 9"), "fig9")]))
    bat = battery_frame(r)
    if bat is not None and "scheme" in bat:
        vols = {c: c[:-4].replace("_", "-") for c in bat.columns if c.endswith("_mm3") and "_paper_" not in c}
        paper = {c: c[:-4] + "_paper_mm3" for c in vols if c[:-4] + "_paper_mm3" in bat}
        pretty = {c: {"supercap": "SuperCap", "li-thin": "Li-thin"}.get(v, v) for c, v in vols.items()}
        placed.append((r"^Table V\b", [R.figure(
            "Table V: battery volume per scheme (log scale), each technology ours; black marks: the paper's values.",
            plots.battery_bars(bat, volumes=pretty, paper=paper, out=os.path.join(figdir, "table5"),
                               title="Table V: battery volume"), "table5")]))
    runs = pd.json_normalize(r["runs"])
    if "entries" in runs and all(f"nvm_writes.{k}" in runs for k in KINDS):
        sel = [s for s in ("bbb", "sp", "cobcm", "bcm", "cm", "nogap") if s in set(runs["scheme"])]
        rw = runs[(runs["entries"] == 32) & runs["scheme"].isin(sel)]
        labels = [s["label"] for s in r.get("suite", [])]
        rw = rw[rw["workload"].isin(labels)] if labels else rw
        if len(rw):
            placed.append((r"^Fig\. 6\b", [R.figure(
                "NVM writes by kind normalised to bbb's total, per workload (32 entries; STAR Fig. 11 style).",
                plots.write_traffic_bars(rw, prefix="nvm_writes.", normalize_to="bbb" if "bbb" in sel else None,
                                         series_order=sel, out=os.path.join(figdir, "nvm_writes"),
                                         title="NVM write traffic by kind"), "nvm_writes")]))
    return _place_and_write(out_dir, title, blocks, placed)


# --------------------------------------------------------------------------
# CLI


def main(args: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="spmsim report", description="Write OUT_DIR/report.html (self-contained) "
                                 "and, for a sweep, OUT_DIR/report.md, with plots in OUT_DIR/figures/.")
    ap.add_argument("out_dir", metavar="OUT_DIR", help="a sweep directory, a `spmsim reproduce secpb|secon` directory, a `spmsim compare` "
                    "directory or a `spmsim reproduce all` directory")
    ap.add_argument("--baseline", metavar="SCHEME", help="scheme to normalise to (default: bbb if swept, else "
                    "the first scheme)")
    ap.add_argument("--title", help="page title")
    a = ap.parse_args(args)
    try:
        paths = write_report(a.out_dir, baseline=a.baseline, title=a.title)
    except (ReportError, FileNotFoundError) as e:
        print(f"spmsim report: error: {e}", file=sys.stderr)
        return 2
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
