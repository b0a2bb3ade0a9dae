"""One timed run from Python: `spmsim.run`, `spmsim.config`, `spmsim.schemes`.

    spmsim.run(scheme, workload, overrides={...})
      -> _native.run (Rust, without the GIL; Ctrl-C raises KeyboardInterrupt)
           = spmsim::api::run, the function `spmsim run` calls
      -> Result: .stats (the JSON tree `spmsim run --json` prints),
                 .config (the resolved configuration), .to_pandas()

Overrides are `{"key.path": value}` with Python values (int, float, bool,
str, lists, dicts), or CLI-style strings `["key.path=value", ...]` taken
exactly as `--set` takes them.
"""

from __future__ import annotations

import json
import math
import operator
import os
import tomllib
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Union

from . import _native

Overrides = Union[Mapping[str, Any], Iterable[str], None]

#: The seed of a run when none is given (as `spmsim run`).
DEFAULT_SEED = 1
#: The instructions of a run when none are given (as `spmsim run`).
DEFAULT_INSTRUCTIONS: int = _native.DEFAULT_INSTRUCTIONS


def _toml_string(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\u{o:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_value(value: Any, key: str = "value") -> str:
    """A Python value as TOML source, for a `key.path=value` override."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, Mapping):
        items = ", ".join(f"{_toml_string(str(k))} = {toml_value(v, f'{key}.{k}')}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v, key) for v in value) + "]"
    try:
        return str(operator.index(value))  # int, numpy integers
    except TypeError:
        pass
    try:
        return toml_value(float(value), key)  # numpy floats
    except (TypeError, ValueError):
        raise TypeError(f"override `{key}`: cannot write a {type(value).__name__} as a config value") from None


def override_strings(overrides: Overrides) -> list[str]:
    """`{"a.b": 3}` -> `["a.b=3"]`; CLI-style strings pass through."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        raise TypeError("overrides: give a dict {'key.path': value} or a list of 'key.path=value' strings, not one string")
    if isinstance(overrides, Mapping):
        out = []
        for k, v in overrides.items():
            if not isinstance(k, str):
                raise TypeError(f"overrides: key {k!r} is not a string")
            out.append(f"{k}={toml_value(v, k)}")
        return out
    out = []
    for o in overrides:
        if not isinstance(o, str) or "=" not in o:
            raise TypeError(f"overrides: {o!r} is not a 'key.path=value' string")
        out.append(o)
    return out


def _count(name: str, value: Any, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not a bool")
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}") from None
    if not 0 <= n < 2**64:
        raise ValueError(f"{name} must be between 0 and 2^64 - 1, not {n}")
    return n


def _flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    # The sweep results use the same column names (spmsim.results.flatten).
    try:
        from .results import flatten  # noqa: PLC0415
    except ImportError:
        flatten = None
    if flatten is not None:
        return flatten(tree, prefix)
    out: dict[str, Any] = {}
    for k, v in tree.items():
        if isinstance(v, Mapping) and v:
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = None if isinstance(v, Mapping) else v
    return out


@dataclass(frozen=True)
class Result:
    """A finished run.

    `stats` is the JSON tree that `spmsim run --json` prints for the same
    request, key for key; `stats_json` is that text itself. `config` is the
    resolved configuration as a dict (`config_toml` as TOML, as the CLI
    writes it to config.toml)."""

    scheme: str
    workload: str
    instructions: int
    seed: int
    overrides: tuple[str, ...]
    baseline: str | None
    stats_json: str = field(repr=False)
    config_toml: str = field(repr=False)
    stats: dict = field(init=False, repr=False, compare=False)
    config: dict = field(init=False, repr=False, compare=False)
    #: Instructions run before the region of interest (0: none).
    warmup_instructions: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "stats", json.loads(self.stats_json))
        object.__setattr__(self, "config", tomllib.loads(self.config_toml))

    @property
    def roi(self) -> dict:
        """The region-of-interest counters (`stats["roi"]`)."""
        return self.stats["roi"]

    def flat(self) -> dict[str, Any]:
        """The stats with nested keys joined by dots (`roi.core.ipc`,
        `roi.memory.writes.data`); lists stay values."""
        return _flatten(self.stats)

    def to_pandas(self):
        """A one-row DataFrame of the flattened stats."""
        import pandas as pd  # noqa: PLC0415

        return pd.DataFrame([self.flat()])

    def save(self, out_dir: str | os.PathLike) -> str:
        """Write stats.json and config.toml into `out_dir`, byte for byte as
        `spmsim run --out DIR` does; returns the directory."""
        out = os.fspath(out_dir)
        os.makedirs(out, exist_ok=True)
        for name, text in (("stats.json", self.stats_json), ("config.toml", self.config_toml)):
            path = os.path.join(out, name)
            tmp = os.path.join(out, f".{name}.tmp{os.getpid()}")
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        return out

    def __repr__(self) -> str:
        r = self.stats.get("roi", {})
        extra = f", slowdown={self.stats['slowdown']:.4f} vs {self.baseline}" if "slowdown" in self.stats else ""
        return (f"Result(scheme={self.scheme!r}, workload={self.workload!r}, instructions={self.instructions}, "
                f"seed={self.seed}, cycles={r.get('cycles')}, ipc={r.get('ipc')}{extra})")


def run(scheme: str, workload: str, instructions: int | None = None, seed: int | None = None,
        overrides: Overrides = None, baseline: str | None = None, warmup_instructions: int | None = None) -> Result:
    """Simulate `instructions` (default 1,000,000) of `workload` on the
    preset `scheme` (a name from `schemes()` or a TOML path) with `seed`
    (default 1), as `spmsim run` does.

    `warmup_instructions` (default 0) run first through the whole model,
    outside the statistics (`--warmup-instructions`); the stats then have a
    `warmup` entry and `roi` covers the `instructions` after it.

    `overrides` change config keys of `scheme` (not of the baseline).
    `baseline` also runs that preset on the same workload and seed and adds
    `baseline` and `slowdown` to the stats.

    The GIL is released while the simulation runs; Ctrl-C stops it with
    KeyboardInterrupt. Bad input (unknown preset, key, value or workload)
    raises ValueError with the message the CLI prints; a failed simulation
    raises RuntimeError."""
    n = _count("instructions", instructions, DEFAULT_INSTRUCTIONS)
    s = _count("seed", seed, DEFAULT_SEED)
    w = _count("warmup_instructions", warmup_instructions, 0)
    ovr = override_strings(overrides)
    # The count goes to the core as given (None when the caller gave none),
    # so a short trace's note names the default instead of a request.
    stats_json, config_toml = _native.run(str(scheme), str(workload), None if instructions is None else n, s, ovr,
                                          None if baseline is None else str(baseline), w)
    return Result(scheme=str(scheme), workload=str(workload), instructions=n, seed=s, overrides=tuple(ovr),
                  baseline=baseline, stats_json=stats_json, config_toml=config_toml, warmup_instructions=w)


def config_toml(scheme: str, overrides: Overrides = None) -> str:
    """The resolved configuration of `scheme` under `overrides`, as TOML
    (what `spmsim config show` prints and runs write to config.toml)."""
    return _native.config_toml(str(scheme), override_strings(overrides))


def config(scheme: str, overrides: Overrides = None) -> dict:
    """The resolved configuration of `scheme` under `overrides`, as a dict;
    ValueError names a bad preset, key or value."""
    return tomllib.loads(config_toml(scheme, overrides))


def schemes() -> list[str]:
    """The preset names (`spmsim config list`)."""
    return _native.schemes()


def presets_dir() -> str:
    """The folder the presets come from."""
    return _native.presets_dir()
