"""`spmsim report` on a `spmsim reproduce all` directory: one log-log plot
of claims per paper under its heading, the accepted ranges and the three
outcomes drawn (reproduced, the paper disagrees with itself, missed), what
cannot be drawn listed, and the page rendering in headless Chromium."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import matplotlib
import pytest

from test_report import _assert_all_rendered

from spmsim import plots, report

TITLE_A = "Paper A (Someone et al.): a scheme"
TITLE_B = "Paper B: another scheme"


def _point(id_, paper, ours, low, high, reproduced, outcome=None, other=None):
    p = {"id": id_, "paper": paper, "ours": ours, "low": low, "high": high, "reproduced": reproduced,
         "outcome": outcome or ("reproduced" if reproduced else "missed")}
    if other is not None:
        p["other"] = {"paper": other[0], "ours": other[1]}
    return p


def index_doc() -> dict:
    """index.json as `spmsim reproduce all` writes it (the claims' own
    fields trimmed to what the page reads), hand-made: paper A has claims
    reproduced and missed, one the paper contradicts (with its other
    reading), a bound open below, a change drawn as 1 + c and an order
    that cannot be drawn; paper B failed. The numbers are invented."""
    a_points = [
        _point("wt_latency", 3.0, 2.9, 2.4, 3.6, True),
        _point("recovery_1tb", 30.68, 30.7, 23.0, 38.4, False, "disagrees", (3.83, 3.84)),
        _point("recovery_8tb", 0.48, 240.0, 0.36, 0.6, False),
        _point("bound", 4.0, 1.5, None, 4.0, True),
        _point("secon_vs_wt", 0.49, 0.05, None, 0.59, False),
        _point("volume", 3706.0, 3600.0, 3520.7, 3891.3, True),
    ]
    return {
        "quick": True,
        "seed": 1,
        "seconds": 600.0,
        "papers": [
            {"paper": "a", "title": TITLE_A, "report": "a/report.md", "seconds": 300.0, "claims": [],
             "plot": {"points": a_points,
                      "not_drawn": [{"id": "order", "text": "an order", "why": "an order, which holds or not: no number to draw"}],
                      "notes": ["A change c is drawn as the factor 1 + c (-51 % as 0.49): secon_vs_wt."]}},
            {"paper": "b", "title": TITLE_B, "report": "b/report.md", "seconds": 1.0, "claims": [],
             "error": "no traces", "plot": {"points": [], "not_drawn": [], "notes": []}},
        ],
    }


INDEX_MD = f"""# spmsim: every paper's reproduction

One run of `spmsim reproduce all --quick` (seed 1), 10m00s in all.

## Summary

| paper | reproduced | the paper disagrees with itself | missed | wall time | report |
|---|---|---|---|---|---|
| {TITLE_A} | 3 of 7 | 1 of 7 | 3 of 7 | 5m00s | [a/report.html](a/report.html) ([Markdown](a/report.md)) |
| {TITLE_B} | failed | - | - | 1 s | [b/report.md](b/report.md) |

## {TITLE_A}

Report: [a/report.html](a/report.html) ([Markdown](a/report.md)). 3 reproduced, 1 where the paper disagrees with itself, 3 missed, of 7 in 5m00s.

| claim | where | paper | ours | difference | outcome |
|---|---|---|---|---|---|
| WT's latency | Fig. 9 | 3.00x | 2.90x | -0.10 | reproduced |

## {TITLE_B}

Report: [b/report.md](b/report.md). failed in 1 s.

