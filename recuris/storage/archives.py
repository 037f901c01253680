"""Archives: the core's episodes kept in a Store as memory items.

Document 002 §4 isolates storage behind an interface, and document 001 §1 keeps every tier
in one record type. The core's episodic memory holds plain `Episode` records and takes an
archive (recuris/core/episodic.py); `StoredEpisodes` maps them onto `MemoryItem`s of one
user in any `Store`, so that the manager's recall, forgetting and erasure see them like
every other memory. (Facts have theirs beside semantic memory: recuris/evolution/stored_facts.py.)

Invariants:
    AR1 an episode read back from the store equals the one written (its id, text,
        trajectory, status and decay fields), whatever the store.
    AR2 an episode, its audit records and the deletions given commit in one `put`.
    AR3 an archive reads and writes only its own user's items.
"""

from collections.abc import Iterable, Sequence

from ..core.records import Episode, Step
from .item import MemoryItem
from .store import Store

__all__ = ["StoredEpisodes", "episode_to_item", "item_to_episode"]


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
        id=episode.id,
        user_id=user_id,
        level="episodic",
        content=episode.render(),
        created_at=episode.created_at,
        last_access_at=episode.last_access_at,
        access_count=episode.access_count,
        importance=episode.importance,
        metadata=metadata,
    )


def item_to_episode(item: MemoryItem) -> Episode:
    """Rebuild the episode that `episode_to_item` stored (AR1)."""
    meta = item.metadata
    return Episode(
        task_type=meta["task_type"],
        goal=meta["goal"],
        status=meta["status"],
        id=item.id,
        trajectory=tuple(Step(*step) for step in meta["trajectory"]),
        summary=meta["summary"],
        failure_reason=meta["failure_reason"],
        created_at=item.created_at,
        importance=item.importance,
        last_access_at=item.last_access_at,
        access_count=item.access_count,
    )


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

    def write(
        self, episode: Episode, terms: Sequence | None, audit: Iterable = (), delete: Iterable = ()
    ) -> None:
        item = episode_to_item(episode, self.user_id)
        if terms is not None:
            item.metadata["embedding"] = list(terms)
        self.store.put(
            [item], audit, delete
        )  # raises ValueError if another user owns the id (AR2, AR3)

    def delete(self, episode_ids: list[str]) -> None:
        self.store.delete(self.user_id, episode_ids)

    def __repr__(self) -> str:
        return f"StoredEpisodes(user={self.user_id!r}, store={type(self.store).__name__})"
