"""Property tests for recuris.retrieval.scoring: the BM25 index equals its scan (SR1, SR2)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.retrieval.scoring import BM25Scorer

documents = st.dictionaries(
    st.text("abcdefgh", min_size=1, max_size=3),
    st.lists(st.sampled_from("x y z w v u t s".split()), min_size=1, max_size=6),
    max_size=10,
)
queries = st.lists(st.sampled_from("x y z w q".split()), max_size=4)


@given(documents, queries)
def test_SR1_candidates_score_exactly_like_every_document(docs, query):
    """SR1: scores in [0, 1]; the candidate path equals scoring every document, zeros left out."""
    scorer = BM25Scorer(analyzer=str.split)
    for key, terms in docs.items():
        scorer.add(key, terms)
    everything = {key: scorer.score(query, key) for key in docs}
    assert all(0.0 <= value <= 1.0 for value in everything.values())
    assert dict(scorer.score_candidates(query)) == {k: v for k, v in everything.items() if v > 0}


@given(documents, st.lists(st.sampled_from("x y z".split()), min_size=1, max_size=4))
def test_SR2_add_then_remove_restores_the_index(docs, extra):
    """SR2: an added-then-removed document leaves no trace."""
    scorer = BM25Scorer(analyzer=str.split)
    for key, terms in docs.items():
        scorer.add(key, terms)
    snapshot = (
        {t: scorer.holding(t) for t in scorer.postings},
        scorer.total_length,
        set(scorer.terms),
    )
    scorer.add("__new__", extra)
    scorer.remove("__new__")
    assert (
        {t: scorer.holding(t) for t in scorer.postings},
        scorer.total_length,
        set(scorer.terms),
    ) == snapshot
