"""The page of a `spmsim compare` directory.

    OUT_DIR/results.json ({"kind": "compare", ...})  -> OUT_DIR/report.html
    Pareto plots (PNG + SVG)                          -> OUT_DIR/figures/

The page has the common machine, the best scheme per criterion, one table
row per scheme (slowdown, NVM writes by kind, energy, battery, recovery
time, on-chip non-volatile state, attacks, the paper's own configuration),
two Pareto plots (slowdown against recovery time and against battery
volume) and the slowdown per workload. The report.md beside it is the Rust
side's and is left as it is.

Every number may be null in results.json (not measured, or the run
failed): the page shows "n/a" for it. Keys the page does not know are
ignored.
"""

from __future__ import annotations

import math
import os
from typing import Any

from . import _report_render as R
from . import plots
from ._report_render import ReportError
from ._report_render import write as _write

NA = "n/a"
WRITE_KINDS = ("data", "counter", "mac", "tree", "recovery")
FRONTS = ("persist-buffer", "memory-controller", "cache-hierarchy")

#: The two Pareto plots: (results.json pareto key, HTML figure id, file name,
#: x getter path, x axis label, what x is in a caption).
PARETO = (
    ("recovery", "pareto-recovery", "pareto_recovery", ("recovery_seconds", "1TiB"),
     "recovery time of 1 TiB (s, log scale)", "the time to recover 1 TiB of protected memory"),
    ("battery", "pareto-battery", "pareto_battery", ("battery", "supercap_mm3"),
     "battery volume, SuperCap (mm³, log scale)", "the volume of a SuperCap battery that drains the "
     "volatile state on a power failure"),
)


def _get(d: Any, *keys: str) -> Any:
    """d[k1][k2]..., None where a level is missing or not an object."""
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _num(v: Any) -> float | None:
    """A finite number, else None (null, text, NaN, a boolean)."""
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _cell(v: Any) -> str:
    n = _num(v)
    return NA if n is None else R.fmt(n)


def _int_cell(v: Any) -> str:
    n = _num(v)
    return NA if n is None else (str(int(n)) if n == int(n) else R.fmt(n))


def _text(v: Any) -> str:
    return NA if v is None or v == "" else str(v)


def _attacks(a: Any) -> str:
    """"11/14 (8 at run time, 3 at recovery; 3 ruled out)" and any misses."""
    if not isinstance(a, dict):
        return NA
    det, tot = _num(a.get("detected")), _num(a.get("total"))
    head = f"{_int_cell(det)}/{_int_cell(tot)}"
    split = []
    for key, what in (("at_run_time", "at run time"), ("at_recovery", "at recovery")):
        if _num(a.get(key)) is not None:
            split.append(f"{_int_cell(a[key])} {what}")
    extra = []
    for key, what in (("ruled_out", "ruled out"), ("undetected", "undetected"), ("false_alarms", "false alarms")):
        n = _num(a.get(key))
        if n:
            extra.append(f"{_int_cell(n)} {what}")
    inner = ", ".join(split) + ("; " if split and extra else "") + ", ".join(extra)
    return f"{head} ({inner})" if inner else head


def _paper_config(p: Any) -> str:
    """"1.200 (secon; persistency model tep, here strict)"."""
    if not isinstance(p, dict):
        return NA
    parts = [str(p["preset"])] if p.get("preset") else []
    diffs = p.get("differences")
    if isinstance(diffs, list) and diffs:
        parts.append("; ".join(str(d) for d in diffs))
    return _cell(p.get("slowdown_gmean")) + (f" ({'; '.join(parts)})" if parts else "")


def _secure(s: dict) -> bool:
    return s.get("secure") is not False


def _name(s: dict, i: int) -> str:
    return str(s.get("preset") or s.get("scheme") or f"#{i + 1}")


def _schemes(doc: dict, path: str) -> list[dict]:
    schemes = doc.get("schemes")
    if schemes is None:
        return []
    if not isinstance(schemes, list):
        raise ReportError(f"{path}: `schemes` is a {type(schemes).__name__}, not a list")
    for i, s in enumerate(schemes):
        if not isinstance(s, dict):
            raise ReportError(f"{path}: schemes[{i}] is a {type(s).__name__}, not an object")
    return schemes


def _best_text(best: Any) -> str:
    items = []
    for b in best if isinstance(best, list) else []:
        if not isinstance(b, dict):
            continue
        value = b.get("value")
        items.append(f"{_text(b.get('criterion'))}: **{_text(b.get('preset'))}**"
                     + (f" ({R.fmt(value)})" if value is not None else ""))
    return "Best per criterion: " + ("; ".join(items) + "." if items else "none given.")


