"""Both stores against a naive model: search, matching and neighbours after any writes
(S7, S8, S9, S14, S15, S16, TI1), and new ids among ids callers chose, here and in another
process (S3).

The model is a plain list of items in write order; its BM25 is computed from scratch, term by
term, with the textbook formula, so a store whose index drifts, or whose SQL sums the wrong
statistics, disagrees with it.
"""

import math
import tempfile
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from recuris import MemoryItem, SQLiteStore
from recuris.retrieval.bm25 import BM25Settings
from recuris.retrieval.scoring import analyze
from recuris.storage.store import IdTakenError, TermCounts

from factories import store_factories

pytestmark = pytest.mark.slow  # the longest state machine: the full run has it

DEFAULT = BM25Settings()  # the stores rank with the product's BM25 settings
WORDS = ["deploy", "deploys", "key", "keys", "red", "fish", "the", "blue", "数据库", "迁移"]
contents = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join).filter(str.strip)
users = st.sampled_from(["ana", "bob"])
levels = st.sampled_from(["episodic", "semantic"])
tasks = st.sampled_from([None, "t1", "t2"])
queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)
QUERIES = (["deploy", "key"], ["the", "fish", "数据库"], ["blue"])
QUERY_TERMS = [analyze(" ".join(query)) for query in QUERIES]


@lru_cache(maxsize=None)
def term_counts(content: str) -> Counter:
    """Count the analysed terms of one text (pure, so each text is analysed once per run)."""
    return Counter(analyze(content))


def naive_bm25(items: list[MemoryItem], query: list[str]) -> dict[str, float]:
    """Score every item of one scope from scratch: Okapi BM25 with the stores' k1 and b."""
    documents = {item.id: term_counts(item.content) for item in items}
    average = (
        sum(sum(c.values()) for c in documents.values()) / len(documents) if documents else 0.0
    )
    scores = {}
    for key, counts in documents.items():
        total = 0.0
        for term in set(query):
            frequency = counts.get(term, 0)
            if frequency:
                holders = sum(term in c for c in documents.values())
                idf = math.log(1 + (len(documents) - holders + 0.5) / (holders + 0.5))
                norm = 1 - DEFAULT.b + DEFAULT.b * sum(counts.values()) / average
                total += idf * frequency * (DEFAULT.k1 + 1) / (frequency + DEFAULT.k1 * norm)
        if total > 0:
            scores[key] = total
    return scores


