"""Run the simulated year of forgetting: `python -m recuris.simulation` (bench/simulation.py)."""

import sys

from .manager.cli import run_piped
from .bench.simulation import main

if __name__ == "__main__":
    sys.exit(run_piped(main))
