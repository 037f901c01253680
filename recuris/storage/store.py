"""Storage: one small interface behind which every layer keeps its items.

Document 002 §4 isolates storage behind an interface so that the memory logic never
knows where items live; document 001 §2 puts all tiers in one store indexed by task and
type; document 003 §7 scopes every read to one user and asks that memory failures degrade
the agent instead of stopping it. `ModelStore` (model_store.py) states them as a plain scan, the
model every other store is tested against; `InMemoryStore` (memory_store.py) is the
default; `SQLiteStore` (sqlite_store.py) persists; `BufferedStore` (buffered_store.py)
retries failed writes. The invariants below hold for every store.

Invariants:
    S1 every item read is scoped to one user: no read returns another user's item (the
        ground on which the manager's MG1 stands).
    S2  an item's user is fixed: putting an id that another user owns is refused, and a
        refused batch writes nothing. Ownership is judged against what was stored before
        the put: the put's own deletions cannot free another user's id for it.
    S3  an id from `new_id` names no stored item of any user, and is never written over:
        should another write take it before this store object writes it, the put that
        would reuse it is refused whole (`IdTakenError`).
    S4 what is got back equals what was put, and is a copy: changing it changes nothing stored.
    S5 one `put` is one transaction: its deletions, items and audit records are all
        stored, or none of them is (so an item never lacks the audit record of its write).
    S6 a write prepared before its user was forgotten never lands: `delete_user` raises the
        user's generation, and every write checks, in its transaction, that each of its users
        is still at the generation this store object last saw (`generation`, its first
        write, or its own `delete_user`); otherwise the whole write is refused with
        `ForgottenUserError`. The users of a write are those of its items and of its audit
        records.
    S7 `matching` returns exactly the items `list` would return whose analysed terms
        (`scoring.analyze`) share one with the query's terms, in the same order.
    S8 `search` returns the `limit` items of one user and level with the highest Okapi BM25
        score for the query's terms (`BM25Settings`'s weights over the items' analysed
        content; statistics of that user and level alone; the score rounded to
        `SCORE_DIGITS` decimals), best first, ties to the later-written item (the later in
        S11's write order, where a rewrite keeps its place); every store returns the same
        items, scores and order.
    S9 `adjacent` gives the ids of each item's `width` previous and `width` next items in
        write order among the user's items of the same level and task, as one tuple in that
        order (None beyond either end): with `width` 1, its previous and its next item. An
        id not stored, or another user's, has no entry.
    S10 `record_access` changes only an item's access count and last access: never its
        content or validity, and an item no longer stored stays gone. The audit records
        given with the accesses are appended in the same transaction (S5's all or none).
    S11 `list` returns items in write order: a rewritten item keeps its place, a deleted and
        written again one goes last. `iterate` yields, in batches, exactly the items `list`
        returns, in the same order; deleting items it has already yielded, between batches,
        changes nothing it yields.
    S12 `delete` and `delete_user` remove only the given user's items (`delete` only the ids
        it names) and return how many, each counted once; `audit` lists records by user or by
        item, and `scrub_audit` blanks the reason and weight of each record of the user.
    S13 `erase` deletes the user's items it names, as `delete` does, and in the same
        transaction blanks the reason and weight of each audit record of the user that
        names one of them (is filed under it, or its reason holds its id whole, `names_item`:
        a recall's record naming a procedure quotes its trigger) or quotes one's content
        (`erased_forms`); in the same transaction it takes the erased ids out of the
        `QUOTING_FIELDS` lists (a fact's or insight's `source_ids`, a survivor's `merged_ids`)
        of every item of the user it keeps (`without_erased`), which is otherwise unchanged
        (a field that is not a list is left as it is). A store that keeps old
        copies elsewhere (SQLite's write-ahead log) returns only once none is left, or raises
        a StoreError saying so (SE1). Another user's ids erase nothing.
    S14 `statistics` gives the collection statistics S8's search scores with: how many
        items the user has at the level, their total analysed length, and for each given term
        how many of them hold it (a term none holds is left out), and its BM25 settings.
    S15 `held_terms` gives, for each of the user's items at the level among those named
        that holds at least one of the given terms, its analysed length and how many times
        it holds each of those terms; an item holding none, deleted, of another user or of
        another level has no entry.
    S16 `get_many` gives the user's stored items among the ids named, each once, keyed by
        id in the order first named, as `get` gives each one (S4); an id not stored, or
        another user's, has no entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..retrieval.bm25 import BM25Settings
from .audit import AuditEntry
from .item import MemoryItem

# S8: every store rounds a score to this many decimals before it ranks, so that two stores
# summing the same terms in another order rank alike.
SCORE_DIGITS = 9

__all__ = [
    "SCORE_DIGITS",
    "QUOTING_FIELDS",
    "without_erased",
    "Store",
    "StoreError",
    "ForgottenUserError",
    "IdTakenError",
    "Access",
    "TermStatistics",
    "TermCounts",
    "held_from_rows",
    "append_superseding",
    "check_owners",
    "erased_forms",
    "mentions_erased",
    "id_prefix",
    "padded_neighbours",
    "refuse_if_forgotten",
]


class StoreError(Exception):
    """The store could not be read or written (locked, gone, corrupt)."""


class ForgottenUserError(ValueError):
    """A write was prepared for a user who has been forgotten since: it was refused (S6)."""


class IdTakenError(ValueError):
    """A new id was taken by another write first: the put was refused, nothing written (S3)."""


def id_prefix(item_id: str) -> str:
    """Return all of an id before its last "-": the prefix given to the shipped `new_id`."""
    return item_id.rpartition("-")[0]


@dataclass(frozen=True)
class Access:
    """One use of a stored item: its access count goes up by 1, its last access to `at` (S10)."""

    user_id: str
    id: str
    at: float


@dataclass(frozen=True)
class TermStatistics:
    """What BM25 needs beside a document's own terms: one user and level's statistics (S14)."""

    documents: int  # the user's items at the level
    length: int  # their analysed terms, counted together
    frequencies: Mapping[str, int]  # term -> how many of those items hold it, for those asked
    bm25: BM25Settings  # the settings the store's search scores with


@dataclass(frozen=True)
class TermCounts:
    """One item's share of a BM25 sum: its analysed length and its counts of asked terms (S15)."""

    length: int  # the item's analysed terms, counted
    counts: Mapping[str, int]  # term -> how many times the item holds it, for those asked


