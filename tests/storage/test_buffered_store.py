"""Example tests for recuris.storage.buffered_store: outages lose no write (G1-G13)."""

import subprocess
import sys
from pathlib import Path

import pytest
from outages import FlakyStore, Outage, ReadCountingQueue, protocol_operations
from sqlite_counting import commits_of

from recuris import InMemoryStore, MemoryItem, SQLiteStore, StoreError
from recuris.storage.audit import AuditEntry
from recuris.storage.buffered_store import BufferedStore, QueuedErasureError
from recuris.storage.queued_reads import QueuedReads
from recuris.storage.store import Access

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def flaky():
    return FlakyStore()


def item(id, user="ana"):
    return MemoryItem(id=id, user_id=user, level="episodic", content=f"event {id}")


def test_writes_during_an_outage_are_kept_and_written_later_in_order(flaky):
    """G1, G2: failed writes are queued, then reach the store in order once it is back."""
    store = BufferedStore(flaky)
    flaky.down = True
    store.put([item("i1")])
    store.put([item("i2")])
    assert store.pending == 2
    flaky.down = False
    store.put([item("i3")])
    assert store.pending == 0 and [i.id for i in flaky.list("ana")] == ["i1", "i2", "i3"]


def test_reads_during_an_outage_raise_store_error(flaky):
    """G8: reads are not buffered: the caller decides how to degrade."""
    flaky.down = True
    with pytest.raises(StoreError):
        BufferedStore(flaky).list("ana")


def test_ids_are_still_handed_out_during_an_outage(flaky):
    """G4: an offline id is time-stamped and carries the
    store's token: it cannot collide with store ids."""
    store = BufferedStore(flaky, clock=lambda: 12.5, token="t0")
    flaky.down = True
    ids = [store.new_id("item"), store.new_id("item")]
    assert ids == ["item-offline-12500-t0-1", "item-offline-12500-t0-2"]


def test_offline_ids_of_two_stores_with_one_clock_differ(flaky):
    """G4: two buffered stores on the same clock hand out different offline ids."""
    first = BufferedStore(flaky, clock=lambda: 12.5)
    second = BufferedStore(flaky, clock=lambda: 12.5)
    flaky.down = True
    assert first.new_id("item") != second.new_id("item")


def test_offline_ids_of_two_processes_with_one_clock_differ():
    """G4: two processes, each offline with the same clock reading, hand out different ids."""
    script = (
        "from recuris import InMemoryStore, StoreError\n"
        "from recuris.storage.buffered_store import BufferedStore\n"
        "class Down(InMemoryStore):\n"
        "    def new_id(self, prefix):\n"
        "        raise StoreError('gone')\n"
        "print(BufferedStore(Down(), clock=lambda: 12.5).new_id('item'))\n"
    )
    command = [sys.executable, "-c", script]
    runs = [
        subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
        for _ in range(2)
    ]
    ids = [run.stdout.strip() for run in runs]
    assert ids[0].startswith("item-offline-12500-") and ids[0] != ids[1]


def test_deleting_a_user_drops_their_queued_writes(flaky):
    """G3: a retry never brings back what was deleted after the write was queued."""
    store = BufferedStore(flaky)
    flaky.down = True
    store.put([item("i1", "ana"), item("i2", "bob")])
    store.append_audit([AuditEntry("i1", "write", "ana's secret", 1.0, None, "ana")])
    flaky.down = False
    store.delete_user("ana")
    store.flush()
    assert flaky.list("ana") == [] and [i.id for i in flaky.list("bob")] == ["i2"]
    assert flaky.audit("ana") == []


def test_a_batch_refused_by_a_rule_is_raised_when_nothing_is_queued(flaky):
    """G8: a rule violation (S2) is not an outage: it raises at once and is not queued."""
    store = BufferedStore(flaky)
    store.put([item("i1", "ana")])
    with pytest.raises(ValueError, match="S2"):
        store.put([item("i1", "bob")])
    assert store.pending == 0


def test_close_with_writes_still_queued_fails_loudly_and_keeps_them(flaky):
    """G5: close flushes; what cannot be written is named in a StoreError and stays queued."""
    store = BufferedStore(flaky)
    flaky.down = True
    store.put([item("i1")])
    with pytest.raises(StoreError, match=r"G5: 1 queued batch\(es\) not written.*i1"):
        store.close()
    assert store.pending == 1
    flaky.down = False
    store.close()
    assert [i.id for i in flaky.list("ana")] == ["i1"]


