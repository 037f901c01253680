"""Episodic memory: finished tasks, kept whole, brought back when a new task resembles them.

Document 000 §2.1 and §3.2: each episode keeps task type, goal, trajectory, status and
failure reason; retrieval returns at most `top_k` (2-5) episodes above a `threshold`. The
prototype compared the task type alone and scanned every episode; here the key is type
*and* goal, a scorer's index touches only episodes sharing a term, and an optional
`EpisodeArchive` keeps the episodes beyond this object.

Invariants:
    E1  `retrieve` returns at most `top_k` hits.
    E2  every hit's score is >= `threshold` and > 0 (a hit shares at least one term).
    E3  hits are sorted by score, best first; ties go to the newer episode (later
        `created_at`, then later insertion), so the order is deterministic.
    E4  the indexed `retrieve` returns exactly what `retrieve_by_scan`, which scores every
        episode, returns.
    E5  every stored episode has a unique id; an empty id is assigned on insertion.
    E6  with an archive, a new memory on the same archive holds the same episodes and
        retrieves the same hits.
"""

import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from .records import Episode, Hit
from .similarity import JaccardScorer, Scorer
from .validation import require_count, require_number

__all__ = ["EpisodicMemory", "EpisodeArchive", "RetrievalSettings"]


@dataclass(frozen=True)
class RetrievalSettings:
    """How many similar episodes come back, and how similar they must be (E1, E2)."""

    top_k: int = 2  # the most episodes returned; document 000 §3.2 advises 2 to 5 (E1)
    threshold: float = 0.25  # the least similarity a hit needs, in [0, 1] (E2)

    def __post_init__(self) -> None:
        require_count("E1: top_k", self.top_k, minimum=1)
        require_number("E2: threshold", self.threshold, minimum=0.0, maximum=1.0)


class EpisodeArchive(Protocol):
    """Where episodes outlive the memory that holds them (E6): the manager's store, say.

    `load()` yields each saved episode with the terms saved beside it (None if none were):
    the terms are the scorer's analysis, kept only for a scorer that `persist`s them (an
    embedding), so that a reload need not compute them again. `save` keeps an episode (a new
    one, or one whose decay fields changed), replacing any under its id.
    """

    def load(self) -> Iterable[tuple[Episode, Sequence | None]]: ...
    def new_id(self) -> str: ...
    def save(self, episode: Episode, terms: Sequence | None) -> None: ...
    def delete(self, episode_ids: list[str]) -> None: ...


class EpisodicMemory:
    """Finished episodes, ranked through a scorer's inverted index, kept in an optional archive.

    `scorer` makes the similarity (a zero-argument factory, such as a `Scorer` class; Jaccard
    by default); it indexes each episode's type and goal, and a query scores only the
    episodes that share a term with it (E4).
    """

    def __init__(
        self,
        scorer: Callable[[], Scorer] = JaccardScorer,
        archive: EpisodeArchive | None = None,
    ) -> None:
        self.scorer = scorer()
        self.archive = archive
        self._episodes: dict[str, Episode] = {}  # insertion-ordered
        self._newest_first: dict[str, tuple] = {}  # E3's tie-break, precomputed per episode
        self._terms: dict[str, Sequence] = {}
        self._inserted = 0
        self._next_number = 1
        for episode, stored in archive.load() if archive is not None else ():
            # Stored terms (embedding vectors) are reused: a reload must not pay the embedder
            # again.
            reused = self.scorer.persist and stored
            self._index(episode, stored if reused else self._analyze(episode))

    def add_episode(self, episode: Episode) -> Episode:
        """Store an episode, assigning an id (`episode-N`) if it has none, and return it.

        Raises TypeError for a non-Episode and ValueError for an id already stored (E5);
        nothing is stored then, nor if the archive refuses the episode.
        """
        self._check_new(episode)
        terms = self._analyze(episode)
        episode_id = episode.id or self._new_id()
        if self.archive is not None:
            # The archive may refuse (another user owns the id): nothing changes then.
            self.archive.save(replace(episode, id=episode_id), self._kept(terms))
        episode.id = episode_id
        self._index(episode, terms)
        return episode

    def take_in(self, episode: Episode) -> Episode:
        """Index an episode that its archive already holds, saved there by the layer above.

        The layer above saves an episode itself when the write must share a transaction with
        records of its own; this memory then only indexes it (and, for a scorer that
        persists its terms, saves them beside it). Raises TypeError for a non-Episode and
        ValueError for an empty id or one already stored (E5).
        """
        self._check_new(episode)
        if not episode.id:
            raise ValueError("E5: an episode taken in must already have its id")
        terms = self._analyze(episode)
        if self.archive is not None and self.scorer.persist:
            self.archive.save(episode, terms)
        self._index(episode, terms)
        return episode

    def _check_new(self, episode: Episode) -> None:
        if not isinstance(episode, Episode):
            raise TypeError(f"an episode must be an Episode, got {type(episode).__name__}")
        if episode.id in self._episodes:
            raise ValueError(f"E5: an episode with id {episode.id!r} is already stored")

    def _new_id(self) -> str:
        if self.archive is not None:
            return self.archive.new_id()
        # Skip the ids a caller chose (E5).
        while f"episode-{self._next_number}" in self._episodes:
            self._next_number += 1
        self._next_number += 1
        return f"episode-{self._next_number - 1}"

    def _kept(self, terms: Sequence) -> Sequence | None:
        return terms if self.scorer.persist else None

    def _index(self, episode: Episode, terms: Sequence) -> None:
        self._inserted += 1
        self._episodes[episode.id] = episode
        self._terms[episode.id] = terms
        self._newest_first[episode.id] = (-episode.created_at, -self._inserted, episode.id)
        self.scorer.add(episode.id, terms)

    def _analyze(self, episode: Episode) -> Sequence:
        return self.scorer.analyzer(f"{episode.task_type} {episode.goal}")

    def save(self, episode: Episode) -> None:
        """Write back a stored episode's decay fields after it was accessed.

        Raises ValueError for an episode this memory does not hold.
        """
        if self._episodes.get(episode.id) is not episode:
            raise ValueError(f"episode {episode.id!r} is not stored in this memory")
        if self.archive is not None:
            self.archive.save(episode, self._kept(self._terms[episode.id]))

    def remove(self, episode_ids: Iterable[str]) -> list[Episode]:
        """Remove the episodes with these ids (unknown ids are ignored); return those removed."""
        wanted = dict.fromkeys(episode_ids)
        removed = [self._episodes[key] for key in wanted if key in self._episodes]
        if self.archive is not None:
            self.archive.delete([episode.id for episode in removed])
        for episode in removed:
            del self._episodes[episode.id]
            del self._newest_first[episode.id]
            del self._terms[episode.id]
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
        archive = "" if self.archive is None else f", archive={self.archive!r}"
        scorer = type(self.scorer).__name__
        return f"EpisodicMemory(episodes={len(self._episodes)}, scorer={scorer}{archive})"
