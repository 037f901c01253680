"""The model store: the Store protocol as a scan, the store every other store is tested against.

Document 002 §4 isolates storage behind an interface; store.py states that interface's
invariants (S1-S16). `ModelStore` is those sentences written as directly as Python allows,
for reading and for testing, never for speed: its items sit in one dict in write order, its
audit log in one list, and every read scans them and computes its answer at call time, BM25
statistics included. `tests/storage/test_store_properties.py` runs every other store
(InMemoryStore, SQLiteStore, a BufferedStore over each, a fork's) against it after any
writes, search's tie order included; `tests/storage/test_store.py` runs the store contract
on it as on them.

Invariants:
    MO1 write order is the order of first `put`: `list` returns items in it, a rewrite keeps
        an item's place, and a deleted item that is put again comes last (S11).
    MO2 `search` scores, by BM25Settings' weights and `bm25_idf` (the formula's one
        definition) summed with `math.fsum`, every item of the user and level sharing a term
        with the query, from statistics counted by the same scan, and orders them by the
        score rounded to SCORE_DIGITS decimals, then by write position, both descending: the
        later-written item first among equals (S8).
    MO3 the model keeps only the items, the audit log, the id counters and the generations;
        it imports nothing of recuris but the protocol (store.py), the records it keeps
        (item.py, audit.py), the analyzer, BM25's definition and the argument checks: no
        index, row or chunk of the stores built for speed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace

from ..core.validation import require_count
from ..retrieval.bm25 import BM25Settings, bm25_idf
from ..retrieval.scoring import analyze
from .audit import AuditEntry
from .item import MemoryItem
from .store import (
    SCORE_DIGITS,
    Access,
    TermCounts,
    TermStatistics,
    check_owners,
    erased_forms,
    mentions_erased,
    padded_neighbours,
    refuse_if_forgotten,
    without_erased,
)

__all__ = ["ModelStore"]


class ModelStore:
    """Items in a dict in write order and an audit list, every read a scan of them (MO1-MO3)."""

    def __init__(self, bm25: BM25Settings = BM25Settings()) -> None:  # noqa: B008 (frozen)
        self.bm25 = bm25
        self._items: dict[str, MemoryItem] = {}  # insertion order is write order (MO1)
        self._audit: list[AuditEntry] = []
        self._counters: dict[str, int] = {}  # per prefix: the last number `new_id` gave
        self._generations: dict[str, int] = {}  # per user: how many times they were forgotten
        self._seen: dict[str, int] = {}  # per user: the generation this object last saw (S6)

    def _generation_now(self, user_id: str) -> int:
        return self._generations.get(user_id, 0)

    def _owner(self, item_id: str) -> str | None:
        item = self._items.get(item_id)
        return None if item is None else item.user_id

    def _scope(self, user_id: str, level: str) -> list[MemoryItem]:
        """Return the user's stored items at the level, in write order: no copies."""
        return [
            item for item in self._items.values() if (item.user_id, item.level) == (user_id, level)
        ]

    def put(
        self,
        items: Iterable[MemoryItem],
        audit: Iterable[AuditEntry] = (),
        delete: Iterable[MemoryItem] = (),
    ) -> None:
        """Delete the `delete` items (by id and user), then store the items and audit (S5).

        All or none: every check runs before anything changes. Raises ForgottenUserError (S6),
        ValueError (S2) or, for metadata changed into something not JSON data since the item
        was made, TypeError (I2).
        """
        batch = list(items)
        records = list(audit)
        doomed = list(delete)
        users = [entry.user_id for entry in [*batch, *records]]
        refuse_if_forgotten(users, self._seen, self._generation_now)
        check_owners(batch, self._owner)
        # Through the item's own JSON form, checked again: the copy kept shares nothing with
        # the caller's item (S4), and metadata no store could keep refuses the whole put.
        kept = [MemoryItem.from_dict(item.to_dict()) for item in batch]
        for old in doomed:
            self.delete(old.user_id, [old.id])
        for item in kept:
            self._items[item.id] = item  # a known id keeps its place in the dict (MO1)
        self._audit.extend(records)

    def get(self, user_id: str, item_id: str) -> MemoryItem | None:
        item = self._items.get(item_id)
        if item is None or item.user_id != user_id:
            return None
        return item.copy()

    def get_many(self, user_id: str, item_ids: Iterable[str]) -> dict[str, MemoryItem]:
        """Return a copy of each of the user's items among the ids, keyed by id (S16)."""
        found = {item_id: self.get(user_id, item_id) for item_id in dict.fromkeys(item_ids)}
        return {item_id: item for item_id, item in found.items() if item is not None}

    def list(
        self, user_id: str, level: str | None = None, task_id: str | None = None
    ) -> list[MemoryItem]:
        return [
            item.copy()
            for item in self._items.values()
            if item.user_id == user_id
            and level in (None, item.level)
            and task_id in (None, item.task_id)
        ]

    def iterate(
        self, user_id: str, level: str | None = None, batch_size: int = 1000
    ) -> Iterator[list[MemoryItem]]:
        """Yield the user's items (of one level, if given), oldest first, `batch_size` at a time.

        S11. Raises ValueError naming S11 for a batch size that is not an int >= 1.
        """
        require_count("S11: batch_size", batch_size, 1)
        # The ids are fixed when iteration starts: deleting between batches changes nothing.
        ids = [item.id for item in self.list(user_id, level)]
        for offset in range(0, len(ids), batch_size):
            batch = [self.get(user_id, item_id) for item_id in ids[offset : offset + batch_size]]
            yield [item for item in batch if item is not None]

    def matching(self, user_id: str, level: str, terms: Iterable[str]) -> list[MemoryItem]:
        """Return the user's items at a level whose analysed terms share one with `terms` (S7)."""
        asked = set(terms)
        scope = self._scope(user_id, level)
        return [item.copy() for item in scope if asked & set(analyze(item.content))]

    def search(
        self, user_id: str, level: str, terms: Sequence[str], limit: int
    ) -> list[tuple[MemoryItem, float]]:
        """Return the `limit` best items by BM25 for `terms`, best first, ties later first (MO2)."""
        scope = self._scope(user_id, level)
        counts = [Counter(analyze(item.content)) for item in scope]
        asked = set(terms)
        lengths = [sum(held.values()) for held in counts]
        average = sum(lengths) / len(scope) if scope else 0.0
        idf = {term: bm25_idf(len(scope), sum(term in held for held in counts)) for term in asked}
        scored = []
        for position, (item, held, length) in enumerate(zip(scope, counts, lengths)):
            shared = asked.intersection(held)
            if shared:
                weights = [
                    self.bm25.weights(idf[term], [held[term]], [length], average)[0]
                    for term in shared
                ]
                scored.append((round(math.fsum(weights), SCORE_DIGITS), position, item))
        # A position in the scan is a place in write order (MO1): among equal rounded scores,
        # the higher position, the later-written item, comes first (S8).
        scored.sort(key=lambda found: found[:2], reverse=True)
        return [(item.copy(), score) for score, _, item in scored[: max(0, limit)]]

    def adjacent(
        self, user_id: str, item_ids: Iterable[str], width: int = 1
    ) -> dict[str, tuple[str | None, ...]]:
        """Return the ids `width` before and after each of the user's items in its thread (S9).

        Raises ValueError naming S9 for a width that is not an int >= 0.
        """
        require_count("S9: width", width, 0)
        found = {}
        for item_id in item_ids:
            item = self._items.get(item_id)
            if item is None or item.user_id != user_id:
                continue
            thread = [
                other.id
                for other in self._items.values()
                if (other.user_id, other.level, other.task_id)
                == (item.user_id, item.level, item.task_id)
            ]
            at = thread.index(item_id)
            before = thread[max(0, at - width) : at][::-1]  # nearest first
            after = thread[at + 1 : at + 1 + width]
            found[item_id] = padded_neighbours(before, after, width)
        return found

    def statistics(self, user_id: str, level: str, terms: Iterable[str]) -> TermStatistics:
        """Return the user's item count, total length and each term's holders at a level (S14)."""
        analysed = [analyze(item.content) for item in self._scope(user_id, level)]
        holders = {term: sum(term in held for held in analysed) for term in sorted(set(terms))}
        frequencies = {term: count for term, count in holders.items() if count}
        length = sum(len(held) for held in analysed)
        return TermStatistics(len(analysed), length, frequencies, self.bm25)

    def held_terms(
        self, user_id: str, level: str, item_ids: Iterable[str], terms: Iterable[str]
    ) -> dict[str, TermCounts]:
        """Return the length and asked terms' counts of each named item holding one (S15)."""
        asked = sorted(set(terms))
        scope = {item.id: item for item in self._scope(user_id, level)}
        found = {}
        for item_id in dict.fromkeys(item_ids):
            if item_id not in scope:
                continue
            held = Counter(analyze(scope[item_id].content))
            counts = {term: held[term] for term in asked if held[term]}
            if counts:
                found[item_id] = TermCounts(sum(held.values()), counts)
        return found

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        doomed = [item_id for item_id in dict.fromkeys(item_ids) if self._owner(item_id) == user_id]
        for item_id in doomed:
            del self._items[item_id]
        return len(doomed)

    def erase(self, user_id: str, item_ids: Iterable[str]) -> int:
        """Delete the user's named items and blank the audit records about them (S13)."""
        found = [self._items[key] for key in set(item_ids) if self._owner(key) == user_id]
        erased = {item.id for item in found}
        forms = erased_forms(item.content for item in found)
        self._scrub(user_id, lambda record: mentions_erased(record, erased, forms))
        deleted = self.delete(user_id, erased)
        for item in self.list(user_id):  # the items kept that quote an erased id (S13)
            metadata = without_erased(item.metadata, erased)
            if metadata is not None:
                self._items[item.id] = replace(item, metadata=metadata)
        return deleted

    def delete_user(self, user_id: str) -> int:
        """Forget the user: delete their items, blank their audit, raise their generation (S6)."""
        deleted = self.delete(user_id, [item.id for item in self.list(user_id)])
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
        return sorted({item.user_id for item in self._items.values()})

    def new_id(self, prefix: str) -> str:
        number = self._counters.get(prefix, 0) + 1
        while f"{prefix}-{number}" in self._items:  # S3: never the id of a stored item
            number += 1
        self._counters[prefix] = number
        return f"{prefix}-{number}"

    def append_audit(self, records: Iterable[AuditEntry]) -> None:
        self.put((), records)

    def record_access(self, accesses: Iterable[Access], audit: Iterable[AuditEntry] = ()) -> None:
        """Count each access on its stored item, if still stored, and append `audit` (S10, S6)."""
        accesses = list(accesses)
        records = list(audit)
        users = [entry.user_id for entry in [*accesses, *records]]
        refuse_if_forgotten(users, self._seen, self._generation_now)
        for access in accesses:
            item = self._items.get(access.id)
            if item is not None and item.user_id == access.user_id:
                item.access_count += 1
                item.last_access_at = access.at
        self._audit.extend(records)

    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditEntry]:
        return [
            record
            for record in self._audit
            if user_id in (None, record.user_id) and item_id in (None, record.item_id)
        ]

    def scrub_audit(self, user_id: str) -> int:
        return self._scrub(user_id, lambda record: True)

    def _scrub(self, user_id: str, chosen: Callable[[AuditEntry], bool]) -> int:
        """Blank the reason and weight of the user's records `chosen` picks; return how many."""
        scrubbed = 0
        for at, record in enumerate(self._audit):
            if record.user_id == user_id and chosen(record):
                self._audit[at] = replace(record, reason="", weight=None)
                scrubbed += 1
        return scrubbed

    def close(self) -> None:
        pass
