"""EpisodicMemory checked against a scan, independent references and a naive model (E1-E5).

The scorer-independent checks run on every scorer the suite knows, a fork's included
(tests/factories.py): the built-in ones are compared with formulas written here, a fork's
with its module's `reference_score` when it has one.
"""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from recuris import Episode, EpisodicMemory, tokenize

from factories import scorer_factories, scorer_references, shared_examples

words = st.sampled_from(
    [
        "deploy",
        "deploys",
        "service",
        "report",
        "sales",
        "form",
        "the",
        "注册",
        "账号",
        "database",
        "migrate",
    ]
)
phrases = st.lists(words, min_size=1, max_size=4).map(" ".join)
queries = st.lists(words, max_size=4).map(" ".join)
thresholds = st.floats(0.0, 1.0)
episode_specs = st.lists(st.tuples(phrases, phrases, st.integers(0, 5)), max_size=20)
TOLERANCE = 1e-9  # a reference adds in its own order: its floats may differ in the last bits


def naive_jaccard(query_tokens, text):
    """E4's reference, written here, not imported: a scorer cannot pass by agreeing with itself."""
    a, b = set(query_tokens), set(tokenize(text))
    return len(a & b) / len(a | b) if a and b else 0.0


def naive_ranking(episodes, query, top_k, threshold):
    """Score each (episode, insertion order) naively; keep those above 0 and the threshold (E3)."""
    rows = [
        (naive_jaccard(tokenize(query), f"{e.task_type} {e.goal}"), e.created_at, order, e.id)
        for order, e in episodes
    ]
    rows = sorted(
        (row for row in rows if row[0] > 0 and row[0] >= threshold),
        key=lambda r: (-r[0], -r[1], -r[2]),
    )
    return [(score, episode_id) for score, _, _, episode_id in rows[:top_k]]


def reference_jaccard(query_terms, document_terms, corpus):
    """Jaccard of the two term sets, from scratch: shared over all, 0 when nothing is shared."""
    a, b = set(query_terms), set(document_terms)
    return len(a & b) / len(a | b) if a & b else 0.0


def reference_bm25(query_terms, document_terms, corpus, k1=1.2, b=0.75):
    """BM25Scorer's score from scratch: Okapi BM25 over the corpus, over the query's best score."""
    query, document = set(query_terms), list(document_terms)
    if not query or not corpus:
        return 0.0
    average = sum(len(other) for other in corpus) / len(corpus)

    def idf(term):
        holders = sum(term in other for other in corpus)
        return math.log(1 + (len(corpus) - holders + 0.5) / (holders + 0.5))

    raw = sum(
        idf(term)
        * document.count(term)
        * (k1 + 1)
        / (document.count(term) + k1 * (1 - b + b * len(document) / average))
        for term in query
        if term in document
    )
    return min(1.0, raw / (sum(idf(term) for term in query) * (k1 + 1)))


SCORERS = scorer_factories()
REFERENCES = {"jaccard": reference_jaccard, "bm25": reference_bm25, **scorer_references()}


def reference_scores(memory, reference, query):
    """Score each stored episode's type and goal with the reference, on the scorer's terms."""
    analyze = memory.scorer.analyzer
    terms = {e.id: list(analyze(f"{e.task_type} {e.goal}")) for e in memory.episodes}
    query_terms = list(analyze(query))
    return {
        key: reference(query_terms, document, list(terms.values()))
        for key, document in terms.items()
    }


def assert_agrees_with_the_reference(hits, reference, top_k, threshold):
    """The hits are a top k of the reference's scores above 0 and the threshold (TOLERANCE)."""
    chosen = {hit.episode.id: hit.score for hit in hits}
    assert [key for key, score in chosen.items() if abs(score - reference[key]) > TOLERANCE] == []
    # Clearly above 0 and the threshold: an episode the memory must not leave out for a worse one.
    passing = {key for key, score in reference.items() if score > max(0.0, threshold) + TOLERANCE}
    left_out = passing - chosen.keys()
    if len(hits) < top_k:
        assert left_out == set(), "an episode the reference passes was not retrieved"
    else:
        assert [key for key in left_out if reference[key] > min(chosen.values()) + TOLERANCE] == []


def make(task_type, goal, created_at):
    return Episode(task_type=task_type, goal=goal, status="success", created_at=created_at)


