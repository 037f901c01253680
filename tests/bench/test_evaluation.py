"""Example tests for recuris.bench.evaluation, against hand-computed cases (EV1, EV2)."""

import pytest

from recuris.bench.evaluation import (
    mean_reciprocal_rank,
    pollution_rate,
    prompt_tokens,
    recall_at_k,
    reciprocal_rank,
)

RANKED = ["d3", "d1", "d7", "d2", "d9"]


def test_recall_at_k_is_the_share_of_relevant_items_in_the_top_k():
    """EV1: 2 relevant, one at rank 2, one at rank 4."""
    assert recall_at_k(RANKED, {"d1", "d2"}, 1) == 0.0
    assert recall_at_k(RANKED, {"d1", "d2"}, 2) == 0.5
    assert recall_at_k(RANKED, {"d1", "d2"}, 5) == 1.0


def test_recall_never_decreases_with_k():
    """EV1: a larger k can only find more."""
    values = [recall_at_k(RANKED, {"d7", "d9", "d0"}, k) for k in range(1, 8)]
    assert values == sorted(values) and values[-1] == pytest.approx(2 / 3)


def test_reciprocal_rank_of_the_first_relevant_item():
    """EV1: first relevant at rank 3 gives 1/3; none ranked gives 0."""
    assert reciprocal_rank(RANKED, {"d7", "d2"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(RANKED, {"zz"}) == 0.0


def test_mean_reciprocal_rank_averages_questions():
    """EV1: (1 + 1/2 + 0) / 3."""
    assert mean_reciprocal_rank(
        [(RANKED, {"d3"}), (RANKED, {"d1"}), (RANKED, {"x"})]
    ) == pytest.approx(0.5)
    assert mean_reciprocal_rank([]) == 0.0


def test_pollution_rate_is_the_share_of_bad_recalls():
    """EV2: one stale of four recalled is 0.25; nothing recalled is 0."""
    assert pollution_rate(["f1", "f2", "old", "f3"], {"old", "never-recalled"}) == 0.25
    assert pollution_rate([], {"old"}) == 0.0


def test_bad_arguments_are_refused():
    """EV1: k must be at least 1, and a question needs
    a relevant item (a ValueError naming the rule)."""
    with pytest.raises(ValueError, match="k must be"):
        recall_at_k(RANKED, {"d1"}, 0)
    with pytest.raises(ValueError, match="relevant"):
        reciprocal_rank(RANKED, set())


def test_prompt_tokens_estimates_each_prompt():
    """T2 per prompt: one estimate per prompt, in order."""
    assert prompt_tokens(["abcd" * 10, "注册账"]) == [10, 2]
