"""Plots and reports: files written, self-contained HTML, and a screenshot
test in headless Chromium that every plot renders (and a proof that the
check fails on a broken or blank image)."""

from __future__ import annotations

import base64
import html
import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from conftest import chromium

from spmsim import plots, report
from spmsim import results as results_mod

IMG = re.compile(r'<img\b[^>]*\bsrc="([^"]*)"')


# --------------------------------------------------------------------------
# Plot helpers


def _assert_png_svg(paths):
    png, svg = paths
    assert png.endswith(".png") and svg.endswith(".svg")
    assert Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and Path(png).stat().st_size > 5000
    text = Path(svg).read_text()
    assert "<svg" in text and "</svg>" in text


def test_plot_helpers_write_png_and_svg(small_sweep_dir, tmp_path):
    df = results_mod.load(small_sweep_dir)
    _assert_png_svg(plots.normalized_bars(df, baseline="bbb", out=str(tmp_path / "bars")))
    _assert_png_svg(plots.write_traffic_bars(df, normalize_to="bbb", out=str(tmp_path / "traffic.png")))
    _assert_png_svg(plots.lines(df, x="seed", y="roi.core.ipc", series="scheme", out=str(tmp_path / "lines")))
    vol = pd.DataFrame({"scheme": ["bbb", "cobcm", "eadr"], "supercap_mm3": [0.07, 4.89, 149.3],
                        "li_thin_mm3": [0.0007, 0.049, 1.49], "paper_sc": [0.07, 4.89, 149.32]})
    _assert_png_svg(plots.battery_bars(vol, paper={"supercap_mm3": "paper_sc"}, out=str(tmp_path / "battery")))
    _assert_png_svg(plots.compare_bars(pd.DataFrame({"row": ["a", "b"], "ours": [1.0, -2.0], "paper": [1.5, None]}),
                                       label="row", out=str(tmp_path / "cmp")))
    with pytest.raises(KeyError, match="baseline 'nope'"):
        plots.normalized_bars(df, baseline="nope", out=str(tmp_path / "x"))
    with pytest.raises(KeyError, match="missing column"):
        plots.lines(df, x="no.such", y="roi.core.ipc", out=str(tmp_path / "y"))


def test_normalized_bars_adds_the_geometric_mean(tmp_path):
    df = pd.DataFrame({"workload": ["a", "a", "b", "b"], "scheme": ["bbb", "x", "bbb", "x"],
                       "roi.core.cycles": [100, 200, 100, 800]})
    plots.normalized_bars(df, out=str(tmp_path / "g"))
    assert plots.geomean([2.0, 8.0]) == pytest.approx(4.0)
    svg = (tmp_path / "g.svg").read_text()
    assert "gmean" in svg


def test_same_plot_gives_the_same_svg(small_sweep_dir, tmp_path):
    df = results_mod.load(small_sweep_dir)
    a = plots.normalized_bars(df, out=str(tmp_path / "a"))[1]
    b = plots.normalized_bars(df, out=str(tmp_path / "b"))[1]
    assert Path(a).read_text() == Path(b).read_text()


# --------------------------------------------------------------------------
# Reports


def _images(page: str) -> list[str]:
    return IMG.findall(page)


def assert_self_contained(page: str) -> None:
    assert "<script" not in page.lower() and "<link" not in page.lower() and "@import" not in page
    assert not re.search(r'(src|href)="(?!data:|#)', page), "a reference outside the page"
    assert "http://" not in page and "https://" not in page


def test_sweep_report_chooses_plots_from_what_varied(param_sweep_dir):
    assert report.main([str(param_sweep_dir)]) == 0
    page = (param_sweep_dir / "report.html").read_text()
    assert_self_contained(page)
    srcs = _images(page)
    # exec time bars, write traffic, and two lines against the varied config key
    assert len(srcs) == 4 and all(s.startswith("data:image/svg+xml;base64,") for s in srcs)
    for name in ("exec_time", "nvm_writes", "norm_vs_persistence-point-entries",
                 "root_updates_vs_persistence-point-entries"):
        assert (param_sweep_dir / "figures" / f"{name}.png").is_file(), name
        assert (param_sweep_dir / "figures" / f"{name}.svg").is_file(), name
        assert f'id="fig-{name}"' in page
    assert "Failed points" in page and "no-such-workload" in page
    md = (param_sweep_dir / "report.md").read_text()
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert len(links) == 4 and all((param_sweep_dir / p).is_file() for p in links)
    assert "| workload | bbb | cobcm | cm |" in md
    assert "## Failed points" in md


def test_sweep_report_with_one_scheme_and_a_baseline_option(small_sweep_dir, tmp_path, capsys):
    assert report.main([str(small_sweep_dir), "--baseline", "cobcm", "--title", "Small"]) == 0
    page = (small_sweep_dir / "report.html").read_text()
    assert "<title>Small</title>" in page and "normalised to cobcm" in page
    assert report.main([str(small_sweep_dir), "--baseline", "nogap"]) == 2
    assert "baseline 'nogap' is not a scheme" in capsys.readouterr().err
    assert report.main([str(tmp_path)]) == 2
    assert "neither a sweep directory" in capsys.readouterr().err


