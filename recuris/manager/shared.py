"""Shared use: one manager serving several threads, each operation whole.

Document 003 §7 asks that memory serve the agent without becoming its point of failure; an
agent answering several requests at once calls one manager from several threads. The
manager's caches (loaded layers, tasks in progress) and the retry queue change together
with the store, so each public operation runs alone, under one re-entrant lock per
instance; SQLite connections are shared across threads under the store's own lock.

Invariants:
    TS1 the methods `serialize` names run one at a time on one instance, each under the
        instance's re-entrant `_lock`, so a method may call another.
"""

import functools
from collections.abc import Callable, Iterable

__all__ = ["serialize"]


def _locked(method: Callable) -> Callable:
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


def serialize(cls: type, names: Iterable[str]) -> type:
    """Make each named method of cls run under the instance's `_lock` (TS1); return cls."""
    for name in names:
        setattr(cls, name, _locked(getattr(cls, name)))
    return cls
