"""Episodic memory: finished tasks, kept whole, brought back when a new task resembles them.

Document 000 §2.1 and §3.2: each episode keeps task type, goal, trajectory, status and
failure reason; retrieval returns at most `top_k` (2-5) episodes above a `threshold`. The
prototype compared the task type alone and scanned every episode; here the key is type
*and* goal, and a scorer's index touches only episodes sharing a term. The memory is held
in this object alone, as in document 000's loop.

Invariants:
    E1  `retrieve` returns at most `top_k` hits.
    E2  every hit's score is >= `threshold` and > 0 (a hit shares at least one term).
    E3  hits are sorted by score, best first; ties go to the newer episode (later
        `created_at`, then later insertion), so the order is deterministic.
    E4  the indexed `retrieve` returns exactly what `retrieve_by_scan`, which scores every
        episode, returns.
    E5  every stored episode has a unique id; an empty id is assigned on insertion.
"""

import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from .records import Episode, Hit
from .similarity import JaccardScorer, Scorer
from .validation import require_count, require_number

__all__ = ["EpisodicMemory", "RetrievalSettings"]


@dataclass(frozen=True)
class RetrievalSettings:
    """How many similar episodes come back, and how similar they must be (E1, E2)."""

    top_k: int = 2  # the most episodes returned; document 000 §3.2 advises 2 to 5 (E1)
    threshold: float = 0.25  # the least similarity a hit needs, in [0, 1] (E2)

    def __post_init__(self) -> None:
        require_count("E1: top_k", self.top_k, minimum=1)
        require_number("E2: threshold", self.threshold, minimum=0.0, maximum=1.0)


class EpisodicMemory:
    """Finished episodes, ranked through a scorer's inverted index.

    `scorer` makes the similarity (a zero-argument factory, such as a `Scorer` class; Jaccard
    by default); it indexes each episode's type and goal, and a query scores only the
    episodes that share a term with it (E4).
    """

    def __init__(self, scorer: Callable[[], Scorer] = JaccardScorer) -> None:
        self.scorer = scorer()
        self._episodes: dict[str, Episode] = {}  # insertion-ordered
        self._newest_first: dict[str, tuple] = {}  # E3's tie-break, precomputed per episode
        self._inserted = 0
        self._next_number = 1

    def add_episode(self, episode: Episode) -> Episode:
        """Store an episode, assigning an id (`episode-N`) if it has none, and return it.

        Raises TypeError for a non-Episode and ValueError for an id already stored (E5);
        nothing is stored then.
        """
        self._check_new(episode)
        terms = self._analyze(episode)
        episode.id = episode.id or self._new_id()
        self._index(episode, terms)
        return episode

    def _check_new(self, episode: Episode) -> None:
        if not isinstance(episode, Episode):
            raise TypeError(f"an episode must be an Episode, got {type(episode).__name__}")
        if episode.id in self._episodes:
            raise ValueError(f"E5: an episode with id {episode.id!r} is already stored")

    def _new_id(self) -> str:
        # Skip the ids a caller chose (E5).
        while f"episode-{self._next_number}" in self._episodes:
            self._next_number += 1
        self._next_number += 1
        return f"episode-{self._next_number - 1}"

    def _index(self, episode: Episode, terms: Sequence) -> None:
        self._inserted += 1
        self._episodes[episode.id] = episode
        self._newest_first[episode.id] = (-episode.created_at, -self._inserted, episode.id)
        self.scorer.add(episode.id, terms)

    def _analyze(self, episode: Episode) -> Sequence:
        return self.scorer.analyzer(f"{episode.task_type} {episode.goal}")

    def save(self, episode: Episode) -> None:
        """Keep a stored episode's decay fields after it was accessed: here, where it is held.

        A memory kept beyond this object writes them there too. Raises ValueError for an
        episode this memory does not hold.
        """
        if self._episodes.get(episode.id) is not episode:
            raise ValueError(f"episode {episode.id!r} is not stored in this memory")

    def remove(self, episode_ids: Iterable[str]) -> list[Episode]:
        """Remove the episodes with these ids (unknown ids are ignored); return those removed."""
        wanted = dict.fromkeys(episode_ids)
        removed = [self._episodes[key] for key in wanted if key in self._episodes]
        for episode in removed:
            del self._episodes[episode.id]
            del self._newest_first[episode.id]
            self.scorer.remove(episode.id)
        return removed

    def get(self, episode_id: str) -> Episode | None:
        """Return the stored episode with this id, or None."""
        return self._episodes.get(episode_id)

    @property
    def episodes(self) -> tuple[Episode, ...]:
        """Every stored episode, oldest insertion first."""
        return tuple(self._episodes.values())

    def __len__(self) -> int:
        return len(self._episodes)

    # -- retrieval -------------------------------------------------------------------
    def retrieve(
        self,
        query: str,
        top_k: int = RetrievalSettings.top_k,
        threshold: float = RetrievalSettings.threshold,
    ) -> list[Hit]:
        """Return up to `top_k` episodes similar to the query, best first (E1-E4).

        Raises ValueError for top_k < 1 or a threshold outside [0, 1] (`RetrievalSettings`).
        An empty query, or one with no tokens, returns no hits.
        """
        RetrievalSettings(top_k, threshold)
        terms = self.scorer.analyzer(query)
        # Only episodes sharing a term can score above zero (E2), so the postings of
        # the query's terms are the whole candidate set.
        return self._rank(self.scorer.score_candidates(terms), top_k, threshold)

    def retrieve_by_scan(
        self,
        query: str,
        top_k: int = RetrievalSettings.top_k,
        threshold: float = RetrievalSettings.threshold,
    ) -> list[Hit]:
        """Return what `retrieve` returns, by scoring every episode (the reference for E4)."""
        RetrievalSettings(top_k, threshold)
        terms = self.scorer.analyzer(query)
        scored = [(key, self.scorer.score(terms, key)) for key in self._episodes]
        return self._rank(scored, top_k, threshold)

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
        scorer = type(self.scorer).__name__
        return f"{type(self).__name__}(episodes={len(self._episodes)}, scorer={scorer})"
