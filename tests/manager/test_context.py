"""Example tests for recuris.manager.context: an episode scored with its thread (CX1-CX5)."""

import pytest

from recuris import InMemoryStore, MemoryItem, SQLiteStore
from recuris.manager.context import Context, in_context
from recuris.retrieval.scoring import analyze


def episode(id, content, task="s1", user="ana"):
    return MemoryItem(id=id, user_id=user, level="episodic", content=content, task_id=task)


@pytest.fixture(params=["memory", "sqlite"])
def store(request):
    return InMemoryStore() if request.param == "memory" else SQLiteStore(":memory:")


def scored(store, query, context=Context(), user="ana"):
    terms = analyze(query)
    hits = store.search(user, "episodic", terms, 50)
    return {w.item.id: w for w in in_context(store, user, "episodic", terms, hits, context)}


def test_an_answer_without_the_questions_words_is_found_through_its_neighbour(store):
    """CX4: the turn after a question enters with a context part and no own part."""
    store.put([episode("q", "what did you adopt"), episode("a", "a puppy named Biscuit")])
    found = scored(store, "adopt")
    assert set(found) == {"q", "a"}
    assert found["a"].context == found["a"].raw > 0


def test_a_window_reaches_width_items_on_either_side(store):
    """CX1: with width 1 the item two places away is not in the window; with width 2 it is."""
    store.put([episode(f"t{n}", f"filler {n}") for n in range(5)])
    store.put([episode("x", "lighthouse")])
    assert set(scored(store, "lighthouse", Context(width=1))) == {"t4", "x"}
    assert set(scored(store, "lighthouse", Context(width=2))) == {"t3", "t4", "x"}


def test_items_outside_a_task_are_scored_alone(store):
    """CX1: consecutive writes without a task are no context for each other."""
    store.put([episode("q", "what did you adopt", task=None), episode("a", "a puppy", task=None)])
    found = scored(store, "adopt")
    assert set(found) == {"q"} and found["q"].context == 0


def test_a_window_never_crosses_a_task(store):
    """CX1: the last item of one task is no neighbour of the first of the next."""
    store.put([episode("q", "what did you adopt", "s1"), episode("a", "a puppy", "s2")])
    assert set(scored(store, "adopt")) == {"q"}


def test_a_window_never_crosses_a_user(store):
    """CX1: another user's item written in between is in no window of this user."""
    store.put([episode("q", "what did you adopt"), episode("b", "adopt a cat", user="bo")])
    store.put([episode("a", "a puppy")])
    assert set(scored(store, "adopt")) == {"q", "a"}
    assert set(scored(store, "adopt", user="bo")) == {"b"}


def test_with_weight_zero_a_window_scores_as_the_store_does(store):
    """CX2: weight 0 gives each hit the store's own score and no neighbour."""
    store.put([episode("q", "red fish blue fish"), episode("a", "one fish"), episode("z", "zz")])
    hits = store.search("ana", "episodic", analyze("fish"), 50)
    found = scored(store, "fish", Context(weight=0.0))
    assert {key: w.raw for key, w in found.items()} == {item.id: raw for item, raw in hits}


def test_a_word_shared_with_a_neighbour_counts_within_saturation(store):
    """CX2: a word in the item and its neighbour scores less than the two scores added."""
    store.put([episode("q", "kite"), episode("a", "kite")])
    store.put([episode(f"o{n}", f"other {n}", task=None) for n in range(5)])
    alone = {item.id: raw for item, raw in store.search("ana", "episodic", analyze("kite"), 50)}
    found = scored(store, "kite", Context(width=1, weight=0.4))
    assert found["q"].raw < alone["q"] + 0.4 * alone["a"]
    assert found["q"].context > 0 and found["q"].raw - found["q"].context > 0


def test_a_window_without_neighbours_scores_as_the_store_does(store):
    """CX2: an item alone in its task scores what search gives, as an item outside a task."""
    store.put([episode("t", "kite flying", task="solo"), episode("n", "kite flying", task=None)])
    store.put([episode(f"o{n}", f"other {n}", task=None) for n in range(5)])
    hits = {item.id: raw for item, raw in store.search("ana", "episodic", analyze("kite"), 50)}
    found = scored(store, "kite")
    assert found["t"].raw == hits["t"] == found["n"].raw


def test_a_deleted_neighbour_leaves_no_word_in_a_window(store):
    """CX1: after a neighbour is deleted, its words no longer bring the item in."""
    store.put([episode("q", "what did you adopt"), episode("a", "a puppy named Biscuit")])
    assert "q" in scored(store, "biscuit")
    store.delete("ana", ["a"])
    assert scored(store, "biscuit") == {}


