"""Reads that see the retry queue: what the store will hold once the queued writes land.

Document 003 §7.3 asks that memory degrade rather than lose or invent anything. While
`BufferedStore` (buffered_store.py) holds writes the store refused, a read that missed them
would answer from the past: a fact just corrected would come back uncorrected, an item just
deleted would come back. So every item read replays the user's queue over what the store
returns, in the order it was written; and `QueuedView` builds a user's layers from the
queue alone while the store cannot be read at all.

Invariants:
    QR1 reads see queued writes: `get`, `get_many`, `list`, `iterate`, `matching`, `search`,
        `adjacent`, `statistics` and `held_terms` answer as if the queue were written (newest queued
        copies, queued deletions and counted accesses applied in order), in the store's order
        (S11: a queued rewrite in the item's place, even from another level, task or terms;
        an item deleted and put again last), and `audit` adds the queued records (those
        queued with accesses too).
    QR2 `QueuedView` answers `list` from the queue alone and hands every other operation of the
        Store protocol, each written out, to its buffered store unchanged.
    QR3 a read replays no batch of the queue: each user's `Replay` of it is kept as batches are
        queued, and made again in one pass only after the queue changed otherwise (written out
        in part, a user's writes dropped); a read of some ids, or of one level, overlays only
        the queued copies of those ids or of that level. So a write queued while the store
        fails (an event, a fact, a procedure, a task's start, step or note, the first call for
        a user not loaded) reads no batch of the queue but its retry (G13): its work grows with
        the user's queued items of the level it reads, never with the queue's length.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

from ..core.validation import require_count
from ..retrieval.bm25 import BM25Settings
from ..retrieval.scoring import analyze
from .audit import AuditEntry
from .item import MemoryItem
from .memory_store import InMemoryStore
from .store import Access, TermCounts, TermStatistics

__all__ = ["Counted", "QueuedReads", "QueuedView", "Replay", "replay", "replay_batch"]


class Counted(list):
    """A queued batch of accesses (`record_access`) with its audit records, kept in order."""

    def __init__(self, accesses: Iterable[Access] = (), audit: Iterable[AuditEntry] = ()) -> None:
        super().__init__(accesses)
        self.audit = list(audit)


def _counted(item: MemoryItem, times: int, at: float) -> MemoryItem:
    return replace(item, access_count=item.access_count + times, last_access_at=at)


def _in(level: str | None, task_id: str | None):
    return lambda item: level in (None, item.level) and task_id in (None, item.task_id)


class Replay:
    """One user's queue replayed in order: newest copies, deleted ids, accesses to stored ones.

    `fresh` keeps the queue's order: an item put again keeps its place, one deleted and put
    again comes last. Each level's items are indexed, so that a read of one level reads no
    other (QR3).
    """

    def __init__(self) -> None:
        self.fresh: dict[str, MemoryItem] = {}
        self.gone: set[str] = set()
        self.counted: dict[str, tuple[int, float]] = {}
        # Level -> {id: the id's place in `fresh`}: a level's items in the queue's order.
        self._levels: dict[str, dict[str, int]] = {}
        self._places: dict[str, int] = {}
        self._next_place = 0

    @property
    def changes(self) -> bool:
        """Whether the queue changes anything of the user."""
        return bool(self.fresh or self.gone or self.counted)

    def put(self, item: MemoryItem) -> None:
        """Replay a queued put of the item: it carries its own access count."""
        old = self.fresh.get(item.id)
        if old is None:
            self._places[item.id] = self._next_place
            self._next_place += 1
        elif old.level != item.level:
            del self._levels[old.level][item.id]
        self._levels.setdefault(item.level, {})[item.id] = self._places[item.id]
        self.fresh[item.id] = item
        # An id stays in `gone` once a queued put deletes it, even if put again: its stored
        # copy is gone, and its queued copy comes after every stored item (S11).
        self.counted.pop(item.id, None)

    def delete(self, item_id: str) -> None:
        """Replay a queued deletion: deleted, then put again, an item comes last (MS1)."""
        old = self.fresh.pop(item_id, None)
        if old is not None:
            del self._levels[old.level][item_id]
            del self._places[item_id]
        self.counted.pop(item_id, None)
        self.gone.add(item_id)

    def access(self, access: Access) -> None:
        """Replay a queued access: counted on the queued copy, or on the stored item."""
        if access.id in self.fresh:
            self.fresh[access.id] = _counted(self.fresh[access.id], 1, access.at)
        elif access.id not in self.gone:
            self.counted[access.id] = (self.counted.get(access.id, (0, 0.0))[0] + 1, access.at)

    def at_level(self, level: str | None) -> list[MemoryItem]:
        """Return the queued copies of the level (of every level for None), in queue order."""
        if level is None:
            return list(self.fresh.values())
        places = self._levels.get(level, {})
        return [self.fresh[key] for key in sorted(places, key=places.__getitem__)]


def replay_batch(replays: dict[str, Replay], batch) -> None:
    """Replay one queued batch onto every user's `Replay`: deletions first, as a put does them."""
    if isinstance(batch, Counted):
        for access in batch:
            replays.setdefault(access.user_id, Replay()).access(access)
        return
    items, _, delete = batch
    for old in delete:
        replays.setdefault(old.user_id, Replay()).delete(old.id)
    for item in items:
        replays.setdefault(item.user_id, Replay()).put(item)


