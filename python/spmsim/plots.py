"""Plot helpers in the figure styles of the papers spmsim reproduces.

    normalized_bars      per-workload bars normalised to a baseline, with a
                         geometric-mean group (SecPB Fig. 6)
    lines                a metric against a parameter, ours beside the
                         paper's (SecPB Figs. 7 and 8)
    battery_bars         battery volume per scheme, one bar per technology,
                         log scale (SecPB Table V)
    write_traffic_bars   NVM writes stacked by kind: data, counter, MAC,
                         tree (STAR Fig. 11)
    compare_bars         one value per label, ours beside the paper's
    pareto_scatter       one labelled point per scheme on two costs, the
                         Pareto front highlighted and joined by a step line
    claims_scatter       a paper's claims, ours against the paper's, log-log,
                         each with the range its rule accepts, in three
                         outcomes (reproduced, the paper disagrees with
                         itself, missed), all but the reproduced labelled
                         (the index of `spmsim reproduce all`)

Every helper takes a long-format DataFrame (as `spmsim.load` gives), draws
with matplotlib's object API (an Agg canvas; the pyplot backend of the
caller is left alone), saves `OUT.png` and `OUT.svg`, and returns the two
paths. Repeated rows (seeds, say) are averaged.
"""

from __future__ import annotations

import math
import os
from typing import Any, Iterable, Mapping, Sequence

KIND_COLORS = {"data": "#4C72B0", "counter": "#DD8452", "mac": "#55A868", "tree": "#C44E52"}
PALETTE = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974",
           "#64B5CD"]
GMEAN = "gmean"


def _figure(width: float, height: float):
    import matplotlib  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415

    matplotlib.rcParams["svg.hashsalt"] = "spmsim"  # stable ids: the same plot gives the same SVG
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


def save(fig, out: str) -> list[str]:
    """Save `fig` as OUT.png and OUT.svg (an extension on `out` is dropped)."""
    stem, ext = os.path.splitext(os.fspath(out))
    if ext.lower() not in (".png", ".svg", ".pdf"):
        stem = os.fspath(out)
    d = os.path.dirname(os.path.abspath(stem))
    os.makedirs(d, exist_ok=True)
    png, svg = stem + ".png", stem + ".svg"
    fig.savefig(png, dpi=150, metadata={"Software": "spmsim"})
    fig.savefig(svg, metadata={"Date": None, "Creator": "spmsim"})
    return [png, svg]


def _order(values: Iterable[Any], first: Sequence[Any] | None = None) -> list:
    """Distinct values in order of first appearance, `first` leading."""
    out: list = []
    for v in list(first or []) + list(values):
        if v not in out:
            out.append(v)
    return out


