"""Example tests for recuris.manager.recall: score breakdowns, ranking, budgets (Q1, Q2, Q3)."""

import pytest

from recuris import MemoryItem, Weights
from recuris.manager.recall import assemble, rank, score
from recuris.core.text import estimate_tokens

DAY = 86_400.0


def item(id, content, level="semantic", importance=0.5, created_at=0.0, **fields):
    return MemoryItem(
        id=id,
        user_id="ana",
        level=level,
        content=content,
        importance=importance,
        created_at=created_at,
        **fields,
    )


def test_total_is_the_weighted_sum_of_its_parts():
    """Q1: total = 0.75·relevance + 0.1·recency + 0.15·importance with the default weights."""
    result = score(
        item("a", "x", importance=0.4),
        0.3,
        now=7 * DAY,
        weights=Weights(),
        half_life=7 * DAY,
        reason="r",
    )
    assert result.breakdown() == pytest.approx(
        {
            "relevance": 0.3,
            "recency": 0.5,
            "importance": 0.4,
            "total": 0.75 * 0.3 + 0.1 * 0.5 + 0.15 * 0.4,
        }
    )


def test_relevance_alone_does_not_decide():
    """Q1: ranking is by the weighted total, not relevance alone: a fresher, more important item can win."""
    old = score(
        item("old", "x", importance=0.1),
        0.6,
        now=60 * DAY,
        weights=Weights(),
        half_life=7 * DAY,
        reason="",
    )
    new = score(
        item("new", "x", importance=0.9, created_at=60 * DAY),
        0.5,
        now=60 * DAY,
        weights=Weights(),
        half_life=7 * DAY,
        reason="",
    )
    assert [r.item.id for r in rank([old, new])] == ["new", "old"]


def test_assemble_skips_what_does_not_fit_and_keeps_order():
    """Q1: the assembled text stays within the budget; a smaller later item may still fit."""
    big = score(item("big", "word " * 200), 1.0, 0, Weights(), DAY, "")
    small = score(item("small", "tiny"), 0.5, 0, Weights(), DAY, "")
    chosen, text = assemble(rank([big, small]), token_budget=20)
    assert [r.item.id for r in chosen] == ["small"] and estimate_tokens(text) <= 20


def test_weights_must_be_non_negative_and_not_all_zero():
    """Q2: bad weights are refused."""
    with pytest.raises(ValueError, match="Q2"):
        Weights(relevance=-1)
    with pytest.raises(ValueError, match="Q2"):
        Weights(0, 0, 0)


def test_the_same_content_is_assembled_once():
    """Q3: a fact and an event with the same text appear once, the better-ranked copy."""
    fact = score(
        item("f1", "Deploy region: EU-west", importance=0.9), 1.0, 0, Weights(), DAY, "fact"
    )
    event = score(
        item("e1", "deploy region:  eu-west", level="episodic"), 1.0, 0, Weights(), DAY, "event"
    )
    chosen, text = assemble(rank([event, fact]), None)
    assert [r.item.id for r in chosen] == ["f1"] and text.count("\n") == 0
