"""Example tests for recuris.manager.candidates: layers, one scale, neighbours (Q2, CA1-CA4)."""

import pytest

from recuris import InMemoryStore, JaccardScorer, MemoryItem, RecallPolicy, SQLiteStore
from recuris.manager.candidates import gather

DAY = 86_400.0


def item(id, content, level="semantic", importance=0.5, created_at=0.0, **fields):
    fields.setdefault("last_access_at", created_at)
    return MemoryItem(
        id=id,
        user_id="ana",
        level=level,
        content=content,
        importance=importance,
        created_at=created_at,
        **fields,
    )


@pytest.fixture(params=["memory", "sqlite"])
def store(request):
    return InMemoryStore() if request.param == "memory" else SQLiteStore(":memory:")


def test_episodes_are_gathered_only_when_semantic_memory_is_thin(store):
    """CA1: with enough relevant facts, episodic items are not considered."""
    store.put(
        [
            item("f1", "python is used"),
            item("f2", "python version 3.12"),
            item("e1", "python crashed once", level="episodic"),
        ]
    )
    found = gather(store, "ana", "python", RecallPolicy(thin_semantic=2), 0.0, None, [])
    assert {r.item.id for r in found} == {"f1", "f2"}
    found = gather(store, "ana", "python", RecallPolicy(thin_semantic=3), 0.0, None, [])
    assert {r.item.id for r in found} == {"f1", "f2", "e1"}


def test_superseded_facts_only_when_asked_for(store):
    """CA1: an invalid fact is excluded unless include_invalid is set, and then says so."""
    store.put([item("f1", "database MySQL", invalidated_at=5.0)])
    assert gather(store, "ana", "database", RecallPolicy(), 0.0, None, []) == []
    [found] = gather(store, "ana", "database", RecallPolicy(), 0.0, None, [], include_invalid=True)
    assert found.reason == "semantic fact, superseded"


def test_working_items_say_whether_a_task_is_in_progress(store):
    """CA4: a task's working items are its memory; with no task, they say there is none."""
    store.put([item("w1", "deploy the api", level="working", task_id="t1")])
    [in_task] = gather(store, "ana", "deploy", RecallPolicy(), 0.0, "t1", [])
    [no_task] = gather(store, "ana", "deploy", RecallPolicy(), 0.0, None, [])
    assert in_task.reason == "working memory of the current task"
    assert no_task.reason == "working memory, no task"


def test_the_most_relevant_candidate_has_relevance_one(store):
    """Q2: relevance is divided by the best candidate's raw score, so the best scores exactly 1."""
    store.put(
        [
            item("a", "deploy the api to eu-west", level="episodic"),
            item("b", "the api is slow", level="episodic"),
        ]
    )
    found = {
        r.item.id: r.parts["relevance"]
        for r in gather(store, "ana", "deploy api", RecallPolicy(), 0.0, None, [])
    }
    assert found["a"] == 1.0 and 0 < found["b"] < 1


def test_recency_halves_over_the_age_of_the_oldest_candidate(store):
    """CA3: a memory of 60 days: the oldest candidate's recency is 1/2, not 0.5 ** (60 / 7)."""
    store.put(
        [
            item("old", "deploy failed", level="episodic", created_at=0.0),
            item("new", "deploy worked", level="episodic", created_at=60 * DAY),
        ]
    )
    found = {
        r.item.id: r.parts["recency"]
        for r in gather(store, "ana", "deploy", RecallPolicy(), 60 * DAY, None, [])
    }
    assert found == {"old": 0.5, "new": 1.0}


def test_recency_never_halves_faster_than_the_policy_says(store):
    """CA3: within the policy's half-life of 7 days, a 7-day-old candidate has recency 1/2."""
    store.put(
        [
            item("old", "deploy failed", level="episodic", created_at=0.0),
            item("new", "deploy worked", level="episodic", created_at=7 * DAY),
        ]
    )
    found = {
        r.item.id: r.parts["recency"]
        for r in gather(store, "ana", "deploy", RecallPolicy(), 7 * DAY, None, [])
    }
    assert found == {"old": 0.5, "new": 1.0}


