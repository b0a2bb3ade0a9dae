"""`spmsim report` on a `spmsim compare` directory: the page, its tables,
the two Pareto plots (and that they render in headless Chromium), and the
cases with nothing to show."""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

from test_report import _assert_all_rendered, _images, assert_self_contained

from spmsim import plots, report


def _scheme(preset, scheme, paper, front, slowdown, recovery_1tib, supercap, *, secure=True, baseline="bbb",
            per_workload=None, attacks="default", paper_config=None, **extra):
    s = {
        "preset": preset, "scheme": scheme, "paper": paper, "front": front, "secure": secure, "baseline": baseline,
        "slowdown_gmean": slowdown,
        "slowdown": per_workload if per_workload is not None else {"btree": slowdown, "hash": slowdown},
        "writes_pki": {"data": 3.1, "counter": 1.2, "mac": 0.4, "tree": 2.0, "recovery": 0.0, "total": 6.7},
        "energy_uj_per_kinstr": 123.4,
        "battery": {"energy_uj": 53.1, "supercap_mm3": supercap, "li_thin_mm3": 0.0015,
                    "parts": [{"what": "WPQ (32 lines)", "energy_uj": 12.0}]},
        "recovery_seconds": {"16GiB": 0.012, "1TiB": recovery_1tib},
        "onchip_nv_bytes": 64,
        "attacks": ({"total": 14, "detected": 11, "ruled_out": 3, "undetected": 0, "false_alarms": 0,
                     "at_run_time": 8, "at_recovery": 3} if attacks == "default" else attacks),
        "paper_config": paper_config,
    }
    s.update(extra)
    return s


def compare_results() -> dict:
    """A results.json in the shape `spmsim compare` writes, hand-made for
    the renderer: every front, both insecure baselines, a zero battery, a
    failed run (null slowdown), a scheme without attack results, missing
    workloads and unknown keys. The numbers are invented, not measured."""
    return {
        "kind": "compare",
        "quick": True,
        "common_machine": "One out-of-order core at 3 GHz, 32 KiB L1, 1 MiB L2, 4 GiB of PCM behind a 32-entry WPQ.",
        "workloads": ["btree", "hash", "suite:gcc#persistent=heap"],
        "schemes": [
            _scheme("bbb", "BBB", "BBB", "persist-buffer", 1.0, None, 0.07, secure=False, attacks=None,
                    per_workload={"btree": 1.0, "hash": 1.0, "suite:gcc#persistent=heap": 1.0}),
            _scheme("cobcm", "COBCM", "SecPB", "persist-buffer", 1.053, 0.8, 0.15,
                    per_workload={"btree": 1.02, "hash": 1.08},
                    paper_config={"preset": "cobcm-paper", "slowdown_gmean": 1.04,
                                  "differences": ["32 entries, here 64", "no L3"]}),
            _scheme("sp", "SP", "SecPB", "persist-buffer", 1.31, 2.5, 0.9),
            _scheme("star", "STAR", "STAR", "memory-controller", 1.12, 0.05, 4.8),
            _scheme("mset", "MSet", "Multiset", "memory-controller", 1.2, 30.0, 0.0,
                    paper_config={"preset": "secon", "slowdown_gmean": None,
                                  "differences": ["persistency model tep, here strict"]}),
            _scheme("secon", "SeCon", "SeCon", "memory-controller", None, None, 1.1, attacks=None,
                    per_workload={}, unknown_field={"ignored": True}),
            _scheme("eadr", "eADR", "Intel", "cache-hierarchy", 1.0, 0.0, 149.3, secure=False, baseline="eadr",
                    attacks=None),
            _scheme("cachetree", "CacheTree", "CacheTree", "cache-hierarchy", 1.4, 0.0, 80.0),
        ],
        "best": [{"criterion": "slowdown (geometric mean)", "preset": "cobcm", "value": "1.05x"},
                 {"criterion": "recovery time (1 TiB)", "preset": "cachetree", "value": "0 s"}],
        "pareto": {"recovery": ["cachetree", "star", "cobcm"], "battery": ["mset", "cobcm"]},
        "future_key": [1, 2, 3],
    }