def _scheme_table(schemes: list[dict]) -> dict:
    cols = ["preset", "scheme", "paper", "front", "secure", "baseline", "slowdown (gmean)",
            "writes pki (total)", *[f"{k} pki" for k in WRITE_KINDS], "energy (µJ/kinstr)", "battery SuperCap (mm³)",
            "recovery 16 GiB (s)", "recovery 1 TiB (s)", "on-chip NV (B)", "attacks detected/total",
            "paper config: slowdown (preset; differences)"]
    rows = []
    for i, s in enumerate(schemes):
        w = s.get("writes_pki")
        rows.append([_name(s, i), _text(s.get("scheme")), _text(s.get("paper")), _text(s.get("front")),
                     "yes" if _secure(s) else "no", _text(s.get("baseline")), _cell(s.get("slowdown_gmean")),
                     _cell(_get(w, "total")), *[_cell(_get(w, k)) for k in WRITE_KINDS],
                     _cell(s.get("energy_uj_per_kinstr")), _cell(_get(s, "battery", "supercap_mm3")),
                     _cell(_get(s, "recovery_seconds", "16GiB")), _cell(_get(s, "recovery_seconds", "1TiB")),
                     _int_cell(s.get("onchip_nv_bytes")), _attacks(s.get("attacks")),
                     _paper_config(s.get("paper_config"))])
    return R.table(cols, rows, note="Slowdown: execution time against the scheme's insecure baseline, geometric "
                   "mean over the workloads. Writes pki: NVM writes per thousand instructions by kind. "
                   "Attacks: detected of those run, at run time or at recovery; an attack the scheme rules out "
                   "by construction is not counted as detected. n/a: not measured, or the run failed.")


def _workload_table(doc: dict, schemes: list[dict]) -> dict | None:
    names = [_name(s, i) for i, s in enumerate(schemes)]
    per = [s.get("slowdown") if isinstance(s.get("slowdown"), dict) else {} for s in schemes]
    listed = doc.get("workloads") if isinstance(doc.get("workloads"), list) else []
    workloads = plots._order([str(w) for w in listed] + [w for d in per for w in d])
    if not workloads:
        return None
    rows = [["baseline", *[_text(s.get("baseline")) for s in schemes]]]
    rows += [[w, *[_cell(d.get(w)) for d in per]] for w in workloads]
    rows.append(["gmean", *[_cell(s.get("slowdown_gmean")) for s in schemes]])
    return R.table(["workload", *names], rows, note="Execution time of each scheme against its baseline (first "
                   "row), per workload; gmean is the geometric mean over the workloads as results.json gives it. "
                   "n/a: the workload did not run for that scheme.")


def _front_of(points: list[tuple[str, float, float]]) -> list[str]:
    """The Pareto front (lower x and lower y are better) of (name, x, y)."""
    out, best_y = [], math.inf
    for name, _, y in sorted(points, key=lambda p: (p[1], p[2])):
        if y < best_y:
            out.append(name)
            best_y = y
    return out


def _pareto_figure(doc: dict, schemes: list[dict], spec: tuple, figdir: str) -> dict:
    import pandas as pd  # noqa: PLC0415

    key, html_id, file_name, xpath, xlabel, what = spec
    rows, missing = [], []
    insecure = [_name(s, i) for i, s in enumerate(schemes) if not _secure(s)]
    for i, s in enumerate(schemes):
        if not _secure(s):
            continue
        x, y = _num(_get(s, *xpath)), _num(s.get("slowdown_gmean"))
        if x is None or y is None:
            missing.append(_name(s, i))
        else:
            rows.append({"preset": _name(s, i), "front": _text(s.get("front")), "x": x, "y": y})
    given = _get(doc, "pareto", key)
    if isinstance(given, list):
        front = [str(p) for p in given]
        source = "from results.json"
    else:
        front = _front_of([(r["preset"], r["x"], r["y"]) for r in rows])
        source = "computed here (results.json gives none)"
    plotted = {r["preset"] for r in rows}
    caption = [f"Slowdown (geometric mean over the workloads, against each scheme's insecure baseline) against "
               f"{what}; one point per secure scheme, coloured by where its protection sits; lower left is better."]
    on = [p for p in front if p in plotted]
    caption.append(f"Pareto front {source}: {', '.join(on) if on else 'none'}"
                   + (" (larger points with a black edge, joined by a step line)." if on else "."))
    off = [p for p in front if p not in plotted]
    if off:
        caption.append(f"On the front but not plotted (an insecure baseline or a missing value): {', '.join(off)}.")
    if not rows:
        return R.paragraph(f"Nothing to plot for {key}: no secure scheme has both a slowdown and {what}. "
                           + (f"Without a value: {', '.join(missing)}." if missing else ""))
    floor = plots.log_floor(r["x"] for r in rows)
    zeros = [r["preset"] for r in rows if r["x"] <= 0]
    if zeros and floor is not None:
        caption.append(f"A value of 0 ({', '.join(zeros)}) cannot sit on the log axis: it is drawn at {floor:g}, "
                       "left of the dotted line, as a left-pointing triangle.")
    elif zeros:
        caption.append("No value is above 0, so the x axis is linear.")
    if missing:
        caption.append(f"Not plotted, a value is missing: {', '.join(missing)}.")
    if insecure:
        caption.append(f"The insecure baselines ({', '.join(insecure)}) are not plotted.")
    df = pd.DataFrame(rows)
    present = set(df["front"])
    order = [f for f in FRONTS if f in present]
    paths = plots.pareto_scatter(df, x="x", y="y", label="preset", group="front", front=on, yref=1.0,
                                 out=os.path.join(figdir, file_name), xlabel=xlabel,
                                 ylabel="slowdown against the baseline (gmean)", group_order=order,
                                 title=f"Slowdown against {'recovery time' if key == 'recovery' else 'battery volume'}")
    return R.figure(" ".join(caption), paths, file_name, html_id=html_id)