def test_the_retry_queue_is_bounded_and_a_write_past_it_fails_loudly(flaky):
    """G6: past `max_pending` queued batches a write
    raises StoreError; nothing queued is dropped."""
    store = BufferedStore(flaky, max_pending=2)
    flaky.down = True
    store.put([item("i1")])
    store.put([item("i2")])
    with pytest.raises(StoreError, match="G6: the retry queue is full"):
        store.put([item("i3")])
    flaky.down = False
    assert store.flush() and [i.id for i in flaky.list("ana")] == ["i1", "i2"]


def test_a_forget_drops_queued_accesses_and_reads_show_nothing_of_the_user(flaky):
    """G3, QR1: after delete_user, neither a queued write
    nor a queued access of the user is read or written."""
    store = BufferedStore(flaky)
    flaky.down = True
    store.put([item("i1"), item("b1", "bob")])
    store.record_access([Access("ana", "i1", 5.0)])
    flaky.down = False
    store.delete_user("ana")
    assert store.queued("ana") == [] and store.list("ana") == []
    assert store.flush() and flaky.list("ana") == [] and [i.id for i in flaky.list("bob")] == ["b1"]


def test_every_store_operation_is_written_out():
    """G7: BufferedStore defines each operation of the
    Store protocol itself, and forwards nothing unseen."""
    own = set(vars(BufferedStore)) | set(vars(QueuedReads))
    assert protocol_operations() - own == set()
    assert not any("__getattr__" in vars(cls) for cls in BufferedStore.__mro__)


def test_scrubbing_a_users_audit_blanks_their_queued_records_too(flaky):
    """G3: scrub_audit blanks the user's queued audit
    reasons as well, so a retry never writes their text."""
    store = BufferedStore(flaky)
    flaky.down = True
    store.append_audit(
        [
            AuditEntry("i1", "write", "ana's secret", 1.0, 0.5, "ana"),
            AuditEntry("b1", "write", "bob's note", 1.0, 0.5, "bob"),
        ]
    )
    flaky.down = False
    store.scrub_audit("ana")
    assert store.flush()
    assert [(r.user_id, r.reason, r.weight) for r in flaky.audit()] == [
        ("ana", "", None),
        ("bob", "bob's note", 0.5),
    ]


def test_erasing_an_item_blanks_the_queued_records_whose_reason_names_it():
    """G3, S13: erase blanks a queued record whose reason names the erased id whole, and
    none naming an id the user does not hold or holding the id inside a longer one."""
    inner = Outage()
    store = BufferedStore(inner)
    store.put([item("i1"), item("i10"), item("b1", user="bob")])
    inner.down = "writes"
    reasons = ["i1: procedure triggered by keyword 'zanzibar'", "i10: semantic fact", "b1: episode"]
    store.append_audit([AuditEntry("-", "recall", reason, 1.0, None, "ana") for reason in reasons])
    with pytest.raises(StoreError):  # the store cannot erase; the queue is blanked first
        store.erase("ana", ["i1", "b1"])
    inner.down = None
    assert store.flush()
    assert [record.reason for record in inner.audit("ana")] == ["", *reasons[1:]]


def test_every_operation_but_iterate_takes_the_store_lock_itself():
    """G9: each Store operation of BufferedStore, its reads included, holds `with self._lock:`."""
    import ast
    import inspect

    from recuris.storage import buffered_store, queued_reads

    operations = {
        "new_id", "flush", "put", "holds", "append_audit", "record_access", "close", "delete",
        "delete_user", "generation", "scrub_audit", "users", "queued", "get", "get_many", "list",
        "matching", "search", "adjacent", "statistics", "held_terms", "audit",
    }  # fmt: skip
    locked = set()
    for module in (buffered_store, queued_reads):
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(inner, ast.With)
                and ast.unparse(inner.items[0].context_expr) == "self._lock"
                for inner in ast.walk(node)
            ):
                locked.add(node.name)
    assert operations <= locked and "iterate" not in locked


def test_a_queued_delete_put_and_access_of_one_item_land_in_order(flaky):
    """G2: a delete, a put of the same item and an access, all queued, leave it stored, counted."""
    store = BufferedStore(flaky)
    store.put([item("i1")])
    flaky.down = True
    store.put((), delete=[item("i1")])
    store.put([item("i1")])
    store.record_access([Access("ana", "i1", 5.0)])
    assert store.pending == 3
    flaky.down = False
    assert store.flush()
    stored = flaky.get("ana", "i1")
    assert (stored.access_count, stored.last_access_at) == (1, 5.0)


