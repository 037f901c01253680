"""Property tests for recuris.manager.budget.fit against a naive re-scoring model (BU1-BU4)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris import MemoryItem
from recuris.manager.budget import fit, retention_score
from recuris.core.text import estimate_tokens

specs = st.lists(
    st.tuples(st.integers(1, 200), st.floats(0, 1), st.floats(0, 48 * 3600), st.integers(0, 20)),
    max_size=12,
)


def build(rows):
    return [
        MemoryItem(
            id=f"i{n}",
            user_id="u",
            level="working",
            content="y" * size,
            importance=importance,
            created_at=created,
            access_count=count,
        )
        for n, (size, importance, created, count) in enumerate(rows)
    ]


@given(specs, st.integers(0, 400), st.sets(st.integers(0, 11), max_size=3))
def test_BU1_to_BU4_fit_keeps_within_budget_protects_and_evicts_lowest_first(
    rows, budget, protected_numbers
):
    """BU1-BU4 on any items, budget and protected set."""
    items, now = build(rows), 48 * 3600.0
    protected = {f"i{n}" for n in protected_numbers}
    kept, evicted = fit(items, budget, now, protected)
    tokens = sum(estimate_tokens(i.content) for i in kept)
    unprotected_kept = [i for i in kept if i.id not in protected]
    assert tokens <= budget or len(kept) <= 2 or not unprotected_kept  # BU1
    assert not {i.id for i in evicted} & protected  # BU2
    if evicted:  # BU3: nothing kept and unprotected scores below the last item evicted
        last = max(retention_score(i, now) for i in evicted)
        assert all(retention_score(i, now) >= last for i in unprotected_kept)
    assert len(kept) >= min(2, len(items))  # BU4
    assert sorted(i.id for i in kept + evicted) == sorted(i.id for i in items)
