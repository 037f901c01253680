"""Token budget: keep a task's working items within a budget, evicting the least useful.

Document 001 §3 keeps working memory under a token budget: when the items exceed it, the
one with the lowest score goes, where score = importance · 0.6 + recency · 0.3 + access ·
0.1, recency fades to 0 over 24 hours and access saturates at 10 reads; at least two items
always stay. Here the task's goal is also protected: losing it is exactly goal drift.
This is the budget mode of the manager's working layer; `WorkingMemory` (working.py)
bounds its prompt by window and summary instead.

Invariants:
    BU1 after `fit`, the kept items fit the budget, unless only two items, or only
        protected items, are left to keep.
    BU2 a protected item is never evicted.
    BU3 each eviction takes the unprotected item with the lowest score (the older on a tie).
    BU4 when two or more items are given, at least two are kept.
    BU5 an item's score is importance · 0.6 + recency · 0.3 + access · 0.1, where recency falls linearly
        to 0 over 24 hours and access is the access count / 10, at most 1.
"""

from collections.abc import Iterable

from ..core.text import estimate_tokens
from ..core.validation import require_count
from ..storage.item import MemoryItem

__all__ = ["retention_score", "fit"]

DAY_HOURS = 24.0


def retention_score(item: MemoryItem, now: float) -> float:
    """Return importance · 0.6 + recency · 0.3 + access · 0.1 (document 001's weights)."""
    age_hours = max(0.0, now - item.created_at) / 3600
    recency = max(0.0, 1.0 - age_hours / DAY_HOURS)
    access = min(1.0, item.access_count / 10)
    return item.importance * 0.6 + recency * 0.3 + access * 0.1


def fit(
    items: Iterable[MemoryItem], max_tokens: int, now: float, protected: Iterable[str] = ()
) -> tuple[list[MemoryItem], list[MemoryItem]]:
    """Split items into (kept, evicted) so that the kept ones fit `max_tokens` (BU1-BU4).

    Raises ValueError if max_tokens is negative.
    """
    require_count("BU1: max_tokens", max_tokens, 0)
    kept, evicted, protected = list(items), [], set(protected)
    total = sum(estimate_tokens(item.content) for item in kept)
    while total > max_tokens and len(kept) > 2:
        candidates = [
            (retention_score(item, now), item.created_at, position)
            for position, item in enumerate(kept)
            if item.id not in protected
        ]
        if not candidates:
            break
        victim = kept.pop(min(candidates)[2])
        evicted.append(victim)
        total -= estimate_tokens(victim.content)
    return kept, evicted
