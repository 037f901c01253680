"""Semantic memory: conclusions distilled from many episodes, stated once, kept long.

Document 003 §3.3 and §4.2: semantic memory holds abstract, stable knowledge ("the team
writes Python") promoted from episodes, each fact citing the episodes it came from.
Document 001 makes it append-only, and 002 §3.3 and 003 §4.3 say what happens when a
conclusion changes: the newest wins, and the old one is marked invalid, not deleted, so an
audit can still see what the agent believed and when it stopped believing it.

Invariants:
    F1  a fact's subject, value and sources never change; superseding only closes its
        validity, once, recording when and by which fact.
    F2  at most one valid fact per subject; re-adding the valid statement is refused.
    F3  every fact names at least one source.
    F4  adding a fact never touches a fact about another subject.
    F5  loading leaves one valid fact per subject: a valid fact that a newer valid fact of the
        same subject contradicts (one written by another process, or during an outage that
        hid it) is closed then, pointing at the newest, and audited.
    F6  the subject index names, for each normalised subject, exactly the facts a scan of
        every fact would find, in order: a write looks up one subject, whatever the count.
"""

import time
from collections.abc import Callable, Iterable

from ..storage.item import MemoryItem
from ..storage.memory_store import InMemoryStore
from .records import AuditRecord, Fact
from ..storage.store import Store, StoreError, append_superseding
from .text import normalize, require_text

__all__ = ["SemanticMemory"]


def _fact(item: MemoryItem) -> Fact:
    meta = item.metadata
    sources = tuple(meta["source_ids"])
    return Fact(
        item.id,
        meta["subject"],
        meta["value"],
        sources,
        item.created_at,
        item.invalidated_at,
        item.superseded_by,
    )


class SemanticMemory:
    """The facts of one user, append-only, persisted in a Store as `semantic` items."""

    def __init__(
        self, store: Store | None = None, user_id: str = "default", clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store if store is not None else InMemoryStore()
        self.user_id, self.clock = require_text("user_id", user_id), clock
        # Reflection's insights are semantic items too, but not subject = value facts.
        stored = self.store.list(user_id, "semantic")
        self._items = {item.id: item for item in stored if "subject" in item.metadata}
        # Normalised subject -> its facts' ids, oldest first: a write reads one subject's
        # facts instead of scanning every fact of the user (F6).
        self._by_subject: dict[str, list[str]] = {}
        for item in self._items.values():
            self._by_subject.setdefault(normalize(item.metadata["subject"]), []).append(item.id)
        self._close_contradicted()

    def _close_contradicted(self) -> None:
        # F5: two writers that could not see each other's fact leave two valid ones; the
        # newest wins, as it would have had the second writer seen the first.
        valid = [item for item in self._items.values() if item.is_valid]
        valid.sort(key=lambda item: item.created_at)  # stable: on a tie, the later written wins
        newest = {normalize(item.metadata["subject"]): item for item in valid}  # the last of each subject
        stale = []
        for item in valid:
            winner = newest[normalize(item.metadata["subject"])]
            if winner is not item:
                stale.append(item.closed(winner.created_at, winner.id))
        if not stale:
            return
        why = "found valid beside a newer fact of its subject on load"
        audit = [AuditRecord(old.id, "supersede", f"superseded by {old.superseded_by}: {why}",
                             old.invalidated_at, None, old.user_id) for old in stale]
        try:
            self.store.put(stale, audit)  # closed together with their audit records (S5)
        except StoreError:
            return  # a store that cannot be written keeps both; the newest is still the current one
        self._items.update((item.id, item) for item in stale)

    def add(
        self,
        subject: str,
        value: str,
        source_ids: Iterable[str],
        created_at: float | None = None,
        importance: float = 0.8,
        reason: str = "added",
    ) -> Fact:
        """Append a fact; a valid fact about the same subject is superseded by it (F2).

        Raises TypeError/ValueError for empty text, no sources (F3), or the statement
        that is already the valid fact (F2); nothing is stored then.
        """
        require_text("subject", subject)
        require_text("value", value)
        sources = tuple(dict.fromkeys(require_text("source id", s) for s in source_ids))
        if not sources:
            raise ValueError("R4: a Fact must name at least one source")
        current = self._current_item(subject)
        if current is not None and normalize(current.metadata["value"]) == normalize(value):
            raise ValueError(f"F2: the fact {subject!r} = {value!r} is already known")
        now = self.clock() if created_at is None else created_at
        item = MemoryItem(
            id=self.store.new_id("fact"),
            user_id=self.user_id,
            level="semantic",
            content=f"{subject}: {value}",
            created_at=now,
            importance=importance,
            metadata={"subject": subject, "value": value, "source_ids": list(sources)},
        )
        # The newest statement wins; the old one is closed, never rewritten (F1, F4).
        written = append_superseding(self.store, item, [current] if current else [], reason)
        self._items.update((stored.id, stored) for stored in written)
        self._by_subject.setdefault(normalize(subject), []).append(item.id)
        return _fact(item)

    def _current_item(self, subject: str) -> MemoryItem | None:
        ids = self._by_subject.get(normalize(subject), ())
        return next((self._items[i] for i in reversed(ids) if self._items[i].is_valid), None)

    def knows(self, subject: str, value: str) -> bool:
        """Return True if `subject = value` is the valid fact about the subject."""
        current = self._current_item(subject)
        return current is not None and normalize(current.metadata["value"]) == normalize(value)

    def about(self, subject: str, include_invalid: bool = False) -> list[Fact]:
        """Return the facts about a subject, newest first; superseded ones only if asked."""
        facts = (_fact(self._items[i]) for i in reversed(self._by_subject.get(normalize(subject), ())))
        return [fact for fact in facts if include_invalid or fact.is_valid]

    @property
    def facts(self) -> tuple[Fact, ...]:
        """Every fact, superseded ones included, oldest first."""
        return tuple(_fact(item) for item in self._items.values())

    def current(self) -> tuple[Fact, ...]:
        """The valid facts, oldest first."""
        return tuple(fact for fact in self.facts if fact.is_valid)

    def __len__(self) -> int:
        return len(self._items)

    def to_prompt_section(self) -> str:
        """Render the valid facts, one per line, for a prompt."""
        return "\n".join(["## Known facts"] + [f"  - {fact.render()}" for fact in self.current()])

    def __repr__(self) -> str:
        valid = sum(item.is_valid for item in self._items.values())
        return f"SemanticMemory(user={self.user_id!r}, facts={len(self._items)}, valid={valid})"
