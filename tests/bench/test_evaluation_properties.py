"""Property tests for recuris.bench.evaluation (EV1, EV2)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.bench.evaluation import pollution_rate, recall_at_k, reciprocal_rank

ids = st.sampled_from([f"d{n}" for n in range(12)])
rankings = st.lists(ids, unique=True, max_size=12)
relevant = st.sets(ids, min_size=1, max_size=5)


@given(rankings, relevant)
def test_EV1_recall_is_monotone_in_k_and_bounded(ranked, wanted):
    """EV1: recall@k in [0, 1], never decreasing in k, and 1 once every relevant item is ranked."""
    values = [recall_at_k(ranked, wanted, k) for k in range(1, 14)]
    assert values == sorted(values) and all(0 <= v <= 1 for v in values)
    assert (values[-1] == 1.0) == wanted.issubset(ranked)


@given(rankings, relevant)
def test_EV1_reciprocal_rank_is_one_over_the_first_hit(ranked, wanted):
    """EV1: the reciprocal rank agrees with a naive search for the first relevant item."""
    first = next((n for n, item in enumerate(ranked, 1) if item in wanted), None)
    assert reciprocal_rank(ranked, wanted) == (1 / first if first else 0.0)


@given(st.lists(ids, max_size=10), st.sets(ids, max_size=6))
def test_EV2_pollution_is_the_share_of_bad_recalls(recalled, bad):
    """EV2: in [0, 1]; 0 for nothing recalled; equal to a naive count."""
    rate = pollution_rate(recalled, bad)
    assert 0 <= rate <= 1 and rate == (
        sum(i in bad for i in recalled) / len(recalled) if recalled else 0.0
    )
