"""Run the recuris command line: `python -m recuris --db FILE COMMAND` (see cli.py)."""

import sys

from .manager.cli import main

if __name__ == "__main__":
    sys.exit(main())
