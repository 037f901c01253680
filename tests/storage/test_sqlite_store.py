"""Example tests for recuris.storage.sqlite_store: persistence, schema, crashes (SQ1-SQ3)."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from databases import version_3, version_3_items, version_4

from recuris import MemoryItem, SQLiteStore, StoreError, WorkingMemory
from recuris.storage.audit import AuditEntry
from recuris.storage.sqlite_schema import SCHEMA_VERSION
from recuris.storage.working_state import working_to_dict

ROOT = Path(__file__).resolve().parents[2]


def item(id, content="ok then", **fields):
    return MemoryItem(id=id, user_id="ana", level="episodic", content=content, **fields)


def test_reopen_gives_back_items_and_audit(tmp_path):
    """SQ1: closing and reopening returns exactly what was written."""
    store = SQLiteStore(tmp_path / "m.db")
    written = [
        item("i1", importance=0.25, metadata={"tags": ["a"]}),
        item("i2", invalidated_at=3.5, superseded_by="i3"),
    ]
    store.put(written)
    store.append_audit([AuditEntry("i1", "write", "why", 1.5, 0.1, "ana")])
    store.close()
    reopened = SQLiteStore(tmp_path / "m.db", create=False)
    assert reopened.list("ana") == written
    assert reopened.audit("ana") == [AuditEntry("i1", "write", "why", 1.5, 0.1, "ana")]


def test_schema_has_the_indexes_the_design_names(tmp_path):
    """SX1: (user_id, level, task_id) and task_id are indexed; postings keyed by scope and term."""
    SQLiteStore(tmp_path / "m.db").close()
    with sqlite3.connect(tmp_path / "m.db") as db:
        indexes = {
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        }
        postings = db.execute("SELECT sql FROM sqlite_master WHERE name = 'postings'").fetchone()[0]
    assert {"items_thread", "items_task"} <= indexes
    assert "PRIMARY KEY (scope, term, item)" in postings


def test_sql_in_text_is_only_ever_data(tmp_path):
    """SQ2: text that looks like SQL is stored as text and changes nothing in the schema."""
    store = SQLiteStore(tmp_path / "m.db")
    hostile = "x'); DROP TABLE items; --"
    store.put([MemoryItem(id=hostile, user_id=hostile, level="semantic", content=hostile)])
    assert store.get(hostile, hostile).content == hostile and store.integrity() == "ok"


def test_a_locked_database_raises_store_error(tmp_path):
    """SQ4: a write while another connection holds the lock fails with StoreError, not a crash."""
    store = SQLiteStore(tmp_path / "m.db", timeout=0.05)
    blocker = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    with pytest.raises(StoreError, match="locked"):
        store.put([item("i1")])
    blocker.execute("ROLLBACK")
    store.put([item("i1")])
    assert store.get("ana", "i1") is not None


WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[2])
    from recuris import MemoryItem, SQLiteStore
    store = SQLiteStore(sys.argv[1])
    batch = 0
    while True:
        batch += 1
        store.put([MemoryItem(id=f"b{batch}-{i}", user_id="ana", level="episodic",
                              content="x" * 500 + str(i))
                   for i in range(50)])
        print(batch, flush=True)
""")


@pytest.mark.slow
def test_killing_a_writer_mid_batch_leaves_an_intact_database(tmp_path):
    """SQ3: after SIGKILL mid-write, integrity_check is ok and every committed batch is whole."""
    path = tmp_path / "crash.db"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(ROOT)], stdout=subprocess.PIPE, text=True
    )
    committed = 0
    while committed < 20:
        committed = int(writer.stdout.readline())
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    store = SQLiteStore(path, create=False)
    ids = {i.id for i in store.list("ana")}
    batches = {identifier.split("-")[0] for identifier in ids}
    assert store.integrity() == "ok"
    assert all(f"b{n}-{i}" in ids for n in range(1, committed + 1) for i in range(50))
    assert all(sum(i.startswith(f"{b}-") for i in ids) == 50 for b in batches)  # no half batch


def test_a_version_2_file_is_migrated_with_its_term_index_rebuilt(tmp_path):
    """SH1: opening a version 2 file rebuilds the postings from the items, and search finds them."""
    path = tmp_path / "m.db"
    SQLiteStore(path).put([item("i1", content="deploy the api"), item("i2", content="rotate keys")])
    with sqlite3.connect(path) as db:  # turn the file back into what version 2 left
        db.executescript(
            "DELETE FROM postings; DELETE FROM scopes; UPDATE schema_version SET version = 2;"
        )
    store = SQLiteStore(path)
    assert sorted(i.id for i, _ in store.search("ana", "episodic", ["deploy", "key"], 5)) == [
        "i1",
        "i2",
    ]
    assert store._run("SELECT version FROM schema_version") == [(SCHEMA_VERSION,)]


def migrated(items):
    """The items as a migration to this version leaves them: a task's goal item holds its
    working memory (SH3); the task `w1` stands for has no steps."""
    working = WorkingMemory()
    working.init_task("migrate")
    state = {"kind": "task", "task_type": "task", "working": working_to_dict(working)}
    return [
        replace(item, metadata={**item.metadata, **state}) if item.id == "w1" else item
        for item in items
    ]


