"""The scorer contract, on every scorer the suite knows, a fork's included (SR1, SM2, SM3).

Any `Scorer` (recuris/core/similarity.py) plugs into EpisodicMemory, RecallPolicy and the
manager, and each of them relies on these rules. Texts go through the scorer's own analyzer,
so a scorer with terms of its own (character trigrams, say) is checked on what it indexes.
A fork adds its scorer with RECURIS_SCORERS (tests/factories.py).
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factories import scorer_factories, shared_examples

SCORERS = scorer_factories()
WORDS = [
    "deploy",
    "deploys",
    "deployment",
    "service",
    "the",
    "report",
    "form",
    "red",
    "fish",
    "注册",
    "账号",
]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join)
queries = st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join)
documents = st.dictionaries(st.text("abcdefgh", min_size=1, max_size=3), texts, max_size=10)
every_scorer = pytest.mark.parametrize("name", list(SCORERS))
share = shared_examples(len(SCORERS))


def filled(name: str, docs: dict[str, str]):
    """Return a new scorer of this name holding the documents, and each document's terms."""
    scorer = SCORERS[name]()
    terms = {key: list(scorer.analyzer(text)) for key, text in docs.items()}
    for key, document in terms.items():
        scorer.add(key, document)
    return scorer, terms


@every_scorer
@share
@given(documents, queries)
def test_SR1_every_score_lies_in_the_unit_interval(name, docs, query):
    """SR1: whatever the scorer, every score, by `score` or `score_candidates`, lies in [0, 1]."""
    scorer, _ = filled(name, docs)
    terms = scorer.analyzer(query)
    candidates = [score for _, score in scorer.score_candidates(terms)]
    scores = [scorer.score(terms, key) for key in docs] + candidates
    assert [score for score in scores if not 0.0 <= score <= 1.0] == []


@every_scorer
@share
@given(documents, queries)
def test_SR1_a_document_sharing_no_term_with_the_query_scores_0_and_is_no_candidate(
    name, docs, query
):
    """SR1: a document sharing no term with the query scores 0 and is not among the candidates."""
    scorer, stored = filled(name, docs)
    terms = scorer.analyzer(query)
    candidates = {key for key, _ in scorer.score_candidates(terms)}
    strangers = [key for key, document in stored.items() if not set(document) & set(terms)]
    assert [key for key in strangers if scorer.score(terms, key) != 0.0 or key in candidates] == []


@every_scorer
@share
@given(documents, queries)
def test_SM2_score_candidates_equals_scoring_every_document_with_score(name, docs, query):
    """SM2: `score_candidates` names a document once, with `score`'s float, missing none above 0."""
    scorer, _ = filled(name, docs)
    terms = scorer.analyzer(query)
    candidates = scorer.score_candidates(terms)
    everything = {key: scorer.score(terms, key) for key in docs}
    found = dict(candidates)
    assert len(found) == len(candidates), "a document named twice"
    assert {key: everything.get(key) for key in found} == found, "a candidate scored unlike `score`"
    assert {key for key, score in everything.items() if score > 0} <= found.keys(), (
        "a document missed"
    )


@every_scorer
@share
@given(documents, texts, st.lists(queries, min_size=1, max_size=3))
def test_SM3_adding_then_removing_a_document_leaves_the_scorer_as_it_was(name, docs, extra, probes):
    """SM3: a document added then removed changes no score, no candidate, not the length."""
    scorer, _ = filled(name, docs)

    def behaviour():
        answers = [len(scorer)]
        for query in probes:
            terms = scorer.analyzer(query)
            scores = [scorer.score(terms, key) for key in docs]
            answers.append((sorted(scorer.score_candidates(terms)), scores))
        return answers

    before = behaviour()
    scorer.add("__new__", scorer.analyzer(extra))
    scorer.remove("__new__")
    assert behaviour() == before
