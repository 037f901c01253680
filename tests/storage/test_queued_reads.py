"""Example tests for recuris.storage.queued_reads: reads see the retry queue (QR1-QR3)."""

import pytest
from outages import FlakyStore, Outage, ReadCountingQueue, protocol_operations

from recuris import InMemoryStore, ManualClock, MemoryItem, MemoryManager, StoreError
from recuris.storage.audit import AuditEntry
from recuris.storage.buffered_store import BufferedStore, QueuedView
from recuris.storage.model_store import ModelStore
from recuris.storage.store import Access


@pytest.fixture
def flaky():
    return FlakyStore()


@pytest.fixture
def clock():
    return ManualClock(1_000_000)


def item(id, user="ana"):
    return MemoryItem(id=id, user_id=user, level="episodic", content=f"event {id}")


def test_reads_see_queued_writes(flaky):
    """QR1: get, list and matching return a queued item as if it were written, newest copy first."""
    store = BufferedStore(flaky)
    store.put([item("i1")])
    # Reads still work
    flaky.put = lambda *arguments: (_ for _ in ()).throw(StoreError("database is locked"))
    newer = MemoryItem(id="i1", user_id="ana", level="episodic", content="event i1", importance=0.9)
    store.put([item("i2"), newer])
    assert store.pending == 1 and store.get("ana", "i2").content == "event i2"
    assert [(i.id, i.importance) for i in store.list("ana")] == [("i1", 0.9), ("i2", 0.5)]
    assert [i.id for i in store.matching("ana", "episodic", ["i2"])] == ["i2"]
    assert store.get("bob", "i2") is None and store.list("bob") == []


def test_search_with_writes_queued_ranks_as_the_model_equal_scores_included(flaky):
    """QR1: while writes are queued, search answers as the model holding them would: the same
    items and scores, the later-written first among equal scores (S8), a rewrite in place."""
    store = BufferedStore(flaky)
    model = ModelStore()
    same = [
        MemoryItem(id=key, user_id="ana", level="episodic", content="deploy failed")
        for key in ("a", "b", "c", "d")
    ]
    for target in (store, model):
        target.put(same[:2])
    flaky.down = True
    for target in (store, model):
        target.put(same[2:])
        target.put([same[0]])  # rewritten while queued: it keeps its place
    assert store.pending == 2
    flaky.down = False  # reads work again; the queue is not written yet
    found = store.search("ana", "episodic", ["deploy"], 3)
    expected = model.search("ana", "episodic", ["deploy"], 3)
    assert [(i.id, score) for i, score in found] == [(i.id, score) for i, score in expected]
    assert [i.id for i, _ in found] == ["d", "c", "b"]


def test_a_queued_rewrite_keeps_its_place_even_from_another_level_task_or_terms(flaky):
    """QR1: a queued rewrite that moves an item to the level, task or terms read keeps the
    item's place in write order, as the store will once the queue is written (S11)."""
    store = BufferedStore(flaky)
    store.put([item("i1"), item("i2")])
    store.put([MemoryItem(id="i3", user_id="ana", level="semantic", content="event i2")])
    flaky.down = True
    store.put([MemoryItem(id="i1", user_id="ana", level="semantic", content="event i2")])
    flaky.down = False  # reads work again; the queue is not written yet
    assert [i.id for i in store.list("ana", "semantic")] == ["i1", "i3"]
    assert [i.id for i in store.matching("ana", "semantic", ["i2"])] == ["i1", "i3"]
    assert [i.id for i, _ in store.search("ana", "semantic", ["i2"], 2)] == ["i3", "i1"]
    store.flush()
    assert [i.id for i in store.list("ana", "semantic")] == ["i1", "i3"]


def test_an_item_deleted_and_put_again_in_the_queue_comes_last(flaky):
    """QR1: a queued put that deletes an item, then one that puts it again, place it after every
    stored item, as the store will once the queue is written (S11), its queued accesses kept."""
    store = BufferedStore(flaky)
    store.put([item("i1"), item("i2")])
    flaky.down = True
    store.put([], delete=[item("i1")])
    store.put([item("i1")])
    store.record_access([Access("ana", "i1", 9.0)])
    flaky.down = False  # reads work again; the queue is not written yet
    assert [(i.id, i.access_count) for i in store.list("ana")] == [("i2", 0), ("i1", 1)]
    store.flush()
    assert [(i.id, i.access_count) for i in store.list("ana")] == [("i2", 0), ("i1", 1)]


def test_a_queued_item_is_got_even_when_the_store_is_gone(flaky):
    """QR1: the queue is newer than the store, so a queued item is returned without asking it."""
    store = BufferedStore(flaky)
    flaky.down = True
    store.put([item("i1")])
    assert store.get("ana", "i1").content == "event i1"


