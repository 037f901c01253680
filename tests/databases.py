"""Files a recuris store must refuse or survive, built for tests: foreign, future, empty, corrupt."""

import sqlite3
from pathlib import Path

from recuris import SQLiteStore


def another_application(path: Path) -> Path:
    """Write another application's SQLite database (rollback journal, its own table)."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        db.execute("INSERT INTO notes (body) VALUES ('not a memory')")
    return path


def future_version(path: Path) -> Path:
    """Write a recuris database of a later schema version: it dropped a table and the write-ahead log."""
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
    """Overwrite the root pages of the named tables and indexes: the file opens, reading them fails."""
    with sqlite3.connect(path) as db:
        size = db.execute("PRAGMA page_size").fetchone()[0]
        root = "SELECT rootpage FROM sqlite_master WHERE name = ?"
        roots = [db.execute(root, (name,)).fetchone()[0] for name in names]
    db.close()
    data = bytearray(path.read_bytes())
    for root in roots:
        data[(root - 1) * size : root * size] = b"\xff" * size
    path.write_bytes(bytes(data))
