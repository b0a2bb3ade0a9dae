"""spmsim: a simulator of secure persistent memory, from Python.

    import spmsim
    r = spmsim.run(scheme="cobcm", workload="btree", instructions=2_000_000,
                   overrides={"persistence.point.entries": 64}, baseline="bbb")
    r.stats["roi"]["core"]["ipc"], r.stats["slowdown"]   # the tree `spmsim run --json` prints
    r.to_pandas()                                 # one row: roi.core.ipc, roi.memory.writes.data, ...
    spmsim.schemes(); spmsim.config("cobcm", {"tree.arity": 8})

    spmsim.sweep(grid, out_dir, executor=None)    # many runs, one file per point
    spmsim.load(out_dir)                          # a sweep as one DataFrame

The simulator is the Rust library (`spmsim._native`, built by maturin);
`spmsim` on the command line is the same CLI as the cargo-built binary.
"""

from __future__ import annotations

import os as _os

from . import _native

__version__: str = _native.__version__


def _find_configs() -> None:
    # The presets are read from $SPMSIM_CONFIGS, else from the checkout the
    # extension was built in. An installation whose checkout is gone uses
    # the copy inside the package (the wheel's spmsim/configs).
    if _os.environ.get("SPMSIM_CONFIGS") or _os.path.isdir(_native.presets_dir()):
        return
    bundled = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "configs")
    if _os.path.isdir(bundled):
        _os.environ["SPMSIM_CONFIGS"] = bundled


_find_configs()

from ._api import (  # noqa: E402
    DEFAULT_INSTRUCTIONS,
    DEFAULT_SEED,
    Result,
    config,
    config_toml,
    presets_dir,
    run,
    schemes,
)
# Bound here, before anything imports the submodule of the same name, so
# that `spmsim.sweep` stays the function.
from .sweep import sweep  # noqa: E402
from .results import load  # noqa: E402

__all__ = [
    "DEFAULT_INSTRUCTIONS",
    "DEFAULT_SEED",
    "Result",
    "__version__",
    "config",
    "config_toml",
    "load",
    "presets_dir",
    "run",
    "schemes",
    "sweep",
]
