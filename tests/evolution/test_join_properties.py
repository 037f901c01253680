"""Property tests for recuris.evolution.join: the
filtered join equals comparing every pair (J1, J2)."""

import itertools

from hypothesis import given
from hypothesis import strategies as st

from recuris.evolution.join import rank_tokens, similar_pairs
from recuris.core.similarity import jaccard

token_sets = st.lists(st.frozensets(st.integers(0, 9), max_size=8), max_size=25)
thresholds = st.sampled_from([0.1, 0.3, 1 / 3, 0.5, 0.6, 2 / 3, 0.7, 0.75, 0.8, 0.9, 1.0])


def every_pair(sets, threshold):
    return sorted(
        (i, j)
        for i, j in itertools.combinations(range(len(sets)), 2)
        if jaccard(sets[i], sets[j]) >= threshold
    )


@given(token_sets, thresholds)
def test_J1_the_join_finds_exactly_the_pairs_that_reach_the_threshold(sets, threshold):
    """J1: similar_pairs returns exactly the pairs
    whose Jaccard reaches the threshold, each once."""
    assert sorted(similar_pairs(rank_tokens(sets), threshold)) == every_pair(sets, threshold)


@given(token_sets, thresholds, st.data())
def test_J2_with_fresh_sets_only_pairs_touching_a_fresh_one_are_returned(sets, threshold, data):
    """J2: with `fresh`, the pairs returned are exactly the similar pairs holding a fresh set."""
    fresh = data.draw(st.lists(st.booleans(), min_size=len(sets), max_size=len(sets)))
    expected = [(i, j) for i, j in every_pair(sets, threshold) if fresh[i] or fresh[j]]
    assert sorted(similar_pairs(rank_tokens(sets), threshold, fresh)) == expected
