"""Run the benchmarks: `python -m recuris.bench locomo PATH...` or `... experience`."""

import sys

from ..manager.entry import run_piped


def command() -> int:
    """Load the benchmarks and run one; Ctrl-C while they load ends it as EN1 says (EN2)."""
    from .command import main

    return main()


if __name__ == "__main__":
    sys.exit(run_piped(command))
