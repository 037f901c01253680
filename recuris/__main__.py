"""Run the recuris command line: `python -m recuris --db FILE COMMAND` (see cli.py)."""

import sys

from .manager.entry import run_piped


def command() -> int:
    """Load the command line and run it; Ctrl-C while it loads ends it as EN1 says (EN2)."""
    from .manager.cli import main

    return main()


if __name__ == "__main__":
    sys.exit(run_piped(command))
