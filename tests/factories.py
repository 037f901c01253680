"""The stores the shared contract tests run on: the built-in ones, and a fork's own.

A fork runs the store contract (`tests/test_store.py`) and the state machine against a naive
model (`tests/test_store_properties.py`) on its own store without subclassing anything: it
names a factory in the environment, `RECURIS_STORES="package.module:make_store"`, several
separated by commas. A factory takes a fresh, empty folder (a `pathlib.Path`) and returns a
new store. docs/fork-as-a-starter.md shows it in use.
"""

import importlib
import os
from collections.abc import Callable
from pathlib import Path

from recuris import InMemoryStore, SQLiteStore

BUILT_IN: dict[str, Callable[[Path], object]] = {
    "memory": lambda folder: InMemoryStore(),
    "sqlite": lambda folder: SQLiteStore(folder / "store.db"),
}


def store_factories() -> dict[str, Callable[[Path], object]]:
    """Return the built-in factories and those named by RECURIS_STORES, by name."""
    found = dict(BUILT_IN)
    for spec in filter(None, (part.strip() for part in os.environ.get("RECURIS_STORES", "").split(","))):
        module, _, name = spec.partition(":")
        found[spec] = getattr(importlib.import_module(module), name)
    return found
