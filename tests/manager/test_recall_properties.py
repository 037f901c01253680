"""Property tests for recuris.manager.recall (Q1, Q2)."""

from hypothesis import given
from hypothesis import strategies as st

from dataclasses import fields

from recuris import MemoryItem, Weights
from recuris.core.text import estimate_tokens
from recuris.manager.recall import Candidate, Scale, assemble, rank, score

weights = (
    st.tuples(st.floats(0, 2), st.floats(0, 2), st.floats(0, 2))
    .filter(any)
    .map(lambda w: Weights(relevance=w[0], recency=w[1], importance=w[2]))
)
candidates = st.lists(
    st.tuples(
        st.text(min_size=1, max_size=80).filter(str.strip),
        st.floats(0, 1),
        st.floats(0, 1),
        st.floats(0, 1e7),
    ),
    max_size=15,
)


@given(candidates, weights, st.none() | st.integers(0, 200))
def test_Q1_Q2_ranked_by_total_totals_are_weighted_sums_and_text_fits(rows, weights, budget):
    """Q1: sorted by total, each the weighted sum of its parts; text fits. Q2: parts in [0, 1]."""
    results = [
        score(
            Candidate(
                MemoryItem(
                    id=f"i{n}",
                    user_id="u",
                    level="semantic",
                    content=content,
                    importance=importance,
                    created_at=created,
                ),
                relevance,
                "r",
            ),
            Scale(1e7, 1.0, 86_400.0),
            weights,
        )
        for n, (content, relevance, importance, created) in enumerate(rows)
    ]
    ranked = rank(results)
    assert [r.total for r in ranked] == sorted((r.total for r in ranked), reverse=True)
    for r in ranked:
        assert all(0 <= part <= 1 for part in r.parts.values())
        assert list(r.parts) == [weight.name for weight in fields(Weights)]
        expected = sum(getattr(weights, name) * part for name, part in r.parts.items())
        assert r.total == expected
    chosen, text = assemble(ranked, budget)
    assert budget is None or estimate_tokens(text) <= budget
    assert [r.item.id for r in chosen] == [r.item.id for r in ranked if r in chosen]
