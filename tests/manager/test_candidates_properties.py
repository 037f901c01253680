"""Property tests for recuris.manager.candidates: one ranking on every store (Q2, CA1-CA4, S8)."""

from hypothesis import given
from hypothesis import strategies as st
from pytest import approx

from recuris import InMemoryStore, ManualClock, MemoryItem, MemoryManager, RecallPolicy, SQLiteStore
from recuris.manager.candidates import gather
from recuris.manager.context import in_context
from recuris.retrieval.scoring import analyze

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
    """Q2: parts lie in [0, 1]; the most relevant has relevance and context adding up to 1."""
    store = InMemoryStore()
    store.put(build(rows))
    found = gather(store, "ana", query, RecallPolicy(thin_semantic=10**6), 100 * 86_400.0, None, [])
    assert all(0 <= part <= 1 for r in found for part in r.parts.values())
    best = max((r.parts["relevance"] + r.parts["context"] for r in found), default=1.0)
    assert abs(best - 1.0) < 1e-9


@given(items, queries)
def test_CA2_an_episode_is_relevant_as_its_window_scores(rows, query):
    """CA2: each episodic candidate's relevance and context are its window's parts (in_context)."""
    store = InMemoryStore()
    store.put(build([(text, "episodic", task, weight, day) for text, _, task, weight, day in rows]))
    policy = RecallPolicy(thin_semantic=10**6)
    found = gather(store, "ana", query, policy, 100 * 86_400.0, None, [])
    hits = store.search("ana", "episodic", analyze(query), policy.candidate_pool)
    windows = in_context(store, "ana", "episodic", analyze(query), hits, policy.context)
    best = max((window.raw for window in windows), default=1.0)
    expected = {w.item.id: ((w.raw - w.context) / best, w.context / best) for w in windows}
    assert {r.item.id: (r.parts["relevance"], r.parts["context"]) for r in found} == {
        key: (approx(own), approx(context)) for key, (own, context) in expected.items()
    }


@given(items, queries, st.integers(1, 6))
def test_CA4_the_episodic_layer_offers_its_best_windows_up_to_the_pool(rows, query, pool):
    """CA4: at most `candidate_pool` episodes, none scoring below a window left out."""
    store = InMemoryStore()
    store.put(build([(text, "episodic", task, weight, day) for text, _, task, weight, day in rows]))
    policy = RecallPolicy(thin_semantic=10**6, candidate_pool=pool)
    found = gather(store, "ana", query, policy, 100 * 86_400.0, None, [])
    hits = store.search("ana", "episodic", analyze(query), pool)
    scored = in_context(store, "ana", "episodic", analyze(query), hits, policy.context)
    windows = {window.item.id: window.raw for window in scored}
    kept = {r.item.id for r in found}
    assert len(found) == len(kept)
    assert kept <= set(windows)
    left_out = [raw for key, raw in windows.items() if key not in kept]
    assert len(kept) == min(pool, len(windows))
    assert all(windows[key] >= raw for key in kept for raw in left_out)
