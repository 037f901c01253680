"""Evaluation: the measures by which a memory system is judged, as small pure functions.

Document 003 §6.1 names them: task success; recall of known memories (Recall@K and MRR on
a labelled set); pollution (stale or contradicted memory used); token cost. They are
defined here once, checked against hand-computed cases, and used by the A/B harness
(long_horizon.py) and the benchmarks (bench.py).

Invariants:
    EV1 recall_at_k and reciprocal_rank lie in [0, 1]; recall_at_k never decreases with k.
    EV2 pollution_rate is the share of recalled items that are stale, superseded or
        contradicted, in [0, 1], and 0 for nothing recalled.
"""

from collections.abc import Collection, Iterable, Sequence
from statistics import fmean

from ..core.text import estimate_tokens
from ..core.validation import require_count

__all__ = [
    "recall_at_k",
    "reciprocal_rank",
    "mean_reciprocal_rank",
    "pollution_rate",
    "prompt_tokens",
]


def _check(relevant: Collection[str]) -> set[str]:
    if not relevant:
        raise ValueError("EV1: a question needs at least one relevant item")
    return set(relevant)


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Return the share of the relevant items found among the first k ranked (EV1).

    Raises ValueError for k < 1 or no relevant item.
    """
    require_count("EV1: k", k, 1)
    wanted = _check(relevant)
    return len(wanted & set(ranked[:k])) / len(wanted)


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """Return 1 / the rank of the first relevant item, or 0 if none is ranked (EV1)."""
    wanted = _check(relevant)
    return next((1.0 / rank for rank, item in enumerate(ranked, 1) if item in wanted), 0.0)


def mean_reciprocal_rank(rankings: Iterable[tuple[Sequence[str], Collection[str]]]) -> float:
    """Return the mean reciprocal rank over (ranked, relevant) pairs; 0 for none."""
    ranks = [reciprocal_rank(ranked, relevant) for ranked, relevant in rankings]
    return fmean(ranks) if ranks else 0.0


def pollution_rate(recalled: Collection[str], polluted: Collection[str]) -> float:
    """Return the share of recalled items that are stale, superseded or contradicted (EV2)."""
    if not recalled:
        return 0.0
    bad = set(polluted)
    return sum(item in bad for item in recalled) / len(recalled)


def prompt_tokens(prompts: Iterable[str]) -> list[int]:
    """Return the estimated tokens of each prompt of a run, in order."""
    return [estimate_tokens(prompt) for prompt in prompts]