@given(
    st.lists(st.tuples(phrases, phrases, st.integers(0, 5)), max_size=20),
    queries,
    st.integers(1, 6),
    thresholds,
)
def test_E1_E2_E3_E4_retrieve_equals_a_naive_sort(specs, query, top_k, threshold):
    """E1-E4: the indexed result equals scoring every episode and sorting naively."""
    memory = EpisodicMemory()
    stored = [memory.add_episode(make(t, g, c)) for t, g, c in specs]
    hits = memory.retrieve(query, top_k, threshold)
    assert [(h.score, h.episode.id) for h in hits] == naive_ranking(
        enumerate(stored), query, top_k, threshold
    )
    assert hits == memory.retrieve_by_scan(query, top_k, threshold)


@pytest.mark.parametrize("name", list(SCORERS))
@shared_examples(len(SCORERS))
@given(episode_specs, queries, st.integers(1, 6), thresholds)
def test_E4_the_indexed_retrieve_equals_the_scan_whatever_the_scorer(
    name, specs, query, top_k, threshold
):
    """E4: with any scorer, the indexed `retrieve` returns what `retrieve_by_scan` returns."""
    memory = EpisodicMemory(SCORERS[name])
    for task_type, goal, created_at in specs:
        memory.add_episode(make(task_type, goal, created_at))
    assert memory.retrieve(query, top_k, threshold) == memory.retrieve_by_scan(
        query, top_k, threshold
    )


@pytest.mark.parametrize("name", [name for name in SCORERS if name in REFERENCES])
@shared_examples(len(SCORERS))
@given(episode_specs, queries, st.integers(1, 6), thresholds)
def test_E4_retrieve_agrees_with_an_independent_reference(name, specs, query, top_k, threshold):
    """E4: `retrieve` returns the top k of the scorer's reference formula, written apart."""
    memory = EpisodicMemory(SCORERS[name])
    for task_type, goal, created_at in specs:
        memory.add_episode(make(task_type, goal, created_at))
    hits = memory.retrieve(query, top_k, threshold)
    reference = reference_scores(memory, REFERENCES[name], query)
    assert_agrees_with_the_reference(hits, reference, top_k, threshold)


class EpisodicMachine(RuleBasedStateMachine):
    """Adds and removals on the real memory with one scorer, beside a dict of what should be stored.

    The scores themselves are the scorer's (`score`, one episode at a time); E4's reference
    formulas are checked by the test above.
    """

    ids = Bundle("ids")

    def __init__(self, name):
        super().__init__()
        self.memory = EpisodicMemory(SCORERS[name])
        self.model = {}
        self.order = {}  # id -> insertion number, the E3 tie-break

    @rule(target=ids, task_type=phrases, goal=phrases, created_at=st.integers(0, 3))
    def add(self, task_type, goal, created_at):
        episode = self.memory.add_episode(make(task_type, goal, created_at))
        self.model[episode.id] = episode
        self.order[episode.id] = len(self.order)
        return episode.id

    @precondition(lambda self: self.model)
    @rule(episode_id=ids)
    def remove(self, episode_id):
        self.memory.remove([episode_id])
        self.model.pop(episode_id, None)

    @rule(query=queries, top_k=st.integers(1, 5), threshold=thresholds)
    def retrieve(self, query, top_k, threshold):
        hits = self.memory.retrieve(query, top_k, threshold)
        assert hits == self.memory.retrieve_by_scan(query, top_k, threshold)  # E4
        # E1-E3 from the model: each stored episode scored one by one, kept and sorted by the rules.
        terms, scorer = self.memory.scorer.analyzer(query), self.memory.scorer
        rows = [
            (scorer.score(terms, key), e.created_at, self.order[key], key)
            for key, e in self.model.items()
        ]
        kept = sorted(
            (r for r in rows if r[0] > 0 and r[0] >= threshold), key=lambda r: (-r[0], -r[1], -r[2])
        )
        assert [(h.score, h.episode.id) for h in hits] == [
            (score, key) for score, _, _, key in kept[:top_k]
        ]

    @invariant()
    def E5_ids_are_unique_and_match_the_model(self):
        assert [e.id for e in self.memory.episodes] == list(self.model)

    @invariant()
    def E4_index_holds_exactly_the_stored_episodes(self):
        assert len(self.memory.scorer) == len(self.model)


@pytest.mark.parametrize("name", list(SCORERS))
def test_E1_E5_the_memory_follows_a_model_through_adds_and_removals(name):
    """E1-E5: through any adds and removals, with any scorer, retrieval ranks as the model says."""
    run_state_machine_as_test(lambda: EpisodicMachine(name), settings=shared_examples(len(SCORERS)))
