"""Files a recuris store must refuse or survive, built for tests: foreign, future, empty,
corrupt, older; and another process holding a transaction on one.
"""

import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from recuris import MemoryItem, SQLiteStore


def another_application(path: Path) -> Path:
    """Write another application's SQLite database (rollback journal, its own table)."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        db.execute("INSERT INTO notes (body) VALUES ('not a memory')")
    return path


def future_version(path: Path) -> Path:
    """Write a recuris database of a later schema
    version: it dropped a table and the write-ahead log."""
    SQLiteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode = DELETE")
        db.execute("UPDATE schema_version SET version = 99")
        db.execute("DROP TABLE counters")
    return path


def empty(path: Path) -> Path:
    """Write a 0-byte file."""
    path.write_bytes(b"")
    return path


def corrupt(path: Path, *names: str) -> None:
    """Overwrite the root pages of the named tables
    and indexes: the file opens, reading them fails."""
    with sqlite3.connect(path) as db:
        size = db.execute("PRAGMA page_size").fetchone()[0]
        root = "SELECT rootpage FROM sqlite_master WHERE name = ?"
        roots = [db.execute(root, (name,)).fetchone()[0] for name in names]
    db.close()
    data = bytearray(path.read_bytes())
    for root in roots:
        data[(root - 1) * size : root * size] = b"\xff" * size
    path.write_bytes(bytes(data))


# Version 6's items table, as it was written: today's columns, the rowid implicit.
VERSION_6_ITEMS = """CREATE TABLE items (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL, level TEXT NOT NULL, content TEXT NOT NULL,
    task_id TEXT, created_at REAL NOT NULL, last_access_at REAL NOT NULL,
    access_count INTEGER NOT NULL, importance REAL NOT NULL, metadata TEXT NOT NULL,
    invalidated_at REAL, superseded_by TEXT)"""
VERSION_6_COLUMNS = (
    "id, user_id, level, content, task_id, created_at, last_access_at, access_count, "
    "importance, metadata, invalidated_at, superseded_by"
)


def version_6(path: Path, items, audit=()) -> Path:
    """Write a recuris database of schema version 6 holding `items` and `audit` records."""
    store = SQLiteStore(path)
    store.put(items, audit)
    store.close()
    return as_version_6(path)


def as_version_6(path: Path) -> Path:
    """Turn today's database at `path` into version 6: its items table rebuilt as version 6
    kept it, without `number`, each row with that number as its implicit rowid."""
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE items RENAME TO items_7")
        db.execute(VERSION_6_ITEMS)
        db.execute(
            f"INSERT INTO items (rowid, {VERSION_6_COLUMNS}) "
            f"SELECT number, {VERSION_6_COLUMNS} FROM items_7"
        )
        db.execute("DROP TABLE items_7")
        db.execute("CREATE INDEX items_thread ON items (user_id, level, task_id)")
        db.execute("CREATE INDEX items_task ON items (task_id)")
        db.execute("UPDATE schema_version SET version = 6")
    db.close()
    return path


def version_5(path: Path, items, audit=()) -> Path:
    """Write a recuris database of schema version 5 holding `items` and `audit` records.

    Version 5 had version 6's tables; only what a task in progress keeps differs (a goal item
    and one working item per step, given among `items`).
    """
    version_6(path, items, audit)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE schema_version SET version = 5")
    db.close()
    return path


# Version 4's audit table, as it was written: the same columns, its seq AUTOINCREMENT.
VERSION_4_AUDIT = """CREATE TABLE audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, user_id TEXT NOT NULL,
    item_id TEXT NOT NULL, operation TEXT NOT NULL, reason TEXT NOT NULL, weight REAL)"""


def version_4(path: Path, items, audit=()) -> Path:
    """Write a recuris database of schema version 4 holding `items` and `audit` records.

    They are written as version 5 left them (`version_5`), then the file is turned back into
    what version 4 kept: every posting in `postings` (no `pending_postings` table), and an
    audit table whose `seq` is AUTOINCREMENT, each record with its seq.
    """
    version_5(path, items, audit)
    with sqlite3.connect(path) as db:
        columns = "scope, term, item, frequency, length"
        db.execute(f"INSERT INTO postings ({columns}) SELECT {columns} FROM pending_postings")
        db.execute("DROP TABLE pending_postings")
        db.execute("ALTER TABLE audit RENAME TO audit_5")
        db.execute(VERSION_4_AUDIT)
        columns = "seq, at, user_id, item_id, operation, reason, weight"
        db.execute(f"INSERT INTO audit ({columns}) SELECT {columns} FROM audit_5")
        db.execute("DROP TABLE audit_5")
        db.execute("CREATE INDEX audit_user ON audit (user_id)")
        db.execute("CREATE INDEX audit_item ON audit (item_id)")
        db.execute("UPDATE schema_version SET version = 4")
    db.close()
    return path


# Version 3's items table, as it was written: the same columns as now, and `valid_from`.
VERSION_3_ITEMS = """CREATE TABLE items (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL, level TEXT NOT NULL, content TEXT NOT NULL,
    task_id TEXT, created_at REAL NOT NULL, last_access_at REAL NOT NULL,
    access_count INTEGER NOT NULL, importance REAL NOT NULL, metadata TEXT NOT NULL,
    valid_from REAL NOT NULL, invalidated_at REAL, superseded_by TEXT)"""


def version_3(path: Path, items) -> Path:
    """Write a recuris database of schema version 3 holding `items`: the table had `valid_from`.

    The file is written as version 4 left it (`version_4`), then the items table is rebuilt
    as version 3 kept it, each row with its rowid and `valid_from` = `created_at`.
    """
    version_4(path, items)
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE items RENAME TO items_4")
        db.execute(VERSION_3_ITEMS)
        db.execute(
            f"INSERT INTO items (rowid, {VERSION_6_COLUMNS}, valid_from) "
            f"SELECT rowid, {VERSION_6_COLUMNS}, created_at FROM items_4"
        )
        db.execute("DROP TABLE items_4")
        db.execute("CREATE INDEX items_thread ON items (user_id, level, task_id)")
        db.execute("CREATE INDEX items_task ON items (task_id)")
        db.execute("UPDATE schema_version SET version = 3")
    db.close()
    return path


def version_3_items() -> list[MemoryItem]:
    """Return the items the migration tests write into an older file: two users, four levels."""
    return [
        MemoryItem(
            id="e1",
            user_id="ana",
            level="episodic",
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


HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute(sys.argv[2])
db.execute("SELECT count(*) FROM items").fetchall()
print("holding", flush=True)
sys.stdin.readline()
"""


@contextmanager
def another_process_holding(path: Path, begin: str):
    """Hold a transaction from another process: "BEGIN"
    a read snapshot, "BEGIN IMMEDIATE" the write lock."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), begin],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "holding\n"
        yield
    finally:
        holder.communicate("\n", timeout=10)