def replay(batches: Iterable) -> dict[str, Replay]:
    """Replay a queue in order, in one pass: user id -> their `Replay`."""
    replays: dict[str, Replay] = {}
    for batch in batches:
        replay_batch(replays, batch)
    return replays


class QueuedReads:
    """The item and audit reads of BufferedStore, overlaid with its queue `_pending` (QR1).

    `_replays` is each user's `Replay` of the queue, or None until the next read makes it
    again (QR3). Each read but `iterate` runs under the buffered store's re-entrant `_lock` (G9).
    """

    def _view(self, user_id: str) -> Replay:
        """Return the user's replay of the queue, made in one pass if the queue changed (QR3)."""
        if self._replays is None:
            self._replays = replay(self._pending)
        return self._replays.get(user_id) or Replay()

    def _changes(self, user_id: str) -> bool:
        """Return whether the queue changes anything of the user, under the store's lock (G9)."""
        with self._lock:
            return bool(self._pending) and self._view(user_id).changes

    def _overlay(
        self,
        view: Replay,
        stored: list[MemoryItem],
        wanted,
        candidates: Iterable[MemoryItem] | None = None,
    ) -> list[MemoryItem]:
        # `view` is the user's replay of the queue. A queued copy is newer than the stored one:
        # it takes its place, or comes after. Only `candidates` (by default every queued copy)
        # can come after, so they must hold each queued copy `wanted` keeps (QR3).
        fresh = view.fresh
        merged: dict[str, MemoryItem] = {}
        for item in stored:
            if item.id in view.gone:
                continue  # deleted by the queue: a copy put again comes after (S11)
            if item.id in fresh:
                merged[item.id] = fresh[item.id]
            elif item.id in view.counted:
                merged[item.id] = _counted(item, *view.counted[item.id])
            else:
                merged[item.id] = item
        for item in fresh.values() if candidates is None else candidates:
            merged.setdefault(item.id, item)
        # Queued copies are copied: the caller may change what it is given, never the queue.
        return [
            copy.deepcopy(item) if fresh.get(item.id) is item else item
            for item in merged.values()
            if wanted(item)
        ]

    def _placed(
        self, user_id: str, view: Replay, stored: list[MemoryItem], wanted, candidates
    ) -> list[MemoryItem]:
        """Overlay the queue on `stored`, the store's answer for `wanted`, in the store's order.

        A queued copy of an item the store holds but did not answer (moved to this level or
        task, or now holding the terms asked) takes the stored item's place in write order
        (S11): only then is the user's whole list read, to place it.
        """
        answered = {item.id for item in stored}
        moved = [
            item.id
            for item in candidates
            if item.id not in answered and item.id not in view.gone and wanted(item)
        ]
        if moved and self.inner.get_many(user_id, moved):
            stored = self.inner.list(user_id)
        return self._overlay(view, stored, wanted, candidates)

    def queued(
        self, user_id: str, level: str | None = None, task_id: str | None = None
    ) -> list[MemoryItem]:
        """Return copies of the user's items still queued (their newest copies), in queue order."""
        with self._lock:
            held = self._view(user_id).at_level(level)
            return [copy.deepcopy(item) for item in held if _in(level, task_id)(item)]

    def get(self, user_id: str, item_id: str) -> MemoryItem | None:
        with self._lock:
            return self.get_many(user_id, [item_id]).get(item_id)

    def get_many(self, user_id: str, item_ids: Iterable[str]) -> dict[str, MemoryItem]:
        with self._lock:
            asked = list(dict.fromkeys(item_ids))
            if not self._pending:
                return self.inner.get_many(user_id, asked)
            # A queued copy is answered without the store, which is asked for the rest; a
            # queued deletion hides an item, a queued access counts on it.
            view = self._view(user_id)
            queued = [view.fresh[item_id] for item_id in asked if item_id in view.fresh]
            unqueued = [item_id for item_id in asked if item_id not in view.fresh]
            stored = self.inner.get_many(user_id, unqueued) if unqueued else {}
            wanted = set(asked)
            found = self._overlay(
                view, list(stored.values()), lambda item: item.id in wanted, queued
            )
            current = {item.id: item for item in found}
            return {item_id: current[item_id] for item_id in asked if item_id in current}

    def list(
        self, user_id: str, level: str | None = None, task_id: str | None = None
    ) -> list[MemoryItem]:
        with self._lock:
            stored = self.inner.list(user_id, level, task_id)
            if not self._pending:
                return stored
            view = self._view(user_id)
            return self._placed(user_id, view, stored, _in(level, task_id), view.at_level(level))

    def iterate(
        self, user_id: str, level: str | None = None, batch_size: int = 1000
    ) -> Iterator[list]:
        """Yield `list` in batches (S11): the store's, or `list`'s while writes are queued."""
        require_count("S11: batch_size", batch_size, 1)
        if not self._changes(user_id):
            yield from self.inner.iterate(user_id, level, batch_size)
            return
        items = self.list(user_id, level)  # the queue is replayed over all of them at once
        for start in range(0, len(items), batch_size):
            yield items[start : start + batch_size]

    def matching(self, user_id: str, level: str, terms: Iterable[str]) -> list[MemoryItem]:
        with self._lock:
            terms = set(terms)
            stored = self.inner.matching(user_id, level, terms)
            if not self._pending:
                return stored
            view = self._view(user_id)
            return self._placed(
                user_id,
                view,
                stored,
                lambda item: item.level == level and not terms.isdisjoint(analyze(item.content)),
                view.at_level(level),
            )

    def _replica(self, user_id: str, level: str | None = None) -> InMemoryStore | None:
        # Ranking and neighbours depend on all of the user's items: with writes of theirs queued,
        # they are computed on a copy of what the store will hold once the queue is written.
        # Queued access counts change neither, so they cost no copy (the results are overlaid).
        if not self._pending:
            return None
        view = self._view(user_id)
        if not view.fresh and not view.gone:
            return None
        replica = InMemoryStore(getattr(self.inner, "bm25", BM25Settings()))
        replica.put(self.list(user_id, level))
        return replica

    def search(
        self, user_id: str, level: str, terms: Sequence[str], limit: int
    ) -> list[tuple[MemoryItem, float]]:
        with self._lock:
            replica = self._replica(user_id, level)
            if replica is not None:
                return replica.search(user_id, level, terms, limit)
            found = self.inner.search(user_id, level, terms, limit)
            if not self._pending:
                return found
            # No queued copy comes after: with one queued, the replica answered.
            overlaid = self._overlay(self._view(user_id), [item for item, _ in found], bool, ())
            current = {item.id: item for item in overlaid}
            return [(current[item.id], score) for item, score in found]

    def adjacent(
        self, user_id: str, item_ids: Iterable[str], width: int = 1
    ) -> dict[str, tuple[str | None, ...]]:
        with self._lock:
            # Queued writes move neighbours (the replica holds them); queued accesses move none.
            replica = self._replica(user_id)
            store = self.inner if replica is None else replica
            return store.adjacent(user_id, item_ids, width)

    def _counting(self, user_id: str, level: str):
        # Counts of terms ignore accesses: the store, or the replica while writes are queued.
        replica = self._replica(user_id, level)
        return self.inner if replica is None else replica

    def statistics(self, user_id: str, level: str, terms: Iterable[str]) -> TermStatistics:
        with self._lock:
            return self._counting(user_id, level).statistics(user_id, level, terms)

    def held_terms(
        self, user_id: str, level: str, item_ids: Iterable[str], terms: Iterable[str]
    ) -> dict[str, TermCounts]:
        with self._lock:
            return self._counting(user_id, level).held_terms(user_id, level, item_ids, terms)

    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditEntry]:
        with self._lock:
            queued = [
                r
                for entry in self._pending
                for r in (entry.audit if isinstance(entry, Counted) else entry[1])
                if (user_id is None or r.user_id == user_id)
                and (item_id is None or r.item_id == item_id)
            ]
            return self.inner.audit(user_id, item_id) + queued