def geomean(values: Iterable[float]) -> float:
    v = [float(x) for x in values if x is not None and not (isinstance(x, float) and math.isnan(x)) and x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def _require(df, cols: Iterable[str]) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise KeyError(f"missing column(s) {', '.join(missing)}; have {', '.join(map(str, df.columns))}")


def _pivot(df, index: str, columns: str, value: str, index_order=None, column_order=None):
    _require(df, [index, columns, value])
    p = df.groupby([index, columns], sort=False)[value].mean().unstack(columns)
    rows = [r for r in _order(df[index], index_order) if r in p.index]
    cols = [c for c in _order(df[columns], column_order) if c in p.columns]
    return p.reindex(index=rows, columns=cols)


def normalized_bars(df, value: str = "roi.core.cycles", baseline: str | None = "bbb", x: str = "workload",
                    series: str = "scheme", *, out: str, title: str | None = None, ylabel: str | None = None,
                    normalized: bool = False, show_baseline: bool = False, with_gmean: bool = True,
                    x_order: Sequence | None = None, series_order: Sequence | None = None,
                    logy: bool | None = None) -> list[str]:
    """Grouped bars, one group per `x` (workload), one bar per `series`
    (scheme), each `value` divided by the baseline series' value in the same
    group, then a geometric-mean group. `normalized=True` takes `value` as
    already normalised; `baseline=None` draws the raw values. `logy`
    defaults to a log axis when the bars span more than a factor of 30."""
    p = _pivot(df, x, series, value, x_order, series_order)
    if not normalized and baseline is not None:
        if baseline not in p.columns:
            raise KeyError(f"baseline {baseline!r} is not a value of column {series!r}: {list(p.columns)}")
        p = p.div(p[baseline], axis=0)
        if not show_baseline:
            p = p.drop(columns=[baseline])
    if with_gmean:
        p.loc[GMEAN] = [geomean(p[c]) for c in p.columns]
    groups, names = list(p.index), list(p.columns)
    fig, ax = _figure(min(12.0, max(6.0, 0.28 * len(groups) * max(1, len(names)) + 2.0)), 4.2)
    finite = [float(v) for v in p.to_numpy().ravel() if v is not None and math.isfinite(float(v)) and float(v) > 0]
    if logy is None:
        logy = bool(finite) and max(finite) / min(finite) > 30
    if logy:
        _log_axis(ax)
    width = 0.8 / max(1, len(names))
    for j, name in enumerate(names):
        xs = [i - 0.4 + width * (j + 0.5) for i in range(len(groups))]
        ax.bar(xs, p[name].tolist(), width, label=str(name), color=PALETTE[j % len(PALETTE)], edgecolor="white",
               linewidth=0.4)
    if with_gmean:
        ax.axvline(len(groups) - 1.5, color="#888888", linewidth=0.8, linestyle=":")
    if baseline is not None or normalized:
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(groups)), [str(g) for g in groups], rotation=30 if len(groups) > 4 else 0,
                  ha="right" if len(groups) > 4 else "center")
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel(ylabel or (f"{value} normalised to {baseline}" if baseline else value))
    ax.set_title(title or "")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(ncols=min(len(names), 7), fontsize="small", loc="upper left", frameon=False)
    if logy and finite:
        ax.set_ylim(min(finite) / 1.5, max(finite) * 4)
    else:
        _headroom(ax, p.to_numpy().ravel())
    return save(fig, out)


def _log_axis(ax, axis: str = "y") -> None:
    from matplotlib.ticker import FuncFormatter  # noqa: PLC0415

    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    getattr(ax, axis + "axis").set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))

    # On an axis of less than a decade matplotlib labels every minor tick
    # (2x10^-2, 3x10^-2, ...), and they run into each other: 2 and 5 only.
    def minor(v: float, _) -> str:
        return f"{v:g}" if v > 0 and round(v / 10 ** math.floor(math.log10(v))) in (2, 5) else ""

    getattr(ax, axis + "axis").set_minor_formatter(FuncFormatter(minor))


def _headroom(ax, values) -> None:
    # Room above the tallest bar for the legend.
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if finite and ax.get_yscale() == "linear":
        top, low = max(finite), min(0.0, min(finite))
        ax.set_ylim(low * 1.1, top * 1.22 if top > 0 else 1)


