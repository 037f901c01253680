"""Shared use: one manager serving several threads, each operation whole.

Document 003 §7 asks that memory serve the agent without becoming its point of failure; an
agent answering several requests at once calls one manager from several threads. The
manager's caches (loaded layers, tasks in progress) and the retry queue change together
with the store, so each public operation runs alone, under one re-entrant lock per
instance; SQLite connections are shared across threads under the store's own lock. The
manager's parts (its tasks, users' layers, forgetting cycle) take no lock of their own:
`delegate` makes a part's method one of the manager's, which `serialize` then wraps.

Invariants:
    TS1 the methods `serialize` names run one at a time on one instance, each under the
        instance's re-entrant `_lock`, so a method may call another.
"""

import functools
from collections.abc import Callable, Iterable
from typing import Any, Concatenate, ParamSpec, TypeVar

__all__ = ["serialize", "delegate"]

P = ParamSpec("P")
R = TypeVar("R")


def _locked(method: Callable) -> Callable:
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


def serialize(cls: type, names: Iterable[str]) -> type:
    """Make each named method of cls run under the instance's `_lock` (TS1); return cls."""
    for name in names:
        locked = _locked(getattr(cls, name))
        locked.__name__, locked.__qualname__ = name, f"{cls.__qualname__}.{name}"
        setattr(cls, name, locked)
    return cls


def delegate(
    part: str, method: Callable[Concatenate[Any, P], R]
) -> Callable[Concatenate[Any, P], R]:
    """Return a method that calls `method` on the instance's attribute `part`.

    It keeps the part's signature and docstring: `start_task = delegate("tasks", Tasks.start)`
    makes `manager.start_task(...)` run `manager.tasks.start(...)`.
    """

    @functools.wraps(method)
    def delegated(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(getattr(self, part), *args, **kwargs)

    return delegated
