"""Example tests for recuris.storage.rows: flat tuples, read as fresh copies (RW1, RW2)."""

import gc

import pytest

from recuris import MemoryItem
from recuris.storage.audit import AuditEntry
from recuris.storage.rows import AuditRows, ItemRows


def item(id, user_id="ana", **fields):
    return MemoryItem(id=id, user_id=user_id, level="semantic", content="x", **fields)


def test_RW1_a_read_is_an_equal_fresh_copy():
    """RW1: what is read equals what was put, and changing it changes nothing stored."""
    rows = ItemRows()
    written = item("a", metadata={"tags": ["x"]})
    rows.put("a", rows.encode(written))
    read = rows.get("a")
    assert read == written and read is not written
    read.metadata["tags"].append("y")
    assert rows.get("a").metadata == {"tags": ["x"]}


def test_RW1_metadata_that_is_not_json_data_is_refused():
    """RW1: metadata changed after its item was checked, to hold an object, cannot be encoded."""
    written = item("a")
    written.metadata["when"] = object()
    with pytest.raises(TypeError):
        ItemRows.encode(written)


def test_RW1_an_access_changes_only_the_access_fields():
    """RW1: counting an access sets the last access and adds one access, nothing else."""
    rows = ItemRows()
    rows.put("a", rows.encode(item("a", importance=0.7)))
    rows.count_access("a", 42.0)
    read = rows.get("a")
    assert (read.access_count, read.last_access_at, read.importance) == (1, 42.0, 0.7)
    assert rows.owner("a") == "ana" and rows.owner("b") is None


def test_RW2_ids_keep_the_order_of_their_first_put():
    """RW2: a rewrite keeps its place; a removed id put again comes last."""
    rows = ItemRows()
    for key in "abc":
        rows.put(key, rows.encode(item(key)))
    rows.put("a", rows.encode(item("a", importance=0.9)))
    assert rows.remove("b") == ("ana", "semantic", None) and "b" not in rows
    rows.put("b", rows.encode(item("b")))
    assert list(rows._rows) == ["a", "c", "b"]


def test_rows_are_objects_the_garbage_collector_stops_tracking():
    """Each row, once looked at, is untracked: a large store adds nothing to a collection's walk."""
    rows = ItemRows()
    audit = AuditRows()
    rows.put("a", rows.encode(item("a", metadata={"k": [1]})))
    audit.extend([AuditEntry("a", "write", "why", 1.0, None, "ana")])
    gc.collect()
    assert not gc.is_tracked(rows._rows["a"]) and not gc.is_tracked(audit._rows[0])


def test_RW2_audit_records_come_back_in_order_and_scrubbed():
    """RW2: records are selected oldest first; scrubbing blanks one user's reasons and weights."""
    audit = AuditRows()
    audit.extend(
        [
            AuditEntry("a", "write", "first", 1.0, 0.5, "ana"),
            AuditEntry("b", "write", "second", 2.0, None, "ben"),
            AuditEntry("a", "recall", "third", 3.0, None, "ana"),
        ]
    )
    assert [r.reason for r in audit.select("ana", None)] == ["first", "third"]
    assert [r.reason for r in audit.select(None, "b")] == ["second"]
    assert audit.scrub("ana") == 2
    assert [(r.reason, r.weight) for r in audit.select("ana", None)] == [("", None), ("", None)]
    assert audit.select("ben", None)[0].reason == "second"
