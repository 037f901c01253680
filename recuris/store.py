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
    S13 `matching` returns exactly the items `list` would return whose analysed terms
        (`scoring.analyze`) share one with the query's terms, in the same order.
    S14 `search` returns the `limit` items of one user and level with the highest Okapi BM25
        score for the query's terms (statistics of that user and level alone), best first,
        ties to the later-written item; every store returns the same items and scores.
    S15 `adjacent` gives each item's previous and next item in write order among the
        user's items of the same level and task (None at either end).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Protocol

from .item import MemoryItem
from .records import AuditRecord
from .term_index import TermIndex

__all__ = ["Store", "StoreError", "InMemoryStore", "append_superseding", "STORE_K1", "STORE_B"]

# The stores' own BM25 setting: short memories want earlier term saturation and weaker
# length normalisation than the textbook 1.2 / 0.75 (docs/16-recall.md says how it was chosen).
STORE_K1, STORE_B = 0.9, 0.5


class StoreError(Exception):
    """The store could not be read or written (locked, gone, corrupt)."""


class Store(Protocol):
    """What a layer may ask of storage. Every item read names the user (S11)."""

    def put(self, items: Iterable[MemoryItem]) -> None: ...
    def get(self, user_id: str, item_id: str) -> MemoryItem | None: ...
    def list(
        self, user_id: str, level: str | None = None, task_id: str | None = None
    ) -> list[MemoryItem]: ...
    def matching(self, user_id: str, level: str, terms: Iterable[str]) -> list[MemoryItem]: ...
    def search(self, user_id: str, level: str, terms: Sequence[str], limit: int) -> list[tuple[MemoryItem, float]]: ...
    def adjacent(self, user_id: str, item_ids: Iterable[str]) -> dict[str, tuple[MemoryItem | None, ...]]: ...
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

    def __init__(self, k1: float = STORE_K1, b: float = STORE_B) -> None:
        self._items: dict[str, MemoryItem] = {}
        self._audit: list[AuditRecord] = []
        self._counters: dict[str, int] = {}
        self._index = TermIndex(k1, b)  # S13-S15 read it, so no read scans every item

    def put(self, items: Iterable[MemoryItem]) -> None:
        batch = list(items)
        check_owners(batch, lambda item_id: self._items[item_id].user_id if item_id in self._items else None)
        for item in batch:
            old = self._items.get(item.id)
            if old is None or (old.level, old.content, old.task_id) != (item.level, item.content, item.task_id):
                if old is not None:
                    self._index.remove(old)
                self._index.add(item)
            self._items[item.id] = _copy(item)

    def get(self, user_id: str, item_id: str) -> MemoryItem | None:
        item = self._items.get(item_id)
        return _copy(item) if item is not None and item.user_id == user_id else None

    def list(self, user_id: str, level: str | None = None, task_id: str | None = None) -> list[MemoryItem]:
        return [_copy(self._items[key]) for key in self._index.listed(user_id, level, task_id)]

    def matching(self, user_id: str, level: str, terms: Iterable[str]) -> list[MemoryItem]:
        """Return the user's items at a level whose analysed terms share one with `terms` (S13)."""
        return [_copy(self._items[key]) for key in self._index.matching(user_id, level, terms)]

    def search(self, user_id: str, level: str, terms: Sequence[str], limit: int) -> list[tuple[MemoryItem, float]]:
        """Return the `limit` best items by BM25 for `terms`, best first (S14)."""
        return [(_copy(self._items[key]), score) for key, score in self._index.search(user_id, level, terms, limit)]

    def adjacent(self, user_id: str, item_ids: Iterable[str]) -> dict[str, tuple[MemoryItem | None, ...]]:
        """Return each of the user's items' previous and next item of its level and task (S15)."""
        items = [self._items[i] for i in item_ids if i in self._items and self._items[i].user_id == user_id]
        return {item.id: tuple(key and _copy(self._items[key]) for key in self._index.adjacent(item))
                for item in items}

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        doomed = [
            i for i in dict.fromkeys(item_ids) if i in self._items and self._items[i].user_id == user_id
        ]
        for item_id in doomed:
            self._index.remove(self._items.pop(item_id), forget_position=True)
        return len(doomed)

    def delete_user(self, user_id: str) -> int:
        return self.delete(user_id, self._index.listed(user_id))

    def users(self) -> list[str]:
        return self._index.users()

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
