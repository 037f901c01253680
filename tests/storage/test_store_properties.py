"""Every store against the model store: list, search (its tie order included), matching,
neighbours, statistics and held terms after any writes (S7, S8, S9, S11, S14, S15, S16, MO1,
MO2), the model's scores against the textbook formula, and new ids among ids callers chose,
here and in another process (S3).

The model is `ModelStore` (recuris/storage/model_store.py), a scan of its items in write order;
every other store the suite knows (the built-in ones, a BufferedStore over each, whose writes
are at times refused and queued, a fork's) must answer each read exactly as it does, so a
store whose index drifts, whose SQL sums the wrong statistics, whose queue misplaces an item
or which orders equal scores otherwise disagrees with it. The model's own scores are computed
again here from scratch, term by term, with the textbook BM25.
"""

import math
import tempfile
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from recuris import MemoryItem, SQLiteStore, StoreError
from recuris.retrieval.bm25 import BM25Settings
from recuris.retrieval.scoring import analyze
from recuris.storage.buffered_store import BufferedStore
from recuris.storage.model_store import ModelStore
from recuris.storage.store import IdTakenError

from factories import store_factories

pytestmark = pytest.mark.slow  # the longest state machine: the full run has it

DEFAULT = BM25Settings()  # the stores rank with the product's BM25 settings
USERS = ("ana", "bob")
LEVELS = ("episodic", "semantic")
WORDS = ["deploy", "deploys", "key", "keys", "red", "fish", "the", "blue", "数据库", "迁移"]
contents = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join).filter(str.strip)
users = st.sampled_from(USERS)
levels = st.sampled_from(LEVELS)
tasks = st.sampled_from([None, "t1", "t2"])
QUERIES = (["deploy", "key"], ["the", "fish", "数据库"], ["blue"])
QUERY_TERMS = [analyze(" ".join(query)) for query in QUERIES]
SCORED = analyze("deploy fish 数据库 nothing")  # the terms statistics and held terms are asked


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


class WritesRefused:
    """A store whose writes are refused while `locked`, as a locked database refuses them; its
    reads, and its new ids, still work."""

    WRITES = {"put", "append_audit", "record_access", "delete", "erase", "delete_user"}

    def __init__(self, inner) -> None:
        self.inner = inner
        self.locked = False

    def __getattr__(self, name):
        if self.locked and name in self.WRITES:
            raise StoreError("database is locked")
        return getattr(self.inner, name)


def buffered(make):
    """Return a factory of a BufferedStore over the store `make` makes, whose writes a test may
    refuse (its `inner`, a WritesRefused): its reads then overlay its queue (QR1)."""
    return lambda folder: BufferedStore(WritesRefused(make(folder)))


def innermost(store):
    """Return the store under every wrapper (a BufferedStore's, a WritesRefused's)."""
    while hasattr(store, "inner"):
        store = store.inner
    return store


def stores_under_test() -> dict[str, object]:
    """Return every store the suite knows but the model, and a BufferedStore over each built-in
    one, by name, each in a fresh folder."""
    factories = {name: make for name, make in store_factories().items() if name != "model"}
    for name in ("memory", "sqlite"):
        factories[f"buffered {name}"] = buffered(factories[name])
    return {name: make(Path(tempfile.mkdtemp())) for name, make in factories.items()}


def scored(found: list[tuple[MemoryItem, float]]) -> list[tuple[str, float]]:
    return [(item.id, score) for item, score in found]


