"""Example tests for recuris.storage.sqlite_file: opening
a database file, once, ours, read-only, synced as asked (SF1-SF4)."""

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from databases import (
    another_application,
    future_version,
    version_3,
    version_3_items,
    version_4,
    version_5,
)

from recuris import MemoryItem, SQLiteStore, StoreError
from recuris.storage.sqlite_store import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]


def item(id, content="ok then", **fields):
    return MemoryItem(id=id, user_id="ana", level="episodic", content=content, **fields)


# Seconds the first creator waits for the others to arrive: a wait for something that must
# happen (six processes starting took several seconds at a load of 5 on 2 cores), so generous;
# the others wait for the lock longer than that, so that none gives up while it is held.
ARRIVALS = 30

CREATOR = f"""
import os, sqlite3, sys, time
from pathlib import Path
sys.path.insert(0, {str(ROOT)!r})
from recuris import MemoryManager, SQLiteStore
from recuris.storage.sqlite_store import SCHEMA_VERSION

arrivals, creators = Path(sys.argv[2]), int(sys.argv[3])
connect = sqlite3.connect

class Pausing(sqlite3.Connection):
    # Pause point: a creator about to write the schema version waits until every creator
    # has reached it, or is waiting for the lock that guards it (at most ARRIVALS seconds).
    arrived = False

    def execute(self, statement, *arguments):
        first = statement.startswith(("BEGIN IMMEDIATE", "INSERT INTO schema_version"))
        if not self.arrived and first:
            self.arrived = True
            (arrivals / str(os.getpid())).touch()
        if statement.startswith("INSERT INTO schema_version"):
            deadline = time.monotonic() + {ARRIVALS}
            while len(list(arrivals.iterdir())) < creators and time.monotonic() < deadline:
                time.sleep(0.01)
        return super().execute(statement, *arguments)

sqlite3.connect = lambda *arguments, **keywords: connect(*arguments, factory=Pausing, **keywords)
SQLiteStore(sys.argv[1], timeout={3 * ARRIVALS}).close()
print("opened")
"""


@pytest.mark.processes
@pytest.mark.slow
def test_processes_creating_one_new_file_at_once_leave_one_schema_version(tmp_path):
    """SF1: six processes opening a new file together
    create its schema once; every one of them opens it."""
    path = tmp_path / "new.db"
    arrivals = tmp_path / "arrivals"
    creators = 6
    arrivals.mkdir()
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CREATOR, str(path), str(arrivals), str(creators)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(creators)
    ]
    outputs = [child.communicate(timeout=6 * ARRIVALS) for child in children]
    assert [errors for out, errors in outputs if out != "opened\n"] == []
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]


def test_journal_is_write_ahead_logging(tmp_path):
    """SF3: the database runs in WAL mode."""
    SQLiteStore(tmp_path / "m.db").close()
    with sqlite3.connect(tmp_path / "m.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


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
    """SF2: another application's database or a later
    schema version is refused, and left as it was."""
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
    """SF2: a read-only or non-creating open of a missing
    file is an error, of an empty file a refusal."""
    with pytest.raises(FileNotFoundError):
        SQLiteStore(tmp_path / "absent.db", **options)
    (tmp_path / "empty.db").write_bytes(b"")
    with pytest.raises(StoreError, match="empty"):
        SQLiteStore(tmp_path / "empty.db", **options)
    assert not (tmp_path / "absent.db").exists() and (tmp_path / "empty.db").read_bytes() == b""


def test_the_previous_version_is_migrated_by_a_writing_open_only(tmp_path):
    """SF2: a version 2 file is refused by a reading
    open, and kept whole and upgraded by a writing one."""
    SQLiteStore(tmp_path / "m.db").put([item("i1")])
    with sqlite3.connect(tmp_path / "m.db") as db:
        db.execute("DROP TABLE forgotten")
        db.execute("UPDATE schema_version SET version = 2")
    with pytest.raises(StoreError, match="a writing open migrates it"):
        SQLiteStore(tmp_path / "m.db", read_only=True)
    assert [i.id for i in SQLiteStore(tmp_path / "m.db").list("ana")] == ["i1"]
    assert SQLiteStore(tmp_path / "m.db", read_only=True).generation("ana") == 0


@pytest.mark.parametrize("version, make", [(3, version_3), (4, version_4), (5, version_5)])
def test_an_older_file_is_refused_by_a_reading_open_and_left_as_it_was(tmp_path, version, make):
    """SF2: a reading open refuses a version 3, 4 or 5 file, saying a writing open migrates it."""
    path = make(tmp_path / "m.db", version_3_items())
    before = path.read_bytes()
    with pytest.raises(
        StoreError, match=rf"schema version \[{version}\].*a writing open migrates it"
    ):
        SQLiteStore(path, read_only=True)
    assert path.read_bytes() == before


def test_a_store_syncs_fully_unless_told_otherwise(tmp_path):
    """SF4: `synchronous` is FULL by default, and NORMAL when asked, on a new or an opened file."""
    store = SQLiteStore(tmp_path / "m.db")
    assert store._run("PRAGMA synchronous") == [(2,)]
    store.close()
    reopened = SQLiteStore(tmp_path / "m.db", synchronous="NORMAL")
    assert reopened._run("PRAGMA synchronous") == [(1,)] and reopened.synchronous == "NORMAL"


@pytest.mark.parametrize("value", ["OFF", "normal", "2", "FULL; DROP TABLE items"])
def test_an_unknown_synchronous_is_refused_before_the_file_is_made(tmp_path, value):
    """SF4: any other `synchronous` (OFF, which can corrupt on power loss, too) is a ValueError."""
    with pytest.raises(ValueError, match="SF4: synchronous must be one of"):
        SQLiteStore(tmp_path / "m.db", synchronous=value)
    assert not (tmp_path / "m.db").exists()
