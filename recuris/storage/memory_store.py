"""The in-memory store: items in a dict, the default store and the model every other is tested against.

Document 002 §4 isolates storage behind an interface; document 001 §2 indexes every tier by
task and type. `InMemoryStore` keeps what the `Store` protocol (store.py) asks in plain
Python: a dict of items in write order, an audit list, and beside them a `TermIndex`
(term_index.py), so that no read scans every item. Items and audit records are kept as
plain tuples (metadata as JSON text), which the cyclic garbage collector stops walking, so
that a store of a million items does not slow every collection of the process. Every
invariant of store.py holds here (S1-S10); `tests/storage/test_store.py` runs the same contract on
this store and on SQLite, and `tests/storage/test_store_properties.py` runs both against a naive
model.

Invariants:
    MS1 write order is the order of first `put`: `list` returns items in it, a rewrite keeps
        an item's place (as a SQLite rowid does), and a deleted item that is put again
        comes last.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from operator import attrgetter

from ..core.records import AuditRecord
from ..retrieval.bm25 import BM25Settings
from .item import MemoryItem
from .store import Access, check_owners, refuse_if_forgotten
from .term_index import TermIndex

__all__ = ["InMemoryStore"]


COLUMNS = (
    "id",
    "user_id",
    "level",
    "content",
    "task_id",
    "created_at",
    "last_access_at",
    "access_count",
    "importance",
    "metadata",
    "invalidated_at",
    "superseded_by",
)
USER, LEVEL, CONTENT, TASK, ACCESSED, ACCESSES, METADATA = 1, 2, 3, 4, 6, 7, 9  # positions in a row
_VALUES = attrgetter(*COLUMNS)
_METADATA_JSON = json.JSONEncoder(
    ensure_ascii=False
).encode  # made once: `json.dumps` builds one per call


def _row(item: MemoryItem) -> tuple:
    """The stored form of an item: its fields in COLUMNS order, metadata as JSON text (its own copy, S4)."""
    values = _VALUES(item)
    return (*values[:METADATA], _METADATA_JSON(item.metadata), *values[METADATA + 1 :])


def _item(row: tuple) -> MemoryItem:
    """A fresh item from a stored row: every read gets its own copy (S4)."""
    values = dict(zip(COLUMNS, row))
    values["metadata"] = json.loads(values["metadata"])
    return MemoryItem.trusted(values)  # checked when it was put


class InMemoryStore:
    """Items in a dict, in insertion order; the default store, and the model for the others."""

    def __init__(self, bm25: BM25Settings = BM25Settings()) -> None:  # noqa: B008 (frozen)
        self.bm25 = bm25
        self._items: dict[str, tuple] = {}  # id -> row (`_row`)
        # Records as plain tuples, which the garbage collector stops walking: a long log costs it nothing.
        self._audit: list[tuple] = []
        self._counters: dict[str, int] = {}
        self._index = TermIndex(bm25)  # S7, S8, S9 read it, so no read scans every item
        self._generations: dict[str, int] = {}  # per user: how many times they were forgotten
        self._seen: dict[str, int] = {}  # per user: the generation this object last saw (S6)

    def put(
        self,
        items: Iterable[MemoryItem],
        audit: Iterable[AuditRecord] = (),
        delete: Iterable[MemoryItem] = (),
    ) -> None:
        """Delete the `delete` items (by id and user), then store the items and audit, all or none (S5)."""
        batch, records, doomed = list(items), list(audit), list(delete)
        users = [entry.user_id for entry in [*batch, *records]]
        refuse_if_forgotten(users, self._seen, lambda user_id: self._generations.get(user_id, 0))
        check_owners(
            batch, lambda item_id: self._items[item_id][USER] if item_id in self._items else None
        )
        rows = [
            _row(item) for item in batch
        ]  # before any change: metadata that is not JSON is refused whole
        for old in doomed:
            self.delete(old.user_id, [old.id])
        for item, row in zip(batch, rows):
            old = self._items.get(item.id)
            if old is None or old[LEVEL : TASK + 1] != (item.level, item.content, item.task_id):
                if old is not None:
                    self._index.remove(_item(old))
                self._index.add(item)
            self._items[item.id] = row
        self._audit.extend(
            (r.item_id, r.operation, r.reason, r.at, r.weight, r.user_id) for r in records
        )

    def get(self, user_id: str, item_id: str) -> MemoryItem | None:
        row = self._items.get(item_id)
        return _item(row) if row is not None and row[USER] == user_id else None

    def list(
        self, user_id: str, level: str | None = None, task_id: str | None = None
    ) -> list[MemoryItem]:
        return [_item(self._items[key]) for key in self._index.listed(user_id, level, task_id)]

    def iterate(
        self, user_id: str, level: str | None = None, batch_size: int = 1000
    ) -> Iterator[list]:
        """Yield the user's items (optionally of one level), oldest first, `batch_size` at a time (S11)."""
        if batch_size < 1:
            raise ValueError(f"S11: batch_size must be >= 1, got {batch_size!r}")
        # The ids are fixed when iteration starts, so deleting between batches is safe.
        ids = self._index.listed(user_id, level)
        for offset in range(0, len(ids), batch_size):
            batch = [self._items.get(key) for key in ids[offset : offset + batch_size]]
            yield [_item(row) for row in batch if row is not None]

    def matching(self, user_id: str, level: str, terms: Iterable[str]) -> list[MemoryItem]:
        """Return the user's items at a level whose analysed terms share one with `terms` (S7)."""
        return [_item(self._items[key]) for key in self._index.matching(user_id, level, terms)]

    def search(
        self, user_id: str, level: str, terms: Sequence[str], limit: int
    ) -> list[tuple[MemoryItem, float]]:
        """Return the `limit` best items by BM25 for `terms`, best first (S8)."""
        found = self._index.search(user_id, level, terms, limit)
        return [(_item(self._items[key]), score) for key, score in found]

    def adjacent(
        self, user_id: str, item_ids: Iterable[str]
    ) -> dict[str, tuple[MemoryItem | None, ...]]:
        """Return each of the user's items' previous and next item of its level and task (S9)."""
        items = [
            _item(self._items[i])
            for i in item_ids
            if i in self._items and self._items[i][USER] == user_id
        ]
        return {
            item.id: tuple(key and _item(self._items[key]) for key in self._index.adjacent(item))
            for item in items
        }

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        mine = [item_id for item_id in dict.fromkeys(item_ids) if item_id in self._items]
        doomed = [item_id for item_id in mine if self._items[item_id][USER] == user_id]
        for item_id in doomed:
            self._index.remove(_item(self._items.pop(item_id)), forget_position=True)
        return len(doomed)

    def delete_user(self, user_id: str) -> int:
        """Forget the user: delete their items, blank their audit reasons, raise their generation (S6)."""
        deleted = self.delete(user_id, self._index.listed(user_id))
        self.scrub_audit(user_id)
        self._generations[user_id] = self._seen[user_id] = self._generations.get(user_id, 0) + 1
        return deleted

    def generation(self, user_id: str) -> int:
        """Return how many times the user was forgotten, and take it as seen by this object (S6)."""
        self._seen[user_id] = self._generations.get(user_id, 0)
        return self._seen[user_id]

    def users(self) -> list[str]:
        return self._index.users()

    def new_id(self, prefix: str) -> str:
        number = self._counters.get(prefix, 0)
        while f"{prefix}-{number + 1}" in self._items:
            number += 1
        self._counters[prefix] = number + 1
        return f"{prefix}-{number + 1}"

    def append_audit(self, records: Iterable[AuditRecord]) -> None:
        self.put((), records)

    def record_access(self, accesses: Iterable[Access]) -> None:
        """Count each access on its stored item, if still stored; nothing else changes (S10, S6)."""
        accesses = list(accesses)
        users = [access.user_id for access in accesses]
        refuse_if_forgotten(users, self._seen, lambda user_id: self._generations.get(user_id, 0))
        for access in accesses:
            row = self._items.get(access.id)
            if row is not None and row[USER] == access.user_id:
                self._items[access.id] = (
                    *row[:ACCESSED],
                    access.at,
                    row[ACCESSES] + 1,
                    *row[ACCESSES + 1 :],
                )

    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditRecord]:
        return [
            AuditRecord(*row)
            for row in self._audit
            if (user_id is None or row[5] == user_id) and (item_id is None or row[0] == item_id)
        ]

    def scrub_audit(self, user_id: str) -> int:
        mine = [position for position, row in enumerate(self._audit) if row[5] == user_id]
        for position in mine:
            item_id, operation, _, at, _, user = self._audit[position]
            self._audit[position] = (item_id, operation, "", at, None, user)
        return len(mine)

    def close(self) -> None:
        pass