class QueuedView:
    """A buffered store whose `list` sees only the queue, for layers built in an outage (QR2)."""

    def __init__(self, store) -> None:
        self.store = store

    def list(
        self, user_id: str, level: str | None = None, task_id: str | None = None
    ) -> list[MemoryItem]:
        return self.store.queued(user_id, level, task_id)

    # The rest of the Store protocol (store.py), in its order, handed on unchanged:
    def put(
        self,
        items: Iterable[MemoryItem],
        audit: Iterable[AuditEntry] = (),
        delete: Iterable[MemoryItem] = (),
    ) -> None:
        self.store.put(items, audit, delete)

    def get(self, user_id: str, item_id: str) -> MemoryItem | None:
        return self.store.get(user_id, item_id)

    def get_many(self, user_id: str, item_ids: Iterable[str]) -> dict[str, MemoryItem]:
        return self.store.get_many(user_id, item_ids)

    def iterate(
        self, user_id: str, level: str | None = None, batch_size: int = 1000
    ) -> Iterator[list]:
        return self.store.iterate(user_id, level, batch_size)

    def matching(self, user_id: str, level: str, terms: Iterable[str]) -> list[MemoryItem]:
        return self.store.matching(user_id, level, terms)

    def search(self, user_id: str, level: str, terms: Sequence[str], limit: int) -> list[tuple]:
        return self.store.search(user_id, level, terms, limit)

    def adjacent(
        self, user_id: str, item_ids: Iterable[str], width: int = 1
    ) -> dict[str, tuple[str | None, ...]]:
        return self.store.adjacent(user_id, item_ids, width)

    def statistics(self, user_id: str, level: str, terms: Iterable[str]) -> TermStatistics:
        return self.store.statistics(user_id, level, terms)

    def held_terms(
        self, user_id: str, level: str, item_ids: Iterable[str], terms: Iterable[str]
    ) -> dict[str, TermCounts]:
        return self.store.held_terms(user_id, level, item_ids, terms)

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        return self.store.delete(user_id, item_ids)

    def delete_user(self, user_id: str) -> int:
        return self.store.delete_user(user_id)

    def erase(self, user_id: str, item_ids: Iterable[str]) -> int:
        return self.store.erase(user_id, item_ids)

    def generation(self, user_id: str) -> int:
        return self.store.generation(user_id)

    def users(self) -> list[str]:
        return self.store.users()

    def new_id(self, prefix: str) -> str:
        return self.store.new_id(prefix)

    def append_audit(self, records: Iterable[AuditEntry]) -> None:
        self.store.append_audit(records)

    def record_access(self, accesses: Iterable[Access], audit: Iterable[AuditEntry] = ()) -> None:
        self.store.record_access(accesses, audit)

    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditEntry]:
        return self.store.audit(user_id, item_id)

    def scrub_audit(self, user_id: str) -> int:
        return self.store.scrub_audit(user_id)

    def close(self) -> None:
        self.store.close()
