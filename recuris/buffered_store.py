"""Degradation: a store wrapper that keeps failed writes and retries them, never dropping one.

Document 003 §7.3: memory is an enhancement, not a single point of failure. When the store
is locked or gone, the agent must go on without memory, and what it meant to remember
must not be lost. `BufferedStore` wraps any Store: a write that fails is queued and
retried, in order, before the next write (or on `flush`); ids are still handed out; reads
raise StoreError so that the caller (the manager) can degrade to "no memory".

Invariants:
    G1  a write is either in the store or in the queue; nothing is dropped on an outage.
    G2  queued writes reach the store in the order they were made.
    G3  deleting a user's items also drops that user's queued writes, so a retry can never
        bring deleted memory back.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Iterable

from .item import MemoryItem
from .records import AuditRecord
from .store import Store, StoreError

__all__ = ["BufferedStore"]

log = logging.getLogger("recuris.store")


class BufferedStore:
    """Wrap a store so that a failed write is kept and retried, never dropped.

    Reads go to the inner store and raise StoreError when it fails; the caller decides
    how to degrade. `pending` counts the batches waiting to be written.
    """

    def __init__(self, inner: Store, clock: Callable[[], float] = time.time) -> None:
        self.inner, self.clock = inner, clock
        self._pending: list[tuple[list, list, list]] = []  # arguments of `put`: items, audit, delete
        self._offline = 0
        self._generations: dict[str, int] = {}  # per user: the forget generation last read (S17)

    def new_id(self, prefix: str) -> str:
        """Return a fresh id from the store; while it is down, a time-stamped offline id."""
        try:
            return self.inner.new_id(prefix)
        except StoreError:
            self._offline += 1
            return f"{prefix}-offline-{int(self.clock() * 1000)}-{self._offline}"

    @property
    def pending(self) -> int:
        return len(self._pending)

    def flush(self) -> bool:
        """Write pending batches in order; return True when none is left."""
        while self._pending:
            try:
                self.inner.put(*self._pending[0])
            except StoreError as error:
                log.warning("store still failing, %d batch(es) kept for retry: %s", len(self._pending), error)
                return False
            except ValueError as error:
                # Refused by a rule (S7), not by an outage: retrying cannot help.
                log.error("store refused a queued batch, which is dropped: %s", error)
            self._pending.pop(0)
        return True

    def put(
        self, items: Iterable[MemoryItem],
        audit: Iterable[AuditRecord] = (), delete: Iterable[MemoryItem] = (),
    ) -> None:
        # One put stays one batch in the queue, so it still lands whole (S14).
        batch = ([copy.deepcopy(item) for item in items], list(audit), list(delete))
        if self.flush():
            try:
                self.inner.put(*batch)
                return
            except StoreError as error:
                log.warning("store write failed, batch kept for retry: %s", error)
        self._pending.append(batch)

    def append_audit(self, records: Iterable[AuditRecord]) -> None:
        self.put((), records)

    def _drop_pending(self, user_id: str, item_ids: set[str] | None) -> None:
        # A queued write must not bring back what was deleted after it was queued.
        def doomed(entry) -> bool:
            return entry.user_id == user_id and (item_ids is None or getattr(entry, "id", None) in item_ids)

        keep = lambda part: [entry for entry in part if not doomed(entry)]  # noqa: E731
        self._pending = [tuple(keep(part) for part in queued) for queued in self._pending]

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        item_ids = set(item_ids)
        self._drop_pending(user_id, item_ids)
        return self.inner.delete(user_id, item_ids)

    def delete_user(self, user_id: str) -> int:
        self._drop_pending(user_id, None)
        self._generations.pop(user_id, None)
        return self.inner.delete_user(user_id)

    def generation(self, user_id: str) -> int:
        """Return the user's forget generation; if it rose since read last, drop their queued writes (S17)."""
        current = self.inner.generation(user_id)
        if self._generations.setdefault(user_id, current) != current:
            self._drop_pending(user_id, None)  # another process forgot the user: these were prepared before
            self._generations[user_id] = current
        return current

    def __getattr__(self, name: str):
        # Reads, ids and audit queries go straight to the inner store.
        return getattr(self.inner, name)
