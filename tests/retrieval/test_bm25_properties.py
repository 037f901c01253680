"""The BM25 index checked against a naive BM25 over a plain dict of documents (B1, B2)."""

import math
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from recuris.retrieval import bm25
from recuris.retrieval.bm25 import BM25Index, BM25Settings

keys = st.sampled_from("abcdefghij")
terms = st.lists(st.sampled_from("x y z w v".split()), max_size=6)
queries = st.lists(st.sampled_from("x y z w q".split()), max_size=5)


class NaiveBM25:
    """Every document scored from its term counts, one by one."""

    def __init__(self, k1, b):
        self.k1 = k1
        self.b = b
        self.documents = {}  # key -> (insertion number, term counts)
        self.added = 0

    def add(self, key, words):
        self.added += 1
        self.documents[key] = (self.added, Counter(words))

    def score(self, query, key):
        n = len(self.documents)
        counts = self.documents[key][1]
        total = sum(sum(c.values()) for _, c in self.documents.values())
        average = max(total / max(1, n), 1e-9)
        parts = []
        for term in set(query):
            tf = counts[term]
            df = sum(term in c for _, c in self.documents.values())
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                length = sum(counts.values())
                norm = self.k1 * (1 - self.b + self.b * length / average)
                parts.append(idf * tf * (self.k1 + 1) / (tf + norm))
        return math.fsum(parts)

    def top(self, query, k):
        shared = [key for key, (_, counts) in self.documents.items() if set(query) & counts.keys()]
        ranked = sorted(shared, key=lambda key: (-self.score(query, key), -self.documents[key][0]))
        return [(key, self.score(query, key)) for key in ranked[:k]]


class BM25Machine(RuleBasedStateMachine):
    """Adds, re-adds and removes on the index, next to the naive BM25."""

    def __init__(self):
        super().__init__()
        self.cached = bm25.CACHED
        bm25.CACHED = 2  # let even short postings keep their weights
        textbook = BM25Settings(k1=1.2, b=0.75)  # any settings: the textbook's here
        self.index = BM25Index(textbook)
        self.model = NaiveBM25(textbook.k1, textbook.b)

    def teardown(self):
        bm25.CACHED = self.cached

    @rule(key=keys, words=terms)
    def add(self, key, words):
        self.index.add(key, words)
        self.model.add(key, words)

    @rule(key=keys)
    def remove(self, key):
        self.index.remove(key)
        self.model.documents.pop(key, None)

    @rule(query=queries, k=st.integers(0, 12))
    def B2_top_equals_a_full_sort_of_naive_scores(self, query, k):
        assert self.index.top(query, k) == self.model.top(query, k)

    @rule(query=queries)
    def B1_every_path_gives_the_naive_score(self, query):
        expected = {key: self.model.score(query, key) for key in self.model.documents}
        assert {key: self.index.raw(query, key) for key in expected} == expected
        assert self.index.accumulate(query) == {key: s for key, s in expected.items() if s > 0}

    @invariant()
    def postings_hold_exactly_the_documents_with_each_term(self):
        expected = {}
        for key, (_, counts) in self.model.documents.items():
            for term in counts:
                expected.setdefault(term, set()).add(key)
        assert {term: set(self.index.holding(term)) for term in self.index.postings} == expected
        assert len(self.index) == len(self.model.documents)


TestBM25Machine = BM25Machine.TestCase


skewed = st.lists(st.sampled_from("a a a a b b b c c d e f".split()), min_size=1, max_size=8)


@settings(max_examples=200)
@given(
    st.lists(skewed, min_size=1, max_size=60),
    st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=5),
    st.integers(1, 6),
    st.sets(st.integers(0, 59)),
)
def test_B2_top_matches_the_naive_sort_where_pruning_applies(documents, query, k, removed):
    """B2: on larger collections of skewed terms, where MaxScore prunes, top is the naive sort."""
    index = BM25Index()
    model = NaiveBM25(index.settings.k1, index.settings.b)  # the product's defaults
    for number, words in enumerate(documents):
        index.add(f"d{number}", words)
        model.add(f"d{number}", words)
    for number in removed & set(range(len(documents))):
        index.remove(f"d{number}")
        model.documents.pop(f"d{number}")
    assert index.top(query, k) == model.top(query, k)
