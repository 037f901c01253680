"""Stored facts: semantic memory's facts kept in a Store as memory items.

Document 003 §4.2 keeps each promoted fact with the episodes it came from, and §4.3 closes
a contradicted fact instead of deleting it. Semantic memory (recuris/core/semantic.py)
holds plain `Fact` records and takes a `FactArchive`; `StoredFacts` maps them onto the
`semantic` items of one user in any `Store`, so the manager's recall, forgetting and
erasure see them like every other memory. A fact has two records on purpose: the `Fact` is
what the documents describe, the item is the storage row every tier shares; `fact_to_item`
and `item_to_fact` are the one conversion each way.

Invariants:
    FA1 a fact read back from the store equals the one written: id, subject, value, sources
        and validity.
    FA2 a new fact, the facts it closes and their audit records commit in one `put`.
    FA3 the archive reads and writes only its own user's items; a store that cannot be
        written while facts are closed on load leaves every item as it was.
    FA4 a semantic item's `source_ids`, where present, is a list of text; a fact's (a semantic
        item whose metadata has a `subject`) is not empty (F3), and its `subject` and `value`
        are text. `check_semantic_item` and `item_to_fact` raise ValueError naming FA4 for an
        item that breaks it; `load` leaves such a fact out, logging a warning that names its id
        and FA4, and lists it in `skipped`. Sources are whole ids, compared whole: `item-1`
        is never a source of a fact citing `item-199`.
"""

import logging
from collections.abc import Iterable

from ..core.validation import require_text
from ..storage.audit import AuditEntry
from ..storage.item import MemoryItem, require_texts
from ..storage.store import Store, StoreError, append_superseding
from ..core.semantic import Fact

__all__ = ["StoredFacts", "check_semantic_item", "fact_to_item", "item_to_fact", "sources_of"]

log = logging.getLogger("recuris.evolution.stored_facts")


def fact_to_item(fact: Fact, user_id: str, importance: float = 0.8) -> MemoryItem:
    """Map a fact onto a semantic item whose content reads `subject: value`."""
    return MemoryItem(
        id=fact.id,
        user_id=user_id,
        level="semantic",
        content=f"{fact.subject}: {fact.value}",
        created_at=fact.created_at,
        importance=importance,
        invalidated_at=fact.invalidated_at,
        superseded_by=fact.superseded_by,
        metadata={
            "subject": fact.subject,
            "value": fact.value,
            "source_ids": list(fact.source_ids),
        },
    )


def sources_of(item: MemoryItem) -> tuple[str, ...]:
    """Return the ids a semantic item names as its sources, none if it names none.

    Raises ValueError naming FA4 (and the item's id) for `source_ids` that is not a list of text.
    """
    sources = item.metadata.get("source_ids", [])
    try:
        # A JSON object would pass as its keys, and a text as its characters.
        if not isinstance(sources, list | tuple):
            raise TypeError(f"source_ids must be a list of text, got {type(sources).__name__}")
        return tuple(require_texts("source_ids", sources))
    except (TypeError, ValueError) as error:
        raise ValueError(f"FA4: semantic item {item.id!r}: {error}") from None


def item_to_fact(item: MemoryItem) -> Fact:
    """Rebuild the fact that `fact_to_item` stored (FA1).

    Raises ValueError naming FA4 (and the item's id) for metadata that is not a fact's.
    """
    meta = item.metadata
    sources = sources_of(item)
    try:
        missing = [key for key in ("subject", "value", "source_ids") if key not in meta]
        if missing:
            raise ValueError(f"it lacks the fields {missing}")
        require_text("subject", meta["subject"])
        require_text("value", meta["value"])
        if not sources:
            raise ValueError("F3: a fact must name at least one source")
    except (TypeError, ValueError) as error:
        raise ValueError(f"FA4: semantic item {item.id!r} is not a fact: {error}") from None
    return Fact(
        item.id,
        meta["subject"],
        meta["value"],
        sources,
        item.created_at,
        item.invalidated_at,
        item.superseded_by,
    )


def check_semantic_item(item: MemoryItem) -> None:
    """Raise ValueError naming FA4 if a semantic item's sources, or its fact, cannot be read."""
    if "subject" in item.metadata:
        item_to_fact(item)
    else:
        sources_of(item)


class StoredFacts:
    """One user's facts in a Store: the `FactArchive` the manager gives semantic memory."""

    def __init__(self, store: Store, user_id: str) -> None:
        self.store = store
        self.user_id = user_id
        # The ids of the stored items that `load` found not to be facts, left out (FA4).
        self.skipped: tuple[str, ...] = ()

    def load(self) -> Iterable[Fact]:
        facts = []
        skipped = []
        for item in self.store.list(self.user_id, "semantic"):
            # Reflection's insights are semantic items too, but not subject = value facts.
            if "subject" not in item.metadata:
                continue
            try:
                facts.append(item_to_fact(item))
            except ValueError as error:
                # One item edited by hand or written by a fork must not take every recall and
                # every write of the user down: it is left in the store, unread (FA4).
                log.warning("%s; left out of the user's facts", error)
                skipped.append(item.id)
        self.skipped = tuple(skipped)
        return facts

    def new_id(self) -> str:
        return self.store.new_id("fact")

    def write(self, fact: Fact, closed: list[Fact], reason: str, importance: float) -> None:
        # append_superseding closes the store's own copy of each replaced fact, so accesses
        # counted since it was loaded are kept; the item and its audit commit together (FA2).
        reopened = [fact_to_item(_reopened(old), self.user_id) for old in closed]
        append_superseding(
            self.store, fact_to_item(fact, self.user_id, importance), reopened, reason
        )

    def close(self, stale: list[Fact], reason: str) -> bool:
        try:
            current = [(self.store.get(self.user_id, fact.id), fact) for fact in stale]
            closed = [
                item.closed(fact.invalidated_at, fact.superseded_by)
                for item, fact in current
                if item
            ]
            audit = [
                AuditEntry(
                    item.id,
                    "supersede",
                    f"superseded by {item.superseded_by}: {reason}",
                    item.invalidated_at,
                    None,
                    self.user_id,
                )
                for item in closed
            ]
            self.store.put(closed, audit)  # closed together with their audit records (FA2)
        except StoreError:
            return False
        return True

    def __repr__(self) -> str:
        return f"StoredFacts(user={self.user_id!r}, store={type(self.store).__name__})"


def _reopened(fact: Fact) -> Fact:
    return Fact(fact.id, fact.subject, fact.value, fact.source_ids, fact.created_at)