def held_from_rows(rows: Iterable[tuple], item_ids: Sequence[str]) -> dict[str, TermCounts]:
    """Return S15's answer from (item id, term, count, item length) rows, in `item_ids` order."""
    lengths: dict[str, int] = {}
    counts: dict[str, dict[str, int]] = {}
    for item_id, term, count, length in rows:
        lengths[item_id] = length
        counts.setdefault(item_id, {})[term] = count
    return {
        item_id: TermCounts(lengths[item_id], dict(sorted(counts[item_id].items())))
        for item_id in item_ids
        if item_id in counts
    }


def padded_neighbours(before: Sequence, after: Sequence, width: int) -> tuple:
    """Return S9's answer for one item: `width` places before it, then `width` after it.

    `before` and `after` are nearest first, each at most `width` long; None fills the places
    beyond either end of the thread.
    """
    missing_before = [None] * (width - len(before))
    missing_after = [None] * (width - len(after))
    return (*missing_before, *reversed(before), *after, *missing_after)


def refuse_if_forgotten(users: Iterable[str], seen: dict[str, int], generation_of) -> None:
    """Raise ForgottenUserError if the user was forgotten since this store last saw them (S6)."""
    for user_id in dict.fromkeys(users):
        current = generation_of(user_id)
        if seen.setdefault(user_id, current) != current:
            raise ForgottenUserError(
                f"S6: user {user_id!r} was forgotten after this write was prepared"
            )


class Store(Protocol):
    """What a layer may ask of storage. Every item read names the user (S1).

    `put` is the one write that may combine: it deletes, stores items and appends audit
    records in one transaction (S5); `append_audit(records)` is `put((), records)`.
    `delete_user` forgets a user: it deletes their items, blanks their audit reasons and
    raises their generation, which `generation` reads and every write checks (S6).
    """

    def put(
        self,
        items: Iterable[MemoryItem],
        audit: Iterable[AuditEntry] = (),
        delete: Iterable[MemoryItem] = (),
    ) -> None: ...
    def get(self, user_id: str, item_id: str) -> MemoryItem | None: ...
    def get_many(self, user_id: str, item_ids: Iterable[str]) -> dict[str, MemoryItem]: ...
    def list(
        self, user_id: str, level: str | None = None, task_id: str | None = None
    ) -> list[MemoryItem]: ...
    def iterate(
        self, user_id: str, level: str | None = None, batch_size: int = 1000
    ) -> Iterator[list[MemoryItem]]: ...  # `list` in batches, so a large store is never held whole
    def matching(self, user_id: str, level: str, terms: Iterable[str]) -> list[MemoryItem]: ...
    def search(
        self, user_id: str, level: str, terms: Sequence[str], limit: int
    ) -> list[tuple[MemoryItem, float]]: ...
    def adjacent(
        self, user_id: str, item_ids: Iterable[str], width: int = 1
    ) -> dict[str, tuple[str | None, ...]]: ...
    def statistics(self, user_id: str, level: str, terms: Iterable[str]) -> TermStatistics: ...
    def held_terms(
        self, user_id: str, level: str, item_ids: Iterable[str], terms: Iterable[str]
    ) -> dict[str, TermCounts]: ...
    def delete(self, user_id: str, item_ids: Iterable[str]) -> int: ...
    def delete_user(self, user_id: str) -> int: ...
    def erase(self, user_id: str, item_ids: Iterable[str]) -> int: ...
    def generation(self, user_id: str) -> int: ...
    def users(self) -> list[str]: ...
    def new_id(self, prefix: str) -> str: ...
    def append_audit(self, records: Iterable[AuditEntry]) -> None: ...
    def record_access(
        self, accesses: Iterable[Access], audit: Iterable[AuditEntry] = ()
    ) -> None: ...
    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditEntry]: ...
    def scrub_audit(self, user_id: str) -> int: ...
    def close(self) -> None: ...