class StoresAgainstAList(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        # Every store the suite knows, a fork's included
        # (tests/factories.py), each in a fresh folder.
        self.stores = [make(Path(tempfile.mkdtemp())) for make in store_factories().values()]
        self.model: dict[
            str, MemoryItem
        ] = {}  # insertion order is write order; a delete forgets it
        self.next_id = 0
        # S3, per store (each hands out its own ids): user cy's items by id, in write order; the
        # new ids handed out and not yet put; every id handed out; the ids another process took.
        self.chosen: list[dict[str, str]] = [{} for _ in self.stores]
        self.minted, self.handed, self.taken = ([set() for _ in self.stores] for _ in range(3))
        # A second connection to the same file stands for another process writing its own ids.
        self.elsewhere = [
            SQLiteStore(s.path) if isinstance(s, SQLiteStore) else None for s in self.stores
        ]

    def put_all(self, item: MemoryItem) -> None:
        for store in self.stores:
            store.put([item])
        self.model[item.id] = item  # an update keeps its place in the dict, as a rowid does

    @rule(user=users, level=levels, task=tasks, content=contents)
    def write(self, user, level, task, content):
        self.next_id += 1
        self.put_all(
            MemoryItem(
                id=f"i{self.next_id}", user_id=user, level=level, content=content, task_id=task
            )
        )

    @precondition(lambda self: self.model)
    @rule(data=st.data(), level=levels, task=tasks, content=contents)
    def rewrite(self, data, level, task, content):
        old = self.model[data.draw(st.sampled_from(sorted(self.model)))]
        self.put_all(
            MemoryItem(id=old.id, user_id=old.user_id, level=level, content=content, task_id=task)
        )

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def delete(self, data):
        doomed = self.model.pop(data.draw(st.sampled_from(sorted(self.model))))
        for store in self.stores:
            assert store.delete(doomed.user_id, [doomed.id]) == 1

    @rule()
    def hand_out_a_new_id(self):
        for store, chosen, minted, handed, taken in zip(
            self.stores, self.chosen, self.minted, self.handed, self.taken, strict=True
        ):
            new = store.new_id("item")
            assert new not in handed  # never twice
            # Stored only if another process took it since (S3)
            assert new not in chosen or new in taken
            handed.add(new)
            minted.add(new)

    def put_cy(self, at: int, item_id: str, content: str) -> None:
        """Put cy's item through store `at`: refused,
        changing nothing, if a new id taken meanwhile."""
        item = MemoryItem(id=item_id, user_id="cy", level="episodic", content=content)
        if item_id in self.minted[at] and item_id in self.chosen[at]:
            with pytest.raises(IdTakenError, match="S3"):
                self.stores[at].put([item])
        else:
            self.stores[at].put([item])
            self.chosen[at][item_id] = content
        self.minted[at].discard(item_id)  # written, or no longer this store's to write

    @rule(n=st.integers(1, 6), content=contents)
    def put_a_chosen_id(self, n, content):
        """A caller's own id, of the form the stores hand
        out: the first put of a new id is its write."""
        for at in range(len(self.stores)):
            self.put_cy(at, f"item-{n}", content)

    @precondition(lambda self: any(self.minted))
    @rule(pick=st.integers(0, 5), content=contents)
    def put_a_new_id(self, pick, content):
        for at, minted in enumerate(self.minted):
            if minted:
                self.put_cy(at, sorted(minted)[pick % len(minted)], content)

    @rule(n=st.integers(1, 6), content=contents)
    def take_an_id_elsewhere(self, n, content):
        """Another process (an import, say) stores its
        own id, knowing nothing of this store's new ids."""
        for at, other in enumerate(self.elsewhere):
            if other is not None:
                other.put(
                    [MemoryItem(id=f"item-{n}", user_id="cy", level="episodic", content=content)]
                )
                self.chosen[at][f"item-{n}"] = content
                self.taken[at].add(f"item-{n}")

    @invariant()
    def S3_a_new_id_never_writes_over_an_item(self):
        for store, chosen in zip(self.stores, self.chosen, strict=True):
            assert [(item.id, item.content) for item in store.list("cy")] == list(chosen.items())

    def scope(self, user, level):
        return [
            item for item in self.model.values() if item.user_id == user and item.level == level
        ]

    @invariant()
    def S8_search_ranks_as_naive_bm25_in_every_store(self):
        for user in ("ana", "bob"):
            for level in ("episodic", "semantic"):
                for terms in QUERY_TERMS:
                    expected = naive_bm25(self.scope(user, level), terms)
                    ids = []
                    for store in self.stores:
                        found = store.search(user, level, terms, 3)
                        ids.append([item.id for item, _ in found])
                        assert len(found) == min(3, len(expected))
                        for item, score in found:
                            # Rounded to 9 decimals
                            assert score == pytest.approx(expected[item.id], abs=1e-9)
                        # best first, and nothing left out scores higher than the last one kept
                        scores = [score for _, score in found]
                        assert scores == sorted(scores, reverse=True)
                        left_out = set(expected) - {item.id for item, _ in found}
                        assert all(expected[key] <= scores[-1] + 1e-9 for key in left_out)
                    assert ids[0] == ids[1]

    @invariant()
    def S7_matching_is_the_items_sharing_a_term_in_write_order(self):
        for user in ("ana", "bob"):
            terms = set(analyze("deploy fish 数据库"))
            expected = [
                i.id for i in self.scope(user, "episodic") if terms & set(analyze(i.content))
            ]
            for store in self.stores:
                assert [i.id for i in store.matching(user, "episodic", terms)] == expected

    @invariant()
    def S9_TI1_neighbours_are_the_previous_and_next_of_the_same_level_and_task(self):
        for item in self.model.values():
            thread = [
                i.id
                for i in self.model.values()
                if (i.user_id, i.level, i.task_id) == (item.user_id, item.level, item.task_id)
            ]
            at = thread.index(item.id)
            expected = (
                thread[at - 1] if at else None,
                thread[at + 1] if at + 1 < len(thread) else None,
            )
            padded = [None, None, *thread, None, None]
            wide = (*padded[at : at + 2], *padded[at + 3 : at + 5])
            for store in self.stores:
                assert store.adjacent(item.user_id, [item.id]) == {item.id: expected}
                assert store.adjacent(item.user_id, [item.id], 2) == {item.id: wide}
                assert store.adjacent("nobody", [item.id]) == {}

    @invariant()
    def S16_get_many_gives_the_users_items_named_once_in_the_order_named(self):
        named = [*reversed(self.model), "missing", *self.model]
        for user in ("ana", "bob"):
            expected = {
                key: self.model[key]
                for key in named
                if key in self.model and self.model[key].user_id == user
            }
            for store in self.stores:
                found = store.get_many(user, named)
                assert list(found) == list(expected)
                assert found == expected

    @invariant()
    def S14_statistics_count_the_items_their_length_and_each_terms_holders(self):
        terms = analyze("deploy fish 数据库 nothing")
        for user in ("ana", "bob"):
            scope = self.scope(user, "episodic")
            analysed = [set(analyze(i.content)) for i in scope]
            expected = {
                term: sum(term in held for held in analysed)
                for term in sorted(set(terms))
                if any(term in held for held in analysed)
            }
            length = sum(len(analyze(i.content)) for i in scope)
            for store in self.stores:
                found = store.statistics(user, "episodic", terms)
                assert (found.documents, found.length, found.frequencies) == (
                    len(scope),
                    length,
                    expected,
                )

    @invariant()
    def S15_held_terms_give_each_holders_length_and_counts_of_the_terms(self):
        terms = analyze("deploy fish 数据库 nothing")
        # Every id the model holds, of any user and level, and one never written; then three
        # alone, so that holders not named are left out.
        everyone = [*sorted(self.model), "never"]
        for named in (everyone, [*everyone[:2], "never"]):
            for user in ("ana", "bob"):
                expected = {}
                for item in self.scope(user, "episodic"):
                    counts = Counter(analyze(item.content))
                    held = {term: counts[term] for term in sorted(set(terms)) if counts[term]}
                    if held and item.id in named:
                        expected[item.id] = TermCounts(sum(counts.values()), held)
                for store in self.stores:
                    assert store.held_terms(user, "episodic", named, terms) == expected


TestStoresAgainstAList = StoresAgainstAList.TestCase
