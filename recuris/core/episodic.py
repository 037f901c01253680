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
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Protocol

from .records import Episode, Hit
from .similarity import JaccardScorer, Scorer
from .validation import require_count

__all__ = ["EpisodicMemory", "EpisodeArchive", "check_query"]


class EpisodeArchive(Protocol):
    """Where episodes outlive the memory that holds them (E6): the manager's store, say.

    `load()` yields each episode with the terms stored beside it, or None; `write` keeps an
    episode and its terms, with the audit records and deletions, in one transaction.
    """

    def load(self) -> Iterable[tuple[Episode, Sequence | None]]: ...
    def new_id(self) -> str: ...
    def write(
        self, episode: Episode, terms: Sequence | None, audit: Iterable, delete: Iterable
    ) -> None: ...
    def delete(self, episode_ids: list[str]) -> None: ...


def check_query(top_k: int, threshold: float) -> None:
    """Raise ValueError or TypeError unless top_k is an int >= 1 and threshold a number in [0, 1]."""
    require_count("E1: top_k", top_k, minimum=1)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError(f"E2: threshold must be a number, got {type(threshold).__name__}")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"E2: threshold must lie in [0, 1], got {threshold!r}")


class EpisodicMemory:
    """Finished episodes, ranked through a scorer's inverted index, kept in an optional archive.

    The scorer (Jaccard by default; any `Scorer`) indexes each episode's type and goal; a
    query scores only the episodes that share a term with it (E4).
    """

    def __init__(self, scorer: Scorer | None = None, archive: EpisodeArchive | None = None) -> None:
        self.scorer = scorer if scorer is not None else JaccardScorer()
        self.archive = archive
        self._episodes: dict[str, Episode] = {}  # insertion-ordered
        self._newest_first: dict[str, tuple] = {}  # E3's tie-break, precomputed per episode
        self._terms: dict[str, Sequence] = {}
        self._inserted, self._next_number = 0, 1
        for episode, stored in archive.load() if archive is not None else ():
            # Stored terms (embedding vectors) are reused: a reload must not pay the embedder again.
            self._index(
                episode, stored if self.scorer.persist and stored else self._analyze(episode)
            )

    def add_episode(self, episode: Episode, audit: Iterable = (), delete: Iterable = ()) -> Episode:
        """Store an episode, assigning an id (`episode-N`) if it has none, and return it.

        The archive writes the audit records and deletions given in the same transaction.
        Raises TypeError for a non-Episode and ValueError for an id already stored (E5);
        nothing is stored then.
        """
        if not isinstance(episode, Episode):
            raise TypeError(f"add_episode needs an Episode, got {type(episode).__name__}")
        if episode.id in self._episodes:
            raise ValueError(f"E5: an episode with id {episode.id!r} is already stored")
        terms = self._analyze(episode)
        episode_id = episode.id or self._new_id()
        if (
            self.archive is not None
        ):  # the archive may refuse (another user owns the id): nothing changes
            self.archive.write(replace(episode, id=episode_id), self._kept(terms), audit, delete)
        episode.id = episode_id
        self._index(episode, terms)
        return episode

    def _new_id(self) -> str:
        if self.archive is not None:
            return self.archive.new_id()
        while f"episode-{self._next_number}" in self._episodes:  # skip ids a caller chose (E5)
            self._next_number += 1
        self._next_number += 1
        return f"episode-{self._next_number - 1}"

    def _kept(self, terms: Sequence) -> Sequence | None:
        return terms if self.scorer.persist else None

    def _index(self, episode: Episode, terms: Sequence) -> None:
        self._inserted += 1
        self._episodes[episode.id], self._terms[episode.id] = episode, terms
        self._newest_first[episode.id] = (-episode.created_at, -self._inserted, episode.id)
        self.scorer.add(episode.id, terms)

    def _analyze(self, episode: Episode) -> Sequence:
        return self.scorer.analyzer(f"{episode.task_type} {episode.goal}")

    def save(self, episode: Episode) -> None:
        """Write back a stored episode's decay fields after it was accessed."""
        if self._episodes.get(episode.id) is not episode:
            raise ValueError(f"episode {episode.id!r} is not stored in this memory")
        if self.archive is not None:
            self.archive.write(episode, self._kept(self._terms[episode.id]), (), ())

    def remove(self, episode_ids: Iterable[str]) -> list[Episode]:
        """Remove the episodes with these ids (unknown ids are ignored); return those removed."""
        removed = [self._episodes[i] for i in dict.fromkeys(episode_ids) if i in self._episodes]
        if self.archive is not None:
            self.archive.delete([episode.id for episode in removed])
        for episode in removed:
            del self._episodes[episode.id], self._newest_first[episode.id], self._terms[episode.id]
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
        check_query(top_k, threshold)
        terms = self.scorer.analyzer(query)
        # Only episodes sharing a term can score above zero (E2), so the postings of
        # the query's terms are the whole candidate set.
        return self._rank(self.scorer.score_candidates(terms), top_k, threshold)

    def retrieve_by_scan(self, query: str, top_k: int = 2, threshold: float = 0.25) -> list[Hit]:
        """Return what `retrieve` returns, by scoring every episode (the reference for E4)."""
        check_query(top_k, threshold)
        terms = self.scorer.analyzer(query)
        return self._rank(
            [(key, self.scorer.score(terms, key)) for key in self._episodes], top_k, threshold
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
        archive = "" if self.archive is None else f", archive={self.archive!r}"
        return f"EpisodicMemory(episodes={len(self._episodes)}, scorer={type(self.scorer).__name__}{archive})"