def test_reads_see_queued_deletions_and_counted_accesses_in_order(flaky):
    """QR1: a queued put's deletions hide what it deletes;
    a queued access counts once, and lands in order."""
    store = BufferedStore(flaky)
    store.put([item("i1"), item("i2")])
    flaky.down = True
    store.record_access([Access("ana", "i1", 7.0)])
    store.put([item("i3")], delete=[item("i2")])
    store.record_access([Access("ana", "i3", 8.0), Access("ana", "i2", 8.0)])
    assert [(i.id, i.access_count) for i in store.queued("ana")] == [("i3", 1)]
    flaky.down = False  # reads work again; the queue is not written yet
    assert [(i.id, i.access_count, i.last_access_at) for i in store.list("ana")] == [
        ("i1", 1, 7.0),
        ("i3", 1, 8.0),
    ]
    assert store.get("ana", "i2") is None and store.get("ana", "i1").access_count == 1
    assert [i.id for i, _ in store.search("ana", "episodic", ["i2", "i3"], 5)] == ["i3"]
    assert store.flush() and [(i.id, i.access_count) for i in flaky.list("ana")] == [
        ("i1", 1),
        ("i3", 1),
    ]


def test_qr1_an_item_deleted_then_put_again_keeps_the_accesses_queued_after(flaky):
    """QR1: an item deleted, put again, then used while writes are queued is read with that
    use counted, as the store holds it once the queue is written."""
    store = BufferedStore(flaky)
    store.put([item("i1")])
    flaky.down = True
    store.put([], delete=[item("i1")])
    store.put([item("i1")])
    store.record_access([Access("ana", "i1", 9.0)])
    flaky.down = False  # reads work again; the queue is not written yet
    read = [(i.id, i.access_count, i.last_access_at) for i in store.list("ana")]
    assert read == [("i1", 1, 9.0)] and store.get("ana", "i1").access_count == 1
    assert store.flush()
    assert [(i.id, i.access_count, i.last_access_at) for i in flaky.list("ana")] == read


def test_iterate_yields_what_list_returns_while_writes_are_queued(flaky):
    """QR1: while writes of the user are queued, `iterate`
    yields `list`'s items, in its order, in batches."""
    store = BufferedStore(flaky)
    store.put([item("i1"), item("i2"), item("i3")])
    flaky.down = True
    store.put([item("i4")], delete=[item("i2")])
    store.record_access([Access("ana", "i1", 9.0)])
    flaky.down = False  # reads work again; the queue is not written yet
    batches = list(store.iterate("ana", batch_size=2))
    assert [len(batch) for batch in batches] == [2, 1]
    assert [i for batch in batches for i in batch] == store.list("ana")
    assert [(i.id, i.access_count) for batch in batches for i in batch] == [
        ("i1", 1),
        ("i3", 0),
        ("i4", 0),
    ]


def test_the_queued_view_writes_out_every_store_operation():
    """QR2: QueuedView defines each operation of the
    Store protocol itself, and forwards nothing unseen."""
    assert protocol_operations() - set(vars(QueuedView)) == set()
    assert not any("__getattr__" in vars(cls) for cls in QueuedView.__mro__)


def test_the_queued_view_lists_the_queue_and_hands_on_the_rest(flaky):
    """QR2: a QueuedView lists only queued items; every other operation is the buffered store's."""
    store = BufferedStore(flaky)
    store.put([item("i1")], [AuditEntry("i1", "write", "why", 1.0, None, "ana")])
    flaky.down = True
    view = QueuedView(store)
    view.put([item("i2")], [AuditEntry("i2", "write", "why", 2.0, None, "ana")])
    assert [i.id for i in view.list("ana")] == ["i2"] and store.pending == 1
    flaky.down = False
    assert [i.id for i in (view.get("ana", "i1"), view.get("ana", "i2"))] == ["i1", "i2"]
    assert [r.item_id for r in view.audit("ana")] == ["i1", "i2"]
    assert [[i.id for i in batch] for batch in view.iterate("ana", batch_size=1)] == [
        ["i1"],
        ["i2"],
    ]


def test_while_writes_fail_a_write_can_be_read_back_and_recalled(clock):
    """QR1: with writes queued and reads working, get, list and recall see the queued write."""
    inner = Outage()
    manager = MemoryManager(inner, clock=clock)
    inner.down = "writes"
    fact = manager.write("database: PostgreSQL", "ana", level="semantic")
    assert (
        fact is not None and manager.get(fact.id, "ana") == fact and manager.list("ana") == [fact]
    )
    assert [r.item.id for r in manager.recall("which database", "ana").results] == [fact.id]


def test_items_got_many_carry_the_accesses_still_queued():
    """QR1: with only accesses queued, `get_many` returns items with those accesses counted."""
    store = BufferedStore(InMemoryStore(), access_batch=10)
    threaded = [
        MemoryItem(id=key, user_id="ana", level="episodic", content=key, task_id="chat")
        for key in ("a", "b", "c")
    ]
    store.put(threaded)
    store.record_access([Access("ana", "a", 5.0)])
    assert store.pending
    assert store.adjacent("ana", ["b"]) == {"b": ("a", "c")}
    found = store.get_many("ana", ["c", "a"])
    assert list(found) == ["c", "a"]
    assert (found["a"].access_count, found["a"].last_access_at) == (1, 5.0)
    assert found["c"].access_count == 0


