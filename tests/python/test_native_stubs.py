"""The committed stub `python/spmsim/_native.pyi` describes the extension
that is installed: the same names, and for every function the parameters
and defaults that PyO3 registered (`__text_signature__`).

That the stub is what crates/spmsim-py/src/stubs.rs generates is checked
on the Rust side (`cargo test -p spmsim-py`)."""

from __future__ import annotations

import ast
from pathlib import Path

import spmsim
from spmsim import _native

STUB = Path(spmsim.__file__).with_name("_native.pyi")
SOURCE_STUB = Path(__file__).resolve().parents[2] / "python" / "spmsim" / "_native.pyi"


def _stub():
    tree = ast.parse(STUB.read_text())
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    consts = {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    return funcs, consts


def _text_signature(fn: ast.FunctionDef) -> str:
    args = fn.args.args
    defaults = [None] * (len(args) - len(fn.args.defaults)) + list(fn.args.defaults)
    parts = [a.arg if d is None else f"{a.arg}={ast.unparse(d)}" for a, d in zip(args, defaults)]
    return "(" + ", ".join(parts) + ")"


def test_the_installed_stub_is_the_committed_one():
    assert STUB.read_text() == SOURCE_STUB.read_text(), "reinstall the package (pip install .)"


def test_stub_names_what_the_extension_exports():
    funcs, consts = _stub()
    exported = {n for n in dir(_native) if not n.startswith("_") or n == "__version__"}
    assert exported == set(funcs) | consts


def test_stub_signatures_match_the_registered_functions():
    funcs, _ = _stub()
    for name, fn in funcs.items():
        assert getattr(_native, name).__text_signature__ == _text_signature(fn), name
