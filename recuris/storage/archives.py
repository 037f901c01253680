"""Archives: the core's episodes and facts, kept in a Store as memory items.

Document 002 §4 isolates storage behind an interface, and document 001 §1 keeps every tier
in one record type. The core's episodic and semantic memories hold plain `Episode` and
`Fact` records and take an archive (recuris/core/episodic.py, recuris/evolution/semantic.py);
these two map those records onto `MemoryItem`s of one user in any `Store`, so that the
manager's recall, forgetting and erasure see them like every other memory.

Invariants:
    AR1 an episode or fact read back from the store equals the one written (its id, text,
        trajectory, sources, validity and decay fields), whatever the store.
    AR2 a write and its audit records, and the facts it closes, commit in one `put`.
    AR3 an archive reads and writes only its own user's items.
"""

from collections.abc import Iterable, Sequence

from ..core.records import AuditRecord, Episode, Step
from ..evolution.semantic import Fact
from .item import MemoryItem
from .store import Store, StoreError, append_superseding

__all__ = ["StoredEpisodes", "StoredFacts", "episode_to_item", "item_to_episode", "fact_to_item"]


def episode_to_item(episode: Episode, user_id: str) -> MemoryItem:
    """Map an episode onto the stored record: its text as content, its structure as metadata."""
    steps = [[step.index, step.action, step.result, step.failed] for step in episode.trajectory]
    metadata = {
        "kind": "episode",
        "task_type": episode.task_type,
        "goal": episode.goal,
        "status": episode.status,
        "failure_reason": episode.failure_reason,
        "summary": episode.summary,
        "trajectory": steps,
    }
    return MemoryItem(
        id=episode.id, user_id=user_id, level="episodic", content=episode.render(),
        created_at=episode.created_at, last_access_at=episode.last_access_at,
        access_count=episode.access_count, importance=episode.importance, metadata=metadata,
    )


def item_to_episode(item: MemoryItem) -> Episode:
    """Rebuild the episode that `episode_to_item` stored (AR1)."""
    meta = item.metadata
    return Episode(
        task_type=meta["task_type"], goal=meta["goal"], status=meta["status"], id=item.id,
        trajectory=tuple(Step(*step) for step in meta["trajectory"]), summary=meta["summary"],
        failure_reason=meta["failure_reason"], created_at=item.created_at, importance=item.importance,
        last_access_at=item.last_access_at, access_count=item.access_count,
    )


def fact_to_item(fact: Fact, user_id: str, importance: float = 0.8) -> MemoryItem:
    """Map a fact onto a semantic item whose content reads `subject: value`."""
    return MemoryItem(
        id=fact.id, user_id=user_id, level="semantic", content=f"{fact.subject}: {fact.value}",
        created_at=fact.created_at, importance=importance, invalidated_at=fact.invalidated_at,
        superseded_by=fact.superseded_by,
        metadata={"subject": fact.subject, "value": fact.value, "source_ids": list(fact.source_ids)},
    )


def item_to_fact(item: MemoryItem) -> Fact:
    """Rebuild the fact that `fact_to_item` stored (AR1)."""
    meta = item.metadata
    return Fact(item.id, meta["subject"], meta["value"], tuple(meta["source_ids"]), item.created_at,
                item.invalidated_at, item.superseded_by)


class StoredEpisodes:
    """One user's episodes in a Store: the `EpisodeArchive` the manager gives episodic memory."""

    def __init__(self, store: Store, user_id: str) -> None:
        self.store, self.user_id = store, user_id

    def load(self) -> Iterable[tuple[Episode, Sequence | None]]:
        for item in self.store.list(self.user_id, "episodic"):
            if item.metadata.get("kind") == "episode":  # reflection's raw turns are episodic too
                yield item_to_episode(item), item.metadata.get("embedding")

    def new_id(self) -> str:
        return self.store.new_id("episode")

    def write(self, episode: Episode, terms: Sequence | None, audit: Iterable = (),
              delete: Iterable = ()) -> None:
        item = episode_to_item(episode, self.user_id)
        if terms is not None:
            item.metadata["embedding"] = list(terms)
        self.store.put([item], audit, delete)  # raises ValueError if another user owns the id (AR2, AR3)

    def delete(self, episode_ids: list[str]) -> None:
        self.store.delete(self.user_id, episode_ids)

    def __repr__(self) -> str:
        return f"StoredEpisodes(user={self.user_id!r}, store={type(self.store).__name__})"


class StoredFacts:
    """One user's facts in a Store: the `FactArchive` the manager gives semantic memory."""

    def __init__(self, store: Store, user_id: str) -> None:
        self.store, self.user_id = store, user_id

    def load(self) -> Iterable[Fact]:
        # Reflection's insights are semantic items too, but not subject = value facts.
        return [item_to_fact(item) for item in self.store.list(self.user_id, "semantic")
                if "subject" in item.metadata]

    def new_id(self) -> str:
        return self.store.new_id("fact")

    def write(self, fact: Fact, closed: list[Fact], reason: str, importance: float) -> None:
        # append_superseding closes the store's own copy of each replaced fact, so accesses
        # counted since it was loaded are kept; the item and its audit commit together (AR2).
        reopened = [fact_to_item(_reopened(old), self.user_id) for old in closed]
        append_superseding(self.store, fact_to_item(fact, self.user_id, importance), reopened, reason)

    def close(self, stale: list[Fact], reason: str) -> bool:
        try:
            current = [(self.store.get(self.user_id, fact.id), fact) for fact in stale]
            closed = [item.closed(fact.invalidated_at, fact.superseded_by) for item, fact in current if item]
            audit = [AuditRecord(item.id, "supersede", f"superseded by {item.superseded_by}: {reason}",
                                 item.invalidated_at, None, self.user_id) for item in closed]
            self.store.put(closed, audit)  # closed together with their audit records (AR2)
        except StoreError:
            return False
        return True

    def __repr__(self) -> str:
        return f"StoredFacts(user={self.user_id!r}, store={type(self.store).__name__})"


def _reopened(fact: Fact) -> Fact:
    return Fact(fact.id, fact.subject, fact.value, fact.source_ids, fact.created_at)