def test_items_got_many_hide_a_queued_deletion():
    """QR1: an item whose deletion is queued is not among those `get_many` returns."""
    inner = Outage()
    store = BufferedStore(inner)
    store.put([item("i1"), item("i2")])
    inner.down = "writes"
    store.put([item("i3")], delete=[store.get("ana", "i1")])
    assert store.pending
    assert list(store.get_many("ana", ["i1", "i2", "i3"])) == ["i2", "i3"]


def i2_queued():
    """Return an inner store holding i1 and, written through it while it refuses writes, a
    buffered store whose queue holds i2."""
    inner = Outage()
    store = BufferedStore(inner)
    store.put([item("i1")])
    inner.down = "writes"
    store.put([item("i2")])
    return inner, store


def test_statistics_count_the_queued_writes():
    """QR1: `statistics` answers as if the queued items were written."""
    _, store = i2_queued()
    found = store.statistics("ana", "episodic", ["event", "i2"])
    assert (found.documents, dict(found.frequencies)) == (2, {"event": 2, "i2": 1})


def test_held_terms_count_the_queued_writes():
    """QR1: `held_terms` answers as if the queued items were written."""
    _, store = i2_queued()
    found = store.held_terms("ana", "episodic", ["i1", "i2"], ["i2"])
    assert list(found) == ["i2"] and found["i2"].counts == {"i2": 1}


def test_neighbours_count_a_queued_access_once_beside_a_queued_write():
    """QR1: with a write and an access queued, the queued item is a neighbour, counted once."""
    inner = Outage()
    store = BufferedStore(inner)
    store.put(
        [
            MemoryItem(id=key, user_id="ana", level="episodic", content=key, task_id="chat")
            for key in ("a", "b")
        ]
    )
    inner.down = "writes"
    store.record_access([Access("ana", "a", 5.0)])
    store.put([MemoryItem(id="c", user_id="ana", level="episodic", content="c", task_id="chat")])
    assert store.adjacent("ana", ["b"]) == {"b": ("a", "c")}
    found = store.get_many("ana", ["a", "c"])
    assert found["a"].access_count == store.get("ana", "a").access_count == 1
    assert found["c"].content == "c"


def test_items_got_many_that_are_all_queued_need_no_store():
    """QR1: as `get`, `get_many` of queued items alone answers while the store is down."""
    inner, store = i2_queued()
    inner.down = "all"
    assert list(store.get_many("ana", ["i2"])) == ["i2"] and store.get("ana", "i2") is not None


def test_reads_of_ids_or_of_a_level_replay_no_batch_of_the_queue():
    """QR3: with writes queued, `get`, `get_many`, `list` of a level, `matching` and `queued`
    read no batch of the queue, with 10 batches queued or 2,000, and see the queued writes."""
    reads = {}
    for queued in (10, 2_000):
        inner = Outage()
        store = BufferedStore(inner)
        store.put([MemoryItem(id="f0", user_id="ana", level="semantic", content="editor: vim")])
        inner.down = "writes"
        for number in range(queued):
            store.put([item(f"i{number}", user=("ana", "bob")[number % 2])])
        fact = MemoryItem(id="f1", user_id="ana", level="semantic", content="database: MySQL")
        store.put([fact], delete=[store.get("ana", "f0")])
        store._pending = queue = ReadCountingQueue(store._pending)
        assert store.get("ana", "i4").content == "event i4" and store.get("ana", "f0") is None
        assert list(store.get_many("ana", ["f1", "i2", "x"])) == ["f1", "i2"]
        assert [found.id for found in store.list("ana", "semantic")] == ["f1"]
        assert [found.id for found in store.matching("ana", "semantic", ["databas"])] == ["f1"]
        assert [found.id for found in store.queued("bob", "semantic")] == []
        reads[queued] = queue.reads
    assert reads == {10: 0, 2_000: 0}


def test_a_queue_written_out_in_part_is_replayed_again_once():
    """QR3: after some batches are written and others still fail, the next read replays the
    rest once, and reads see what they would have: the rest queued, the written ones stored."""

    class FailsAfter(InMemoryStore):
        puts_left = 0

        def put(self, items, audit=(), delete=()):
            if self.puts_left == 0:
                raise StoreError("database is locked")
            self.puts_left -= 1
            super().put(items, audit, delete)

    inner = FailsAfter()
    store = BufferedStore(inner)
    for number in range(5):
        store.put([item(f"i{number}")])
    inner.puts_left = 2
    assert not store.flush() and store.pending == 3
    store._pending = queue = ReadCountingQueue(store._pending)
    assert [found.id for found in store.list("ana")] == [f"i{number}" for number in range(5)]
    assert [found.id for found in store.queued("ana")] == ["i2", "i3", "i4"]
    assert store.holds(item("i4")) and not store.holds(item("i1"))
    assert queue.reads == 3