def test_only_the_best_hits_in_a_task_are_windowed(store):
    """CX4: hits in a task beyond `hits` are left out; hits outside a task stay."""
    store.put([episode("n1", "nothing"), episode("h1", "kite kite kite"), episode("n2", "none")])
    store.put([episode(key, text, "s2") for key, text in (("m1", "e"), ("h2", "kite"), ("m", "v"))])
    store.put([episode("free", "kite", task=None)])
    found = scored(store, "kite", Context(hits=1))
    assert set(found) == {"n1", "h1", "n2", "free"}


def test_a_hit_deleted_before_its_window_is_read_stays_out(store):
    """CX4: a hit the store no longer holds when the windows are read is not brought back."""
    store.put([episode("q", "kite"), episode("a", "puppy")])
    hits = store.search("ana", "episodic", analyze("kite"), 50)
    assert [item.id for item, _ in hits] == ["q"]
    store.delete("ana", ["q"])
    assert in_context(store, "ana", "episodic", analyze("kite"), hits, Context()) == []


@pytest.mark.parametrize(
    "setting, rule", [({"width": -1}, "CX1"), ({"weight": 1.5}, "CX2"), ({"hits": 0}, "CX4")]
)
def test_a_context_out_of_range_is_refused_naming_its_rule(setting, rule):
    """CX1, CX2, CX4: a width below 0, a weight outside [0, 1] or no hits is refused."""
    with pytest.raises(ValueError, match=rule):
        Context(**setting)


class Reading:
    """A store that notes the ids each `get_many` asks for, and may change one item first."""

    def __init__(self, store, doomed=None, moved=None):
        self.store = store
        self.asked = []
        self.doomed = doomed
        self.moved = moved

    def get_many(self, user_id, item_ids):
        item_ids = list(item_ids)
        self.asked.append(item_ids)
        if self.doomed:
            self.store.delete(user_id, [self.doomed])
        if self.moved:
            moved = self.store.get(user_id, self.moved)
            self.store.put([MemoryItem(**{**moved.to_dict(), "level": "semantic"})])
        return self.store.get_many(user_id, item_ids)

    def __getattr__(self, name):
        return getattr(self.store, name)


def chat(store):
    store.put(
        [
            episode(f"t{n}", "we adopted a cat" if n in (2, 7) else f"filler turn {n}")
            for n in range(10)
        ]
    )


def test_the_limit_keeps_the_best_windows_ties_to_the_smaller_id(store):
    """CX5: at most `limit` windows come back, best first; of equal scores the smaller id."""
    chat(store)
    terms = analyze("adopted")
    hits = store.search("ana", "episodic", terms, 50)
    every = in_context(store, "ana", "episodic", terms, hits, Context())
    kept = in_context(store, "ana", "episodic", terms, hits, Context(), limit=3)
    assert len(every) == 10  # five windows around each of the two hits
    assert [(w.item.id, w.raw) for w in kept] == [
        (w.item.id, w.raw) for w in sorted(every, key=lambda w: (-w.raw, w.item.id))[:3]
    ]
    assert [w.item.id for w in kept][:2] == ["t2", "t7"]


def test_only_the_items_returned_are_read(store):
    """CX5: the neighbours' items are read once, and only those of the windows returned."""
    chat(store)
    reading = Reading(store)
    terms = analyze("adopted")
    hits = store.search("ana", "episodic", terms, 50)
    kept = in_context(reading, "ana", "episodic", terms, hits, Context(), limit=4)
    [asked] = reading.asked
    assert sorted(asked) == sorted(w.item.id for w in kept if w.item.id not in ("t2", "t7"))


@pytest.mark.parametrize("change", [{"doomed": "t3"}, {"moved": "t3"}], ids=["deleted", "moved"])
def test_a_neighbour_deleted_or_moved_before_its_item_is_read_is_left_out(store, change):
    """CX5: a window whose item is gone, or no longer an episode, when it is read is left out."""
    chat(store)
    reading = Reading(store, **change)
    terms = analyze("adopted")
    hits = store.search("ana", "episodic", terms, 50)
    kept = {w.item.id for w in in_context(reading, "ana", "episodic", terms, hits, Context())}
    assert "t3" not in kept and {"t1", "t2", "t4", "t7"} <= kept


@pytest.mark.parametrize("limit", [0, -1, 2.5])
def test_a_limit_below_one_is_refused(store, limit):
    """CX5: a limit that is not an int of at least 1 is refused, naming the rule."""
    with pytest.raises((ValueError, TypeError), match="CX5"):
        in_context(store, "ana", "episodic", ["x"], [], Context(), limit)