def lines(df, x: str, y: str, series: str | None = None, *, out: str, reference: str | None = None,
          title: str | None = None, xlabel: str | None = None, ylabel: str | None = None, agg: str = "mean",
          logx: bool | None = None, series_order: Sequence | None = None) -> list[str]:
    """`y` against `x`, one line per `series` (or one line), aggregated over
    repeated rows by `agg` ("mean", "gmean" or "sum"). `reference` names a
    column of the paper's values, drawn dashed beside ours where present.
    `logx` defaults to a base-2 axis when x spans a factor of 16 or more."""
    _require(df, [x, y] + ([series] if series else []) + ([reference] if reference else []))
    fig, ax = _figure(6.4, 4.2)
    keys = _order(df[series], series_order) if series else [None]
    xs_all = []
    for j, key in enumerate(keys):
        part = df if key is None else df[df[series] == key]
        g = part.groupby(x, sort=True)
        vals = {"mean": g[y].mean(), "sum": g[y].sum(), "gmean": g[y].agg(geomean)}[agg]
        color = PALETTE[j % len(PALETTE)]
        label = "ours" if key is None else str(key)
        ax.plot(vals.index.tolist(), vals.tolist(), marker="o", color=color, label=label + (" (ours)" if reference and key is not None else ""))
        xs_all += vals.index.tolist()
        if reference:
            r = g[reference].mean().dropna()
            if len(r):
                # Joined only where the paper gives every point: a line across
                # its gaps would read as values it never printed.
                ax.plot(r.index.tolist(), r.tolist(), marker="x", markersize=8, markeredgewidth=2,
                        linestyle="--" if len(r) == len(vals) else "none", color=color if key is not None else "#555555",
                        label="paper" if key is None else f"{key} (paper)")
    numeric = [v for v in xs_all if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if logx is None:
        logx = len(numeric) == len(xs_all) and numeric and min(numeric) > 0 and max(numeric) / min(numeric) >= 16
    if logx:
        ax.set_xscale("log", base=2)
        ax.minorticks_off()
    ticks = sorted(set(numeric))
    if ticks and len(numeric) == len(xs_all) and len(ticks) <= 12:
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    ax.set_title(title or "")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", frameon=False)
    return save(fig, out)


def _grouped(ax, labels: list, columns: Mapping[str, list], colors: Sequence[str], log: bool) -> None:
    width = 0.8 / max(1, len(columns))
    for j, (name, vals) in enumerate(columns.items()):
        xs = [i - 0.4 + width * (j + 0.5) for i in range(len(labels))]
        ax.bar(xs, vals, width, label=name, color=colors[j % len(colors)], edgecolor="white", linewidth=0.4)
    ax.set_xticks(range(len(labels)), [str(v) for v in labels], rotation=30 if len(labels) > 5 else 0,
                  ha="right" if len(labels) > 5 else "center")
    if log:
        _log_axis(ax)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def battery_bars(df, scheme: str = "scheme", volumes: Sequence[str] | Mapping[str, str] = ("supercap_mm3", "li_thin_mm3"),
                 paper: Mapping[str, str] | None = None, *, out: str, title: str | None = None, log: bool = True,
                 ylabel: str = "battery volume (mm³)") -> list[str]:
    """Battery volume per scheme (Table V): one bar per technology column
    in `volumes` (a mapping renames them for the legend); `paper` maps a
    volume column to the column of the paper's value, drawn as a marker on
    the bar. Log scale by default (the schemes span five decades)."""
    names = dict(volumes) if isinstance(volumes, Mapping) else {c: c for c in volumes}
    _require(df, [scheme, *names] + list((paper or {}).values()))
    d = df.groupby(scheme, sort=False)[list(names) + list((paper or {}).values())].mean()
    labels = list(d.index)
    fig, ax = _figure(max(6.0, 0.7 * len(labels) + 2.0), 4.2)
    cols = {names[c]: d[c].tolist() for c in names}
    _grouped(ax, labels, cols, PALETTE, log)
    width = 0.8 / max(1, len(names))
    first = True
    for j, c in enumerate(names):
        pc = (paper or {}).get(c)
        if pc is None:
            continue
        xs = [i - 0.4 + width * (j + 0.5) for i in range(len(labels))]
        ys = d[pc].tolist()
        pts = [(xx, yy) for xx, yy in zip(xs, ys) if yy is not None and math.isfinite(yy) and (yy > 0 or not log)]
        if pts:
            ax.scatter(*zip(*pts), marker="_", s=220, linewidths=2.2, color="black", zorder=3,
                       label="paper" if first else None)
            first = False
    ax.set_ylabel(ylabel)
    ax.set_title(title or "")
    ax.legend(fontsize="small", frameon=False)
    return save(fig, out)


def write_traffic_bars(df, x: str | None = "workload", series: str = "scheme",
                       kinds: Sequence[str] = ("data", "counter", "mac", "tree"), prefix: str = "roi.memory.writes.", *,
                       out: str, normalize_to: str | None = None, title: str | None = None,
                       x_order: Sequence | None = None, series_order: Sequence | None = None) -> list[str]:
    """NVM writes stacked by kind (STAR Fig. 11): per `x` group (workload)
    one bar per `series` (scheme), each stacked data/counter/mac/tree from
    the columns PREFIX+kind. `normalize_to` divides by that series' total
    in the same group."""
    cols = [prefix + k for k in kinds]
    _require(df, cols + [series] + ([x] if x else []))
    work = df.copy()
    if x is None:
        x = "__all__"
        work[x] = "all"
    g = work.groupby([x, series], sort=False)[cols].mean()
    groups = [v for v in _order(work[x], x_order)]
    names = [v for v in _order(work[series], series_order)]
    if normalize_to is not None and normalize_to not in names:
        raise KeyError(f"normalize_to {normalize_to!r} is not a value of column {series!r}: {names}")
    n = len(names)
    width = 0.8 / max(1, n)
    fig, ax = _figure(min(14.0, max(6.0, 0.32 * len(groups) * n + 2.0)), 4.6)
    ticks, ticklabels = [], []
    tallest = 0.0
    for i, grp in enumerate(groups):
        denom = 1.0
        if normalize_to is not None and (grp, normalize_to) in g.index:
            denom = float(g.loc[(grp, normalize_to)].sum()) or 1.0
        for j, name in enumerate(names):
            if (grp, name) not in g.index:
                continue
            xpos = i - 0.4 + width * (j + 0.5)
            bottom = 0.0
            for k, c in zip(kinds, cols):
                v = float(g.loc[(grp, name), c]) / denom
                ax.bar(xpos, v, width * 0.92, bottom=bottom, color=KIND_COLORS.get(k, PALETTE[len(ticks) % 10]),
                       label=k if (i == 0 and j == 0) else None, edgecolor="white", linewidth=0.3)
                bottom += v
            tallest = max(tallest, bottom)
            ticks.append(xpos)
            ticklabels.append(str(name))
    ax.set_xticks(ticks, ticklabels, rotation=90, fontsize="x-small")
    if x != "__all__":
        sec = ax.secondary_xaxis("bottom")
        sec.set_xticks(range(len(groups)), [str(v) for v in groups])
        longest = max((len(str(v)) for v in names), default=1)
        sec.tick_params(axis="x", length=0, pad=8 + 5.2 * longest)
        sec.spines["bottom"].set_visible(False)
    ax.set_ylim(0, tallest * 1.18 if tallest > 0 else 1)
    ax.set_ylabel(f"NVM writes normalised to {normalize_to}" if normalize_to else "NVM writes")
    ax.set_title(title or "")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(ncols=len(kinds), fontsize="small", frameon=False, loc="upper left")
    return save(fig, out)


def compare_bars(df, label: str, ours: str = "ours", paper: str | None = "paper", *, out: str,
                 title: str | None = None, ylabel: str | None = None) -> list[str]:
    """One value per `label`, ours beside the paper's where it has one."""
    _require(df, [label, ours] + ([paper] if paper else []))
    labels = _order(df[label])
    d = df.groupby(label, sort=False)[[c for c in (ours, paper) if c]].mean().reindex(labels)
    cols = {"ours": d[ours].tolist()}
    if paper:
        cols["paper"] = [v if v is not None and math.isfinite(v) else 0.0 for v in d[paper].tolist()]
    fig, ax = _figure(max(5.0, 0.9 * len(labels) + 2.0), 4.0)
    # A log axis when the bars span more than a factor of 30 (Table IV's
    # paper values run from 1.3 % to 118 %: on a linear axis beside ours
    # the small ones vanish); only positive values can be drawn on it.
    vals = [v for vs in cols.values() for v in vs if v is not None and math.isfinite(v) and v != 0.0]
    logy = bool(vals) and min(vals) > 0 and max(vals) / min(vals) > 30
    _grouped(ax, labels, cols, [PALETTE[0], "#9A9A9A"], log=logy)
    if logy:
        ax.set_ylabel((ylabel or ours) + " (log scale)")
    else:
        ax.axhline(0, color="black", linewidth=0.6)
    if not logy:
        _headroom(ax, [v for vals in cols.values() for v in vals])
        ax.set_ylabel(ylabel or ours)
    ax.set_title(title or "")
    ax.legend(fontsize="small", frameon=False)
    return save(fig, out)


def _finite(v: Any) -> bool:
    if v is None or isinstance(v, bool):
        return False
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def log_floor(values: Iterable[Any]) -> float | None:
    """Where a log axis over `values` draws the ones that are zero (or
    negative): the power of ten at least a decade below the smallest
    positive value. None when no value is positive (no log axis then)."""
    pos = [float(v) for v in values if _finite(v) and float(v) > 0]
    if not pos:
        return None
    return 10.0 ** (math.floor(math.log10(min(pos))) - 1)


def pareto_scatter(df, x: str, y: str, label: str = "preset", group: str | None = None, *, out: str,
                   front: Sequence[Any] | None = None, logx: bool = True, yref: float | None = None,
                   title: str | None = None, xlabel: str | None = None, ylabel: str | None = None,
                   group_order: Sequence | None = None) -> list[str]:
    """One point per row, named by its `label` and coloured by its `group`,
    `y` against `x` (both costs: lower is better). The rows whose label is
    in `front` are drawn larger with a black edge and joined in x order by
    a step line (the staircase of a Pareto front). Rows without a finite x
    and y are left out. On a log x axis (`logx`) an x of zero or below is
    drawn at `log_floor` of the x values as a left-pointing triangle, with
    a dotted line at the floor; when no x is positive the axis is linear.
    `yref` draws a dashed horizontal reference line (1.0 for a slowdown)."""
    from matplotlib.lines import Line2D  # noqa: PLC0415

    _require(df, [x, y, label] + ([group] if group else []))
    rows = [(r[label], float(r[x]), float(r[y]), r[group] if group else None)
            for _, r in df.iterrows() if _finite(r[x]) and _finite(r[y])]
    floor = log_floor(xv for _, xv, _, _ in rows) if logx else None
    use_log = floor is not None

    def xpos(xv: float) -> float:
        return floor if use_log and xv <= 0 else xv

    fig, ax = _figure(7.2, 4.8)
    if use_log:
        _log_axis(ax, "x")
    groups = _order([g for *_, g in rows], group_order) if group else [None]
    colors = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(groups)}
    on_front = set(front or [])
    handles = []
    for g in groups:
        if g is not None and any(r[3] == g for r in rows):
            handles.append(Line2D([], [], linestyle="none", marker="o", markersize=7, color=colors[g], label=str(g)))
    for lab, xv, yv, g in rows:
        best = lab in on_front
        marker = "<" if use_log and xv <= 0 else "o"
        ax.scatter([xpos(xv)], [yv], s=90 if best else 40, marker=marker, color=colors[g],
                   edgecolors="black" if best else "none", linewidths=1.2, alpha=1.0 if best else 0.75, zorder=3)
    pts = sorted((xpos(xv), yv) for lab, xv, yv, _ in rows if lab in on_front)
    if pts:
        ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", color="black", linewidth=1.2, zorder=2)
        handles.append(Line2D([], [], color="black", linewidth=1.2, marker="o", markersize=8,
                              markerfacecolor="white", markeredgecolor="black", label="Pareto front"))
    if use_log and any(xv <= 0 for _, xv, _, _ in rows):
        ax.axvline(floor, color="#888888", linewidth=0.9, linestyle=":", zorder=1)
        handles.append(Line2D([], [], linestyle="none", marker="<", color="#666666", label=f"0, drawn at {floor:g}"))
    if yref is not None:
        ax.axhline(yref, color="black", linewidth=0.8, linestyle="--", zorder=1)
    if not rows:
        ax.text(0.5, 0.5, "no point has both values", transform=ax.transAxes, ha="center", va="center",
                color="#666666")
    ax.margins(x=0.12, y=0.12)
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    ax.set_title(title or "")
    ax.grid(alpha=0.3, which="major")
    ax.set_axisbelow(True)
    # The labels go last: grouping needs the final axis limits, and the
    # nudging needs the layout the legend and titles give.
    points = [(xpos(xv), yv) for _, xv, yv, _ in rows]
    groups = _near_groups(points, ax.get_xlim(), ax.get_ylim(), use_log)
    # Each label sits above right of the top right of its group, clear of every marker in it.
    _draw_group_labels(fig, ax, [([str(rows[i][0]) for i in members], [rows[i][0] in on_front for i in members],
                                  (max(points[i][0] for i in members), max(points[i][1] for i in members)))
                                 for members in groups])
    if handles:
        ax.legend(handles=handles, fontsize="small", frameon=False, loc="best")
    return save(fig, out)


