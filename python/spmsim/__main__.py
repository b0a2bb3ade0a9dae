"""`python -m spmsim ARGS`: the `spmsim` command line (see spmsim.cli)."""

import sys

from .cli import main

sys.exit(main())
