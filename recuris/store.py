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
    S14 one `put` is one transaction: its deletions, items and audit records are all
        stored, or none of them is (so an item never lacks the audit record of its write).
    S17 a write prepared before its user was forgotten never lands: `delete_user` raises the
        user's generation, and every write checks, in its transaction, that each of its users
        is still at the generation this store object last saw (`generation`, or its first
        write); otherwise the whole write is refused with `ForgottenUserError`.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from collections.abc import Iterable
from typing import Protocol

from .item import MemoryItem
from .records import AuditRecord
from .text import tokenize

__all__ = ["Store", "StoreError", "ForgottenUserError", "InMemoryStore", "append_superseding"]


class StoreError(Exception):
    """The store could not be read or written (locked, gone, corrupt)."""


class ForgottenUserError(ValueError):
    """A write was prepared for a user who has been forgotten since: it was refused (S17)."""


def refuse_if_forgotten(users: Iterable[str], seen: dict[str, int], generation_of) -> None:
    """Raise ForgottenUserError if a user was forgotten since this store object last saw them (S17)."""
    for user_id in dict.fromkeys(users):
        current = generation_of(user_id)
        if seen.setdefault(user_id, current) != current:
            raise ForgottenUserError(f"S17: user {user_id!r} was forgotten after this write was prepared")


class Store(Protocol):
    """What a layer may ask of storage. Every item read names the user (S11).

    `put` is the one write that may combine: it deletes, stores items and appends audit
    records in one transaction (S14); `append_audit(records)` is `put((), records)`.
    `delete_user` forgets a user: it deletes their items, blanks their audit reasons and
    raises their generation, which `generation` reads and every write checks (S17).
    """

    def put(
        self, items: Iterable[MemoryItem],
        audit: Iterable[AuditRecord] = (), delete: Iterable[MemoryItem] = (),
    ) -> None: ...
    def get(self, user_id: str, item_id: str) -> MemoryItem | None: ...
    def list(
        self, user_id: str, level: str | None = None, task_id: str | None = None
    ) -> list[MemoryItem]: ...
    def matching(self, user_id: str, level: str, tokens: Iterable[str]) -> list[MemoryItem]: ...
    def delete(self, user_id: str, item_ids: Iterable[str]) -> int: ...
    def delete_user(self, user_id: str) -> int: ...
    def generation(self, user_id: str) -> int: ...
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
        self._generations: dict[str, int] = {}  # per user: how many times they were forgotten
        self._seen: dict[str, int] = {}  # per user: the generation this object last saw (S17)

    def put(
        self, items: Iterable[MemoryItem],
        audit: Iterable[AuditRecord] = (), delete: Iterable[MemoryItem] = (),
    ) -> None:
        """Delete the `delete` items (by id and user), then store the items and audit, all or none (S14)."""
        batch, records, doomed = list(items), list(audit), list(delete)
        users = [entry.user_id for entry in [*batch, *records]]
        refuse_if_forgotten(users, self._seen, lambda user_id: self._generations.get(user_id, 0))
        check_owners(batch, lambda item_id: self._items[item_id].user_id if item_id in self._items else None)
        for old in doomed:
            self.delete(old.user_id, [old.id])
        for item in batch:
            self._items[item.id] = _copy(item)
        self._audit.extend(records)

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

    def matching(self, user_id: str, level: str, tokens: Iterable[str]) -> list[MemoryItem]:
        """The user's items at a level that share a token with `tokens` (a scan: this is the model)."""
        tokens = set(tokens)
        return [item for item in self.list(user_id, level) if tokens & set(tokenize(item.content))]

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        mine = [item_id for item_id in dict.fromkeys(item_ids) if item_id in self._items]
        doomed = [item_id for item_id in mine if self._items[item_id].user_id == user_id]
        for item_id in doomed:
            del self._items[item_id]
        return len(doomed)

    def delete_user(self, user_id: str) -> int:
        """Forget the user: delete their items, blank their audit reasons, raise their generation (S17)."""
        deleted = self.delete(user_id, list(self._items))
        self.scrub_audit(user_id)
        self._generations[user_id] = self._seen[user_id] = self._generations.get(user_id, 0) + 1
        return deleted

    def generation(self, user_id: str) -> int:
        """Return how many times the user was forgotten, and take it as seen by this object (S17)."""
        self._seen[user_id] = self._generations.get(user_id, 0)
        return self._seen[user_id]

    def users(self) -> list[str]:
        return sorted({item.user_id for item in self._items.values()})

    def new_id(self, prefix: str) -> str:
        number = self._counters.get(prefix, 0)
        while f"{prefix}-{number + 1}" in self._items:
            number += 1
        self._counters[prefix] = number + 1
        return f"{prefix}-{number + 1}"

    def append_audit(self, records: Iterable[AuditRecord]) -> None:
        self.put((), records)

    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditRecord]:
        return [
            record
            for record in self._audit
            if (user_id is None or record.user_id == user_id)
            and (item_id is None or record.item_id == item_id)
        ]

    def scrub_audit(self, user_id: str) -> int:
        mine = [position for position, record in enumerate(self._audit) if record.user_id == user_id]
        for position in mine:
            self._audit[position] = replace(self._audit[position], reason="", weight=None)
        return len(mine)

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
    # An item deleted since it was cached (forgotten, or decayed elsewhere) stays deleted.
    current = [store.get(old.user_id, old.id) for old in replaced]
    closed = [old.closed(at, item.id) for old in current if old is not None]
    audit = [AuditRecord(item.id, "write", reason, at, None, item.user_id)]
    why = f"superseded by {item.id}: {item.content!r}"
    audit += [AuditRecord(old.id, "supersede", why, at, None, old.user_id) for old in closed]
    store.put([*closed, item], audit)  # the items and their audit records commit together (S14)
    return [*closed, item]
