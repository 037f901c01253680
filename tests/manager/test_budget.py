"""Example tests for recuris.manager.budget: document 001's token-budget eviction (BU1-BU5)."""

import pytest

from recuris import MemoryItem
from recuris.manager.budget import fit, retention_score

HOUR = 3600.0


def item(id, content="x" * 40, importance=0.5, created_at=0.0, access_count=0):
    return MemoryItem(
        id=id,
        user_id="ana",
        level="working",
        content=content,
        importance=importance,
        created_at=created_at,
        access_count=access_count,
    )


def test_score_uses_the_documented_weights():
    """BU5: score = importance·0.6 + recency·0.3 + access·0.1; recency fades over 24 h, access caps at 10."""
    fresh = item("a", importance=1.0, access_count=10)
    assert retention_score(fresh, now=0.0) == pytest.approx(1.0)
    assert retention_score(
        item("b", importance=0.5, access_count=5), now=12 * HOUR
    ) == pytest.approx(0.3 + 0.15 + 0.05)
    assert retention_score(
        item("c", importance=0.0, access_count=99), now=48 * HOUR
    ) == pytest.approx(0.1)


def test_lowest_score_goes_first_until_the_budget_holds():
    """BU1, BU3: the least important item is evicted first; eviction stops when the rest fit."""
    items = [
        item("keep", importance=0.9),
        item("drop", importance=0.1),
        item("also", importance=0.5),
    ]
    kept, evicted = fit(items, max_tokens=20, now=0.0)
    assert [i.id for i in evicted] == ["drop"] and [i.id for i in kept] == ["keep", "also"]


def test_never_fewer_than_two_items():
    """BU4: even far over budget, two items stay."""
    kept, _ = fit([item(str(n)) for n in range(5)], max_tokens=0, now=0.0)
    assert len(kept) == 2


def test_the_protected_goal_is_never_evicted():
    """BU2: the goal stays although it has the lowest score."""
    items = [item("goal", importance=0.0), item("a", importance=0.9), item("b", importance=0.9)]
    kept, evicted = fit(items, max_tokens=0, now=0.0, protected={"goal"})
    assert "goal" in [i.id for i in kept] and "goal" not in [i.id for i in evicted]


def test_ties_evict_the_older_item():
    """BU3: equal scores evict the older item first."""
    items = [item("new", created_at=10.0), item("old", created_at=0.0), item("x", importance=1.0)]
    _, evicted = fit(items, max_tokens=20, now=10.0)
    assert evicted[0].id == "old"


def test_negative_budget_is_refused():
    """BU1: a negative budget is a ValueError naming the rule."""
    with pytest.raises(ValueError, match="BU1"):
        fit([], max_tokens=-1, now=0.0)
