"""The in-memory store: the default store, indexed so that no read scans every item.

Document 002 §4 isolates storage behind an interface; document 001 §2 indexes every tier by
task and type. `InMemoryStore` keeps what the `Store` protocol (store.py) asks in memory: its
items in write order and its audit log, kept as rows (rows.py), and beside them a
`TermIndex` (term_index.py), so that no read scans every item. Every invariant of store.py
holds here (S1-S16): `tests/storage/test_store.py` runs the same contract on this store, the
model and SQLite, and `tests/storage/test_store_properties.py` holds each read to the model's
answer (model_store.py, a plain scan). It is `MemoryManager()`'s default and the retry
queue's replica, not the scan, for speed: a recall's reads over 100,000 items take
milliseconds here and seconds in the model (docs/storage/memory-store.md).

Invariants:
    MS1 write order is the order of first `put`: `list` returns items in it, a rewrite keeps
        an item's place (as its `number` does in SQLite), and a deleted item that is put again
        comes last.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

from ..core.validation import require_count
from ..retrieval.bm25 import BM25Settings
from .audit import AuditEntry
from .item import MemoryItem
from .rows import PLACE, AuditRows, ItemRows
from .store import (
    Access,
    TermCounts,
    TermStatistics,
    check_owners,
    erased_forms,
    mentions_erased,
    refuse_if_forgotten,
    without_erased,
)
from .term_index import TermIndex

__all__ = ["InMemoryStore"]


def _place(item: MemoryItem) -> tuple:
    """Return what places an item in the term index, as `ItemRows.place` reads it from a row."""
    return tuple(getattr(item, name) for name in PLACE)


class InMemoryStore:
    """Items in write order, with their audit log and a term index; the default store."""

    def __init__(self, bm25: BM25Settings = BM25Settings()) -> None:  # noqa: B008 (frozen)
        self.bm25 = bm25
        self._items = ItemRows()  # in write order (MS1); each read is a fresh copy (S4)
        self._audit = AuditRows()
        self._counters: dict[str, int] = {}
        self._index = TermIndex(bm25)  # S7, S8, S9 read it, so no read scans every item
        self._generations: dict[str, int] = {}  # per user: how many times they were forgotten
        self._seen: dict[str, int] = {}  # per user: the generation this object last saw (S6)

    def _generation_now(self, user_id: str) -> int:
        return self._generations.get(user_id, 0)

    def put(
        self,
        items: Iterable[MemoryItem],
        audit: Iterable[AuditEntry] = (),
        delete: Iterable[MemoryItem] = (),
    ) -> None:
        """Delete the `delete` items (by id and user), then store the items and audit (S5).

        All or none: every check runs before anything changes.
        """
        batch = list(items)
        records = list(audit)
        doomed = list(delete)
        users = [entry.user_id for entry in [*batch, *records]]
        refuse_if_forgotten(users, self._seen, self._generation_now)
        check_owners(batch, self._items.owner)
        # Encoded before any change: metadata that is not JSON data refuses the whole put.
        rows = [self._items.encode(item) for item in batch]
        for old in doomed:
            self.delete(old.user_id, [old.id])
        for item, row in zip(batch, rows):
            # Compared on the row, not on a decoded item: a rewrite that only closes a fact or
            # counts a use (most rewrites) leaves the term index as it is, and costs no decode.
            old_place = self._items.place(item.id)
            if old_place != _place(item):
                position = None
                if old_place is not None:  # moved: it keeps its place in write order
                    position = self._index.remove(item.id, self._items.thread(item.id))
                self._index.add(item, position)
            self._items.put(item.id, row)
        self._audit.extend(records)

    def get(self, user_id: str, item_id: str) -> MemoryItem | None:
        if self._items.owner(item_id) != user_id:
            return None
        return self._items.get(item_id)

    def get_many(self, user_id: str, item_ids: Iterable[str]) -> dict[str, MemoryItem]:
        """Return a copy of each of the user's items among the ids, keyed by id (S16)."""
        owner = self._items.owner
        return {
            item_id: self._items.get(item_id)
            for item_id in dict.fromkeys(item_ids)
            if owner(item_id) == user_id
        }

    def list(
        self, user_id: str, level: str | None = None, task_id: str | None = None
    ) -> list[MemoryItem]:
        return [self._items.get(key) for key in self._index.listed(user_id, level, task_id)]

    def iterate(
        self, user_id: str, level: str | None = None, batch_size: int = 1000
    ) -> Iterator[list]:
        """Yield the user's items (of one level, if given), oldest first, `batch_size` at a time.

        S11. Raises ValueError naming S11 for a batch size that is not an int >= 1.
        """
        require_count("S11: batch_size", batch_size, 1)
        # The ids are fixed when iteration starts, so deleting between batches is safe. A tuple
        # of strings, which the garbage collector stops walking: a list as long as the store
        # would be walked at each full collection while a forgetting cycle reads it.
        ids = tuple(self._index.listed(user_id, level))
        for offset in range(0, len(ids), batch_size):
            batch = [self._items.get(key) for key in ids[offset : offset + batch_size]]
            yield [item for item in batch if item is not None]

    def matching(self, user_id: str, level: str, terms: Iterable[str]) -> list[MemoryItem]:
        """Return the user's items at a level whose analysed terms share one with `terms` (S7)."""
        return [self._items.get(key) for key in self._index.matching(user_id, level, terms)]

    def search(
        self, user_id: str, level: str, terms: Sequence[str], limit: int
    ) -> list[tuple[MemoryItem, float]]:
        """Return the `limit` best items by BM25 for `terms`, best first (S8)."""
        found = self._index.search(user_id, level, terms, limit)
        return [(self._items.get(key), score) for key, score in found]

    def adjacent(
        self, user_id: str, item_ids: Iterable[str], width: int = 1
    ) -> dict[str, tuple[str | None, ...]]:
        """Return the ids `width` before and after each of the user's items in its thread (S9).

        Raises ValueError naming S9 for a width that is not an int >= 0.
        """
        require_count("S9: width", width, 0)
        found = {}
        for item_id in item_ids:
            thread = self._items.thread(item_id)
            if thread is not None and thread[0] == user_id:
                found[item_id] = self._index.adjacent(item_id, thread, width)
        return found

    def statistics(self, user_id: str, level: str, terms: Iterable[str]) -> TermStatistics:
        """Return the user's item count, total length and each term's holders at a level (S14)."""
        return self._index.statistics(user_id, level, terms)

    def held_terms(
        self, user_id: str, level: str, item_ids: Iterable[str], terms: Iterable[str]
    ) -> dict[str, TermCounts]:
        """Return the length and asked terms' counts of each named item holding one (S15)."""
        return self._index.held_terms(user_id, level, item_ids, terms)

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        doomed = [
            item_id for item_id in dict.fromkeys(item_ids) if self._items.owner(item_id) == user_id
        ]
        for item_id in doomed:
            self._index.remove(item_id, self._items.remove(item_id), forget_position=True)
        return len(doomed)

    def erase(self, user_id: str, item_ids: Iterable[str]) -> int:
        """Delete the user's named items, blank the audit records about them, and take their ids
        out of the lists of ids the user's other items quote (S13)."""
        found = [self._items.get(key) for key in set(item_ids) if self._items.owner(key) == user_id]
        erased = {item.id for item in found}
        forms = erased_forms(item.content for item in found)
        self._audit.scrub(user_id, lambda record: mentions_erased(record, erased, forms))
        deleted = self.delete(user_id, erased)
        if erased:
            # The items it keeps that quote an erased id, in their metadata alone (S13).
            for item in self.list(user_id):
                metadata = without_erased(item.metadata, erased)
                if metadata is not None:
                    self._items.put(item.id, self._items.encode(replace(item, metadata=metadata)))
        return deleted

    def delete_user(self, user_id: str) -> int:
        """Forget the user: delete their items, blank their audit, raise their generation (S6)."""
        deleted = self.delete(user_id, self._index.listed(user_id))
        self.scrub_audit(user_id)
        generation = self._generation_now(user_id) + 1
        self._generations[user_id] = generation
        self._seen[user_id] = generation
        return deleted

    def generation(self, user_id: str) -> int:
        """Return how many times the user was forgotten, and take it as seen by this object (S6)."""
        self._seen[user_id] = self._generation_now(user_id)
        return self._seen[user_id]

    def users(self) -> list[str]:
        return self._index.users()

    def new_id(self, prefix: str) -> str:
        number = self._counters.get(prefix, 0)
        while f"{prefix}-{number + 1}" in self._items:
            number += 1
        self._counters[prefix] = number + 1
        return f"{prefix}-{number + 1}"

    def append_audit(self, records: Iterable[AuditEntry]) -> None:
        self.put((), records)

    def record_access(self, accesses: Iterable[Access], audit: Iterable[AuditEntry] = ()) -> None:
        """Count each access on its stored item, if still stored, and append `audit` (S10, S6)."""
        accesses = list(accesses)
        records = list(audit)
        users = [entry.user_id for entry in [*accesses, *records]]
        refuse_if_forgotten(users, self._seen, self._generation_now)
        for access in accesses:
            if self._items.owner(access.id) == access.user_id:
                self._items.count_access(access.id, access.at)
        self._audit.extend(records)

    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditEntry]:
        return self._audit.select(user_id, item_id)

    def scrub_audit(self, user_id: str) -> int:
        return self._audit.scrub(user_id)

    def close(self) -> None:
        pass