@pytest.fixture
def compare_dir(tmp_path) -> Path:
    """A renderer fixture: a `spmsim compare` directory holding only the
    hand-made results.json of `compare_results()` and a stand-in report.md
    (no simulation runs)."""
    out = tmp_path / "compare"
    out.mkdir()
    (out / "results.json").write_text(json.dumps(compare_results(), indent=1))
    (out / "report.md").write_text("# Comparison\n\nWritten by the Rust side.\n")
    return out


def _row(page: str, first_cell: str) -> list[str]:
    """The cells of the first table row whose first cell is `first_cell`."""
    for tr in re.findall(r"<tr>(.*?)</tr>", page, re.S):
        cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", tr, re.S)
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row {first_cell!r}")


def test_compare_dir_is_recognised_before_a_reproduce_dir(compare_dir, tmp_path):
    assert report.is_compare_dir(str(compare_dir))
    assert not report.is_compare_dir(str(tmp_path))
    # A compare results.json that also carries keys of a reproduce one is still a compare.
    doc = compare_results()
    doc.update(runs=[], claims=[], figures=[])
    (compare_dir / "results.json").write_text(json.dumps(doc))
    assert report.is_reproduce_dir(str(compare_dir)) and report.is_compare_dir(str(compare_dir))
    assert report.main([str(compare_dir)]) == 0
    assert 'id="pareto-recovery"' in (compare_dir / "report.html").read_text()


def test_compare_report_has_every_scheme_the_best_and_n_a(compare_dir, capsys):
    md_before = (compare_dir / "report.md").read_bytes()
    assert report.main([str(compare_dir)]) == 0
    assert capsys.readouterr().out.strip() == str(compare_dir / "report.html")
    assert (compare_dir / "report.md").read_bytes() == md_before, "the Rust report.md must stay as it was"
    page = (compare_dir / "report.html").read_text()
    assert_self_contained(page)
    for s in compare_results()["schemes"]:
        assert f"<td>{s['preset']}</td>" in page, s["preset"]
    assert "Best per criterion: slowdown (geometric mean): <strong>cobcm</strong> (1.05x); " \
           "recovery time (1 TiB): <strong>cachetree</strong> (0 s)." in page
    assert "One out-of-order core at 3 GHz" in page
    assert "future_key" not in page and "unknown_field" not in page

    cobcm = _row(page, "cobcm")
    assert cobcm[1:7] == ["COBCM", "SecPB", "persist-buffer", "yes", "bbb", "1.053"]
    assert "11/14 (8 at run time, 3 at recovery; 3 ruled out)" in cobcm
    assert "1.040 (cobcm-paper; 32 entries, here 64; no L3)" in cobcm
    # Nulls: secon's slowdown and recovery time, its attacks, mset's paper slowdown, bbb's recovery.
    secon = _row(page, "secon")
    assert secon[6] == "n/a" and secon[-2] == "n/a" and secon[-1] == "n/a"
    assert _row(page, "mset")[-1] == "n/a (secon; persistency model tep, here strict)"
    assert _row(page, "bbb")[4] == "no"
    # The per-workload table: cobcm did not run suite:gcc, secon ran nothing.
    gcc = _row(page, "suite:gcc#persistent=heap")
    assert gcc[1] == "1" and gcc[2] == "n/a"
    assert _row(page, "gmean")[1:3] == ["1", "1.053"]

    for name in ("pareto_recovery", "pareto_battery"):
        assert (compare_dir / "figures" / f"{name}.png").is_file(), name
        assert (compare_dir / "figures" / f"{name}.svg").is_file(), name
    srcs = _images(page)
    assert len(srcs) == 2 and all(s.startswith("data:image/svg+xml;base64,") for s in srcs)
    rec = page[page.index('<figure id="pareto-recovery">'):]
    rec = rec[:rec.index("</figure>")]
    # Zeros at the floor, named in the caption; nulls and baselines listed as not plotted.
    assert "cachetree" in rec and "drawn at 0.001" in rec
    assert "Not plotted, a value is missing: secon." in rec
    assert "The insecure baselines (bbb, eadr) are not plotted." in rec
    assert "Pareto front from results.json: cachetree, star, cobcm" in rec
    bat = page[page.index('<figure id="pareto-battery">'):]
    assert "mset" in bat[:bat.index("</figure>")] and "drawn at 0.01" in bat[:bat.index("</figure>")]