def _model_blocks(doc: dict, schemes: list[dict], figdir: str) -> list[dict]:
    """Every scheme under each persistency model results.json gives
    (`models`): the slowdowns side by side, then each model's Pareto
    fronts. Nothing when it gives strict's alone."""
    models = [m for m in doc.get("models") or [] if isinstance(m, dict) and isinstance(m.get("schemes"), list)]
    if len(models) < 2:
        return []
    names = [_text(m.get("model")) for m in models]
    rows = []
    for i, s in enumerate(schemes):
        cells = []
        for m in models:
            got = [x for x in m["schemes"] if isinstance(x, dict) and x.get("preset") == s.get("preset")]
            cells.append(_cell(got[0].get("slowdown_gmean")) if got else "cannot run")
        rows.append([_name(s, i), *cells])
    blocks = [R.heading("Under each persistency model", 2),
              R.table(["preset", *[f"slowdown, {n}" for n in names]], rows,
                      note="The timing runs again with the persistency model the only change, each against its "
                      "insecure baseline under the same model: strict, epoch, and each preset's own (its paper's). "
                      "A persist buffer or battery-backed caches keep their strict row: a store is persistent as it "
                      "enters them. cannot run: see the not-run list of report.md.")]
    for m, n in zip(models, names):
        blocks.append(R.heading(f"Pareto fronts under {n}", 3))
        sub = {"pareto": m.get("pareto")}
        for key, html_id, file_name, xpath, xlabel, what in PARETO:
            spec = (key, f"{html_id}-{n}", f"{file_name}_{n}", xpath, xlabel, f"{what} ({n} persistency)")
            blocks.append(_pareto_figure(sub, m["schemes"], spec, figdir))
    return blocks


def compare_report(out_dir: str, doc: dict, title: str | None = None) -> list[str]:
    """Write OUT_DIR/report.html for the `spmsim compare` results `doc`
    (results.json); returns [its path]. Raises ReportError when `schemes`
    is not a list of objects."""
    path = os.path.join(out_dir, "results.json")
    schemes = _schemes(doc, path)
    workloads = doc.get("workloads") if isinstance(doc.get("workloads"), list) else []
    secure = sum(1 for s in schemes if _secure(s))
    title = title or (doc.get("title") if isinstance(doc.get("title"), str) else None) \
        or "spmsim compare: secure persistent memory schemes side by side"
    blocks: list[dict] = [R.heading(title, 1)]
    blocks.append(R.paragraph(
        f"`spmsim compare{' --quick' if doc.get('quick') else ''}` in `{os.path.abspath(out_dir)}`: "
        f"{len(schemes)} schemes ({secure} secure, {len(schemes) - secure} insecure baselines) on "
        f"{len(workloads)} workloads{': ' + ', '.join(f'`{w}`' for w in workloads) if workloads else ''}."
        + (" Quick mode: short runs, for a first look rather than for the numbers." if doc.get("quick") else "")
        + " The Markdown report beside this page (report.md) was written by `spmsim compare`."))
    blocks.append(R.paragraph(_best_text(doc.get("best"))))
    blocks.append(R.heading("Common machine", 2))
    blocks.append(R.paragraph(_text(doc.get("common_machine"))))
    if not schemes:
        blocks.append(R.heading("Schemes", 2))
        blocks.append(R.paragraph("results.json lists no schemes: there is nothing to tabulate or plot."))
    else:
        figdir = os.path.join(out_dir, "figures")
        blocks.append(R.heading("Schemes", 2))
        blocks.append(_scheme_table(schemes))
        blocks.append(R.heading("Pareto fronts", 2))
        blocks += [_pareto_figure(doc, schemes, spec, figdir) for spec in PARETO]
        table = _workload_table(doc, schemes)
        if table is not None:
            blocks.append(R.heading("Slowdown per workload", 2))
            blocks.append(table)
        blocks += _model_blocks(doc, schemes, figdir)
    html_path = os.path.join(out_dir, "report.html")
    _write(html_path, R.to_html(title, blocks))
    return [html_path]
