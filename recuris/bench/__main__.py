"""Run the benchmarks: `python -m recuris.bench locomo PATH...` or `... speed`."""

import sys

from .command import main

if __name__ == "__main__":
    sys.exit(main())
