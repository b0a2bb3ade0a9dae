"""Every repository path the README and docs/ name exists.

A path is a span in backquotes, or a bare word in prose or a table, that
contains a slash and either starts at one of the repository's top folders
or ends in a file extension the repository uses. It is looked for from the
repository's root, from the library's sources (docs/architecture.md names
`timing/ooo.rs` as the library's folders do), from the library's crate and
from the document's own folder. Not paths of this repository: spans with
a placeholder (`<cache>`, `NAME`, `*`, `{...}`, `...`), URLs, a commit's
file (`HASH:path`), what a run writes (`results/...`), a version
(`python/3.11`), and a path right after the name of the project it belongs
to (gem5's `configs/common/Caches.py`, ChampSim `inc/...`: its name in the
60 characters before, within the sentence).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOP = ("crates/", "configs/", "docs/", "scripts/", "python/", "tests/", "fuzz/", "examples/", ".ci/")
EXT = (".rs", ".py", ".md", ".toml", ".json", ".c", ".h", ".sh", ".txt", ".yml", ".cfg")
ROOTS = (REPO, REPO / "crates/spmsim/src", REPO / "crates/spmsim", REPO / "crates", REPO / "fuzz")
# A word made of path characters, with a slash inside it.
WORD = re.compile(r"(?<![\w./~$-])([\w.-]+(?:/[\w.-]+)+/?)")
PLACEHOLDER = re.compile(r"[<>*{}:]|\.\.\.|[A-Z]{3,}(?![\w]*\.md)|/\d")
OTHER_PROJECT = re.compile(r"\b(gem5|ChampSim|NVMain|Ramulator 2|DRAMsim3)\b(?:[^.]|\.(?!\s))*$")


def documents() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def candidates(text: str) -> set[str]:
    found = set()
    matches = [*re.finditer(r"`([^`\n]+)`", text), *WORD.finditer(text)]
    spans = [m.group(1) for m in matches if not OTHER_PROJECT.search(text[max(0, m.start() - 60) : m.start()])]
    for span in spans:
        for word in span.split():
            word = word.strip("()[],;:'\"").removeprefix("./")
            if "/" not in word or "://" in word or PLACEHOLDER.search(word):
                continue
            if word.startswith(("/", "~", "$", "-", "results/")) or "=" in word:
                continue
            if word.startswith(TOP) or word.rstrip("/").endswith(EXT):
                found.add(word)
    # An index's table names its pages bare, relative to its own folder.
    found.update(re.findall(r"^\| ([\w.-]+\.md) \|", text, flags=re.M))
    return found


def exists(word: str, doc: Path) -> bool:
    return any((root / word).exists() for root in (*ROOTS, doc.parent))


@pytest.mark.parametrize("doc", documents(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_named_path_exists(doc):
    missing = sorted(w for w in candidates(doc.read_text()) if not exists(w, doc))
    assert not missing, f"{doc.relative_to(REPO)} names paths that do not exist: {missing}"


def test_the_check_finds_paths_and_misses():
    text = (
        "see `crates/spmsim/src/nowhere.rs` and docs/speed.md, not `<cache>/suite/NAME.trace`,"
        " gem5's `configs/common/Caches.py` or `results/index.md`\n| gone.md | a page |\n"
    )
    assert candidates(text) == {"crates/spmsim/src/nowhere.rs", "docs/speed.md", "gone.md"}
    doc = REPO / "README.md"
    assert exists("docs/speed.md", doc)
    assert not exists("crates/spmsim/src/nowhere.rs", doc)