class StoresAgainstAList(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.model = ModelStore()
        self.stores = stores_under_test()  # by name, so that a failure says which store
        self.next_id = 0
        # S3, per store (each hands out its own ids): user cy's items by id, in write order; the
        # new ids handed out and not yet put; every id handed out; the ids another process took.
        self.chosen: list[dict[str, str]] = [{} for _ in self.stores]
        self.minted, self.handed, self.taken = ([set() for _ in self.stores] for _ in range(3))
        # A second connection to the same file stands for another process writing its own ids.
        self.elsewhere = [
            SQLiteStore(inner.path) if isinstance(inner, SQLiteStore) else None
            for inner in map(innermost, self.stores.values())
        ]
        # The buffered stores' inner stores, whose writes `lock` refuses: while they are
        # refused, writes queue and every read of a buffered store overlays its queue.
        self.lockable = [
            store.inner for store in self.stores.values() if isinstance(store, BufferedStore)
        ]
        self.locked = False
        self.deleted: list[MemoryItem] = []  # deleted items, which a rule may put again

    def written(self) -> list[str]:
        """Return the ids of ana's and bob's items, as the model holds them, sorted."""
        return sorted(item.id for user in USERS for item in self.model.list(user))

    def put_all(self, item: MemoryItem) -> None:
        for store in [self.model, *self.stores.values()]:
            store.put([item])

    @rule(user=users, level=levels, task=tasks, content=contents)
    def write(self, user, level, task, content):
        self.next_id += 1
        self.put_all(
            MemoryItem(
                id=f"i{self.next_id}", user_id=user, level=level, content=content, task_id=task
            )
        )

    @precondition(lambda self: self.written())
    @rule(data=st.data(), level=levels, task=tasks, content=contents)
    def rewrite(self, data, level, task, content):
        item_id = data.draw(st.sampled_from(self.written()))
        user = next(user for user in USERS if self.model.get(user, item_id))
        self.put_all(
            MemoryItem(id=item_id, user_id=user, level=level, content=content, task_id=task)
        )

    @rule(locked=st.booleans())
    def lock(self, locked):
        """Refuse the buffered stores' writes, or accept them again and write their queues."""
        for inner in self.lockable:
            inner.locked = locked
        if not locked:
            for store in self.stores.values():
                if isinstance(store, BufferedStore):
                    assert store.flush() and store.pending == 0
        self.locked = locked

    # `delete`, and cy's writes, go through unlocked stores only: a buffered store's delete
    # asks the store (G3), and a refused new id is refused when the queue is written (S3).
    @precondition(lambda self: self.written() and not self.locked)
    @rule(data=st.data())
    def delete(self, data):
        item_id = data.draw(st.sampled_from(self.written()))
        user = next(user for user in USERS if self.model.get(user, item_id))
        self.deleted.append(self.model.get(user, item_id))
        for store in [self.model, *self.stores.values()]:
            assert store.delete(user, [item_id]) == 1

    @precondition(lambda self: self.written())
    @rule(data=st.data())
    def delete_in_a_put(self, data):
        """A put's deletion: queued, while the buffered stores' writes are refused (S5, QR1)."""
        item_id = data.draw(st.sampled_from(self.written()))
        user = next(user for user in USERS if self.model.get(user, item_id))
        doomed = self.model.get(user, item_id)
        self.deleted.append(doomed)
        for store in [self.model, *self.stores.values()]:
            store.put((), delete=[doomed])

    @precondition(lambda self: self.deleted)
    @rule(data=st.data())
    def put_a_deleted_item_again(self, data):
        """A deleted item put again comes last in write order (S11, MO1)."""
        again = self.deleted.pop(data.draw(st.integers(0, len(self.deleted) - 1)))
        self.put_all(again)

    @rule()
    def hand_out_a_new_id(self):
        for store, chosen, minted, handed, taken in zip(
            self.stores.values(), self.chosen, self.minted, self.handed, self.taken, strict=True
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
        store = list(self.stores.values())[at]
        item = MemoryItem(id=item_id, user_id="cy", level="episodic", content=content)
        if item_id in self.minted[at] and item_id in self.chosen[at]:
            with pytest.raises(IdTakenError, match="S3"):
                store.put([item])
        else:
            store.put([item])
            self.chosen[at][item_id] = content
        self.minted[at].discard(item_id)  # written, or no longer this store's to write

    @precondition(lambda self: not self.locked)
    @rule(n=st.integers(1, 6), content=contents)
    def put_a_chosen_id(self, n, content):
        """A caller's own id, of the form the stores hand
        out: the first put of a new id is its write."""
        for at in range(len(self.stores)):
            self.put_cy(at, f"item-{n}", content)

    @precondition(lambda self: any(self.minted) and not self.locked)
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
        for store, chosen in zip(self.stores.values(), self.chosen, strict=True):
            assert [(item.id, item.content) for item in store.list("cy")] == list(chosen.items())

    @invariant()
    def S11_MO1_list_gives_the_models_items_in_its_order(self):
        for user in USERS:
            for level, task in ((None, None), ("episodic", None), ("semantic", "t1")):
                expected = self.model.list(user, level, task)
                for name, store in self.stores.items():
                    assert store.list(user, level, task) == expected, f"S11: {name}"

    @invariant()
    def S8_MO2_search_gives_the_models_items_scores_and_tie_order(self):
        for user in USERS:
            for level in LEVELS:
                for terms in QUERY_TERMS:
                    expected = scored(self.model.search(user, level, terms, 3))
                    for name, store in self.stores.items():
                        found = scored(store.search(user, level, terms, 3))
                        # The same items in the same order, equal scores included (ties go to
                        # the later-written item); the scores equal to the rounding's last digit.
                        assert [key for key, _ in found] == [key for key, _ in expected], (
                            f"S8: {name} ranks {found}, the model {expected}"
                        )
                        assert [score for _, score in found] == pytest.approx(
                            [score for _, score in expected], abs=1e-9
                        )

    @invariant()
    def S8_the_models_scores_are_the_textbook_bm25s(self):
        for user in USERS:
            for level in LEVELS:
                scope = self.model.list(user, level)
                for terms in QUERY_TERMS:
                    expected = naive_bm25(scope, terms)
                    found = dict(scored(self.model.search(user, level, terms, len(scope))))
                    assert found == pytest.approx(expected, abs=1e-9)

    @invariant()
    def S7_matching_gives_the_models_items_in_write_order(self):
        terms = set(analyze("deploy fish 数据库"))
        for user in USERS:
            expected = self.model.matching(user, "episodic", terms)
            for name, store in self.stores.items():
                assert store.matching(user, "episodic", terms) == expected, f"S7: {name}"

    @invariant()
    def S9_TI1_neighbours_are_the_models(self):
        for item_id in self.written():
            user = next(user for user in USERS if self.model.get(user, item_id))
            for width in (1, 2):
                expected = self.model.adjacent(user, [item_id], width)
                for name, store in self.stores.items():
                    assert store.adjacent(user, [item_id], width) == expected, f"S9: {name}"
            for name, store in self.stores.items():
                assert store.adjacent("nobody", [item_id]) == {}, f"S9: {name}"

    @invariant()
    def S16_get_many_gives_the_models_items_once_in_the_order_named(self):
        written = self.written()
        named = [*reversed(written), "missing", *written]
        for user in USERS:
            expected = self.model.get_many(user, named)
            for name, store in self.stores.items():
                found = store.get_many(user, named)
                assert list(found) == list(expected), f"S16: {name}"
                assert found == expected, f"S16: {name}"

    @invariant()
    def S14_statistics_are_the_models(self):
        for user in USERS:
            expected = self.model.statistics(user, "episodic", SCORED)
            for name, store in self.stores.items():
                assert store.statistics(user, "episodic", SCORED) == expected, f"S14: {name}"

    @invariant()
    def S15_held_terms_are_the_models(self):
        # Every id of any user and level, and one never written; then three alone, so that
        # holders not named are left out.
        everyone = [*self.written(), "never"]
        for named in (everyone, [*everyone[:2], "never"]):
            for user in USERS:
                expected = self.model.held_terms(user, "episodic", named, SCORED)
                for name, store in self.stores.items():
                    found = store.held_terms(user, "episodic", named, SCORED)
                    assert found == expected, f"S15: {name}"

    def teardown(self):
        self.lock(False)
        for store in [*self.stores.values(), *filter(None, self.elsewhere)]:
            store.close()


TestStoresAgainstAList = StoresAgainstAList.TestCase


def test_a_store_ranking_equal_scores_earlier_first_fails_the_machine(monkeypatch):
    """S8: a fork's store that ranks equal scores earlier-written first (every score right) fails
    the machine, which names S8: the model fixes the tie order, not the other stores alone."""
    monkeypatch.setenv("RECURIS_STORES", "fork_store:make_earlier_ties_store")
    # Generation alone: the failure is what is shown, not its smallest example.
    found = settings(max_examples=200, phases=[Phase.generate], deadline=None)
    with pytest.raises(AssertionError, match="S8: fork_store:make_earlier_ties_store ranks"):
        run_state_machine_as_test(StoresAgainstAList, settings=found)
