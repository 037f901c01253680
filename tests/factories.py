"""The parts the shared tests run on: the built-in stores, scorers, summarizers, and a fork's own.

A fork runs the suite's shared tests on its own parts without subclassing or editing anything:
it names a factory in the environment as "package.module:name", several separated by commas.
Each factory makes a new part for every test, so no test sees another's state.

RECURIS_STORES
    A factory takes a fresh, empty folder (a `pathlib.Path`) and returns a new store. The
    store contract (tests/storage/test_store.py), the store state machine against the model
    store (tests/storage/test_store_properties.py) and the manager state machine
    (tests/manager/test_manager_properties.py) run on it. A store that persists says so
    with `make_store.reopens = True`: called again on the same folder, the factory then
    returns a store holding what the first one held, and the manager state machine closes
    and reopens it; otherwise "reopen" builds a new manager on the same store object.

RECURIS_SCORERS
    A factory takes no argument and returns a new, empty `Scorer` (recuris/core/similarity.py):
    the same factory `RecallPolicy(scorer=...)` and `MemoryManager(scorer=...)` take.
    The scorer contract (tests/retrieval/test_scorer_contract.py: SR1, SM2, SM3) and the
    episodic checks (tests/core/test_episodic_properties.py: E1-E5) run on it. E4 is checked
    twice: the indexed `retrieve` equals `retrieve_by_scan` for every scorer, and it agrees
    with an independent reference. For the built-in scorers the reference is a naive formula
    written in that test file. For a fork's scorer it is `reference_score(query_terms,
    document_terms, corpus)` if the factory's module defines one: the score `score` should
    give, from the terms the scorer's own analyzer makes and `corpus`, the terms of every
    document stored (for statistics such as BM25's). A module without it gets the
    protocol-level checks only (`scorer_references` leaves its scorers out).

RECURIS_SUMMARIZERS
    A factory takes the summary budget (`max_summary_chars`, an int >= 80) and returns a
    summarizer `(old_summary, evicted_steps) -> str`. The working-memory state machine and the
    fallback check (tests/core/test_working_properties.py: W1-W5) run on it; none of them
    reads the summary's format (M1-M4 are the built-in `StructuredSummarizer`'s own rules).

A built-in part is named by its short name, a fork's by its spec (the name tests are
parametrized by, so `-k fork_parts` selects them). A property test run once per part shares
the profile's examples among the parts (`shared_examples`): a part adds coverage, not time.
docs/fork-as-a-starter.md §5 shows the kit in use; tests/test_fork_kit.py runs it on
tests/fork_store.py and tests/fork_parts.py.
"""

import importlib
import os
from collections.abc import Callable
from pathlib import Path

from hypothesis import settings

from recuris import BM25Scorer, InMemoryStore, JaccardScorer, SQLiteStore, StructuredSummarizer
from recuris.manager.factory_spec import factory_of
from recuris.storage.model_store import ModelStore


def model_store(folder: Path):
    return ModelStore()


def memory_store(folder: Path):
    return InMemoryStore()


def sqlite_store(folder: Path):
    return SQLiteStore(folder / "store.db")


sqlite_store.reopens = True  # the same folder, the same file: a second call reopens it

# The model first: the store machine tests every other one against it (MO1-MO3).
BUILT_IN: dict[str, Callable[[Path], object]] = {
    "model": model_store,
    "memory": memory_store,
    "sqlite": sqlite_store,
}
BUILT_IN_SCORERS: dict[str, Callable[[], object]] = {
    "jaccard": JaccardScorer,
    "bm25": BM25Scorer,  # with its own analyzer: stop words dropped, light stemming
}
BUILT_IN_SUMMARIZERS: dict[str, Callable[[int], object]] = {"structured": StructuredSummarizer}


def _named(variable: str) -> dict[str, Callable]:
    """Return the factories RECURIS_<PART> names, by their spec, imported.

    Raises ValueError naming the variable, the spec and the expected form when a spec names
    no factory (FK2; the bench's `--store` reads a spec through the same `factory_of`).
    """
    return {
        spec: factory_of(spec, variable)
        for spec in filter(None, (part.strip() for part in os.environ.get(variable, "").split(",")))
    }


def store_factories() -> dict[str, Callable[[Path], object]]:
    """Return the built-in store factories and those named by RECURIS_STORES, by name."""
    return {**BUILT_IN, **_named("RECURIS_STORES")}


def scorer_factories() -> dict[str, Callable[[], object]]:
    """Return the built-in scorer factories and those named by RECURIS_SCORERS, by name."""
    return {**BUILT_IN_SCORERS, **_named("RECURIS_SCORERS")}


def summarizer_factories() -> dict[str, Callable[[int], object]]:
    """Return the built-in summarizer factories and those named by RECURIS_SUMMARIZERS, by name."""
    return {**BUILT_IN_SUMMARIZERS, **_named("RECURIS_SUMMARIZERS")}


def scorer_references() -> dict[str, Callable]:
    """Return, for each fork scorer whose module
    defines `reference_score`, that function, by spec."""
    found = {}
    for spec in _named("RECURIS_SCORERS"):
        reference = getattr(
            importlib.import_module(spec.partition(":")[0]), "reference_score", None
        )
        if reference is not None:
            found[spec] = reference
    return found


def shared_examples(parts: int) -> settings:
    """Settings giving each of `parts` parametrizations
    its share of the profile's examples, at least 10."""
    return settings(max_examples=max(10, settings.default.max_examples // parts))
