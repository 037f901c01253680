"""Degradation: a store wrapper that keeps failed writes and retries them, never dropping one.

Document 003 §7.3: memory is an enhancement, not a single point of failure. When the store
is locked or gone, the agent must go on without memory, and what it meant to remember
must not be lost. `BufferedStore` wraps any Store: a write that fails is queued and
retried, in order, before the next write (or on `flush`); ids are still handed out; reads
see the queue, and raise StoreError when the store cannot answer, so that the caller (the
manager) can degrade to "no memory". docs/concurrency-bounds.md says what degrades how.

Invariants:
    G1  a write is either in the store or in the queue; nothing is dropped on an outage.
    G2  queued writes reach the store in the order they were made.
    G3  deleting a user's items also drops that user's queued writes, so a retry can never
        bring deleted memory back.
    G6  reads see queued writes: `get`, `list` and `matching` return a queued item as if it
        were written (its newest queued copy), and `audit` the queued records.
    G7  offline ids are unique across stores and processes: each holds a random token drawn
        once per BufferedStore (or injected), beside the time and a counter.
    G8  `close` flushes; if writes are still queued it raises StoreError naming them, keeps
        them queued and leaves the inner store open, so that a later `close` may write them.
    G9  the queue holds at most `max_pending` batches; a write past it raises StoreError:
        no write is ever dropped silently.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable

from .item import MemoryItem
from .records import AuditRecord
from .shared import serialize
from .store import Access, Store, StoreError
from .text import tokenize

__all__ = ["BufferedStore", "QueuedView"]

log = logging.getLogger("recuris.store")


class BufferedStore:
    """Wrap a store so that a failed write is kept and retried, never dropped.

    Reads go to the inner store, overlaid with the queue (G6), and raise StoreError when it
    fails; the caller decides how to degrade. `pending` counts the batches waiting to be written.
    """

    def __init__(self, inner: Store, clock: Callable[[], float] = time.time, *,
                 max_pending: int = 10_000, token: str | None = None) -> None:
        self.inner, self.clock, self.max_pending = inner, clock, max_pending
        self._pending: list[tuple[str, list]] = []
        self._offline = 0
        # Two managers offline at the same millisecond (two processes, say) must not hand
        # out the same id, or one user's queued write is refused as another's (S7, G7).
        self.token = token or uuid.uuid4().hex[:12]
        self._lock = threading.RLock()  # the queue is shared by every thread using the store (T3)

    def new_id(self, prefix: str) -> str:
        """Return a fresh id from the store; while it is down, a time-stamped offline id (G7)."""
        try:
            return self.inner.new_id(prefix)
        except StoreError:
            self._offline += 1
            return f"{prefix}-offline-{int(self.clock() * 1000)}-{self.token}-{self._offline}"

    @property
    def pending(self) -> int:
        return len(self._pending)

    def flush(self) -> bool:
        """Write pending batches in order; return True when none is left."""
        while self._pending:
            method, batch = self._pending[0]
            try:
                getattr(self.inner, method)(batch)
            except StoreError as error:
                log.warning("store still failing, %d batch(es) kept for retry: %s", len(self._pending), error)
                return False
            except ValueError as error:
                # Refused by a rule (S7), not by an outage: retrying cannot help.
                log.error("store refused a queued batch, which is dropped: %s", error)
            self._pending.pop(0)
        return True

    def _write(self, method: str, batch: list) -> None:
        if self.flush():
            try:
                getattr(self.inner, method)(batch)
                return
            except StoreError as error:
                log.warning("store write failed, batch kept for retry: %s", error)
        if len(self._pending) >= self.max_pending:
            raise StoreError(
                f"G9: the retry queue is full ({self.max_pending} batches) and the store still fails: "
                f"this {method} of {len(batch)} entries was not kept"
            )
        self._pending.append((method, batch))

    def put(self, items: Iterable[MemoryItem]) -> None:
        self._write("put", [copy.deepcopy(item) for item in items])

    def append_audit(self, records: Iterable[AuditRecord]) -> None:
        self._write("append_audit", list(records))

    def record_access(self, accesses: Iterable[Access]) -> None:
        self._write("record_access", list(accesses))

    # -- reads see the queue (G6) ------------------------------------------------------
    def _queued(self, user_id: str) -> dict[str, MemoryItem]:
        return {item.id: item for method, batch in self._pending if method == "put"
                for item in batch if item.user_id == user_id}

    def queued(self, user_id: str, level: str | None = None, task_id: str | None = None) -> list[MemoryItem]:
        """Return copies of the user's items still queued (their newest copies), in queue order."""
        return [copy.deepcopy(item) for item in self._queued(user_id).values()
                if (level is None or item.level == level) and (task_id is None or item.task_id == task_id)]

    def _overlay(self, user_id: str, stored: list[MemoryItem], wanted) -> list[MemoryItem]:
        # A queued copy is newer than the stored one: it takes its place, or comes after.
        fresh = self._queued(user_id)
        merged = {item.id: item for item in stored}
        merged.update(fresh)
        return [copy.deepcopy(item) if item.id in fresh else item for item in merged.values() if wanted(item)]

    def get(self, user_id: str, item_id: str) -> MemoryItem | None:
        queued = self._queued(user_id).get(item_id) if self._pending else None
        return copy.deepcopy(queued) if queued else self.inner.get(user_id, item_id)

    def list(self, user_id: str, level: str | None = None, task_id: str | None = None) -> list[MemoryItem]:
        stored = self.inner.list(user_id, level, task_id)
        if not self._pending:
            return stored
        return self._overlay(user_id, stored, lambda item: (level is None or item.level == level)
                             and (task_id is None or item.task_id == task_id))

    def matching(self, user_id: str, level: str, tokens: Iterable[str]) -> list[MemoryItem]:
        tokens = set(tokens)
        stored = self.inner.matching(user_id, level, tokens)
        if not self._pending:
            return stored
        return self._overlay(user_id, stored, lambda item: item.level == level
                             and not tokens.isdisjoint(tokenize(item.content)))

    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditRecord]:
        queued = [r for method, batch in self._pending if method == "append_audit" for r in batch
                  if (user_id is None or r.user_id == user_id) and (item_id is None or r.item_id == item_id)]
        return self.inner.audit(user_id, item_id) + queued

    def close(self) -> None:
        """Flush, then close the inner store; raise StoreError naming what is still queued (G8)."""
        if not self.flush():
            ids = [getattr(entry, "id", None) or entry.item_id for _, batch in self._pending
                   for entry in batch]
            shown = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
            raise StoreError(
                f"G8: {len(self._pending)} queued batch(es) not written, the store still fails ({shown}); "
                "they stay queued (see `queued`) and the store stays open: close again once it is back"
            )
        self.inner.close()

    def _drop_pending(self, user_id: str, item_ids: set[str] | None) -> None:
        # A queued write must not bring back what was deleted after it was queued.
        def doomed(entry) -> bool:
            return entry.user_id == user_id and (item_ids is None or getattr(entry, "id", None) in item_ids)

        self._pending = [(method, [e for e in batch if not doomed(e)]) for method, batch in self._pending]

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        item_ids = set(item_ids)
        self._drop_pending(user_id, item_ids)
        return self.inner.delete(user_id, item_ids)

    def delete_user(self, user_id: str) -> int:
        self._drop_pending(user_id, None)
        return self.inner.delete_user(user_id)

    def __getattr__(self, name: str):
        # Everything else (users, scrub_audit, integrity) goes straight to the inner store.
        return getattr(self.inner, name)


serialize(BufferedStore, ["new_id", "flush", "put", "append_audit", "record_access", "queued", "get",
                          "list", "matching", "audit", "close", "delete", "delete_user"])


class QueuedView:
    """A buffered store whose item reads see only the queue: layers built while the store is down."""

    def __init__(self, store: BufferedStore) -> None:
        self.store = store

    def list(self, user_id: str, level: str | None = None, task_id: str | None = None) -> list[MemoryItem]:
        return self.store.queued(user_id, level, task_id)

    def __getattr__(self, name: str):
        return getattr(self.store, name)