def test_a_version_3_file_is_migrated_with_every_item_intact(tmp_path):
    """SH2: opening a version 3 file to write drops `valid_from`; items stay whole, in order."""
    path = version_3(tmp_path / "m.db", version_3_items())
    with sqlite3.connect(path) as db:
        rowids = db.execute("SELECT id, rowid FROM items ORDER BY rowid").fetchall()
    db.close()
    store = SQLiteStore(path)
    assert store.list("ana") == [i for i in migrated(version_3_items()) if i.user_id == "ana"]
    assert store.list("ben") == [i for i in version_3_items() if i.user_id == "ben"]
    assert store._run("SELECT id, rowid FROM items ORDER BY rowid") == rowids
    assert [i.id for i, _ in store.search("ana", "episodic", ["deploy"], 5)] == ["e1"]
    assert store._run("SELECT version FROM schema_version") == [(SCHEMA_VERSION,)]
    assert "valid_from" not in {row[1] for row in store._run("PRAGMA table_info(items)")}
    assert store.integrity() == "ok"


def version_4_audit():
    return [
        AuditEntry("e1", "write", "routed to episodic", 10.0, None, "ana"),
        AuditEntry("f1", "supersede", "superseded by f2", 20.0, 0.5, "ana"),
        AuditEntry("b1", "write", "routed to episodic", 13.0, None, "ben"),
    ]


def test_a_version_4_file_is_migrated_with_every_item_and_audit_record_intact(tmp_path):
    """SH2: opening a version 4 file to write drops the audit's AUTOINCREMENT, losing nothing."""
    path = version_4(tmp_path / "m.db", version_3_items(), version_4_audit())
    with sqlite3.connect(path) as db:
        rowids = db.execute("SELECT id, rowid FROM items ORDER BY rowid").fetchall()
        seqs = db.execute("SELECT seq, item_id FROM audit ORDER BY seq").fetchall()
    db.close()
    store = SQLiteStore(path)
    assert store.list("ana") == [i for i in migrated(version_3_items()) if i.user_id == "ana"]
    assert store._run("SELECT id, rowid FROM items ORDER BY rowid") == rowids
    assert store._run("SELECT seq, item_id FROM audit ORDER BY seq") == seqs
    assert (
        store.audit("ana") == version_4_audit()[:2] and store.audit("ben") == version_4_audit()[2:]
    )
    assert [i.id for i, _ in store.search("ana", "episodic", ["deploy"], 5)] == ["e1"]
    assert (
        "AUTOINCREMENT"
        not in store._run("SELECT sql FROM sqlite_master WHERE name = 'audit'")[0][0]
    )
    assert store._run("SELECT version FROM schema_version") == [(SCHEMA_VERSION,)]
    store.append_audit([AuditEntry("e1", "recall", "asked", 30.0, None, "ana")])
    assert store.audit("ana")[-1].operation == "recall" and store.integrity() == "ok"


def test_recording_an_access_for_a_user_forgotten_since_is_refused(tmp_path):
    """S6, S10: an access prepared before another store object forgot its user is refused whole."""
    from recuris.storage.store import Access, ForgottenUserError

    reader, forgetter = SQLiteStore(tmp_path / "m.db"), SQLiteStore(tmp_path / "m.db")
    reader.put([MemoryItem(id="i1", user_id="ana", level="episodic", content="deploy failed")])
    forgetter.delete_user("ana")
    forgetter.put([MemoryItem(id="i1", user_id="ana", level="episodic", content="written after")])
    with pytest.raises(ForgottenUserError, match="S6"):
        reader.record_access([Access("ana", "i1", 9.0)])
    assert forgetter.get("ana", "i1").access_count == 0
    reader.generation("ana")  # read again: the reader knows of the forget, and may count
    reader.record_access([Access("ana", "i1", 9.0)])
    assert forgetter.get("ana", "i1").access_count == 1
    reader.close(), forgetter.close()


def test_threads_share_one_store(tmp_path):
    """TS1: one SQLiteStore serves several threads, one statement or transaction at a time."""
    import threading

    store = SQLiteStore(tmp_path / "t.db")

    def write(user):
        for n in range(20):
            store.put(
                [MemoryItem(id=f"{user}-{n}", user_id=user, level="episodic", content=f"event {n}")]
            )

    threads = [threading.Thread(target=write, args=(user,)) for user in ("ana", "bob", "cy")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [len(store.list(user)) for user in ("ana", "bob", "cy")] == [20, 20, 20]
    store.close()


def test_a_new_item_of_a_user_seen_goes_in_with_one_statement_a_table(tmp_path):
    """SH1, S5: a new item's row, its scope's totals, its postings and its audit record are a
    statement each; besides them, only the count of waiting postings, the transaction and
    the look for a pending erasure (SE2)."""
    store = SQLiteStore(tmp_path / "m.db")
    store.put([item("i1", "the first words")])  # the user is seen, the scope made
    statements = []
    store._db.set_trace_callback(statements.append)
    store.put(
        [item("i2", "deploy failed on step 3")], [AuditEntry("i2", "write", "", 1.0, None, "ana")]
    )
    store._db.set_trace_callback(None)
    assert [" ".join(statement.split()[:3]) for statement in statements] == [
        "BEGIN IMMEDIATE",
        "INSERT INTO items",
        "INSERT INTO scopes",
        "SELECT COUNT(*) FROM",
        "INSERT INTO pending_postings",
        "INSERT INTO audit",
        "COMMIT",
        "SELECT COUNT(*) FROM",
    ]
