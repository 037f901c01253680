"""Property tests for recuris.manager.candidates: one ranking on every store (Q2, CA1, CA2, S8)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris import InMemoryStore, ManualClock, MemoryItem, MemoryManager, RecallPolicy, SQLiteStore
from recuris.manager.candidates import gather

WORDS = ["deploy", "keys", "red", "fish", "the", "blue", "staging", "数据库", "迁移", "rotate"]
items = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
        st.sampled_from(["episodic", "semantic"]),
        st.sampled_from([None, "t1", "t2"]),
        st.floats(0, 1),
        st.floats(0, 90),
    ),
    min_size=1,
    max_size=25,
)
queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)


def build(rows) -> list[MemoryItem]:
    return [
        MemoryItem(
            id=f"i{n}",
            user_id="ana",
            level=level,
            content=content,
            task_id=task,
            importance=importance,
            created_at=day * 86_400.0,
        )
        for n, (content, level, task, importance, day) in enumerate(rows)
    ]


@given(items, queries, st.integers(1, 10))
def test_S8_both_stores_give_the_same_top_k_through_the_manager(rows, query, top_k):
    """S8: the same items in memory and on SQLite: recall gives the same items, scores and order."""
    results = []
    for store in (InMemoryStore(), SQLiteStore(":memory:")):
        store.put(build(rows))
        manager = MemoryManager(store, clock=ManualClock(100 * 86_400.0))
        found = manager.recall(query, "ana", top_k=top_k, count_access=False).results
        results.append([(r.item.id, round(r.total, 6)) for r in found])
    assert results[0] == results[1]


@given(items, queries)
def test_Q2_every_part_in_the_unit_interval_and_the_best_relevance_is_one(rows, query):
    """Q2: parts lie in [0, 1]; when anything is found, the most relevant has relevance 1."""
    store = InMemoryStore()
    store.put(build(rows))
    found = gather(store, "ana", query, RecallPolicy(thin_semantic=10**6), 100 * 86_400.0, None, [])
    assert all(0 <= part <= 1 for r in found for part in r.parts.values())
    assert not found or max(r.parts["relevance"] for r in found) == 1.0


@given(items, queries)
def test_CA2_a_neighbour_is_credited_a_share_of_the_relevant_items_beside_it(rows, query):
    """CA2: alone a candidate scores its own; with neighbours, plus 0.25 of each beside it."""
    store = InMemoryStore()
    store.put(
        build(
            [
                (content, "episodic", task, importance, day)
                for content, _, task, importance, day in rows
            ]
        )
    )
    policy = RecallPolicy(thin_semantic=10**6)
    alone = RecallPolicy(thin_semantic=10**6, neighbour_weight=0)
    now = 100 * 86_400.0
    found = gather(store, "ana", query, alone, now, None, [])
    own = {r.item.id: r.parts["relevance"] for r in found}
    found = gather(store, "ana", query, policy, now, None, [])
    best_alone = max(own.values(), default=0.0) or 1.0
    raw = {key: value * best_alone for key, value in own.items()}  # back to a common unit
    expected = {}
    for item in store.list("ana", "episodic"):
        if item.task_id is None and item.id not in raw:
            continue
        around = (
            store.adjacent("ana", [item.id])[item.id] if item.task_id is not None else (None, None)
        )
        credit = sum(0.25 * raw.get(n.id, 0.0) for n in around if n is not None)
        if item.id in raw or credit:
            expected[item.id] = raw.get(item.id, 0.0) + credit
    best = max(expected.values(), default=0.0) or 1.0
    assert {r.item.id for r in found} == set(expected)
    for r in found:
        assert abs(r.parts["relevance"] - expected[r.item.id] / best) < 1e-6
