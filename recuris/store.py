"""Storage: one small interface behind which every layer keeps its items.

Document 002 §4 isolates storage behind an interface so that the memory logic never
knows where items live; document 001 §2 puts all tiers in one store indexed by task and
type; document 003 §7 scopes every read to one user and asks that memory failures degrade
the agent instead of stopping it. `InMemoryStore` is the default; `SQLiteStore`
(sqlite_store.py) persists; `BufferedStore` (buffered_store.py) retries failed writes.

Invariants:
    S11 every item read is scoped to one user: no read returns another user's item (the
        ground on which the manager's S2 stands).
    S7  an item's user is fixed: putting an id that another user owns is refused, and a
        refused batch writes nothing.
    S8  ids from `new_id` are never in use, by any user.
    S10 what is got back equals what was put, and is a copy: changing it changes nothing stored.
    S20 `iterate` yields, in batches, exactly the items `list` returns, in the same order;
        deleting items it has already yielded, between batches, changes nothing it yields.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from typing import Protocol

from .item import MemoryItem
from .records import AuditRecord
from .text import tokenize

__all__ = ["Store", "StoreError", "InMemoryStore", "append_superseding"]


class StoreError(Exception):
    """The store could not be read or written (locked, gone, corrupt)."""


class Store(Protocol):
    """What a layer may ask of storage. Every item read names the user (S11)."""

    def put(self, items: Iterable[MemoryItem]) -> None: ...
    def get(self, user_id: str, item_id: str) -> MemoryItem | None: ...
    def list(
        self, user_id: str, level: str | None = None, task_id: str | None = None
    ) -> list[MemoryItem]: ...
    def iterate(
        self, user_id: str, level: str | None = None, batch_size: int = 1000
    ) -> Iterator[list[MemoryItem]]: ...  # `list` in batches, so a large store is never held whole
    def matching(self, user_id: str, level: str, tokens: Iterable[str]) -> list[MemoryItem]: ...
    def delete(self, user_id: str, item_ids: Iterable[str]) -> int: ...
    def delete_user(self, user_id: str) -> int: ...
    def users(self) -> list[str]: ...
    def new_id(self, prefix: str) -> str: ...
    def append_audit(self, records: Iterable[AuditRecord]) -> None: ...
    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditRecord]: ...
    def scrub_audit(self, user_id: str) -> int: ...
    def close(self) -> None: ...


def check_owners(batch: list[MemoryItem], owner_of) -> None:
    """Raise ValueError if an item of the batch would change the user of a stored id (S7)."""
    seen: dict[str, str] = {}
    for item in batch:
        owner = seen.setdefault(item.id, owner_of(item.id) or item.user_id)
        if owner != item.user_id:
            raise ValueError(f"S7: item {item.id!r} belongs to another user; its user cannot change")


def _copy(item: MemoryItem) -> MemoryItem:
    # Every field but metadata is immutable, so a shallow copy plus a copied metadata is a
    # full copy (S10), at a fraction of deepcopy's cost.
    duplicate = copy.copy(item)
    duplicate.metadata = copy.deepcopy(item.metadata)
    return duplicate


class InMemoryStore:
    """Items in a dict, in insertion order; the default store, and the model for the others."""

    def __init__(self) -> None:
        self._items: dict[str, MemoryItem] = {}
        self._audit: list[AuditRecord] = []
        self._counters: dict[str, int] = {}

    def put(self, items: Iterable[MemoryItem]) -> None:
        batch = list(items)
        check_owners(batch, lambda item_id: self._items[item_id].user_id if item_id in self._items else None)
        for item in batch:
            self._items[item.id] = _copy(item)

    def get(self, user_id: str, item_id: str) -> MemoryItem | None:
        item = self._items.get(item_id)
        return _copy(item) if item is not None and item.user_id == user_id else None

    def list(self, user_id: str, level: str | None = None, task_id: str | None = None) -> list[MemoryItem]:
        return [
            _copy(item)
            for item in self._items.values()
            if item.user_id == user_id
            and (level is None or item.level == level)
            and (task_id is None or item.task_id == task_id)
        ]

    def iterate(self, user_id: str, level: str | None = None, batch_size: int = 1000) -> Iterator[list]:
        """Yield the user's items (optionally of one level), oldest first, `batch_size` at a time (S20)."""
        if batch_size < 1:
            raise ValueError(f"S20: batch_size must be >= 1, got {batch_size!r}")
        # The ids are fixed when iteration starts, so deleting between batches is safe.
        ids = [key for key, item in self._items.items()
               if item.user_id == user_id and (level is None or item.level == level)]
        for offset in range(0, len(ids), batch_size):
            batch = [self._items.get(key) for key in ids[offset : offset + batch_size]]
            yield [_copy(item) for item in batch if item is not None]

    def matching(self, user_id: str, level: str, tokens: Iterable[str]) -> list[MemoryItem]:
        """The user's items at a level that share a token with `tokens` (a scan: this is the model)."""
        tokens = set(tokens)
        return [item for item in self.list(user_id, level) if tokens & set(tokenize(item.content))]

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        doomed = [
            i for i in dict.fromkeys(item_ids) if i in self._items and self._items[i].user_id == user_id
        ]
        for item_id in doomed:
            del self._items[item_id]
        return len(doomed)

    def delete_user(self, user_id: str) -> int:
        return self.delete(user_id, list(self._items))

    def users(self) -> list[str]:
        return sorted({item.user_id for item in self._items.values()})

    def new_id(self, prefix: str) -> str:
        number = self._counters.get(prefix, 0)
        while f"{prefix}-{number + 1}" in self._items:
            number += 1
        self._counters[prefix] = number + 1
        return f"{prefix}-{number + 1}"

    def append_audit(self, records: Iterable[AuditRecord]) -> None:
        self._audit.extend(records)

    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditRecord]:
        return [
            record
            for record in self._audit
            if (user_id is None or record.user_id == user_id)
            and (item_id is None or record.item_id == item_id)
        ]

    def scrub_audit(self, user_id: str) -> int:
        scrubbed = 0
        for position, record in enumerate(self._audit):
            if record.user_id == user_id:
                self._audit[position] = AuditRecord(
                    record.item_id, record.operation, "", record.at, None, user_id
                )
                scrubbed += 1
        return scrubbed

    def close(self) -> None:
        pass


def append_superseding(
    store: Store, item: MemoryItem, replaced: Iterable[MemoryItem], reason: str
) -> list[MemoryItem]:
    """Write `item` and close each replaced item in one batch, auditing both; return the batch.

    Replaced items are read back from the store first, so that accesses counted since the
    caller cached them are not overwritten; only their validity changes (F1, H3).
    """
    at = item.created_at
    closed = [(store.get(old.user_id, old.id) or old).closed(at, item.id) for old in replaced]
    audit = [AuditRecord(item.id, "write", reason, at, None, item.user_id)]
    why = f"superseded by {item.id}: {item.content!r}"
    audit += [AuditRecord(old.id, "supersede", why, at, None, old.user_id) for old in closed]
    store.put([*closed, item])
    store.append_audit(audit)
    return [*closed, item]
