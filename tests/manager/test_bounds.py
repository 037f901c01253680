"""Example tests for recuris.manager.bounds: budgets, query caps and the layer cache (BD1-BD3)."""

import pytest

from recuris.manager.bounds import MAX_QUERY_CHARS, LayerCache, cap_query, check_token_budget


@pytest.mark.parametrize("budget", [float("nan"), 1.5, -1, True, "10"])
def test_a_budget_that_is_not_a_count_is_refused_naming_the_rule(budget):
    """BD1: only an int >= 0, or None, is a token budget."""
    with pytest.raises(ValueError, match="Q1"):
        check_token_budget(budget)


def test_a_query_is_cut_at_the_cap_and_says_so():
    """BD2: a query within the cap comes back whole; a longer one is cut to the cap and flagged."""
    assert cap_query("a" * MAX_QUERY_CHARS) == ("a" * MAX_QUERY_CHARS, False)
    assert cap_query("a" * (MAX_QUERY_CHARS + 1)) == ("a" * MAX_QUERY_CHARS, True)


def test_the_layer_cache_evicts_the_least_recently_used():
    """BD3: reading an entry makes it the most recent; past the capacity the least recent goes."""
    cache = LayerCache(2)
    cache["ana"], cache["bob"] = 1, 2
    assert cache["ana"] == 1
    cache["cy"] = 3
    assert list(cache) == ["ana", "cy"]
    with pytest.raises(ValueError, match="BD3"):
        LayerCache(0)


def test_dropping_a_user_from_the_layer_cache_keeps_the_others_in_order():
    """BD3: `pop` removes one user's layers (None if not loaded); the others keep their order."""
    cache = LayerCache(3)
    cache["ana"], cache["bob"], cache["cy"] = 1, 2, 3
    assert (cache.pop("bob"), cache.pop("dee")) == (2, None)
    assert list(cache) == ["ana", "cy"] and "bob" not in cache