def test_a_clearly_relevant_old_memory_beats_a_fresh_weak_one(store):
    """Q2, CA3: recency and importance cannot bury relevance: an old exact match beats a mention."""
    store.put(
        [
            item("match", "the staging database password rotates monthly", level="episodic"),
            item(
                "fresh",
                "the database was mentioned today",
                level="episodic",
                created_at=300 * DAY,
                importance=0.9,
            ),
        ]
    )
    found = gather(
        store, "ana", "staging database password rotation", RecallPolicy(), 300 * DAY, None, []
    )
    assert max(found, key=lambda r: r.total).item.id == "match"


def test_a_neighbour_in_the_same_task_enters_through_its_context(store):
    """CA2: the answer after the question enters with context only, below the question."""
    store.put(
        [
            item("q", "what did you adopt last week", level="episodic", task_id="s1"),
            item("a", "a puppy named Biscuit", level="episodic", task_id="s1"),
            item("other", "nothing to see", level="episodic", task_id="s2"),
        ]
    )
    recalled = gather(store, "ana", "adopt", RecallPolicy(), 0.0, None, [])
    found = {r.item.id: r.parts for r in recalled}
    assert set(found) == {"q", "a"}
    assert found["q"]["relevance"] + found["q"]["context"] == pytest.approx(1.0)
    assert found["a"]["relevance"] == 0 and 0 < found["a"]["context"] < 1


def test_windows_beyond_the_pool_are_left_out(store):
    """CA4: the windows around the hits are cut to the pool, the hits' own windows first."""
    sessions = [
        [f"filler {n} one", f"filler {n} two", f"we adopted a cat in {n}", f"filler {n} three"]
        for n in range(3)
    ]
    store.put(
        [
            item(f"s{n}-{place}", text, level="episodic", task_id=f"s{n}", created_at=n * DAY)
            for n, session in enumerate(sessions)
            for place, text in enumerate(session)
        ]
    )
    every = gather(store, "ana", "adopted", RecallPolicy(), 9 * DAY, None, [])
    cut = gather(store, "ana", "adopted", RecallPolicy(candidate_pool=3), 9 * DAY, None, [])
    assert len(every) == 12
    assert sorted(r.item.id for r in cut) == ["s0-2", "s1-2", "s2-2"]


def test_items_outside_a_task_have_no_neighbours(store):
    """CA2: consecutive writes without a task are not context for each other."""
    store.put(
        [item("q", "what did you adopt", level="episodic"), item("a", "a puppy", level="episodic")]
    )
    assert [r.item.id for r in gather(store, "ana", "adopt", RecallPolicy(), 0.0, None, [])] == [
        "q"
    ]


def test_neighbours_never_cross_a_task(store):
    """CA2: the last item of one task is not the neighbour of the first of the next."""
    store.put(
        [
            item("q", "what did you adopt", level="episodic", task_id="s1"),
            item("a", "a puppy", level="episodic", task_id="s2"),
        ]
    )
    assert [r.item.id for r in gather(store, "ana", "adopt", RecallPolicy(), 0.0, None, [])] == [
        "q"
    ]


def test_a_scorer_factory_scores_in_python_what_matching_finds(store):
    """Q2: a policy with a scorer (Jaccard) ranks what `matching` returns on the same scale."""
    store.put(
        [
            item("a", "deploy api", level="episodic"),
            item("b", "deploy the api to eu-west now", level="episodic"),
        ]
    )
    policy = RecallPolicy(scorer=JaccardScorer)
    found = {
        r.item.id: r.parts["relevance"]
        for r in gather(store, "ana", "deploy api", policy, 0.0, None, [])
    }
    assert found["a"] == 1.0 and 0 < found["b"] < 1


def test_a_pool_below_one_is_refused():
    """A candidate pool below 1 is refused, naming the setting."""
    with pytest.raises(ValueError, match="CA4: candidate_pool"):
        RecallPolicy(candidate_pool=0)


def test_recency_follows_the_last_access_not_the_creation(store):
    """CA3: an old memory recalled a day ago is recent; one never used since its writing is not."""
    store.put(
        [
            item("used", "deploy failed", level="episodic", last_access_at=59 * DAY),
            item("idle", "deploy worked", level="episodic"),
        ]
    )
    found = {
        r.item.id: r.parts["recency"]
        for r in gather(store, "ana", "deploy", RecallPolicy(), 60 * DAY, None, [])
    }
    assert found["used"] > 0.9 and found["idle"] == 0.5