def test_each_persistency_model_gets_its_slowdowns_and_fronts(compare_dir):
    doc = compare_results()
    strict = doc["schemes"]
    epoch = [dict(s, slowdown_gmean=(s["slowdown_gmean"] / 2 if s["front"] == "memory-controller" and s["slowdown_gmean"]
                                     else s["slowdown_gmean"])) for s in strict if s["preset"] != "cachetree"]
    doc["models"] = [
        {"model": "strict", "schemes": strict, "best": doc["best"], "pareto": doc["pareto"], "not_run": []},
        {"model": "epoch", "schemes": epoch, "best": [], "pareto": {"recovery": ["star"], "battery": ["mset", "cobcm"]},
         "not_run": [{"preset": "cachetree", "left_out": "invented"}]},
    ]
    doc["title"] = "spmsim plan: an invented question"
    (compare_dir / "results.json").write_text(json.dumps(doc))
    assert report.main([str(compare_dir)]) == 0
    page = (compare_dir / "report.html").read_text()
    assert "<h1>spmsim plan: an invented question</h1>" in page or "spmsim plan: an invented question</h1>" in page
    section = page[page.rindex("Under each persistency model"):]
    nums = lambda cells: [float(c) for c in cells[1:]]  # noqa: E731
    assert nums(_row(section, "star")) == [1.12, 0.56]
    assert nums(_row(section, "cobcm")) == [1.053, 1.053]
    assert _row(section, "cachetree")[2] == "cannot run" and float(_row(section, "cachetree")[1]) == 1.4
    for n in ("strict", "epoch"):
        assert f'id="pareto-recovery-{n}"' in page, n
        assert (compare_dir / "figures" / f"pareto_battery_{n}.svg").is_file(), n
    fig = page[page.index('<figure id="pareto-recovery-epoch">'):]
    assert "Pareto front from results.json: star" in fig[:fig.index("</figure>")]


def test_compare_report_renders_both_plots_in_chromium(compare_dir, tmp_path):
    assert report.main([str(compare_dir)]) == 0
    imgs = _assert_all_rendered(compare_dir / "report.html", tmp_path / "chk", 2)
    assert [i["id"] for i in imgs] == ["pareto-recovery", "pareto-battery"]
    assert all(i["ink"] > 0.02 for i in imgs)


