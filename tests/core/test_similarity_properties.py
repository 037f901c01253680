"""Property tests for recuris.core.similarity, against naive set arithmetic (SM1-SM3)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.core.similarity import JaccardScorer, jaccard

token_sets = st.sets(st.text(alphabet="abcdef", min_size=1, max_size=3), max_size=8)
documents = st.dictionaries(
    st.text("abcdefgh", min_size=1, max_size=3),
    st.lists(st.sampled_from("xyzwvuts"), max_size=6),
    max_size=10,
)
queries = st.lists(st.sampled_from("xyzwq"), max_size=4)


def naive_jaccard(query: list[str], terms: list[str]) -> float:
    """The formula written out, independently of the module: a reference, not a copy."""
    union = set(query) | set(terms)
    return len(set(query) & set(terms)) / len(union) if union else 0.0


@given(token_sets, token_sets)
def test_SM1_jaccard_is_symmetric_and_in_unit_interval(a, b):
    """SM1: symmetric, and within [0, 1]."""
    assert jaccard(a, b) == jaccard(b, a)
    assert 0.0 <= jaccard(a, b) <= 1.0


@given(token_sets.filter(bool))
def test_SM1_jaccard_of_a_set_with_itself_is_one(a):
    """SM1: a non-empty set is fully similar to itself."""
    assert jaccard(a, set(a)) == 1.0


@given(token_sets, token_sets)
def test_SM1_jaccard_is_zero_exactly_when_nothing_is_shared(a, b):
    """SM1: the score is 0 iff the sets share no token."""
    assert (jaccard(a, b) == 0.0) == (not (a & b))


@given(documents, queries)
def test_SM2_candidates_equal_a_naive_scan(docs, query):
    """SM2: the index returns exactly the keys a naive scan scores above 0, with its scores."""
    scorer = JaccardScorer()
    for key, terms in docs.items():
        scorer.add(key, terms)
    expected = {
        key: naive_jaccard(query, terms) for key, terms in docs.items() if set(query) & set(terms)
    }
    found = dict(scorer.score_candidates(query))
    assert found.keys() == expected.keys()
    assert all(abs(found[key] - expected[key]) < 1e-12 for key in found)


@given(documents, st.lists(st.sampled_from("xyz"), min_size=1, max_size=4))
def test_SM3_add_then_remove_restores_the_scorer(docs, extra):
    """SM3: a document added then removed leaves no trace in terms or postings."""
    scorer = JaccardScorer()
    for key, terms in docs.items():
        scorer.add(key, terms)
    snapshot = ({t: set(k) for t, k in scorer.postings.items()}, dict(scorer.terms))
    scorer.add("__new__", extra)
    scorer.remove("__new__")
    assert ({t: set(k) for t, k in scorer.postings.items()}, dict(scorer.terms)) == snapshot