def test_reproduce_report_keeps_report_md_and_adds_the_figures(reproduce_dir):
    md_before = (reproduce_dir / "report.md").read_bytes()
    assert report.main([str(reproduce_dir)]) == 0
    assert (reproduce_dir / "report.md").read_bytes() == md_before, "the Rust report.md must stay as it was"
    page = (reproduce_dir / "report.html").read_text()
    assert_self_contained(page)
    for name in ("table4", "fig6", "fig7", "fig8", "fig9", "table5", "nvm_writes"):
        assert (reproduce_dir / "figures" / f"{name}.svg").is_file(), name
        assert f'id="fig-{name}"' in page, name
    assert len(_images(page)) == 7
    # The Rust report's tables come along: Table IV and Table V with their cells.
    assert "Table IV" in page and "Table V" in page and "<table>" in page
    results = json.loads((reproduce_dir / "results.json").read_text())
    cobcm = next(c for c in results["table4"] if c["row"] == "cobcm")
    assert f"{cobcm['ours']:.1f}" in page
    # Each figure sits in its section: Fig. 7's plot after Fig. 7's heading, before Fig. 8's.
    assert page.index('id="fig-7') < page.index('id="fig-fig7"') < page.index('id="fig-8')


def test_battery_table_is_read_from_the_reproduce_markdown(reproduce_dir):
    results = json.loads((reproduce_dir / "results.json").read_text())
    if not results.get("battery_markdown"):
        pytest.fail("results.json has no battery_markdown: Table V cannot be plotted")
    bat = report.battery_table(results["battery_markdown"])
    assert {"scheme", "supercap_mm3", "supercap_paper_mm3", "li_thin_mm3", "li_thin_paper_mm3"} <= set(bat.columns)
    assert {"cobcm", "nogap", "bbb", "eadr"} <= set(bat["scheme"])
    assert (bat["supercap_mm3"] > bat["li_thin_mm3"]).all()


def test_battery_rows_as_data_agree_with_the_markdown(reproduce_dir):
    results = json.loads((reproduce_dir / "results.json").read_text())
    for table, n in (("V", 9), ("VI", 14)):
        data = report.battery_frame(results, table)
        parsed = report.battery_table(results["battery_markdown"], table)
        assert len(data) == len(parsed) == n, table
        assert list(data["scheme"]) == list(parsed["scheme"])
        # The Markdown rounds (4 decimals for SuperCap, 5 for Li-thin).
        assert (abs(data["supercap_mm3"] - parsed["supercap_mm3"]) <= 0.5e-4 + 1e-12).all()
        assert (abs(data["li_thin_mm3"] - parsed["li_thin_mm3"]) <= 0.5e-5 + 1e-12).all()
        assert (data["supercap_paper_mm3"] == parsed["supercap_paper_mm3"]).all()
    # Results written before the rows existed still give Table V.
    old = {k: v for k, v in results.items() if k != "battery_rows"}
    assert len(report.battery_frame(old)) == 9


# --------------------------------------------------------------------------
# Screenshot test in headless Chromium

CHECK_SCRIPT = """
<script>
window.addEventListener("load", function () {
  var out = [];
  document.querySelectorAll("img, svg").forEach(function (el) {
    if (el.tagName.toLowerCase() === "svg" && el.parentElement.closest("svg")) return;
    var r = el.getBoundingClientRect();
    var isImg = el.tagName.toLowerCase() === "img";
    out.push({tag: el.tagName.toLowerCase(), id: (el.closest("figure") || {}).id || "",
              complete: isImg ? el.complete : true,
              nw: isImg ? el.naturalWidth : r.width, nh: isImg ? el.naturalHeight : r.height,
              x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height});
  });
  var pre = document.createElement("pre");
  pre.id = "render-check";
  pre.textContent = JSON.stringify({height: document.documentElement.scrollHeight, images: out});
  document.body.appendChild(pre);
});
</script>
"""

WIDTH = 1200


def _chromium(args: list[str], tmp: Path) -> subprocess.CompletedProcess:
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--force-device-scale-factor=1", "--disable-dev-shm-usage", f"--user-data-dir={tmp / 'profile'}",
           "--virtual-time-budget=10000", *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    return p


