"""The `spmsim` console script (and `python -m spmsim`).

    spmsim sweep ARGS    -> spmsim.sweep_cli.main(ARGS)   (Python)
    spmsim report ARGS   -> spmsim.report.main(ARGS)      (Python)
    spmsim explore ARGS  -> spmsim.explore.main(ARGS)     (Python)
    spmsim reproduce PAPER ARGS --dask N|ADDRESS
                         -> spmsim.reproduce_dask.main(...) (Python: the points on Dask,
                            each run by the Rust CLI, then the report)
    spmsim OTHER ARGS    -> the Rust CLI in this process (spmsim._native.cli_main),
                            the same commands and output as target/release/spmsim

The Rust binary hands `sweep`, `report`, `explore` and `reproduce ... --dask` back to `python3 -m spmsim`, so
both front ends take every command.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

#: Subcommands written in Python: name -> module with main(args) -> int.
PYTHON_COMMANDS = {"sweep": "spmsim.sweep_cli", "report": "spmsim.report", "explore": "spmsim.explore"}


def _python_command(sub: str, args: list[str]) -> int:
    module = PYTHON_COMMANDS[sub]
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name == module:
            print(f"error: `spmsim {sub}` needs the module {module}, which this installation of the spmsim "
                  "package lacks; reinstall it: pip install .", file=sys.stderr)
        else:
            print(f"error: `spmsim {sub}` needs the Python module `{e.name}`, which is not installed: "
                  f"pip install . (or pip install {e.name})", file=sys.stderr)
        return 2
    code = mod.main(args)
    return 0 if code is None else int(code)


def _native_command(args: list[str]) -> int:
    from . import _native  # noqa: PLC0415

    # The commands run in Rust and do not return to Python until they end:
    # let Ctrl-C and a closed pipe end the process as they end the binary.
    saved = {}
    for name in ("SIGINT", "SIGPIPE"):
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        try:
            saved[sig] = signal.signal(sig, signal.SIG_DFL)
        except ValueError:  # not the main thread: leave the handlers alone
            pass
    sys.stdout.flush()
    sys.stderr.flush()
    # Commands that hand work back to Python (reproduce's HTML report) use
    # this interpreter, the one that has the package.
    os.environ.setdefault("SPMSIM_PYTHON", sys.executable)
    try:
        return _native.cli_main(["spmsim", *args])
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    """Run `spmsim ARGS` (`argv` without the program name; default
    `sys.argv[1:]`) and return the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in PYTHON_COMMANDS:
        return _python_command(args[0], args[1:])
    if args and args[0] == "reproduce" and any(a == "--dask" or a.startswith("--dask=") for a in args):
        from .reproduce_dask import main as reproduce_on_dask  # noqa: PLC0415

        return reproduce_on_dask(args[1:])
    return _native_command(args)


if __name__ == "__main__":
    sys.exit(main())
