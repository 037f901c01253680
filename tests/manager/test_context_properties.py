"""Property tests for recuris.manager.context: windows against a naive BM25F (CX1-CX5, S14, S15)."""

import math
from collections import Counter

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from recuris import InMemoryStore, MemoryItem, SQLiteStore
from recuris.manager.context import Context, in_context
from recuris.retrieval.bm25 import BM25Settings
from recuris.retrieval.scoring import analyze
from recuris.storage.store import TermCounts

WORDS = ["deploy", "keys", "red", "fish", "the", "blue", "staging", "数据库", "rotate"]
QUERIES = ["fish", "deploy keys", "red blue staging", "数据库 rotate"]


def naive(items, query, context, hits):
    """Score every window by hand: a list of the user's items, no index (CX1-CX4)."""
    settings = BM25Settings()
    counts = {item.id: Counter(analyze(item.content)) for item in items}
    lengths = {key: sum(held.values()) for key, held in counts.items()}
    terms = sorted(set(analyze(query)))
    held = {term: sum(term in counts[item.id] for item in items) for term in terms}
    idf = {t: math.log(1 + (len(items) - n + 0.5) / (n + 0.5)) for t, n in held.items() if n}
    average = sum(lengths.values()) / len(items)
    threaded = [item for item, _ in hits if item.task_id is not None]
    best = threaded[: context.hits]
    if not best:
        return {item.id: (raw, 0.0) for item, raw in hits}
    threads = {}
    for item in items:
        threads.setdefault(item.task_id, []).append(item.id)
    windowed = set()
    for item in best:
        line = threads[item.task_id]
        at = line.index(item.id)
        windowed.update(line[max(0, at - context.width) : at + context.width + 1])
    found = {}
    for key in windowed:
        task = next(item.task_id for item in items if item.id == key)
        line = threads[task]
        at = line.index(key)
        others = [k for k in line[max(0, at - context.width) : at + context.width + 1] if k != key]
        k1 = settings.k1
        b = settings.b

        def normalised(k, t):
            return counts[k][t] / (1 - b + b * lengths[k] / average)

        def weigh(frequency):
            return frequency * (k1 + 1) / (frequency + k1)

        def beside(t):
            return context.weight * sum(normalised(k, t) for k in others)

        # BM25F: the item's and each neighbour's frequency, each by its own length.
        own = sum(idf[t] * weigh(normalised(key, t)) for t in idf)
        whole = sum(
            idf[t] * weigh(normalised(key, t) + beside(t))
            for t in idf
        )
        if whole > 0:
            found[key] = (whole, whole - own)
    outside = {item.id for item in threaded} | windowed
    found.update({item.id: (raw, 0.0) for item, raw in hits if item.id not in outside})
    return found


class Threads(RuleBasedStateMachine):
    """Items written and deleted in a few tasks; every window on both stores is the naive one."""

    @initialize(width=st.integers(0, 3), weight=st.sampled_from([0.0, 0.25, 0.4, 1.0]))
    def start(self, width, weight):
        self.context = Context(width=width, weight=weight, hits=3)
        self.stores = [InMemoryStore(), SQLiteStore(":memory:")]
        self.items = []  # the naive model: the user's episodes in write order
        self.count = 0

    @rule(
        words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
        task=st.sampled_from([None, "t1", "t2"]),
        user=st.sampled_from(["ana", "ana", "bo"]),
    )
    def write(self, words, task, user):
        self.count += 1
        item = MemoryItem(
            id=f"i{self.count}",
            user_id=user,
            level="episodic",
            content=" ".join(words),
            task_id=task,
        )
        for store in self.stores:
            store.put([item])
        if user == "ana":
            self.items.append(item)

    @precondition(lambda self: self.items)
    @rule(data=st.data())
    def delete(self, data):
        item = data.draw(st.sampled_from(self.items))
        for store in self.stores:
            store.delete("ana", [item.id])
        self.items.remove(item)

    @invariant()
    def CX2_every_window_scores_as_the_naive_sum_on_every_store(self):
        for query in QUERIES:
            terms = analyze(query)
            for store in self.stores:
                hits = store.search("ana", "episodic", terms, 50)
                windows = in_context(store, "ana", "episodic", terms, hits, self.context)
                got = {w.item.id: (w.raw, w.context) for w in windows}
                expected = naive(self.items, query, self.context, hits) if self.items else {}
                assert set(got) == set(expected), (query, got, expected)
                for key, (raw, context) in expected.items():
                    assert math.isclose(got[key][0], raw, abs_tol=1e-6)
                    assert math.isclose(got[key][1], context, abs_tol=1e-6)

    @invariant()
    def CX5_the_limit_keeps_the_best_windows_of_the_whole_list(self):
        terms = analyze("deploy keys fish")
        for store in self.stores:
            hits = store.search("ana", "episodic", terms, 50)
            every = in_context(store, "ana", "episodic", terms, hits, self.context)
            best = sorted(every, key=lambda window: (-window.raw, window.item.id))
            for limit in (1, 3):
                kept = in_context(store, "ana", "episodic", terms, hits, self.context, limit)
                assert kept == best[:limit]

    @invariant()
    def CX3_own_and_context_parts_are_never_negative(self):
        terms = analyze("deploy keys fish")
        store = self.stores[0]
        hits = store.search("ana", "episodic", terms, 50)
        for window in in_context(store, "ana", "episodic", terms, hits, self.context):
            assert window.context >= 0 and window.raw - window.context >= -1e-9

    @invariant()
    def S15_both_stores_give_each_items_length_and_counts_of_the_terms_asked(self):
        asked = analyze("deploy keys fish 数据库")
        # Every id written (another user's, deleted ones) and one never written; then three
        # alone, so that holders not named are left out.
        written = [f"i{number}" for number in range(self.count + 1)] + ["never"]
        for ids in (written, [*written[:2], "never"]):
            expected = {}
            for item in self.items:
                counts = Counter(analyze(item.content))
                held = {term: counts[term] for term in sorted(set(asked)) if counts[term]}
                if held and item.id in ids:
                    expected[item.id] = TermCounts(sum(counts.values()), held)
            for store in self.stores:
                assert store.held_terms("ana", "episodic", ids, asked) == expected
                assert store.held_terms("ana", "semantic", ids, asked) == {}

    @invariant()
    def S14_both_stores_give_the_same_statistics(self):
        terms = analyze(" ".join(WORDS))
        first, second = (store.statistics("ana", "episodic", terms) for store in self.stores)
        assert first == second
        assert first.documents == len(self.items)


TestThreads = Threads.TestCase
