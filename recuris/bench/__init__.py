"""Measuring it: `python -m recuris.bench locomo PATH...` and `python -m recuris.bench experience`.

Document 003 §6's evaluation: its metrics, the LoCoMo and long-horizon benchmarks and the
experience benchmark. Speed and scale are measured from a clone, in benchmarks/ beside the
package; what the guided tour needs (its recorder, trace, plots, simulated year and mock
environment) is recuris/tour/.

`main` is imported from command.py when it is first asked for: command.py imports every
benchmark, and `import recuris.bench.evaluation` need not load them.
"""

import importlib
from typing import TYPE_CHECKING

# A type checker does not run `__getattr__`: it reads `main` from this import, which never runs.
if TYPE_CHECKING:
    from .command import main

__all__ = ["main"]


def __getattr__(name: str) -> object:
    """Return `main` from command.py, imported on first use (PEP 562)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}", name=name)
    return importlib.import_module(f"{__name__}.command").main
