"""Measuring it: `python -m recuris.bench locomo PATH...` and `python -m recuris.bench speed`.

evaluation's metrics, the LoCoMo and long-horizon benchmarks, speed and scale, the
simulated year of forgetting, and the mock environment the A/B runs in.
"""

from .command import main

__all__ = ["main"]
