# Generated from crates/spmsim-py/src/stubs.rs; do not edit.
# Regenerate: SPMSIM_BLESS_STUBS=1 cargo test --release -p spmsim-py stub
"""The Rust core of spmsim (PyO3); use it through the `spmsim` package."""

__version__: str
"""The version of the spmsim crates."""
DEFAULT_INSTRUCTIONS: int
"""Instructions of a run when none are given."""

def run(scheme: str, workload: str, instructions: int | None, seed: int, overrides: list[str], baseline: str | None = None, warmup_instructions: int = 0) -> tuple[str, str]:
    """One timed run, as `spmsim run --json` does it, without the GIL; Ctrl-C stops it
    (KeyboardInterrupt). Returns the statistics document as the CLI prints it and the
    resolved configuration as TOML. Bad input raises ValueError with the CLI's message;
    a failed simulation raises RuntimeError. `instructions` None runs the default count;
    `warmup_instructions` run first, outside the statistics.
    """

def config_toml(scheme: str, overrides: list[str]) -> str:
    """The resolved configuration of a preset (name or TOML path) under `key.path=value`
    overrides, as TOML; ValueError on a bad preset, key or value.
    """

def schemes() -> list[str]:
    """The preset names, sorted."""

def presets_dir() -> str:
    """The folder the presets are read from (`$SPMSIM_CONFIGS` if set)."""

def cli_main(argv: list[str]) -> int:
    """Run the `spmsim` command line (program name first) in this process, as the binary
    does, and return its exit code. `sweep` and `report` are handed to
    `python3 -m spmsim`.
    """
