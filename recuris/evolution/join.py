"""Similarity join: every pair of token sets whose Jaccard similarity reaches a threshold, exactly.

Document 004 §2 merges similar memories in a periodic cycle; at a million memories the cycle
cannot compare every pair. This is the prefix-filtered all-pairs join (Bayardo et al.'s
all-pairs, with PPJoin's positional filter, Xiao et al. 2008), over integer token ids: sets
are processed shortest first; each indexes only a short prefix of its rarest tokens; a pair
is counted only if the lengths allow the threshold (length filter) and the tokens still to
come could reach it (positional filter); survivors are verified with the exact formula that
`core/similarity.py` writes once, so the filters only ever skip pairs that cannot qualify.

Invariants:
    J1  `similar_pairs` returns exactly the pairs whose `jaccard` (core/similarity.py) reaches the
        threshold (the same float comparison), each once, as (smaller index, larger index).
    J2  with `fresh` given, it returns exactly those pairs with at least one fresh set: pairs
        of two sets known before are the caller's to vouch for.
"""

import math
from collections.abc import Sequence

from ..core.similarity import jaccard_from_sizes

__all__ = ["rank_tokens", "similar_pairs"]

# Bounds are rounded down by this much so that float rounding never prunes a qualifying pair.
SLACK = 1e-9


def rank_tokens(records: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """Renumber token ids rarest first and return each record as a sorted tuple of distinct ids."""
    frequency: dict[int, int] = {}
    for record in records:
        for token in set(record):
            frequency[token] = frequency.get(token, 0) + 1
    # Rare tokens first make the prefixes selective; ties by id keep the order deterministic.
    rank = {token: n for n, token in enumerate(sorted(frequency, key=lambda t: (frequency[t], t)))}
    return [tuple(sorted({rank[token] for token in record})) for record in records]


def similar_pairs(
    records: Sequence[tuple[int, ...]], threshold: float, fresh: Sequence[bool] | None = None
) -> list[tuple[int, int]]:
    """Return every pair of records with Jaccard >= threshold (J1), or only new pairs (J2).

    Each record is a sorted tuple of distinct token ids, in one global order (`rank_tokens`).
    Raises ValueError unless 0 < threshold <= 1.
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"J1: threshold must lie in (0, 1], got {threshold!r}")
    ratio = threshold / (1 + threshold)  # |x ∩ y| >= ratio·(|x| + |y|) iff Jaccard >= threshold
    every: dict[int, list[tuple[int, int]]] = {}
    new_only = every if fresh is None else {}
    pairs = []
    for x in sorted(
        (n for n, record in enumerate(records) if record), key=lambda n: len(records[n])
    ):
        tokens = records[x]
        size = len(records[x])
        is_fresh = fresh is None or fresh[x]
        # A set known before is compared only with fresh ones (J2).
        index = every if is_fresh else new_only
        shortest = threshold * size - SLACK
        counts = {}
        for i in range(size - math.ceil(threshold * size - SLACK) + 1):
            for y, j in index.get(tokens[i], ()):
                other = len(records[y])
                seen = counts.get(y, 0)
                if other < shortest or seen < 0:
                    continue
                # Positional filter: what is shared so far, plus every token still to come.
                reachable = seen + 1 + min(size - i - 1, other - j - 1)
                counts[y] = (
                    seen + 1 if reachable >= math.ceil(ratio * (size + other) - SLACK) else -1
                )
        # Sets come shortest first, so a later partner is
        # at least as long: a shorter prefix suffices.
        for i in range(size - math.ceil(2 * ratio * size - SLACK) + 1):
            every.setdefault(tokens[i], []).append((x, i))
            if fresh is not None and is_fresh:
                new_only.setdefault(tokens[i], []).append((x, i))
        if counts:
            mine = set(tokens)
            for y, seen in counts.items():
                if seen > 0:
                    shared = len(mine.intersection(records[y]))
                    if jaccard_from_sizes(shared, size, len(records[y])) >= threshold:
                        pairs.append((min(x, y), max(x, y)))
    return pairs
