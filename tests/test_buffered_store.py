"""Example tests for recuris.buffered_store.BufferedStore: outages lose no write (G1-G3)."""

import pytest

from recuris import InMemoryStore, MemoryItem, StoreError
from recuris.buffered_store import BufferedStore
from recuris.records import AuditRecord


class FlakyStore(InMemoryStore):
    """An in-memory store that can be switched off, failing every call like a gone database."""

    def __init__(self):
        super().__init__()
        self.down = False

    def __getattribute__(self, name):
        if name in {
            "put",
            "get",
            "list",
            "new_id",
            "append_audit",
            "audit",
            "delete",
        } and object.__getattribute__(self, "down"):
            raise StoreError("database is locked")
        return object.__getattribute__(self, name)


def item(id, user="ana"):
    return MemoryItem(id=id, user_id=user, level="episodic", content=f"event {id}")


@pytest.fixture
def flaky():
    return FlakyStore()


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
    """Reads are not buffered: the caller decides how to degrade."""
    flaky.down = True
    with pytest.raises(StoreError):
        BufferedStore(flaky).list("ana")


def test_ids_are_still_handed_out_during_an_outage(flaky):
    """An offline id is time-stamped, so it cannot collide with store ids."""
    store = BufferedStore(flaky, clock=lambda: 12.5)
    flaky.down = True
    assert [store.new_id("item"), store.new_id("item")] == ["item-offline-12500-1", "item-offline-12500-2"]


def test_deleting_a_user_drops_their_queued_writes(flaky):
    """G3: a retry never brings back what was deleted after the write was queued."""
    store = BufferedStore(flaky)
    flaky.down = True
    store.put([item("i1", "ana"), item("i2", "bob")])
    store.append_audit([AuditRecord("i1", "write", "ana's secret", 1.0, None, "ana")])
    flaky.down = False
    store.delete_user("ana")
    store.flush()
    assert flaky.list("ana") == [] and [i.id for i in flaky.list("bob")] == ["i2"]
    assert flaky.audit("ana") == []


def test_a_batch_refused_by_a_rule_is_raised_when_nothing_is_queued(flaky):
    """A rule violation (S7) is not an outage: it raises at once and is not queued."""
    store = BufferedStore(flaky)
    store.put([item("i1", "ana")])
    with pytest.raises(ValueError, match="S7"):
        store.put([item("i1", "bob")])
    assert store.pending == 0
