"""Archives: the core's episodes kept in a Store as memory items.

Document 002 §4 isolates storage behind an interface, and document 001 §1 keeps every tier
in one record type. The core's episodic memory holds plain `Episode` records in memory
(recuris/core/episodic.py); `StoredEpisodes` is that memory for one user of a `Store`: it
loads the user's episodes on start and saves, writes back and deletes each through the
store, where it is a `MemoryItem`, so that the manager's recall, forgetting and erasure see
episodes like every other memory. An episode has two records on purpose: the `Episode` is
what the documents describe, the item is the storage row every tier shares; `episode_to_item`
and `item_to_episode` are the one conversion each way, which every other module calls.
(Facts have theirs beside semantic memory: recuris/evolution/stored_facts.py.) The manager
settles a finished task through `settle`: the episode, the audit of its write and the
task's deletions commit together, and the memory then indexes the episode.

Invariants:
    AR1 an episode read back from the store equals the one written (its id, text,
        trajectory, status and decay fields), whatever the store.
    AR2 `save_with` and `settle` commit an episode, its audit records and the deletions given
        in one `put`.
    AR3 an archive reads and writes only its own user's items.
    AR6 a new `StoredEpisodes` on the same store and user holds the same episodes as the one
        that wrote them and retrieves the same hits (formerly E6); an episode added, saved
        or removed is so in the store before the call returns.
    AR4 a stored episode (an episodic item whose metadata's `kind` is "episode") holds
        `task_type`, `goal`, `status`, `summary` and `failure_reason` as an Episode's (R2)
        and `trajectory` as a list of [index, action, result, failed] steps, numbered from 1
        (R1); `item_to_episode` raises ValueError naming AR4 (and the item's id) for one that
        does not, and `load` leaves it out, unchanged in the store, logging a warning that
        names its id and AR4, and lists it in `skipped`.
    AR5 an episode settled with the notes its summary holds (`folded`, note id -> `note:`
        line, N10) keeps them in its item's metadata (FOLDED_NOTES), and an episode saved
        again (its decay fields, its terms) keeps what its stored item holds there.
"""

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from ..core.episodic import EpisodicMemory
from ..core.records import Episode, Step
from ..core.similarity import JaccardScorer, Scorer
from .audit import AuditEntry
from .item import MemoryItem
from .store import Store

__all__ = ["EPISODE_KIND", "FOLDED_NOTES", "StoredEpisodes", "episode_to_item", "item_to_episode"]

log = logging.getLogger("recuris.storage.archives")

# The `kind` in the metadata of an episodic item that holds an episode (AR4).
EPISODE_KIND = "episode"

# The metadata key of an item whose summary holds folded working notes (a task, the notes
# summary, an episode): each folded note's id -> the `note:` line it became (N10, AR5).
FOLDED_NOTES = "folded_notes"

EPISODE_FIELDS = ("task_type", "goal", "status", "summary", "failure_reason", "trajectory")


def episode_to_item(
    episode: Episode, user_id: str, folded: dict[str, str] | None = None
) -> MemoryItem:
    """Map an episode onto the stored record: its text as content, its structure as metadata.

    `folded` maps the notes its summary holds to their lines (AR5); kept only when given.
    """
    steps = [[step.index, step.action, step.result, step.failed] for step in episode.trajectory]
    metadata = {
        "kind": EPISODE_KIND,
        "task_type": episode.task_type,
        "goal": episode.goal,
        "status": episode.status,
        "failure_reason": episode.failure_reason,
        "summary": episode.summary,
        "trajectory": steps,
    }
    if folded:
        metadata[FOLDED_NOTES] = dict(folded)
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


def _steps(trajectory: object) -> tuple[Step, ...]:
    """Return the steps of a stored trajectory; raise TypeError or ValueError for a bad one."""
    # A JSON object would pass as its keys, and a text as its characters.
    if not isinstance(trajectory, list | tuple):
        raise TypeError(f"trajectory must be a list of steps, got {type(trajectory).__name__}")
    steps = []
    for position, row in enumerate(trajectory, start=1):
        if not isinstance(row, list | tuple) or len(row) != 4:
            raise ValueError(f"step {position} is not [{position}, action, result, failed]")
        index, action, result, failed = row
        if index != position or isinstance(index, bool) or not isinstance(failed, bool):
            raise ValueError(f"step {position} is not [{position}, action, result, failed]")
        steps.append(Step.observed(index, action, result, failed))
    return tuple(steps)


def item_to_episode(item: MemoryItem) -> Episode:
    """Rebuild the episode that `episode_to_item` stored (AR1).

    Raises ValueError naming AR4 (and the item's id) for metadata that is not an episode's.
    """
    meta = item.metadata
    try:
        missing = [key for key in EPISODE_FIELDS if key not in meta]
        if missing:
            raise ValueError(f"it lacks the fields {missing}")
        for field in ("summary", "failure_reason"):
            if not isinstance(meta[field], str):
                raise TypeError(f"{field} must be text, got {type(meta[field]).__name__}")
        return Episode(
            task_type=meta["task_type"],
            goal=meta["goal"],
            status=meta["status"],
            id=item.id,
            trajectory=_steps(meta["trajectory"]),
            summary=meta["summary"],
            failure_reason=meta["failure_reason"],
            created_at=item.created_at,
            importance=item.importance,
            last_access_at=item.last_access_at,
            access_count=item.access_count,
        )
    except (TypeError, ValueError) as error:
        raise ValueError(f"AR4: episodic item {item.id!r} is not an episode: {error}") from None


