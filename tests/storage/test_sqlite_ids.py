"""Example tests for recuris.storage.sqlite_ids: new ids
reserved in blocks, guarded until written (ID1, ID2)."""

import pytest

from recuris import MemoryItem, SQLiteStore, StoreError
from recuris.storage.audit import AuditEntry
from recuris.storage.sqlite_ids import MINTED_LIMIT
from recuris.storage.store import IdTakenError


def item(id, content="ok then"):
    return MemoryItem(id=id, user_id="ana", level="episodic", content=content)


def test_two_store_objects_on_one_file_never_hand_out_the_same_id(tmp_path):
    """ID1: ids are reserved a block at a time per store
    object, so two objects on one file never collide."""
    first = SQLiteStore(tmp_path / "m.db")
    second = SQLiteStore(tmp_path / "m.db")
    ids = [store.new_id("item") for _ in range(100) for store in (first, second)]
    assert len(set(ids)) == 200


def test_an_id_a_caller_chose_before_its_block_was_reserved_is_never_handed_out(tmp_path):
    """ID2: reserving a block of ids skips those already stored."""
    store = SQLiteStore(tmp_path / "m.db")
    store.put([item("item-3")])
    assert "item-3" not in {store.new_id("item") for _ in range(10)}


def test_a_new_id_taken_by_another_write_meanwhile_is_refused_not_written_over(tmp_path):
    """ID2: a put reusing a new id that another write
    took after its block was reserved writes nothing."""
    first = SQLiteStore(tmp_path / "m.db")
    second = SQLiteStore(tmp_path / "m.db")
    new_id = first.new_id("item")
    second.put(
        [item(new_id)], [AuditEntry(new_id, "import", "chosen by a caller", 0.0, None, "ana")]
    )
    with pytest.raises(IdTakenError, match="S3"):
        first.put([item(new_id, "mine")], [AuditEntry(new_id, "write", "new", 1.0, None, "ana")])
    assert first.get("ana", new_id).content == "ok then"
    assert [record.operation for record in first.audit("ana")] == ["import"]


def test_a_new_id_this_store_object_stored_after_its_block_was_reserved_is_never_handed_out(
    tmp_path,
):
    """ID2: an id a caller's put stored through this
    store object after its block was reserved is skipped."""
    store = SQLiteStore(tmp_path / "m.db")
    assert store.new_id("item") == "item-1"  # reserves item-1 .. item-1024
    store.put([item("item-2"), item("item-3")])
    assert {store.new_id("item") for _ in range(10)}.isdisjoint({"item-2", "item-3"})


def test_a_put_retried_after_its_transaction_failed_still_refuses_a_new_id_taken_meanwhile(
    tmp_path,
):
    """ID2: a new id stays guarded when its put fails:
    once another write took it, the retry writes nothing."""
    first = SQLiteStore(tmp_path / "m.db")
    second = SQLiteStore(tmp_path / "m.db")
    new_id = first.new_id("item")
    written = [item(new_id, "mine")], [AuditEntry(new_id, "write", "new", 1.0, None, "ana")]
    first._run(
        "CREATE TEMP TRIGGER full BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'disk full'); "
        "END"
    )
    with pytest.raises(
        StoreError, match="disk full"
    ):  # the transaction fails after the item's insert
        first.put(*written)
    first._run("DROP TRIGGER full")
    second.put([item(new_id)])  # an import in another process, say, takes the id meanwhile
    with pytest.raises(IdTakenError, match="S3"):
        first.put(*written)  # a retry queue's second try
    assert first.get("ana", new_id).content == "ok then" and first.audit("ana") == []


def test_after_a_new_id_is_found_taken_no_id_another_write_took_is_handed_out(tmp_path):
    """ID2: once a put finds a new id taken, the rest of
    its block is not trusted: no stored id comes out."""
    first = SQLiteStore(tmp_path / "m.db")
    second = SQLiteStore(tmp_path / "m.db")
    first.new_id("item")  # reserves item-1 .. item-1024
    second.put([item(f"item-{n}") for n in range(2, 10)])  # an import in another process
    with pytest.raises(IdTakenError):
        first.put([item(first.new_id("item"))])
    assert all(first.get("ana", first.new_id("item")) is None for _ in range(10))


def test_an_id_handed_out_but_never_put_is_guarded_only_until_the_limit(tmp_path):
    """ID2: ids never put (a task's) are let go after
    MINTED_LIMIT newer ones: the guard stays bounded."""
    first = SQLiteStore(tmp_path / "m.db")
    second = SQLiteStore(tmp_path / "m.db")
    oldest = first.new_id("task")
    newest = [first.new_id("item") for _ in range(MINTED_LIMIT)][-1]
    second.put([item(oldest)])
    second.put([item(newest)])
    first.put([item(oldest, "mine")])  # no longer guarded: an upsert, as for an id a caller chose
    assert first.get("ana", oldest).content == "mine"
    with pytest.raises(IdTakenError):  # still guarded
        first.put([item(newest, "mine")])
