"""Episodic memory: finished tasks, kept whole, brought back when a new task resembles them.

Document 000 §2.1 and §3.2: each episode keeps task type, goal, trajectory, status and
failure reason; retrieval returns at most `top_k` (2-5) episodes whose similarity passes
a `threshold`, and pads with nothing below it. The prototype compared the query with the
task type alone and scanned every episode; here the key is task type *and* goal, and an
inverted index (token -> episodes) means a query touches only episodes sharing a token.

Invariants:
    E1  `retrieve` returns at most `top_k` hits.
    E2  every hit's score is >= `threshold` and > 0 (a hit shares at least one token).
    E3  hits are sorted by score, best first; ties go to the newer episode (later
        `created_at`, then later insertion), so the order is deterministic.
    E4  the indexed `retrieve` returns exactly what the linear `retrieve_by_scan` does.
    E5  every stored episode has a unique id; an empty id is assigned on insertion.
    E6  episodes persist through the store: a new memory on the same store and user
        holds the same episodes, and retrieves the same hits.
"""

import heapq
from collections.abc import Iterable
from dataclasses import replace

from ..storage.item import MemoryItem
from .records import AuditRecord, Episode, Hit, Step
from ..retrieval.scoring import InvertedIndex, JaccardScorer
from ..storage.memory_store import InMemoryStore
from ..storage.store import Store
from .text import require_text

__all__ = ["EpisodicMemory"]


def _check_query(top_k: int, threshold: float) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"E1: top_k must be an int >= 1, got {top_k!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError(f"E2: threshold must be a number, got {type(threshold).__name__}")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"E2: threshold must lie in [0, 1], got {threshold!r}")


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
    """Rebuild the episode that `episode_to_item` stored."""
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


class EpisodicMemory:
    """One user's finished episodes, persisted in a Store, ranked through a scorer's inverted index.

    The scorer (Jaccard by default, or BM25) indexes each episode's type and goal; a
    query scores only the episodes that share a term with it (E4, SR1).
    """

    def __init__(
        self, scorer: InvertedIndex | None = None, store: Store | None = None, user_id: str = "default"
    ) -> None:
        self.scorer = scorer if scorer is not None else JaccardScorer()
        self.store = store if store is not None else InMemoryStore()
        self.user_id = require_text("user_id", user_id)
        self._episodes: dict[str, Episode] = {}  # insertion-ordered
        self._newest_first: dict[str, tuple] = {}  # E3's tie-break, precomputed per episode
        self._inserted = 0
        for item in self.store.list(self.user_id, "episodic"):
            if item.metadata.get("kind") == "episode":
                # A scorer that persists its terms (embedding vectors) reuses the stored ones:
                # a reload must not call the embedder again for every episode (SR4).
                episode, stored = item_to_episode(item), item.metadata.get("embedding")
                self._index_episode(episode, stored if self._persists and stored else self._terms(episode))

    def add_episode(
        self, episode: Episode, audit: Iterable[AuditRecord] = (), delete: Iterable[MemoryItem] = ()
    ) -> Episode:
        """Store an episode, assigning an id (`episode-N`) if it has none, and return it.

        The audit records and deletions given commit in the same transaction (S5).
        Raises TypeError for a non-Episode and ValueError for an id already stored (E5);
        nothing is stored then.
        """
        if not isinstance(episode, Episode):
            raise TypeError(f"add_episode needs an Episode, got {type(episode).__name__}")
        if episode.id in self._episodes:
            raise ValueError(f"E5: an episode with id {episode.id!r} is already stored")
        terms = self._terms(episode)
        item = self._item(replace(episode, id=episode.id or self.store.new_id("episode")), terms)
        self.store.put([item], audit, delete)  # raises ValueError if another user owns the id
        episode.id = item.id
        self._index_episode(episode, terms)
        return episode

    @property
    def _persists(self) -> bool:
        return getattr(self.scorer, "persist", False)

    def _item(self, episode: Episode, terms) -> MemoryItem:
        item = episode_to_item(episode, self.user_id)
        if self._persists:
            item.metadata["embedding"] = list(terms)
        return item

    def _index_episode(self, episode: Episode, terms) -> None:
        self._inserted += 1
        self._episodes[episode.id] = episode
        self._newest_first[episode.id] = (-episode.created_at, -self._inserted, episode.id)
        self.scorer.add(episode.id, terms)

    def _terms(self, episode: Episode):
        return self.scorer.analyzer(f"{episode.task_type} {episode.goal}")

    def save(self, episode: Episode) -> None:
        """Write back a stored episode's decay fields after it was accessed."""
        if self._episodes.get(episode.id) is not episode:
            raise ValueError(f"episode {episode.id!r} is not stored in this memory")
        self.store.put([self._item(episode, getattr(self.scorer, "vectors", {}).get(episode.id, ()))])

    def remove(self, episode_ids: Iterable[str]) -> list[Episode]:
        """Remove the episodes with these ids (unknown ids are ignored); return those removed."""
        removed = [self._episodes[i] for i in dict.fromkeys(episode_ids) if i in self._episodes]
        self.store.delete(self.user_id, [episode.id for episode in removed])
        for episode in removed:
            del self._episodes[episode.id], self._newest_first[episode.id]
            self.scorer.remove(episode.id)
        return removed

    def get(self, episode_id: str) -> Episode | None:
        return self._episodes.get(episode_id)

    @property
    def episodes(self) -> tuple[Episode, ...]:
        """Every stored episode, oldest insertion first."""
        return tuple(self._episodes.values())

    def __len__(self) -> int:
        return len(self._episodes)

    # -- retrieval -------------------------------------------------------------------
    def retrieve(self, query: str, top_k: int = 2, threshold: float = 0.25) -> list[Hit]:
        """Return up to `top_k` episodes similar to the query, best first (E1-E4).

        Raises ValueError for top_k < 1 or a threshold outside [0, 1]. An empty query,
        or one with no tokens, returns no hits.
        """
        _check_query(top_k, threshold)
        terms = self.scorer.analyzer(query)
        # Only episodes sharing a term can score above zero (E2, SR1), so the postings of
        # the query's terms are the whole candidate set.
        return self._rank(self.scorer.score_candidates(terms), top_k, threshold)

    def retrieve_by_scan(self, query: str, top_k: int = 2, threshold: float = 0.25) -> list[Hit]:
        """Return what `retrieve` returns, by scoring every episode (the reference for E4)."""
        _check_query(top_k, threshold)
        return self._rank(
            self.scorer.score_many(self.scorer.analyzer(query), self._episodes), top_k, threshold
        )

    def _rank(self, scored: list[tuple[str, float]], top_k: int, threshold: float) -> list[Hit]:
        # Rank plain tuples (best score, then newest: E3) and build Hits for the top k only.
        newest_first = self._newest_first
        keyed = [
            (-score, *newest_first[episode_id])
            for episode_id, score in scored
            if score > 0.0 and score >= threshold
        ]
        best = heapq.nsmallest(top_k, keyed)
        return [Hit(-negated, self._episodes[episode_id]) for negated, _, _, episode_id in best]

    def __repr__(self) -> str:
        return f"EpisodicMemory(episodes={len(self._episodes)}, terms_indexed={len(self.scorer.postings)})"
