"""The repository's report scripts on results.json files written here: they
read every number from the runs, label their means, and name a missing run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _results(folder: Path, suite_file: str, cobcm: float, gobmk: bool) -> Path:
    """A results.json of the shape `reproduce secpb` writes, cut down."""
    folder.mkdir(parents=True)
    cells = lambda rows, col: [{"row": r, "column": col, "paper": p, "ours": o} for r, p, o in rows]  # noqa: E731
    res = {
        "suite": [{"label": "445-gobmk" if gobmk else "gnugo", "suite_file": suite_file, "regions": "single (1 of 3 phases)"}],
        "instructions": 5_000_000,
        "quick": True,
        "table4": cells([("cobcm", 1.3, cobcm), ("nogap", 118.4, 4 * cobcm)], "slowdown %"),
        "table4_arith": {"cobcm": cobcm + 0.25, "nogap": 4 * cobcm + 0.5},
        "fig7": cells([("8 entries", 112.3, 10 * cobcm), ("512 entries", 24.0, cobcm)], "CM overhead %"),
        "fig8": cells([("8 entries", 12.7, 7.0), ("512 entries", 1.8, 1.0)], "CM root updates % of sp"),
        "fig9": cells([("cm-dbmf", 33.3, 2 * cobcm)], "overhead %"),
        "per_benchmark": [{"id": "gobmk_cm_overhead_falls", "program": "445-gobmk", "paper": 1.0, "ours": 1.0}] if gobmk else [],
    }
    (folder / "results.json").write_text(json.dumps(res))
    return folder


def _run(*args: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "scripts" / "secpb-suites"), *map(str, args)],
                          capture_output=True, text=True, check=False)


def test_secpb_suites_puts_each_suite_beside_the_paper(tmp_path):
    a = _results(tmp_path / "a", "programs.toml", 6.0, gobmk=False)
    b = _results(tmp_path / "b", "spec-upstream.toml", 2.75, gobmk=True)
    p = _run(a, b)
    assert p.returncode == 0, p.stderr
    out = p.stdout.splitlines()
    # One column per suite, named by its suite file, after the paper's.
    assert "| | paper | ours: programs.toml | ours: spec-upstream.toml |" in out
    assert "| cobcm | 1.3 | 6.0 | 2.8 |" in out  # geometric (the table4 cells)
    assert "| cobcm | 1.3 | 6.2 | 3.0 |" in out  # arithmetic, its own table
    assert any("geometric mean" in line for line in out) and any("arithmetic mean" in line for line in out)
    assert "| 512 entries | 24.0 | 6.0 | 2.8 |" in out
    assert "| spec-upstream.toml | gobmk_cm_overhead_falls | 445-gobmk | 1 | 1.0 |" in out


def test_secpb_suites_names_the_folder_without_results(tmp_path):
    a = _results(tmp_path / "a", "programs.toml", 6.0, gobmk=False)
    p = _run(a, tmp_path / "missing")
    assert p.returncode != 0
    assert "missing/results.json" in p.stderr and "reproduce secpb --out" in p.stderr