def test_an_outage_is_warned_of_once_however_many_writes_it_queues(flaky, caplog):
    """G11: one warning when an outage begins, one note when it ends, none per queued write."""
    store = BufferedStore(flaky)
    flaky.down = True
    with caplog.at_level("INFO", logger="recuris.storage.store"):
        for n in range(50):
            store.put([item(f"i{n}")])
        assert [record.levelname for record in caplog.records] == ["WARNING"]
        flaky.down = False
        store.put([item("back")])
        flaky.down = True
        store.put([item("again")])
    levels = [record.levelname for record in caplog.records]
    assert levels == ["WARNING", "INFO", "WARNING"]
    assert "50 batch(es) queued" in caplog.records[1].getMessage()


def test_a_full_queue_names_how_much_is_queued(flaky):
    """G6: a write past the bound is refused with the batches and entries queued, none dropped."""
    store = BufferedStore(flaky, max_pending=3)
    flaky.down = True
    for n in range(3):
        store.put([item(f"i{n}"), item(f"j{n}")])
    with pytest.raises(StoreError, match=r"G6: the retry queue is full: 3 batches \(6 entries\)"):
        store.put([item("k")])
    assert store.pending == 3


def _deferring(path, batch=3):
    inner = SQLiteStore(path)
    store = BufferedStore(inner, access_batch=batch)
    store.put([item("i1"), item("i2"), item("b1", user="bob")])
    return inner, store


def _recalled(user, item_id, at):
    return [Access(user, item_id, at)], [AuditEntry("-", "recall", item_id, at, None, user)]


def test_deferred_accesses_are_written_in_one_transaction_at_the_nth_call(tmp_path):
    """G10: with access_batch 3, two calls commit nothing and the third commits all three."""
    inner, store = _deferring(tmp_path / "m.db")
    waiting = [commits_of(inner, lambda: store.record_access(*_recalled("ana", "i1", 5.0)))]
    waiting.append(commits_of(inner, lambda: store.record_access(*_recalled("ana", "i2", 6.0))))
    assert waiting == [0, 0] and inner.get("ana", "i1").access_count == 0
    assert store.get("ana", "i1").access_count == 1  # reads see them meanwhile (QR1)
    assert commits_of(inner, lambda: store.record_access(*_recalled("ana", "i1", 7.0))) == 1
    assert [inner.get("ana", key).access_count for key in ("i1", "i2")] == [2, 1]
    assert [entry.reason for entry in inner.audit("ana") if entry.operation == "recall"] == [
        "i1",
        "i2",
        "i1",
    ]


def test_deferred_accesses_are_written_once_by_close_and_by_the_next_write(tmp_path):
    """G10: close and the next write send the waiting accesses, each counted once."""
    inner, store = _deferring(tmp_path / "m.db", batch=10)
    store.record_access(*_recalled("ana", "i1", 5.0))
    store.put([item("i3")])
    store.record_access(*_recalled("ana", "i1", 6.0))
    store.record_access(*_recalled("ana", "i2", 6.0))
    store.close()
    reopened = SQLiteStore(tmp_path / "m.db", create=False)
    assert [reopened.get("ana", key).access_count for key in ("i1", "i2", "i3")] == [2, 1, 0]
    assert len([entry for entry in reopened.audit("ana") if entry.operation == "recall"]) == 3


def test_deferred_accesses_stay_with_their_user(tmp_path):
    """G10, G3: waiting accesses count on their own user's items; forgetting one drops theirs."""
    inner, store = _deferring(tmp_path / "m.db", batch=10)
    store.record_access([Access("bob", "i2", 5.0), Access("bob", "b1", 5.0)])  # i2 is ana's
    store.flush()
    assert [inner.get(*key).access_count for key in (("ana", "i2"), ("bob", "b1"))] == [0, 1]
    store.record_access(*_recalled("ana", "i1", 6.0))
    store.record_access(*_recalled("bob", "b1", 6.0))
    store.delete_user("ana")
    store.close()
    reopened = SQLiteStore(tmp_path / "m.db", create=False)
    assert reopened.list("ana") == [] and reopened.audit("ana") == []  # never written (G3)
    assert reopened.get("bob", "b1").access_count == 2
    assert [entry.reason for entry in reopened.audit("bob")] == ["b1"]


def test_an_access_batch_below_one_is_refused():
    """G10: access_batch is an int >= 1."""
    with pytest.raises(ValueError, match="G10"):
        BufferedStore(FlakyStore(), access_batch=0)


@pytest.mark.parametrize("down", [None, "writes", "all"])
def test_erase_drops_a_queued_copy_and_counts_it_whatever_the_store_does(down):
    """G12: erase drops a queued copy before asking the store, and counts it as erased."""
    inner = Outage()
    store = BufferedStore(inner)
    inner.down = "writes"
    store.put([item("e1")], [AuditEntry("e1", "write", "event e1 written", 1.0, None, "ana")])
    inner.down = down
    if down == "all":
        with pytest.raises(QueuedErasureError) as raised:
            store.erase("ana", ["e1"])
        assert raised.value.erased == 1
    else:
        assert store.erase("ana", ["e1"]) == 1
    inner.down = None
    assert store.flush() and store.get("ana", "e1") is None
    assert "event e1" not in repr(store.audit("ana"))


