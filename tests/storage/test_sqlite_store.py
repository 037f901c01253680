"""Example tests for recuris.storage.sqlite_store.SQLiteStore: persistence, schema, crashes (SQ1, SQ2, SQ3)."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from databases import another_application, future_version, version_3, version_4

from recuris import MemoryItem, SQLiteStore, StoreError, WorkingMemory
from recuris.core.records import AuditRecord
from recuris.storage.sqlite_schema import SCHEMA_VERSION

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
    store.append_audit([AuditRecord("i1", "write", "why", 1.5, 0.1, "ana")])
    store.close()
    reopened = SQLiteStore(tmp_path / "m.db", create=False)
    assert reopened.list("ana") == written
    assert reopened.audit("ana") == [AuditRecord("i1", "write", "why", 1.5, 0.1, "ana")]


def test_journal_is_write_ahead_logging(tmp_path):
    """SF3: the database runs in WAL mode."""
    SQLiteStore(tmp_path / "m.db").close()
    with sqlite3.connect(tmp_path / "m.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_schema_has_the_indexes_the_design_names(tmp_path):
    """SX1: indexes on (user_id, level, task_id) and on task_id exist; postings are keyed by scope and term."""
    SQLiteStore(tmp_path / "m.db").close()
    with sqlite3.connect(tmp_path / "m.db") as db:
        indexes = {
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        }
        postings = db.execute("SELECT sql FROM sqlite_master WHERE name = 'postings'").fetchone()[0]
    assert {"items_thread", "items_task"} <= indexes
    assert "PRIMARY KEY (scope, term, item)" in postings


def test_missing_file_is_an_error_when_not_creating(tmp_path):
    """SF2: a store opened without `create` does not create a database."""
    with pytest.raises(FileNotFoundError, match="no recuris database"):
        SQLiteStore(tmp_path / "absent.db", create=False)
    assert not (tmp_path / "absent.db").exists()


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    """SF2: a corrupt or foreign file raises StoreError with the reason."""
    (tmp_path / "junk.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a database"):
        SQLiteStore(tmp_path / "junk.db")


def test_another_schema_version_is_refused(tmp_path):
    """SF2: the schema version is checked on open."""
    SQLiteStore(tmp_path / "m.db").close()
    with sqlite3.connect(tmp_path / "m.db") as db:
        db.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(StoreError, match="schema version"):
        SQLiteStore(tmp_path / "m.db")


@pytest.mark.parametrize("make", [another_application, future_version])
def test_a_writing_open_refuses_a_file_not_ours_before_writing_a_byte(tmp_path, make):
    """SF2: another application's database or a later schema version is refused, and left as it was."""
    path = make(tmp_path / "x.db")
    before = path.read_bytes()
    with pytest.raises(StoreError, match="another application|schema version"):
        SQLiteStore(path)
    assert path.read_bytes() == before


def test_a_read_only_store_writes_nothing(tmp_path):
    """SF2: a read-only store reads what is there and refuses every write."""
    SQLiteStore(tmp_path / "m.db").put([item("i1")])
    store = SQLiteStore(tmp_path / "m.db", read_only=True)
    with pytest.raises(StoreError, match="readonly"):
        store.put([item("i2")])
    assert [i.id for i in store.list("ana")] == ["i1"]


@pytest.mark.parametrize("options", [{"read_only": True}, {"create": False}])
def test_an_open_that_may_not_create_never_makes_a_database(tmp_path, options):
    """SF2: a read-only or non-creating open of a missing file is an error, of an empty file a refusal."""
    with pytest.raises(FileNotFoundError):
        SQLiteStore(tmp_path / "absent.db", **options)
    (tmp_path / "empty.db").write_bytes(b"")
    with pytest.raises(StoreError, match="empty"):
        SQLiteStore(tmp_path / "empty.db", **options)
    assert not (tmp_path / "absent.db").exists() and (tmp_path / "empty.db").read_bytes() == b""


