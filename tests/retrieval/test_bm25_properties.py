"""The BM25 index checked against a naive BM25 over a plain dict of documents (B1, B2, B4)."""

import math
import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

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

    def add(self, key, words, order=None):
        self.added += 1
        self.documents[key] = (self.added if order is None else order, Counter(words))

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

    def top(self, query, k, digits=None):
        shared = [key for key, (_, counts) in self.documents.items() if set(query) & counts.keys()]

        def rank(key):
            score = self.score(query, key)
            return (-(score if digits is None else round(score, digits)), -self.documents[key][0])

        ranked = sorted(shared, key=rank)
        return [(key, self.score(query, key)) for key in ranked[:k]]


def dead_postings(index):
    """Return term -> how many of its stored postings are of removed documents."""
    return {
        term: len(postings) // bm25.POSTING.size - len(index.holding(term))
        for term, postings in index.postings.items()
    }


class Small:
    """Shrink the index's thresholds so that small collections reach every path (B2, B4)."""

    def __enter__(self):
        self.kept = (bm25.CACHED, bm25.IMPACT, bm25.SPARE, bm25.DEAD, bm25.LITTER, bm25.BUDGET)
        self.few = bm25.FEW
        bm25.CACHED = 2  # let even short postings keep their weights
        bm25.IMPACT = 2  # and their impact order
        bm25.SPARE = 1  # renumber as soon as the dead documents outnumber the live by 2
        bm25.DEAD = 1
        bm25.LITTER = 0  # compact a term as soon as its dead postings outnumber its live
        bm25.FEW = 0  # and never score every posting in `top`

    def __exit__(self, *exception):
        (bm25.CACHED, bm25.IMPACT, bm25.SPARE, bm25.DEAD, bm25.LITTER, bm25.BUDGET) = self.kept
        bm25.FEW = self.few


class BM25Machine(RuleBasedStateMachine):
    """Adds, re-adds and removes on the index, next to the naive BM25."""

    def __init__(self):
        super().__init__()
        self.small = Small()
        self.small.__enter__()
        textbook = BM25Settings(k1=1.2, b=0.75)  # any settings: the textbook's here
        self.index = BM25Index(textbook)
        self.model = NaiveBM25(textbook.k1, textbook.b)
        self.ordered = False

    def teardown(self):
        self.small.__exit__()

    @precondition(lambda self: not self.ordered)
    @rule(key=keys, words=terms)
    def add(self, key, words):
        self.index.add(key, words)
        self.model.add(key, words)

    @precondition(lambda self: self.ordered or not self.model.added)
    @rule(key=keys, words=terms, order=st.integers(-20, 20))
    def add_in_order(self, key, words, order):
        # Orders given by the caller, as the term index gives write positions: distinct,
        # not increasing (a rewrite keeps an early one).
        self.ordered = True
        unique = order * 1000 + self.model.added
        self.index.add(key, words, order=unique)
        self.model.add(key, words, order=unique)

    @rule(key=keys)
    def remove(self, key):
        self.index.remove(key)
        self.model.documents.pop(key, None)

    @rule(budget=st.sampled_from([1, 10**9]), few=st.sampled_from([0, 10]))
    def choose_the_paths_of_top(self, budget, few):
        bm25.BUDGET = budget  # 1: never swept (reads cover every posting); 10**9: swept past k
        bm25.FEW = few  # 10: score every posting of queries of at most 10

    @rule(query=queries, k=st.integers(0, 12), digits=st.sampled_from([None, 9, 1, 0]))
    def B2_top_equals_a_full_sort_of_naive_scores(self, query, k, digits):
        assert self.index.top(query, k, digits) == self.model.top(query, k, digits)

    @rule(query=queries)
    def B1_every_path_gives_the_naive_score(self, query):
        expected = {key: self.model.score(query, key) for key in self.model.documents}
        assert {key: self.index.raw(query, key) for key in expected} == expected
        assert self.index.accumulate(query) == {key: s for key, s in expected.items() if s > 0}

    @precondition(lambda self: self.model.documents)
    @rule(data=st.data(), query=queries)
    def held_gives_the_length_and_counts_of_the_terms_asked(self, data, query):
        key = data.draw(st.sampled_from(sorted(self.model.documents)))
        counts = self.model.documents[key][1]
        held = {term: counts[term] for term in set(query) if counts[term]}
        assert self.index.held(key, query) == (sum(counts.values()), held)

    @invariant()
    def postings_hold_exactly_the_documents_with_each_term(self):
        expected = {}
        for key, (_, counts) in self.model.documents.items():
            for term in counts:
                expected.setdefault(term, set()).add(key)
        assert {term: set(self.index.holding(term)) for term in self.index.postings} == expected
        assert len(self.index) == len(self.model.documents)

    @invariant()
    def B4_the_dead_never_outnumber_the_live(self):
        dead = dead_postings(self.index)
        assert all(dead[term] <= len(self.index.holding(term)) + bm25.LITTER for term in dead)
        dead_numbers = len(self.index._keys) - len(self.index)
        assert dead_numbers <= bm25.DEAD * len(self.index) + bm25.SPARE

    @invariant()
    def B4_the_vocabulary_holds_the_terms_of_the_documents_still_numbered(self):
        numbered = range(len(self.index._keys))
        held = {term for number in numbered for term in self.index._terms_of(number)}
        assert set(self.index._vocabulary) == held
        assert len(self.index._vocabulary) == len(held)


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


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([None, 9, 2]), st.sampled_from([1, 64, 10**9]))
def test_B2_B4_top_stays_exact_as_most_of_a_large_collection_is_removed(seed, digits, budget):
    """B2, B4: a thousand skewed documents removed in a random order: every top is exact."""
    rng = random.Random(seed)
    vocabulary = [f"w{rank}" for rank in range(60)]
    index = BM25Index()
    model = NaiveBM25(index.settings.k1, index.settings.b)
    with Small():
        bm25.IMPACT = 16
        bm25.SPARE = 8
        bm25.BUDGET = budget
        for number in range(1000):
            words = rng.choices(vocabulary, [1 / (1 + rank) for rank in range(60)], k=6)
            index.add(f"d{number}", words)
            model.add(f"d{number}", words)
        order = list(range(1000))
        rng.shuffle(order)
        for step, number in enumerate(order[:950]):
            index.remove(f"d{number}")
            model.documents.pop(f"d{number}")
            if step % 190 == 0:
                query = rng.sample(vocabulary[:20], rng.randint(1, 3))
                assert index.top(query, 10, digits) == model.top(query, 10, digits)
        dead = dead_postings(index)
        assert all(dead[term] <= len(index.holding(term)) + bm25.LITTER for term in dead)
        assert len(index._keys) - len(index) <= bm25.DEAD * len(index) + bm25.SPARE
