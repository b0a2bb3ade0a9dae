#!/usr/bin/env python3
"""Commands for Debian's sjeng 11.2 (SPEC's 458.sjeng upstream) that search
each position of a file to a fixed depth, read from standard input.

usage: sjeng-commands.py POSITIONS DOTS OUT

Sjeng polls its input every 8192 nodes while it searches and stops the
search when anything is waiting, except a "." (a status request), which it
reads, with the character after it, and searches on; in its command loop a
"." line does nothing. A file on standard input always has something
waiting, so each `go` is followed by DOTS lines of "."; the search takes
one per poll, a number its node count fixes, so every run searches the
same tree. `sd` sets the depth that ends each search and `st` a time so
long that no clock ends one; `force` keeps sjeng from searching before
`go`; `new` (which clears the hash tables and resets `st`) comes once.
"""
import sys


def main() -> int:
    positions, dots, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    lines = ["d", "new", "st 100000"]  # `d`: no board after each command
    with open(positions) as f:
        for raw in f:
            raw = raw.strip()
            if not raw or raw.startswith("#"):
                continue
            depth, fen = raw.split(None, 1)
            lines += ["force", f"sd {depth}", f"setboard {fen}", "go"] + ["."] * dots
    lines.append("quit")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
