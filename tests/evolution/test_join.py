"""Example tests for recuris.evolution.join: the similarity join on a few small sets (J1, J2)."""

import pytest

from recuris.evolution.join import rank_tokens, similar_pairs

# Jaccard of sets 0 and 1 is 3/5, of 0 and 2 is 1/5, of 1 and 2 is 1/4; set 3 equals set 0.
SETS = [{1, 2, 3, 4}, {2, 3, 4, 5}, {4, 6, 7}, {1, 2, 3, 4}]


def test_the_join_returns_the_pairs_at_the_threshold_each_once_smaller_index_first():
    """J1: at 0.6 the pairs of Jaccard 3/5 and 1 come back, once each, as (smaller, larger)."""
    assert sorted(similar_pairs(rank_tokens(SETS), 0.6)) == [(0, 1), (0, 3), (1, 3)]


def test_a_threshold_outside_zero_to_one_is_refused_naming_the_rule():
    """J1: a threshold of 0 or above 1 is a ValueError naming J1."""
    for threshold in (0.0, 1.5):
        with pytest.raises(ValueError, match="J1: threshold must lie in"):
            similar_pairs(rank_tokens(SETS), threshold)


def test_with_fresh_sets_a_pair_of_two_known_sets_is_left_out():
    """J2: with only set 3 fresh, the pair (0, 1) of two known sets is not returned."""
    fresh = [False, False, False, True]
    assert sorted(similar_pairs(rank_tokens(SETS), 0.6, fresh)) == [(0, 3), (1, 3)]
