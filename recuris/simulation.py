"""Run the simulated year of forgetting: `python -m recuris.simulation` (tour/simulation.py)."""

import sys

from .manager.entry import run_piped


def command() -> int | None:
    """Load the simulation and run it; Ctrl-C while it loads ends it as EN1 says (EN2)."""
    from .tour.simulation import main

    return main()


if __name__ == "__main__":
    sys.exit(run_piped(command))
