"""Example tests for recuris.bench.locomo_tried: rankings tried on the product (LT1, LT2)."""

import json

import pytest
from locomo_conversation import CONVERSATION

from recuris import MemoryItem
from recuris.bench.locomo import load, through_manager
from recuris.bench.locomo_tried import TRIED, fuse
from recuris.storage.memory_store import InMemoryStore


def item(key):
    return MemoryItem(id=key, user_id="ana", level="episodic", content=f"text {key}")


def test_fusion_sums_the_reciprocal_of_each_rank_plus_the_constant():
    """LT2: an item in both lists at ranks 2 and 1 beats one first in a list alone."""
    a, b, c = item("a"), item("b"), item("c")
    fused = fuse([[a, b], [b, c]])
    assert [i.id for i in fused] == ["b", "a", "c"]


def test_fusion_keeps_the_first_lists_order_among_ties():
    """LT2: two items of equal fused score keep the order of the first list."""
    a, b = item("a"), item("b")
    assert [i.id for i in fuse([[a, b], [b, a]])] == ["a", "b"]


@pytest.mark.parametrize("name", sorted(TRIED))
def test_every_tried_ranking_returns_at_most_ten_distinct_turns(tmp_path, name):
    """LT1: each ranking gives at most ten turns, each once, all of the conversation."""
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    conversation = load(path)
    rank = through_manager(InMemoryStore, ranking=TRIED[name])(conversation)
    turns = {turn.id for turn in conversation.turns}
    for question in conversation.questions:
        ranked = rank(question.text)
        assert len(ranked) <= 10 and len(set(ranked)) == len(ranked) and set(ranked) <= turns
