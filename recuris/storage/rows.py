"""Rows: the in-memory store's items and audit records as flat tuples the collector skips.

Document 002 §4 isolates storage behind an interface; `InMemoryStore` (memory_store.py) is
that interface in plain Python, and keeps its records here. A tuple of strings and numbers
is untracked by the cyclic garbage collector after one look, whereas an item object and its
metadata dict stay tracked and are walked by every full collection. Measured through the
manager, 100,000 semantic writes spend 0.12 to 0.51 s collecting with rows and 4.25 s with
the items kept as objects (peak memory 164 against 228 MB), and the collector's share grows
with the store: that is what the in-memory scale goals of docs/benchmarks.md need. Each read
builds a fresh record from its row, so no caller holds what is stored (S4).

Invariants:
    RW1 `ItemRows.get` returns an item equal to the one last put under its id, with the
        accesses counted since, sharing nothing mutable with it or with any other read;
        metadata goes through JSON, as SQLite stores it, and is refused (TypeError) if it
        is not JSON data.
    RW2 `ItemRows` keeps ids in the order of their first `put`; a `remove`d id put again
        comes last. `AuditRows` keeps records in the order appended.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import fields

from ..retrieval.chunks import Chunks
from .audit import AuditEntry
from .item import MemoryItem

__all__ = ["ItemRows", "AuditRows"]

COLUMNS = tuple(field.name for field in fields(MemoryItem))
USER = COLUMNS.index("user_id")
METADATA = COLUMNS.index("metadata")
# What places an item in the term index: a rewrite that keeps these leaves the index as it is.
PLACE = ("level", "content", "task_id")
PLACE_COLUMNS = tuple(COLUMNS.index(name) for name in PLACE)
# What files an item in a thread of the term index: its user, level and task.
THREAD_COLUMNS = tuple(COLUMNS.index(name) for name in ("user_id", "level", "task_id"))
LAST_ACCESS = COLUMNS.index("last_access_at")
ACCESSES = COLUMNS.index("access_count")
AUDIT_COLUMNS = tuple(field.name for field in fields(AuditEntry))
AUDIT_ITEM = AUDIT_COLUMNS.index("item_id")
AUDIT_USER = AUDIT_COLUMNS.index("user_id")


def _row(item: MemoryItem) -> tuple:
    """Return the item's fields in COLUMNS order, its metadata as JSON text (RW1)."""
    values = [getattr(item, name) for name in COLUMNS]
    values[METADATA] = json.dumps(item.metadata, ensure_ascii=False)
    return tuple(values)


def _item(row: tuple) -> MemoryItem:
    """Return a fresh item from its row (RW1)."""
    values = dict(zip(COLUMNS, row))
    values["metadata"] = json.loads(values["metadata"])
    return MemoryItem.trusted(values)  # checked when it was put


class ItemRows:
    """Items by id, in the order of first put, each kept as one flat tuple (RW1, RW2)."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple] = {}

    def __contains__(self, item_id: str) -> bool:
        return item_id in self._rows

    @staticmethod
    def encode(item: MemoryItem) -> tuple:
        """Return the row to `put` for the item. Raises TypeError for metadata not JSON (RW1)."""
        return _row(item)

    def put(self, item_id: str, row: tuple) -> None:
        """Store a row from `encode` under its id; a known id keeps its place (RW2)."""
        self._rows[item_id] = row

    def get(self, item_id: str) -> MemoryItem | None:
        """Return a fresh copy of the item, or None if no such id is stored (RW1)."""
        row = self._rows.get(item_id)
        return None if row is None else _item(row)

    def place(self, item_id: str) -> tuple | None:
        """Return the stored item's PLACE fields, or None: no item is built."""
        row = self._rows.get(item_id)
        if row is None:
            return None
        return tuple(row[column] for column in PLACE_COLUMNS)

    def owner(self, item_id: str) -> str | None:
        """Return the user of the stored item, or None if no such id is stored."""
        row = self._rows.get(item_id)
        return None if row is None else row[USER]

    def thread(self, item_id: str) -> tuple | None:
        """Return the stored item's user, level and task, or None: no item is built."""
        row = self._rows.get(item_id)
        if row is None:
            return None
        return tuple(row[column] for column in THREAD_COLUMNS)

    def remove(self, item_id: str) -> tuple:
        """Remove the item; return its user, level and task. Raises KeyError for an id not stored.

        Nothing is decoded: in a forgetting cycle over a million items in memory, decoding
        each deleted item only to find its thread made the cycle 61 s long; without, 39 s.
        """
        row = self._rows.pop(item_id)
        return tuple(row[column] for column in THREAD_COLUMNS)

    def count_access(self, item_id: str, at: float) -> None:
        """Count one access of the stored item at `at`: its last access and access count."""
        row = list(self._rows[item_id])
        row[LAST_ACCESS] = at
        row[ACCESSES] += 1
        self._rows[item_id] = tuple(row)


class AuditRows:
    """Audit records in the order appended, each kept as one flat tuple (RW2)."""

    def __init__(self) -> None:
        # As long as the log, which a forgetting cycle grows by one record a forgotten item:
        # chunks, which the collector does not walk each time (retrieval/chunks.py).
        self._rows = Chunks()

    def extend(self, records: Iterable[AuditEntry]) -> None:
        for record in records:
            self._rows.append(tuple(getattr(record, name) for name in AUDIT_COLUMNS))

    def select(self, user_id: str | None, item_id: str | None) -> list[AuditEntry]:
        """Return the records of the user and of the item (either None: any), oldest first."""
        return [
            AuditEntry(*row)
            for row in self._rows
            if user_id in (None, row[AUDIT_USER]) and item_id in (None, row[AUDIT_ITEM])
        ]

    def scrub(self, user_id: str, chosen: Callable[[AuditEntry], bool] | None = None) -> int:
        """Blank the reason and weight of the user's records; return how many.

        With `chosen`, only the records it picks are blanked.
        """
        scrubbed = 0
        rows = Chunks()
        for row in self._rows:
            if row[AUDIT_USER] == user_id and (chosen is None or chosen(AuditEntry(*row))):
                record = dict(zip(AUDIT_COLUMNS, row))
                record["reason"] = ""
                record["weight"] = None
                row = tuple(record.values())
                scrubbed += 1
            rows.append(row)
        # Rewritten whole, in the order appended (RW2): a scrub already reads every record.
        if scrubbed:
            self._rows = rows
        return scrubbed
