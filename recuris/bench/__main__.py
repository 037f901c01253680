"""Run the benchmarks: `python -m recuris.bench locomo PATH...` or `... experience`."""

import sys

from .command import main

if __name__ == "__main__":
    sys.exit(main())
