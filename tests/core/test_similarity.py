"""Example tests for recuris.core.similarity: the Jaccard formula and scorer (SM1-SM3)."""

import pytest

from recuris.core.similarity import JaccardScorer, jaccard


def test_jaccard_of_equal_sets_is_one():
    """SM1: equal non-empty token sets score 1."""
    assert jaccard(["a", "b"], ["b", "a", "a"]) == 1.0


def test_jaccard_of_disjoint_sets_is_zero():
    """SM1: disjoint token sets score 0."""
    assert jaccard(["a"], ["b"]) == 0.0


def test_jaccard_of_two_empty_sets_is_zero():
    """SM1: no tokens on either side is no evidence of similarity."""
    assert jaccard([], []) == 0.0


def test_jaccard_counts_intersection_over_union():
    """SM1: one shared token of three distinct ones scores 1/3."""
    assert jaccard(["a", "b"], ["b", "c"]) == pytest.approx(1 / 3)


def test_the_scorer_scores_by_the_jaccard_formula():
    """SM2: a key's score is |query ∩ terms| / |query ∪ terms|, whatever the order or repeats."""
    scorer = JaccardScorer(str.split)
    scorer.add("a", ["x", "y", "x"])
    assert scorer.score(["y", "z"], "a") == pytest.approx(1 / 3)


def test_candidates_are_the_keys_sharing_a_term_with_the_scan_scores():
    """SM2: the index returns every key sharing a term, with the floats `score` gives, no other."""
    scorer = JaccardScorer(str.split)
    for key, text in {"a": "x y z", "b": "y z w v", "c": "q"}.items():
        scorer.add(key, text.split())
    query = ["y", "z", "u"]
    assert sorted(scorer.score_candidates(query)) == [
        ("a", scorer.score(query, "a")),
        ("b", scorer.score(query, "b")),
    ]


def test_adding_a_key_again_replaces_its_terms():
    """SM3: `add` under a known key replaces the document; the old terms find it no more."""
    scorer = JaccardScorer(str.split)
    scorer.add("a", ["x"])
    scorer.add("a", ["y"])
    assert scorer.score_candidates(["x"]) == [] and len(scorer) == 1


def test_removing_the_last_key_of_a_term_drops_its_posting():
    """SM3: no empty posting outlives its last key; removing an unknown key changes nothing."""
    scorer = JaccardScorer(str.split)
    scorer.add("a", ["x", "y"])
    scorer.remove("a")
    scorer.remove("never added")
    assert scorer.postings == {} and scorer.terms == {}