# Two points share one label when they are this close on the plot. x: on a
# log axis 0.05 of a decade (a factor of 1.12), or 1.5 % of the axis span
# when that is wider, since a 40-point² marker is about 6 points across, some
# 1.4 % of the ~450-point-wide axes, so two points nearer than that overlap
# however many decades the axis spans; on a linear axis the 1.5 % alone.
# y: 1.5 % of the axis span. The grouping is transitive (single linkage): a
# chain of near points is one group.
NEAR_DECADES = 0.05
NEAR_SPAN = 0.015
# A group label names at most this many points; a longer one names the
# first three and "+N more".
MAX_NAMES = 4
# ... and stops before its names pass this many characters (long names, a
# planner's compositions, would squeeze the axes to make room for them).
MAX_LABEL_CHARS = 44


def _near_groups(points: Sequence[tuple[float, float]], xlim: Sequence[float], ylim: Sequence[float],
                 logx: bool, logy: bool = False) -> list[list[int]]:
    """Indices of `points` (x, y as drawn) grouped by nearness on the plot
    (NEAR_DECADES, NEAR_SPAN; on a log y axis, y as x is), each group in
    point order, the groups in the order of their first point."""
    def fx(v: float) -> float:
        return math.log10(v) if logx else v

    def fy(v: float) -> float:
        return math.log10(v) if logy else v

    x_tol = NEAR_SPAN * abs(fx(xlim[1]) - fx(xlim[0]))
    if logx:
        x_tol = max(x_tol, NEAR_DECADES)
    y_tol = NEAR_SPAN * abs(fy(ylim[1]) - fy(ylim[0]))
    if logy:
        y_tol = max(y_tol, NEAR_DECADES)
    parent = list(range(len(points)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, (xi, yi) in enumerate(points):
        for j in range(i):
            xj, yj = points[j]
            if abs(fx(xi) - fx(xj)) <= x_tol and abs(fy(yi) - fy(yj)) <= y_tol:
                a, b = root(i), root(j)
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(len(points)):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def _group_text(names: Sequence[str], bold: Sequence[bool]) -> tuple[str, str]:
    """The label of a group of points as (bold part, normal part): the names
    on the front first (bold), then the others, joined with ", "; more than
    MAX_NAMES names give the first three and "+N more"."""
    ordered = [n for n, b in zip(names, bold) if b] + [n for n, b in zip(names, bold) if not b]
    shown: list[str] = []
    for n in ordered if len(ordered) <= MAX_NAMES else ordered[:MAX_NAMES - 1]:
        if shown and len(", ".join([*shown, n])) > MAX_LABEL_CHARS:
            break
        shown.append(n)
    n_bold = min(sum(1 for b in bold if b), len(shown))
    head, tail = ", ".join(shown[:n_bold]), ", ".join(shown[n_bold:])
    if head and tail:
        tail = ", " + tail
    if len(shown) < len(ordered):
        tail += f" +{len(ordered) - len(shown)} more"
    return head, tail


def _draw_group_labels(fig, ax, labels: Sequence[tuple[Sequence[str], Sequence[bool], tuple[float, float]]],
                       inward: bool = False) -> None:
    """One label per group (names, on-front flags, anchor point), above
    right of its anchor (`inward`: above left of an anchor in the right
    half of the axes, so that a long label stays inside them). Labels that
    would still overlap are nudged up, in order of their anchor's y (then
    x): each is measured, and moved just above any label placed before it
    that it overlaps; a nudged label gets a thin grey leader to its point.
    Deterministic: no search, no random."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
    from matplotlib.transforms import Bbox  # noqa: PLC0415

    def draw(names, bold, xy, lift: float) -> list:
        head, tail = _group_text(names, bold)
        left = inward and ax.transAxes.inverted().transform(ax.transData.transform(xy))[0] > 0.5
        arrow = {"arrowprops": {"arrowstyle": "-", "color": "#888888", "linewidth": 0.6, "shrinkA": 0,
                                "shrinkB": 4, "relpos": (1.0 if left else 0.0, 0.0)}} if lift > 0 else {}
        # The part nearest the point first: the bold names on the right of
        # a point, the plain ones on its left (so the line reads in order).
        pieces = [(text, b) for text, b in ((head, True), (tail, False)) if text]
        if left:
            pieces.reverse()
        side = {"ha": "right" if left else "left", "va": "bottom", "fontsize": "small", "zorder": 4}
        (text, b), rest = pieces[0], pieces[1:]
        first = ax.annotate(text, xy, xytext=(-6 if left else 6, 4 + lift), textcoords="offset points",
                            fontweight="bold" if b else "normal", **side, **arrow)
        parts = [first]
        for text, b in rest:
            # At the bottom corner of the first part, so the two read as one line.
            parts.append(ax.annotate(text, (0.0 if left else 1.0, 0.0), xycoords=first,
                                     fontweight="bold" if b else "normal", **side))
        return parts

    if not labels:
        return
    trial = [draw(names, bold, xy, 0.0) for names, bold, xy in labels]
    canvas = FigureCanvasAgg(fig)
    fig.draw_without_rendering()  # lays the figure out, as saving will
    renderer = canvas.get_renderer()
    boxes = [Bbox.union([a.get_window_extent(renderer) for a in parts]) for parts in trial]
    for parts in trial:
        for a in parts:
            a.remove()
    pad = 1.5 * fig.dpi / 72  # pixels kept between two labels
    lifts = [0.0] * len(labels)
    placed: list = []
    for i in sorted(range(len(labels)), key=lambda k: (labels[k][2][1], labels[k][2][0], k)):
        box = boxes[i]
        moved = True
        while moved:  # ends: each placed box can lift this one once at most, the lifts only go up
            moved = False
            for other in placed:
                if box.x0 < other.x1 + pad and other.x0 < box.x1 + pad and box.y0 < other.y1 + pad \
                        and other.y0 < box.y1 + pad:
                    box = box.translated(0, other.y1 + pad - box.y0 + 0.01)
                    moved = True
        lifts[i] = (box.y0 - boxes[i].y0) * 72 / fig.dpi
        placed.append(box)
    for (names, bold, xy), lift in zip(labels, lifts):
        draw(names, bold, xy, lift)


# The claims plot's colours: a claim reproduced, one the paper contradicts,
# a miss, the accepted range.
REPRODUCED, DISAGREES, MISSED, ACCEPTED = "#55A868", "#DD8452", "#C44E52", "#4C72B0"

# Each outcome as index.json spells it: its colour and its legend's words.
OUTCOMES = (("reproduced", REPRODUCED, "reproduced"),
            ("disagrees", DISAGREES, "the paper disagrees with itself"),
            ("missed", MISSED, "missed"))


def claim_outcome(p: Mapping[str, Any]) -> str:
    """A point's outcome: its `outcome`, or for an index.json written
    before there were three, `reproduced` or `missed` from its flag."""
    o = p.get("outcome")
    if o in ("reproduced", "disagrees", "missed"):
        return str(o)
    return "reproduced" if p.get("reproduced") else "missed"


def claims_scatter(points: Sequence[Mapping[str, Any]], *, out: str, title: str | None = None) -> list[str]:
    """Each claim's number in the paper (x) against ours (y), both axes
    log, over the same limits so that the dashed diagonal, ours = the
    paper's, runs corner to corner. `points` as index.json's `plot` gives
    them: {id, paper, ours, low, high, outcome, other}, `low` or `high`
    None where the range ours may lie in is open (a bound, or a range that
    reaches zero), `other` ({paper, ours}) where the paper disagrees with
    itself: the claim under the reading of its other statement. That range
    is a shaded bar at the claim's x, drawn to the axis' edge where it is
    open. A reproduced claim is a green point, one the paper contradicts an
    amber one with a hollow amber point at its other reading joined to it,
    a miss a red one; all but the reproduced are labelled with their ids
    (labels of points that nearly coincide are shared). A point without a
    positive paper and ours is left out: the caller lists it. The SVG
    groups the points as `claims-reproduced`, `claims-disagrees`,
    `claims-missed` and `claims-other-reading` (one <use> each)."""
    from matplotlib.collections import LineCollection  # noqa: PLC0415
    from matplotlib.lines import Line2D  # noqa: PLC0415

    def positive(v: Any) -> bool:
        return _finite(v) and float(v) > 0

    def other(p: Mapping[str, Any]) -> tuple[float, float] | None:
        o = p.get("other")
        if isinstance(o, Mapping) and positive(o.get("paper")) and positive(o.get("ours")):
            return float(o["paper"]), float(o["ours"])
        return None

    rows = [p for p in points if positive(p.get("paper")) and positive(p.get("ours"))]
    fig, ax = _figure(7.2, 5.6)
    _log_axis(ax, "x")
    _log_axis(ax, "y")
    ax.set_xlabel("the paper's number")
    ax.set_ylabel("ours")
    ax.set_title(title or "")
    if not rows:
        ax.text(0.5, 0.5, "no claim to draw", transform=ax.transAxes, ha="center", va="center", color="#666666")
        return save(fig, out)
    values = [float(p[k]) for p in rows for k in ("paper", "ours", "low", "high") if positive(p.get(k))]
    values += [v for p in rows if other(p) for v in other(p)]
    # A factor of two of room either side keeps the end points off the frame.
    lo, hi = min(values) / 2, max(values) * 2
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.plot([lo, hi], [lo, hi], linestyle="--", color="black", linewidth=0.8, zorder=1)
    bands = [[(float(p["paper"]), float(p["low"]) if positive(p.get("low")) else lo),
              (float(p["paper"]), float(p["high"]) if positive(p.get("high")) else hi)] for p in rows]
    # A bar in points, not in data units, is equally wide at every x of a log axis.
    ax.add_collection(LineCollection(bands, colors=ACCEPTED, linewidths=8, alpha=0.22, capstyle="butt", zorder=2))
    handles = [Line2D([], [], color=ACCEPTED, linewidth=8, alpha=0.22, label="range that counts"),
               Line2D([], [], color="black", linestyle="--", linewidth=0.8, label="ours = the paper's")]
    for outcome, color, name in OUTCOMES:
        these = [p for p in rows if claim_outcome(p) == outcome]
        if these:
            sc = ax.scatter([float(p["paper"]) for p in these], [float(p["ours"]) for p in these], s=34, color=color,
                            edgecolors="black", linewidths=0.5, zorder=3)
            sc.set_gid(f"claims-{outcome}")
            handles.append(Line2D([], [], linestyle="none", marker="o", markersize=6, color=color,
                                  markeredgecolor="black", markeredgewidth=0.5, label=f"{name} ({len(these)})"))
    others = [(p, other(p)) for p in rows if other(p)]
    if others:
        ax.add_collection(LineCollection([[(float(p["paper"]), float(p["ours"])), o] for p, o in others],
                                         colors=DISAGREES, linewidths=0.9, linestyles="dotted", zorder=2))
        sc = ax.scatter([o[0] for _, o in others], [o[1] for _, o in others], s=34, facecolors="none",
                        edgecolors=DISAGREES, linewidths=1.2, zorder=3)
        sc.set_gid("claims-other-reading")
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=6, markerfacecolor="none",
                              markeredgecolor=DISAGREES, markeredgewidth=1.2,
                              label="under the paper's other statement"))
    ax.grid(alpha=0.3, which="major")
    ax.set_axisbelow(True)
    ax.legend(handles=handles, fontsize="small", frameon=False, loc="upper left")
    # Labels last: grouping needs the final limits, nudging the final layout.
    labelled = [p for p in rows if claim_outcome(p) != "reproduced"]
    at = [(float(p["paper"]), float(p["ours"])) for p in labelled]
    groups = _near_groups(at, ax.get_xlim(), ax.get_ylim(), logx=True, logy=True)
    _draw_group_labels(fig, ax, [([str(labelled[i]["id"]) for i in g], [False] * len(g),
                                  (max(at[i][0] for i in g), max(at[i][1] for i in g))) for g in groups], inward=True)
    return save(fig, out)


__all__ = ["normalized_bars", "lines", "battery_bars", "write_traffic_bars", "compare_bars", "pareto_scatter",
           "claims_scatter", "claim_outcome", "log_floor", "save", "geomean"]