def test_compare_report_without_schemes_says_there_is_nothing_to_plot(tmp_path, capsys):
    out = tmp_path / "empty"
    out.mkdir()
    doc = compare_results()
    doc.update(schemes=[], best=[], pareto={"recovery": [], "battery": []})
    (out / "results.json").write_text(json.dumps(doc))
    assert report.main([str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "lists no schemes: there is nothing to tabulate or plot" in page
    assert "Best per criterion: none given." in page
    assert _images(page) == [] and not (out / "figures").exists()
    assert "Traceback" not in capsys.readouterr().err

    # A `schemes` that is not a list is an error with the reason, not a traceback.
    doc["schemes"] = {"cobcm": {}}
    (out / "results.json").write_text(json.dumps(doc))
    assert report.main([str(out)]) == 2
    err = capsys.readouterr().err
    assert "`schemes` is a dict, not a list" in err and "Traceback" not in err


def test_compare_report_with_almost_nothing_measured(tmp_path):
    """Schemes with only a name, or every field null: tables of n/a, and a
    paragraph instead of each plot."""
    out = tmp_path / "bare"
    out.mkdir()
    bare = {k: None for k in _scheme("x", "X", "P", "memory-controller", 1.1, 1.0, 1.0)}
    bare["preset"] = "nulls"
    doc = {"kind": "compare", "schemes": [{"preset": "only-a-name"}, bare]}
    (out / "results.json").write_text(json.dumps(doc))
    assert report.main([str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "only-a-name" in page and "nulls" in page
    assert set(_row(page, "nulls")[6:]) == {"n/a"}
    assert "Nothing to plot for recovery" in page and "Nothing to plot for battery" in page
    assert _images(page) == []


def test_the_front_is_computed_when_results_json_has_none(compare_dir):
    doc = compare_results()
    del doc["pareto"]
    doc["schemes"] = [s for s in doc["schemes"] if s["preset"] in ("bbb", "star", "sp", "cobcm")]
    (compare_dir / "results.json").write_text(json.dumps(doc))
    assert report.main([str(compare_dir)]) == 0
    page = (compare_dir / "report.html").read_text()
    # recovery: star (0.05 s, 1.12) and cobcm (0.8 s, 1.053); sp (2.5 s, 1.31) is dominated.
    assert "Pareto front computed here (results.json gives none): star, cobcm" in page
    assert "Pareto front computed here (results.json gives none): cobcm (" in page  # battery: cobcm alone


def test_pareto_scatter_draws_zeros_at_the_floor(tmp_path):
    df = pd.DataFrame({"preset": ["a", "b", "c", "d", "e"], "front": ["pb", "pb", "mc", "mc", "mc"],
                       "x": [0.0, 0.5, 20.0, 3.0, None], "y": [1.4, 1.1, 1.0, 1.3, 1.2]})
    assert plots.log_floor(df["x"]) == pytest.approx(0.01)
    assert plots.log_floor([0.0, None, float("nan")]) is None
    png, svg = plots.pareto_scatter(df, x="x", y="y", group="front", front=["a", "b", "c"], yref=1.0,
                                    out=str(tmp_path / "p"))
    assert Path(png).stat().st_size > 5000
    text = Path(svg).read_text()
    assert "Pareto front" in text and "0, drawn at 0.01" in text
    # Every x zero: a linear axis, no floor.
    plots.pareto_scatter(df.assign(x=0.0), x="x", y="y", front=["a"], out=str(tmp_path / "z"))
    assert "drawn at" not in (tmp_path / "z.svg").read_text()
    with pytest.raises(KeyError, match="missing column"):
        plots.pareto_scatter(df, x="nope", y="y", out=str(tmp_path / "k"))



def _svg_labels(svg: Path) -> list[tuple[str, bool, float]]:
    """The <text> elements of an SVG written with svg.fonttype 'none':
    (text, bold, y) each, in document order."""
    out = []
    for style, attrs, text in re.findall(r'<text style="([^"]*)"([^>]*)>([^<]*)</text>', svg.read_text()):
        y = re.search(r' y="([-\d.e]+)"', attrs)
        out.append((html.unescape(text), "font-weight: 700" in style, float(y.group(1)) if y else math.nan))
    return out


def test_schemes_at_one_point_share_one_label(compare_dir):
    """Three secure schemes at the same (recovery, battery, slowdown) and
    one elsewhere: each Pareto figure has one label naming the three, not
    three labels on top of each other. Checked in DIR/figures/*.svg, which
    is what report.html embeds. matplotlib's default svg.fonttype ('path')
    draws glyphs as paths, leaving the words only in XML comments whose form
    is an implementation detail; the test renders under svg.fonttype 'none'
    (rc_context, nothing else changes: grouping and nudging depend on the
    layout, not on how the SVG encodes glyphs), so every label is one
    <text> element whose content can be compared exactly."""
    doc = compare_results()
    same = dict(slowdown=28.7, recovery_1tib=29.9, supercap=0.0639)
    doc["schemes"] = [doc["schemes"][0],  # bbb, the insecure baseline: not plotted
                      _scheme("sp", "SP", "SecPB", "memory-controller", **same),
                      _scheme("supermem", "SuperMem", "SuperMem", "memory-controller", **same),
                      _scheme("wt", "WT", "SecPB", "memory-controller", **same),
                      _scheme("cobcm", "COBCM", "SecPB", "persist-buffer", 1.053, 0.8, 4.9)]
    doc["pareto"] = {"recovery": ["cobcm"], "battery": ["sp", "cobcm"]}
    (compare_dir / "results.json").write_text(json.dumps(doc))
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        assert report.main([str(compare_dir)]) == 0
    for name, joined in [("pareto_recovery", "sp, supermem, wt"), ("pareto_battery", "sp")]:
        labels = _svg_labels(compare_dir / "figures" / f"{name}.svg")
        texts = [t for t, _, _ in labels]
        assert texts.count(joined) == 1, (name, texts)
        assert "cobcm" in texts
        assert not {"supermem", "wt"} & set(texts), (name, texts)
        if name == "pareto_battery":
            # sp is on the battery front: its name stays bold, the other two follow in normal weight.
            assert (", supermem, wt", False) in [(t, b) for t, b, _ in labels]
            assert ("sp", True) in [(t, b) for t, b, _ in labels]
        else:
            assert ("sp, supermem, wt", False) in [(t, b) for t, b, _ in labels]
    assert "sp, supermem, wt" not in (compare_dir / "report.html").read_text()  # in the figures, not the captions


def test_pareto_scatter_groups_near_points_and_nudges_colliding_labels(tmp_path):
    """Five points at one spot (b on the front) share one label: b first
    and bold, then the first two others and "+2 more". Two points a tenth
    of a decade apart at the same slowdown are two groups (0.05 decade and
    1.5 % of a two-decade axis are both less), but the long label of the
    left one would cover the right one's, so the right one is lifted.
    Same checking as above: svg.fonttype 'none' makes each label one
    <text>. Rendering twice gives the same SVG (nothing random)."""
    df = pd.DataFrame({"preset": ["a", "b", "c", "d", "e", "a-rather-long-label", "q"],
                       "front": ["mc"] * 7,
                       "x": [2.5, 2.5, 2.5, 2.5, 2.5, 1.0, 1.26], "y": [1.3, 1.3, 1.3, 1.3, 1.3, 1.1, 1.1]})
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        _, svg = plots.pareto_scatter(df, x="x", y="y", front=["b", "a-rather-long-label"], out=str(tmp_path / "p"))
        _, again = plots.pareto_scatter(df, x="x", y="y", front=["b", "a-rather-long-label"],
                                        out=str(tmp_path / "p2"))
    assert Path(svg).read_bytes() == Path(again).read_bytes()
    labels = {t: (b, y) for t, b, y in _svg_labels(Path(svg))}
    assert labels["b"][0] and not labels[", a, c +2 more"][0]
    assert not {"a", "c", "d", "e"} & set(labels)
    # SVG y grows downwards: the lifted label has the smaller y, by at least a line of small text.
    assert labels["a-rather-long-label"][0] and not labels["q"][0]
    assert labels["a-rather-long-label"][1] - labels["q"][1] > 8


def test_a_real_compare_run_renders_in_chromium(tmp_path):
    """The page of a real (tiny) `spmsim compare` run, not a fixture: three
    schemes of two front ends on one benchmark, every metric measured; its
    table names each scheme and both Pareto plots paint in Chromium."""
    from conftest import rust_cli

    out = tmp_path / "compare"
    p = rust_cli(["compare", "--schemes", "cobcm,sp,bbb", "--workloads", "btree", "--instructions", "30000",
                  "--ops", "200", "--no-paper-machine", "--out", str(out)])
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads((out / "results.json").read_text())
    assert [s["preset"] for s in doc["schemes"]] == ["bbb", "cobcm", "sp"]
    assert all(s["recovery_seconds"]["1TiB"] is not None for s in doc["schemes"])
    assert report.main([str(out)]) == 0
    page = (out / "report.html").read_text()
    for preset in ("cobcm", "sp", "bbb"):
        assert preset in page
    # Both fronts, then both again under each persistency model.
    models = [m["model"] for m in doc["models"]]
    assert models == ["strict", "epoch", "own"]
    imgs = _assert_all_rendered(out / "report.html", tmp_path / "chromium", 2 + 2 * len(models))
    assert "pareto-battery-epoch" in [i["id"] for i in imgs]


def test_a_group_label_of_long_names_stops_before_its_length_cap():
    """A planner's compositions have long names: a group label names them
    while its text stays within MAX_LABEL_CHARS, then says how many more;
    the front's names come first, and one name is always shown."""
    names = ["nogap+assure+strict+bmt", "nogap+triad-2+strict+bmt", "nogap+triad-3+strict+bmt"]
    head, tail = plots._group_text(names, [False, True, False])
    assert (head, tail) == ("nogap+triad-2+strict+bmt", " +2 more")
    assert len(head) <= plots.MAX_LABEL_CHARS
    very_long = "x" * (plots.MAX_LABEL_CHARS + 10)
    assert plots._group_text([very_long, "y"], [False, False]) == ("", f"{very_long} +1 more")
