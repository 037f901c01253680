"""Stored facts: semantic memory's facts kept in a Store as memory items.

Document 003 §4.2 keeps each promoted fact with the episodes it came from, and §4.3 closes
a contradicted fact instead of deleting it. Semantic memory (recuris/evolution/semantic.py)
holds plain `Fact` records and takes a `FactArchive`; `StoredFacts` maps them onto the
`semantic` items of one user in any `Store`, so the manager's recall, forgetting and
erasure see them like every other memory.

Invariants:
    FA1 a fact read back from the store equals the one written: id, subject, value, sources
        and validity.
    FA2 a new fact, the facts it closes and their audit records commit in one `put`.
    FA3 the archive reads and writes only its own user's items; a store that cannot be
        written while facts are closed on load leaves every item as it was.
    FA4 the sources a semantic item cites (`cited_sources`) are whole ids: the texts its
        `source_ids` lists, a text there being one id, anything else none; so `item-1` is
        never a source of an item citing `item-199`.
"""

from collections.abc import Iterable

from ..storage.audit import AuditEntry
from ..storage.item import MemoryItem
from ..storage.store import Store, StoreError, append_superseding
from .semantic import Fact

__all__ = ["StoredFacts", "cited_sources", "fact_to_item", "item_to_fact"]


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


def cited_sources(item: MemoryItem) -> tuple[str, ...]:
    """Return the ids of the memories a semantic item cites, each whole (FA4)."""
    cited = item.metadata.get("source_ids", ())
    # A text written where a list belongs (an import, a fork's item) is one id: read as a
    # sequence it would be its characters, and `in` would match any id it contains.
    if isinstance(cited, str):
        return (cited,)
    if not isinstance(cited, list):
        return ()
    return tuple(source for source in cited if isinstance(source, str))


def item_to_fact(item: MemoryItem) -> Fact:
    """Rebuild the fact that `fact_to_item` stored (FA1)."""
    meta = item.metadata
    return Fact(
        item.id,
        meta["subject"],
        meta["value"],
        cited_sources(item),
        item.created_at,
        item.invalidated_at,
        item.superseded_by,
    )


class StoredFacts:
    """One user's facts in a Store: the `FactArchive` the manager gives semantic memory."""

    def __init__(self, store: Store, user_id: str) -> None:
        self.store = store
        self.user_id = user_id

    def load(self) -> Iterable[Fact]:
        # Reflection's insights are semantic items too, but not subject = value facts.
        return [
            item_to_fact(item)
            for item in self.store.list(self.user_id, "semantic")
            if "subject" in item.metadata
        ]

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
