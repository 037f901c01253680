"""Measuring it: `python -m recuris.bench locomo PATH...` and `python -m recuris.bench speed`.

evaluation's metrics, the LoCoMo and long-horizon benchmarks, speed and scale, the
simulated year of forgetting, and the mock environment the A/B runs in. `run_piped` runs
a command's main so that a reader who stops early (`| head`) ends it quietly.
"""

import os
import sys
from collections.abc import Callable

from .command import main

__all__ = ["main", "run_piped"]


def run_piped(command: Callable[[], int | None]) -> int:
    """Run `command` and return its exit status; 0, silently, if standard output's reader
    closed the pipe early (`| head`), as Unix tools end."""
    try:
        status = command()
        sys.stdout.flush()  # inside the try: the last lines may meet the closed pipe here
    except BrokenPipeError:
        # Standard output goes to the null device, so that the interpreter's last flush finds
        # nothing to write and says nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return status or 0