def render_check(page: Path, tmp: Path) -> list[dict]:
    """Open `page` in headless Chromium and judge every image: loaded
    (complete, non-zero natural size), laid out at a real size, and painted
    (enough non-white pixels inside its box in a screenshot of the page).
    Returns one dict per image with `ok` and the reasons it is not."""
    tmp.mkdir(parents=True, exist_ok=True)
    probe = tmp / "probe.html"
    text = page.read_text()
    probe.write_text(text.replace("</body>", CHECK_SCRIPT + "</body>") if "</body>" in text else text + CHECK_SCRIPT)
    # The same width as the screenshot, so that the boxes measured here are where the screenshot paints.
    dom = _chromium(["--dump-dom", f"--window-size={WIDTH},1000", probe.as_uri()], tmp).stdout
    m = re.search(r'<pre id="render-check">(.*?)</pre>', dom, re.S)
    assert m, "the check script did not run: " + dom[-500:]
    info = json.loads(html.unescape(m.group(1)))
    height = min(int(info["height"]) + 40, 16000)
    shot = tmp / "shot.png"
    _chromium([f"--screenshot={shot}", f"--window-size={WIDTH},{height}", page.as_uri()], tmp)
    from PIL import Image  # noqa: PLC0415  (Pillow comes with matplotlib)

    im = Image.open(shot).convert("RGB")
    out = []
    for img in info["images"]:
        why = []
        if not img["complete"] or img["nw"] <= 0 or img["nh"] <= 0:
            why.append(f"not loaded (natural size {img['nw']}x{img['nh']})")
        if img["w"] < 50 or img["h"] < 50:
            why.append(f"laid out at {img['w']:.0f}x{img['h']:.0f} px")
        else:
            box = (int(img["x"]) + 3, int(img["y"]) + 3, int(img["x"] + img["w"]) - 3, int(img["y"] + img["h"]) - 3)
            if box[3] > im.height:
                why.append("outside the screenshot")
            else:
                crop = im.crop(box)
                hist = crop.convert("L").histogram()
                ink = sum(hist[:235]) / max(1, sum(hist))
                img["ink"] = ink
                if ink < 0.01:
                    why.append(f"blank ({ink:.2%} of its pixels are not white)")
        img["ok"] = not why
        img["why"] = why
        out.append(img)
    return out


def _assert_all_rendered(page: Path, tmp: Path, expected: int) -> list[dict]:
    imgs = render_check(page, tmp)
    assert len(imgs) == expected, [i["id"] for i in imgs]
    bad = [(i["id"], i["why"]) for i in imgs if not i["ok"]]
    assert not bad, f"plots that did not render in Chromium: {bad}"
    return imgs


def test_sweep_report_renders_every_plot_in_chromium(param_sweep_dir, tmp_path):
    report.main([str(param_sweep_dir)])
    imgs = _assert_all_rendered(param_sweep_dir / "report.html", tmp_path, 4)
    assert all(i["ink"] > 0.02 for i in imgs)


def test_reproduce_report_renders_every_plot_in_chromium(reproduce_dir, tmp_path):
    report.main([str(reproduce_dir)])
    _assert_all_rendered(reproduce_dir / "report.html", tmp_path, 7)


def test_secon_report_draws_every_figure_and_the_claims(secon_dir, tmp_path):
    md_before = (secon_dir / "report.md").read_bytes()
    assert report.main([str(secon_dir)]) == 0
    assert (secon_dir / "report.md").read_bytes() == md_before
    page = (secon_dir / "report.html").read_text()
    assert_self_contained(page)
    names = ["claims_change", "claims_factor"] + [f"fig{n}" for n in range(9, 15)]
    for name in names:
        assert f'id="fig-{name}"' in page, name
    # The claims table and the measured causes come from report.md.
    assert "The paper's claims" in page and "Causes of the gaps" in page
    # Each figure after its own heading: Fig. 11's plot between Fig. 11's and Fig. 12's.
    assert page.index("Fig. 11: transaction") < page.index('id="fig-fig11"') < page.index("Fig. 12: PM writes")
    _assert_all_rendered(secon_dir / "report.html", tmp_path, len(names))


def test_the_render_check_fails_on_a_broken_or_blank_image(param_sweep_dir, tmp_path):
    """Proof that the screenshot test can fail: one plot's data replaced by
    bytes that are not an image, another by a valid but empty SVG."""
    report.main([str(param_sweep_dir)])
    page = (param_sweep_dir / "report.html").read_text()
    srcs = _images(page)
    broken = "data:image/svg+xml;base64," + base64.b64encode(b"<svg this is not an image").decode()
    blank_svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="600" height="400"><rect width="600" height="400" fill="white"/></svg>'
    blank = "data:image/svg+xml;base64," + base64.b64encode(blank_svg).decode()
    bad_page = tmp_path / "bad.html"
    bad_page.write_text(page.replace(srcs[0], broken).replace(srcs[2], blank))
    imgs = render_check(bad_page, tmp_path / "chk")
    assert len(imgs) == 4
    verdicts = [i["ok"] for i in imgs]
    assert verdicts == [False, True, False, True], [(i["id"], i["why"]) for i in imgs]
    assert any("not loaded" in w for w in imgs[0]["why"])
    assert any("blank" in w for w in imgs[2]["why"]) and not any("not loaded" in w for w in imgs[2]["why"])
