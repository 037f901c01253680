"""Run the simulated year of forgetting: `python -m recuris.simulation` (bench/simulation.py)."""

from .bench.simulation import main

if __name__ == "__main__":
    main()
