"""The page of a `spmsim reproduce all` directory: where each paper's
reproduction stands, at a glance.

    OUT_DIR/index.md (the Rust side's text and tables) -> the page's text
    OUT_DIR/index.json ({"papers": [..., "plot": {points, not_drawn, notes}]})
                                                       -> one log-log plot per paper
    OUT_DIR/index.html  <- the page (it replaces the plain one the Rust side wrote)
    OUT_DIR/figures/claims_<paper>.png, .svg

Each plot has one point per claim, the paper's number against ours, with
the range of ours the claim's rule accepts shaded, coloured by its outcome
(reproduced, the paper disagrees with itself, missed) and all but the
reproduced labelled; a claim the paper contradicts also has a hollow point
under the reading of the paper's other statement. It sits under its
paper's heading, above the claims table. A claim that is not a number (an
order or a trend, which holds or not) or not positive cannot sit on a log
axis: the caption lists it with why. The points come
ready from index.json (the Rust side decides how each kind of claim is
drawn); a paper whose index.json entry has no `plot` gets a note instead.
"""

from __future__ import annotations

import os
import re
from typing import Any

from . import _report_render as R
from . import plots
from ._report_render import ReportError
from ._report_render import write as _write


def is_index_dir(doc: Any) -> bool:
    """index.json of `spmsim reproduce all`: an object with a list of papers."""
    return isinstance(doc, dict) and isinstance(doc.get("papers"), list)


def _ids(points: list[dict], outcome: str) -> list[str]:
    return [str(p.get("id")) for p in points if plots.claim_outcome(p) == outcome]


def _caption(paper: dict, points: list[dict], not_drawn: list[dict], notes: list[str]) -> str:
    reproduced, disagrees, missed = (_ids(points, o) for o in ("reproduced", "disagrees", "missed"))

    def labelled(ids: list[str]) -> str:
        return f": {', '.join(ids)}" if ids else ""

    text = [f"{paper.get('title') or paper.get('paper')}: each claim's number in the paper (x) against ours (y), "
            "both axes log. Dashed: ours = the paper's. Shaded: the range of ours the claim's rule counts as "
            "reproduced, to the plot's edge where it is open (a bound, or a range reaching zero or below). "
            f"{len(reproduced)} reproduced (green), "
            f"{len(disagrees)} where the paper disagrees with itself (amber, labelled{labelled(disagrees)}; "
            "hollow: the claim under the reading of the paper's other statement), "
            f"{len(missed)} missed (red, labelled{labelled(missed)})."]
    text += [str(n) for n in notes]
    if not_drawn:
        text.append(f"Not drawn ({len(not_drawn)}): "
                    + "; ".join(f"{d.get('id')} ({d.get('why')})" for d in not_drawn) + ".")
    return " ".join(text)


def _paper_blocks(paper: dict, figdir: str) -> list[dict]:
    """The plot of one paper (or why there is none)."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", str(paper.get("paper") or "paper"))
    if paper.get("error"):
        return []
    plot = paper.get("plot")
    if not isinstance(plot, dict):
        return [R.paragraph("No plot: this index.json gives no plot data for the paper (it was written before "
                            "the plots existed); run `spmsim reproduce all` again.")]
    points = [p for p in plot.get("points") or [] if isinstance(p, dict)]
    not_drawn = [d for d in plot.get("not_drawn") or [] if isinstance(d, dict)]
    notes = [n for n in plot.get("notes") or [] if isinstance(n, str)]
    if not points:
        why = "; ".join(f"{d.get('id')} ({d.get('why')})" for d in not_drawn)
        return [R.paragraph("No claim of this paper can sit on a log axis" + (f": {why}." if why else "."))]
    # The paper's short name: its title up to the authors or the colon.
    short = re.split(r" \(|:", str(paper.get("title") or name))[0]
    paths = plots.claims_scatter(points, out=os.path.join(figdir, f"claims_{name}"),
                                 title=f"{short}: every claim, ours against the paper's")
    return [R.figure(_caption(paper, points, not_drawn, notes), paths, f"claims_{name}")]


def _insert_under(blocks: list[dict], title: str, new: list[dict]) -> bool:
    """Put `new` under the heading `title`, after the paragraph that follows
    it (the link to the report), before its claims table."""
    for i, b in enumerate(blocks):
        if b["kind"] == "heading" and b["level"] == 2 and b["text"] == title:
            j = i + 1
            if j < len(blocks) and blocks[j]["kind"] == "paragraph":
                j += 1
            blocks[j:j] = new
            return True
    return False


def index_report(out_dir: str, doc: dict, title: str | None = None) -> list[str]:
    """Write OUT_DIR/index.html for the index `doc` (index.json) and the
    index.md beside it; returns [its path]."""
    md_path = os.path.join(out_dir, "index.md")
    if not os.path.isfile(md_path):
        raise ReportError(f"{out_dir}: index.json without its index.md")
    with open(md_path, encoding="utf-8") as f:
        blocks = R.parse_markdown(f.read())
    title = title or next((b["text"] for b in blocks if b["kind"] == "heading" and b["level"] == 1),
                          "spmsim: every paper's reproduction")
    figdir = os.path.join(out_dir, "figures")
    for paper in doc["papers"]:
        if not isinstance(paper, dict):
            continue
        new = _paper_blocks(paper, figdir)
        if new and not _insert_under(blocks, str(paper.get("title")), new):
            blocks += [R.heading(str(paper.get("title") or paper.get("paper")), 2), *new]
    html_path = os.path.join(out_dir, "index.html")
    _write(html_path, R.to_html(title, blocks))
    return [html_path]