The reproduction failed: no traces
"""


@pytest.fixture
def index_dir(tmp_path) -> Path:
    d = tmp_path / "results"
    d.mkdir()
    (d / "index.json").write_text(json.dumps(index_doc()))
    (d / "index.md").write_text(INDEX_MD)
    (d / "index.html").write_text("<html>the plain page the Rust side wrote</html>")
    return d


def _svg_texts(svg: Path) -> list[str]:
    """The <text> elements of an SVG written with svg.fonttype 'none'."""
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg.read_text())]


def _uses_in(svg: Path, gid: str) -> int:
    """How many markers (<use>) the group `gid` holds."""
    m = re.search(rf'<g id="{gid}">(.*?)</g>', svg.read_text(), re.S)
    return 0 if m is None else m.group(1).count("<use ")


def _hollow_in(svg: Path, gid: str) -> int:
    """How many hollow markers the group `gid` holds: each a <use> of a
    marker, or (matplotlib's way with a single unfilled one) its own
    unfilled <path>."""
    m = re.search(rf'<g id="{gid}">(.*?)</g>', svg.read_text(), re.S)
    if m is None:
        return 0
    body = m.group(1)
    return body.count("<use ") or len(re.findall(r'<path [^>]*style="fill: none', body))


def test_the_index_page_has_one_claims_plot_per_paper(index_dir):
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        assert report.main([str(index_dir)]) == 0
    page = (index_dir / "index.html").read_text()
    assert "the plain page" not in page
    # The plot sits under its paper's heading, above the claims table.
    assert page.index(f"{TITLE_A}</h2>") < page.index('id="fig-claims_a"') < page.index("WT's latency")
    assert 'id="fig-claims_b"' not in page, "a failed paper has nothing to draw"
    # The caption: each outcome's count, the claims not reproduced by name,
    # the note, what is not drawn and why.
    assert ("3 reproduced (green), 1 where the paper disagrees with itself (amber, labelled: recovery_1tb; "
            "hollow: the claim under the reading of the paper's other statement), "
            "2 missed (red, labelled: recovery_8tb, secon_vs_wt)") in page
    assert "drawn as the factor 1 + c" in page
    assert "Not drawn (1): order (an order, which holds or not: no number to draw)." in page
    # The links of index.md are links on the page: the HTML report where there is one.
    assert '<a href="a/report.html">a/report.html</a>' in page and '<a href="a/report.md">Markdown</a>' in page
    assert '<a href="b/report.md">b/report.md</a>' in page
    svg = index_dir / "figures" / "claims_a.svg"
    assert Path(str(svg).replace(".svg", ".png")).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Every point is drawn in its outcome, the contradicted claim's other
    # reading too, and all but the reproduced are labelled.
    groups = ("claims-reproduced", "claims-disagrees", "claims-missed")
    assert tuple(_uses_in(svg, g) for g in groups) == (3, 1, 2)
    assert _hollow_in(svg, "claims-other-reading") == 1
    texts = _svg_texts(svg)
    assert texts.count("recovery_1tb") == 1 and texts.count("recovery_8tb") == 1 and texts.count("secon_vs_wt") == 1
    assert not {"wt_latency", "bound", "volume"} & set(texts)
    assert "the paper disagrees with itself (1)" in texts and "under the paper's other statement" in texts


def test_misses_at_one_spot_share_a_label_and_the_axes_are_log(tmp_path):
    points = [_point("m1", 10.0, 100.0, 9.0, 11.0, False), _point("m2", 10.2, 101.0, 9.0, 11.0, False),
              _point("far", 0.1, 0.5, 0.05, 0.15, False), _point("ok", 1.0, 1.0, 0.9, 1.1, True)]
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        png, svg = plots.claims_scatter(points, out=str(tmp_path / "c"), title="t")
        _, again = plots.claims_scatter(points, out=str(tmp_path / "c2"), title="t")
    assert Path(svg).read_bytes() == Path(again).read_bytes(), "the same claims give the same SVG"
    texts = _svg_texts(Path(svg))
    assert "m1, m2" in texts and "far" in texts
    assert "m1" not in texts and "ok" not in texts
    assert Path(png).stat().st_size > 5000


def test_claims_that_cannot_be_drawn_are_left_out_and_said(index_dir):
    doc = index_doc()
    doc["papers"][0]["plot"] = {"points": [], "not_drawn": [{"id": "order", "why": "an order"}], "notes": []}
    doc["papers"].append({"paper": "c", "title": "Paper C", "claims": []})  # an index.json from before the plots
    (index_dir / "index.json").write_text(json.dumps(doc))
    assert report.main([str(index_dir)]) == 0
    page = (index_dir / "index.html").read_text()
    assert "No claim of this paper can sit on a log axis: order (an order)." in page
    assert "gives no plot data for the paper" in page
    assert "<img" not in page
    # A point whose numbers are not positive is not drawn by the plot helper either.
    _, svg = plots.claims_scatter([_point("neg", 1.0, -0.4, 0.5, 1.5, False)], out=str(index_dir / "n"))
    assert _uses_in(Path(svg), "claims-missed") == 0


def test_an_index_from_before_the_three_outcomes_draws_its_points_by_their_flag(tmp_path):
    old = [{"id": "ok", "paper": 1.0, "ours": 1.0, "low": 0.9, "high": 1.1, "reproduced": True},
           {"id": "miss", "paper": 2.0, "ours": 9.0, "low": 1.5, "high": 2.5, "reproduced": False}]
    _, svg = plots.claims_scatter(old, out=str(tmp_path / "old"))
    groups = ("claims-reproduced", "claims-disagrees", "claims-missed")
    assert tuple(_uses_in(Path(svg), g) for g in groups) == (1, 0, 1)
    assert _hollow_in(Path(svg), "claims-other-reading") == 0


def test_an_index_without_its_markdown_is_an_error(index_dir, capsys):
    (index_dir / "index.md").unlink()
    assert report.main([str(index_dir)]) == 2
    assert "index.json without its index.md" in capsys.readouterr().err


def test_the_index_page_renders_in_chromium(index_dir, tmp_path):
    assert report.main([str(index_dir)]) == 0
    _assert_all_rendered(index_dir / "index.html", tmp_path / "chromium", 1)