class StoredEpisodes(EpisodicMemory):
    """One user's episodic memory kept in a Store: loaded on start, written through (AR6).

    `scorer` is the core's: a factory of the similarity (Jaccard by default). A scorer that
    `persist`s its terms (an embedding) has them saved beside each episode and reused on
    load, so that a reload need not pay the embedder again.
    """

    def __init__(
        self, store: Store, user_id: str, scorer: Callable[[], Scorer] = JaccardScorer
    ) -> None:
        super().__init__(scorer)
        self.store = store
        self.user_id = user_id
        # The ids of the stored items that `load` found not to be episodes, left out (AR4).
        self.skipped: tuple[str, ...] = ()
        self._terms: dict[str, Sequence] = {}  # only for a scorer that persists them
        for episode, stored in self.load():
            reused = self.scorer.persist and stored
            self._index(episode, stored if reused else self._analyze(episode))

    def load(self) -> Iterable[tuple[Episode, Sequence | None]]:
        """Yield each of the user's episodes with the terms stored beside it, or None (AR4)."""
        skipped = []
        for item in self.store.list(self.user_id, "episodic"):
            # Reflection's raw turns are episodic items too; only episodes are loaded.
            if item.metadata.get("kind") != EPISODE_KIND:
                continue
            try:
                episode = item_to_episode(item)
            except ValueError as error:
                # One item edited by hand or written by a fork must not take the user's
                # episodic memory down: it is left in the store, unread (AR4).
                log.warning("%s; left out of the user's episodes", error)
                skipped.append(item.id)
                continue
            yield episode, item.metadata.get("embedding")
        self.skipped = tuple(skipped)

    def new_id(self) -> str:
        """Return a new episode id, unique in the store."""
        return self.store.new_id("episode")

    def _index(self, episode: Episode, terms: Sequence) -> None:
        super()._index(episode, terms)
        if self.scorer.persist:
            self._terms[episode.id] = terms

    def add_episode(self, episode: Episode) -> Episode:
        """Store an episode in the store and in memory, under a new store id if it has none.

        Raises TypeError for a non-Episode, ValueError for an id already held (E5) or owned
        by another user (AR3); nothing is stored then.
        """
        self._check_new(episode)
        terms = self._analyze(episode)
        episode_id = episode.id or self.new_id()
        # The store may refuse (another user owns the id): nothing changes then.
        self.save_with(replace(episode, id=episode_id), terms if self.scorer.persist else None)
        episode.id = episode_id
        self._index(episode, terms)
        return episode

    def save(self, episode: Episode) -> None:
        """Write a held episode back to the store after an access (its decay fields).

        Raises ValueError for an episode this memory does not hold, or owned by another user.
        """
        super().save(episode)
        self.save_with(episode, self._terms.get(episode.id))

    def remove(self, episode_ids: Iterable[str]) -> list[Episode]:
        """Delete the episodes with these ids from the store and from memory; return them.

        Unknown ids are ignored.
        """
        wanted = [key for key in dict.fromkeys(episode_ids) if self.get(key) is not None]
        self.store.delete(self.user_id, wanted)
        for key in wanted:
            self._terms.pop(key, None)
        return super().remove(wanted)

    def save_with(
        self,
        episode: Episode,
        terms: Sequence | None = None,
        audit: Iterable[AuditEntry] = (),
        delete: Iterable[MemoryItem] = (),
        folded: dict[str, str] | None = None,
    ) -> None:
        """Keep the episode with the audit records and the deletions given, in one `put` (AR2).

        `folded` maps the notes its summary holds to their lines; when None, those its stored
        item holds are kept (AR5). Raises ValueError if another user owns the id (AR3);
        nothing is written then.
        """
        # Only a summary holding a `note:` line can have notes mapped: other episodes need no
        # read, and a store that cannot be read does not stop their save.
        if folded is None and "note: " in episode.summary:
            stored = self.store.get(self.user_id, episode.id)
            folded = stored.metadata.get(FOLDED_NOTES) if stored is not None else None
        item = episode_to_item(episode, self.user_id, folded)
        if terms is not None:
            item.metadata["embedding"] = list(terms)
        self.store.put([item], audit, delete)

    def settle(
        self,
        episode: Episode,
        audit: Iterable[AuditEntry] = (),
        delete: Iterable[MemoryItem] = (),
        folded: dict[str, str] | None = None,
    ) -> Episode:
        """Save a new episode with its audit records and deletions in one `put`; index it.

        `folded` maps the notes its summary holds to their lines (AR5). The episode must
        carry its id. Raises TypeError for a non-Episode and ValueError for an id missing or
        already held (E5), or owned by another user (AR3); nothing is written then.
        """
        if not isinstance(episode, Episode):
            raise TypeError(f"an episode must be an Episode, got {type(episode).__name__}")
        if not episode.id or self.get(episode.id) is not None:
            raise ValueError(f"E5: episode id {episode.id!r} is missing or already stored")
        self.save_with(episode, None, audit, delete, folded or {})
        terms = self._analyze(episode)
        if self.scorer.persist:
            # Saved again with its terms, which the one transaction above did not compute.
            self.save_with(episode, terms)
        self._index(episode, terms)
        return episode

    def __repr__(self) -> str:
        scorer = type(self.scorer).__name__
        return (
            f"StoredEpisodes(user={self.user_id!r}, store={type(self.store).__name__}, "
            f"episodes={len(self)}, scorer={scorer})"
        )