def erased_forms(contents: Iterable[str]) -> list[str]:
    """Return the forms in which an audit reason may quote each content: as is, and as `repr`
    writes it inside its quotes (a superseding record quotes its successor so, S13)."""
    forms = {form for content in contents for form in (content, repr(content)[1:-1]) if form}
    return sorted(forms)


# The metadata fields whose lists name other items by id: the sources of a fact or insight
# (FA4, Y8) and the items merged into a survivor (O7). An erase takes its ids out (S13).
QUOTING_FIELDS = ("source_ids", "merged_ids")


def without_erased(metadata: dict, item_ids: set[str]) -> dict | None:
    """Return the metadata with `item_ids` taken out of its QUOTING_FIELDS lists (S13).

    None when no such list names one of them; a field that is not a list is left as it is.
    """
    changed = {}
    for field in QUOTING_FIELDS:
        quoted = metadata.get(field)
        if not isinstance(quoted, list):
            continue
        # An entry that is not text (FA4, O7 broken) names no id, and stays.
        kept = [entry for entry in quoted if not (isinstance(entry, str) and entry in item_ids)]
        if len(kept) < len(quoted):
            changed[field] = kept
    return {**metadata, **changed} if changed else None


def names_item(reason: str, item_id: str) -> bool:
    """Tell whether a reason holds the id whole, not inside a longer id or word (S13)."""
    # An id is whole where no letter, digit, `-` or `_` adjoins it: `item-1` is not named by
    # `item-19`, nor by `item-1-b`; it is by `item-1:`, `item-1,` and `'item-1'`.
    whole = rf"(?<![\w-]){re.escape(item_id)}(?![\w-])"
    return item_id in reason and re.search(whole, reason) is not None


def mentions_erased(record: AuditEntry, item_ids: set[str], forms: list[str]) -> bool:
    """Tell whether an audit record names an erased item or quotes its content (S13)."""
    if record.item_id in item_ids or any(form in record.reason for form in forms):
        return True
    return any(names_item(record.reason, item_id) for item_id in item_ids)


def check_owners(batch: list[MemoryItem], owner_of) -> None:
    """Raise ValueError if an item of the batch would change the user of a stored id (S2)."""
    seen: dict[str, str] = {}
    for item in batch:
        owner = seen.setdefault(item.id, owner_of(item.id) or item.user_id)
        if owner != item.user_id:
            raise ValueError(
                f"S2: item {item.id!r} belongs to another user; its user cannot change"
            )


def _current(store: Store, item: MemoryItem) -> MemoryItem | None:
    # An item deleted since it was cached (forgotten, or decayed elsewhere) stays deleted;
    # while the store cannot be read, the caller's copy stands in (G1).
    try:
        return store.get(item.user_id, item.id)
    except StoreError:
        return item


def append_superseding(
    store: Store, item: MemoryItem, replaced: Iterable[MemoryItem], reason: str
) -> list[MemoryItem]:
    """Write `item` and close each replaced item in one batch, auditing both; return the batch.

    Replaced items are read back from the store first, so that accesses counted since the
    caller cached them are not overwritten; only their validity changes (F1, H3). While the
    store cannot be read, the caller's copy is closed instead: the write is kept (G1).
    """
    at = item.created_at
    current = [_current(store, old) for old in replaced]
    closed = [old.closed(at, item.id) for old in current if old is not None]
    audit = [AuditEntry(item.id, "write", reason, at, None, item.user_id)]
    why = f"superseded by {item.id}: {item.content!r}"
    audit += [AuditEntry(old.id, "supersede", why, at, None, old.user_id) for old in closed]
    store.put([*closed, item], audit)  # the items and their audit records commit together (S5)
    return [*closed, item]
