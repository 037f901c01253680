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
"""

import heapq
from collections.abc import Callable, Iterable

from .records import Episode, Hit
from .text import jaccard, tokenize

__all__ = ["EpisodicMemory"]


def _check_query(top_k: int, threshold: float) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"E1: top_k must be an int >= 1, got {top_k!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError(f"E2: threshold must be a number, got {type(threshold).__name__}")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"E2: threshold must lie in [0, 1], got {threshold!r}")


def episode_key(episode: Episode) -> frozenset[str]:
    """Return the tokens an episode is retrieved by: its task type and its goal."""
    return frozenset(tokenize(f"{episode.task_type} {episode.goal}"))


class EpisodicMemory:
    """Finished episodes in insertion order, with an inverted index over their keys.

    `scorer(query_tokens, episode_tokens)` must be 0 for token sets that share nothing,
    which is what lets the index skip those episodes (E4).
    """

    def __init__(self, scorer: Callable[[Iterable[str], Iterable[str]], float] = jaccard) -> None:
        self.scorer = scorer
        self._episodes: dict[str, Episode] = {}  # insertion-ordered
        self._keys: dict[str, frozenset[str]] = {}
        self._order: dict[str, int] = {}
        self._index: dict[str, set[str]] = {}
        self._inserted = 0

    def add_episode(self, episode: Episode) -> Episode:
        """Store an episode, assigning `episode-N` if its id is empty, and return it.

        Raises TypeError for a non-Episode and ValueError for an id already stored (E5).
        """
        if not isinstance(episode, Episode):
            raise TypeError(f"add_episode needs an Episode, got {type(episode).__name__}")
        if episode.id in self._episodes:
            raise ValueError(f"E5: an episode with id {episode.id!r} is already stored")
        self._inserted += 1
        if not episode.id:
            # A caller may have chosen an id of this form already: skip past it.
            while f"episode-{self._inserted}" in self._episodes:
                self._inserted += 1
            episode.id = f"episode-{self._inserted}"
        key = episode_key(episode)
        self._episodes[episode.id] = episode
        self._keys[episode.id] = key
        self._order[episode.id] = self._inserted
        for token in key:
            self._index.setdefault(token, set()).add(episode.id)
        return episode

    def remove(self, episode_ids: Iterable[str]) -> list[Episode]:
        """Remove the episodes with these ids (unknown ids are ignored); return those removed."""
        removed = []
        for episode_id in episode_ids:
            episode = self._episodes.pop(episode_id, None)
            if episode is None:
                continue
            for token in self._keys.pop(episode_id):
                postings = self._index[token]
                postings.discard(episode_id)
                if not postings:
                    del self._index[token]
            del self._order[episode_id]
            removed.append(episode)
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
        tokens = frozenset(tokenize(query))
        # Only episodes sharing a token can score above zero (E2), so the postings of
        # the query's tokens are the whole candidate set.
        candidates = set().union(*(self._index.get(token, ()) for token in tokens))
        return self._rank(tokens, candidates, top_k, threshold)

    def retrieve_by_scan(self, query: str, top_k: int = 2, threshold: float = 0.25) -> list[Hit]:
        """Return what `retrieve` returns, by scoring every episode (the reference for E4)."""
        _check_query(top_k, threshold)
        return self._rank(frozenset(tokenize(query)), self._episodes, top_k, threshold)

    def _rank(self, tokens: frozenset[str], ids: Iterable[str], top_k: int, threshold: float) -> list[Hit]:
        scored = []
        for episode_id in ids:
            score = self.scorer(tokens, self._keys[episode_id])
            if score > 0.0 and score >= threshold:
                episode = self._episodes[episode_id]
                newest_first = (-episode.created_at, -self._order[episode_id])
                scored.append(((-score, *newest_first), Hit(score, episode)))
        best = heapq.nsmallest(top_k, scored, key=lambda pair: pair[0])
        return [hit for _, hit in best]

    def __repr__(self) -> str:
        return f"EpisodicMemory(episodes={len(self._episodes)}, tokens_indexed={len(self._index)})"