def test_the_previous_version_is_migrated_by_a_writing_open_only(tmp_path):
    """SF2: a version 2 file is refused by a reading open, and kept whole and upgraded by a writing one."""
    SQLiteStore(tmp_path / "m.db").put([item("i1")])
    with sqlite3.connect(tmp_path / "m.db") as db:
        db.execute("DROP TABLE forgotten")
        db.execute("UPDATE schema_version SET version = 2")
    with pytest.raises(StoreError, match="a writing open migrates it"):
        SQLiteStore(tmp_path / "m.db", read_only=True)
    assert [i.id for i in SQLiteStore(tmp_path / "m.db").list("ana")] == ["i1"]
    assert SQLiteStore(tmp_path / "m.db", read_only=True).generation("ana") == 0


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
        store.put([MemoryItem(id=f"b{batch}-{i}", user_id="ana", level="episodic", content="x" * 500 + str(i))
                   for i in range(50)])
        print(batch, flush=True)
""")


@pytest.mark.slow
def test_killing_a_writer_mid_batch_leaves_an_intact_database(tmp_path):
    """SQ3: after SIGKILL mid-write, integrity_check is ok and every committed batch is there, whole."""
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


def version_3_items():
    return [
        item(
            "e1",
            content="deploy the api",
            created_at=10.0,
            last_access_at=30.0,
            access_count=3,
            metadata={"kind": "episode", "trajectory": [[1, "build", "ok", False]]},
        ),
        MemoryItem(
            id="f1",
            user_id="ana",
            level="semantic",
            content="database: MySQL",
            created_at=11.0,
            importance=0.8,
            invalidated_at=20.0,
            superseded_by="f2",
            metadata={"subject": "database"},
        ),
        MemoryItem(
            id="f2", user_id="ana", level="semantic", content="database: Postgres", created_at=20.0
        ),
        MemoryItem(
            id="w1",
            user_id="ana",
            level="working",
            content="goal: migrate",
            task_id="task-1",
            created_at=12.0,
        ),
        MemoryItem(
            id="b1", user_id="ben", level="episodic", content="rotate the keys", created_at=13.0
        ),
    ]


def migrated(items):
    """The items as a migration to this version leaves them: a task's goal item holds its
    working memory (SH3); the task `w1` stands for has no steps."""
    working = WorkingMemory()
    working.init_task("migrate")
    state = {"kind": "task", "task_type": "task", "working": working.to_dict()}
    return [
        replace(item, metadata={**item.metadata, **state}) if item.id == "w1" else item
        for item in items
    ]


def test_a_version_3_file_is_migrated_with_every_item_intact(tmp_path):
    """SH2: a writing open of a version 3 file drops `valid_from`; every item stays whole, in write order."""
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
        AuditRecord("e1", "write", "routed to episodic", 10.0, None, "ana"),
        AuditRecord("f1", "supersede", "superseded by f2", 20.0, 0.5, "ana"),
        AuditRecord("b1", "write", "routed to episodic", 13.0, None, "ben"),
    ]


def test_a_version_4_file_is_migrated_with_every_item_and_audit_record_intact(tmp_path):
    """SH2: a writing open of a version 4 file rebuilds the audit without AUTOINCREMENT; nothing is lost."""
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
    store.append_audit([AuditRecord("e1", "recall", "asked", 30.0, None, "ana")])
    assert store.audit("ana")[-1].operation == "recall" and store.integrity() == "ok"


@pytest.mark.parametrize("version, make", [(3, version_3), (4, version_4)])
def test_an_older_file_is_refused_by_a_reading_open_and_left_as_it_was(tmp_path, version, make):
    """SF2: a reading open refuses a version 3 or 4 file, saying that a writing open migrates it."""
    path = make(tmp_path / "m.db", version_3_items())
    before = path.read_bytes()
    with pytest.raises(
        StoreError, match=rf"schema version \[{version}\].*a writing open migrates it"
    ):
        SQLiteStore(path, read_only=True)
    assert path.read_bytes() == before


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