@pytest.mark.parametrize("queued", [False, True], ids=["stored", "queued"])
def test_erase_takes_the_erased_id_out_of_a_queued_copy_that_quotes_it(queued):
    """S13, G3: a queued fact citing an erased item is written without its id, the item
    erased from the store (up again) or from the queue (the store down for writes)."""
    inner = Outage()
    store = BufferedStore(inner)
    inner.down = "writes" if queued else None
    store.put([item("e1"), item("e2")])
    inner.down = "writes"
    metadata = {"source_ids": ["e1", "e2"]}
    fact = MemoryItem(id="f1", user_id="ana", level="semantic", content="a fact", metadata=metadata)
    store.put([fact])
    # Stored, e1 is erased with the store up again; the fact waits for the next write.
    inner.down = "writes" if queued else None
    assert store.erase("ana", ["e1"]) == 1
    assert store.holds(fact) and inner.get("ana", "f1") is None
    assert store.get("ana", "f1").metadata == {"source_ids": ["e2"]}
    inner.down = None
    assert store.flush() and inner.get("ana", "f1").metadata == {"source_ids": ["e2"]}


def test_a_write_queued_in_an_outage_reads_no_more_of_a_long_queue_than_of_a_short_one(flaky):
    """G13: a put queued while the store fails, and `holds` after it, read the queue's first batch
    and no other, with 10 batches queued or 2,000."""
    reads = {}
    for queued in (10, 2_000):
        store = BufferedStore(FlakyStore())
        store.inner.down = True
        for number in range(queued):
            store.put([item(f"i{number}")])
        store._pending = queue = ReadCountingQueue(store._pending)
        store.put([item("last")])
        assert store.holds(item("last")) and store.holds(item("i3")) and not store.holds(item("x"))
        reads[queued] = queue.reads
    assert reads == {10: 1, 2_000: 1}


def test_holds_follows_queued_deletions_writes_and_forgets():
    """G13, QR1: `holds` says whether the queue's last put or deletion of an item is a put."""
    inner = Outage()
    store = BufferedStore(inner)
    inner.down = "writes"
    store.put([item("i1"), item("i2")])
    store.put([item("i3")], delete=[item("i1")])
    store.put([item("i1", user="bob")])
    assert [store.holds(item(key)) for key in ("i1", "i2", "i3")] == [False, True, True]
    assert store.holds(item("i1", user="bob"))
    with pytest.raises(StoreError):
        store.delete_user("bob")  # the queue first: bob's queued writes go, then the store fails
    assert not store.holds(item("i1", user="bob")) and store.holds(item("i2"))
    inner.down = None
    assert store.flush() and not store.holds(item("i2"))


def test_what_is_unwritten_is_each_queued_items_newest_copy_and_every_queued_record(flaky):
    """G14: an item queued twice is given once, newest; a deleted one not; the queue stays."""
    store = BufferedStore(flaky)
    flaky.down = True
    first = item("i1")
    store.put([first], [AuditEntry("i1", "write", "", 1.0, None, "ana")])
    store.put([item("i2", user="bob")], [AuditEntry("i2", "write", "", 2.0, None, "bob")])
    store.put([item("i3")])
    first.content = "event i1, changed"
    store.put([first], [AuditEntry("i1", "update", "", 3.0, None, "ana")])
    flaky.down = False  # a delete goes to the store too, which holds nothing yet
    store.delete("ana", ["i3"])
    items, records = store.unwritten()
    assert [(i.id, i.content) for i in items] == [("i1", "event i1, changed"), ("i2", "event i2")]
    assert [record.operation for record in records] == ["write", "write", "update"]
    assert store.pending == 4 and flaky.list("ana") == []


def test_a_write_after_a_close_is_refused_naming_g15():
    """G15: once close has written the queue and closed the store, a write raises StoreError
    naming G15, and nothing is queued that no later close would write."""
    store = BufferedStore(InMemoryStore())
    store.put([MemoryItem(id="a", user_id="ana", level="episodic", content="kept")])
    store.close()
    with pytest.raises(StoreError, match="G15"):
        store.put([MemoryItem(id="b", user_id="ana", level="episodic", content="late")])
    with pytest.raises(StoreError, match="G15"):
        store.record_access([Access("ana", "a", 1.0)])
    assert store.pending == 0
