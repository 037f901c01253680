"""SQLite storage: the same Store interface, persisted in one file with the standard sqlite3.

Document 001 §2 keeps every tier in SQLite with indexes on task and on (type, task);
document 003 §7 asks that deleting a user reach every copy. Here: a versioned schema
checked on open, WAL journaling, one transaction per write batch, parameterised SQL only,
and `secure_delete`, so deleted text is overwritten rather than left in free pages.
The layout is described in docs/storage.md.

Invariants:
    S1  closing and reopening gives back exactly the items and audit records written.
    S6  any text (quotes, `;`, NUL, any script, any length) round-trips unchanged and is
        only ever a bound parameter, never part of a statement.
    S9  a batch is written whole or not at all, even if the process dies mid-batch.
    S13, S14, S15 (store.py) hold here as in the in-memory store: `matching`, `search` and
        `adjacent` read the term index and the thread index, and return what it returns.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from . import sqlite_schema as schema
from . import sqlite_search
from .item import MemoryItem
from .records import AuditRecord
from .sqlite_schema import SCHEMA_VERSION, item_of, row_of, term_counts
from .store import STORE_B, STORE_K1, StoreError, check_owners

__all__ = ["SQLiteStore", "SCHEMA_VERSION"]


class SQLiteStore:
    """A Store in one SQLite file (or ":memory:")."""

    def __init__(self, path: str | Path, create: bool = True, timeout: float = 5.0,
                 k1: float = STORE_K1, b: float = STORE_B) -> None:
        """Open (and, if `create`, make) the store at path.

        Raises FileNotFoundError when the file is missing and `create` is False;
        StoreError when the file is not a recuris database of this schema version.
        """
        self.path, self.k1, self.b = str(path), k1, b
        if not create and self.path != ":memory:" and not Path(self.path).is_file():
            raise FileNotFoundError(f"no recuris database at {self.path}")
        try:
            self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA secure_delete = ON")
            self._db.executescript(schema.SCHEMA)
            versions = [row[0] for row in self._db.execute("SELECT version FROM schema_version")]
            if not versions:
                self._db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
            elif versions == [2]:
                self._transaction(schema.migrate_from_2)
            elif versions != [SCHEMA_VERSION]:
                raise StoreError(
                    f"schema version {versions} in {self.path}; this code reads {SCHEMA_VERSION}"
                )
        except sqlite3.Error as error:
            raise StoreError(f"cannot open {self.path} as a recuris database: {error}") from error

    def _run(self, statement: str, parameters: tuple = ()) -> list[tuple]:
        try:
            return self._db.execute(statement, parameters).fetchall()
        except sqlite3.Error as error:
            raise StoreError(f"{type(error).__name__}: {error}") from error

    def _transaction(self, work):
        # One explicit transaction per batch (S9): all of it commits, or none of it.
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                result = work(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return result
        except sqlite3.Error as error:
            raise StoreError(f"{type(error).__name__}: {error}") from error

    def put(self, items: Iterable[MemoryItem]) -> None:
        batch = list(items)

        def write(db: sqlite3.Connection) -> None:
            stored = {}
            for ids in schema.chunks(list({item.id for item in batch})):
                marks = ", ".join("?" * len(ids))
                for row in db.execute(f"{schema.STORED} WHERE id IN ({marks})", ids):
                    stored[row[0]] = row[1:]
            check_owners(batch, lambda item_id: stored.get(item_id, (None,))[0])
            # The term index follows every write in the same transaction (S12). Only an item
            # whose text, level or task changed needs new postings: a recall rewrites access
            # counts, not content. An id written twice in one batch counts once, as its last.
            last = {item.id: item for item in batch}.values()
            changed = [item for item in last
                       if item.id not in stored or stored[item.id][1:4] != (item.level, item.content, item.task_id)]
            removed = [(item.user_id, *stored[item.id][1:3], stored[item.id][4]) for item in changed
                       if item.id in stored]
            db.executemany(schema.UPSERT, [row_of(item) for item in batch])
            rowids = {}
            for ids in schema.chunks([item.id for item in changed]):
                marks = ", ".join("?" * len(ids))
                rowids.update(db.execute(f"SELECT id, rowid FROM items WHERE id IN ({marks})", ids))
            schema.reindex(db, removed, [(item.user_id, item.level, item.content, rowids[item.id])
                                         for item in changed])

        self._transaction(write)

    def get(self, user_id: str, item_id: str) -> MemoryItem | None:
        rows = self._run(f"{schema.SELECT_ITEMS} WHERE id = ? AND user_id = ?", (item_id, user_id))
        return item_of(rows[0]) if rows else None

    def list(self, user_id: str, level: str | None = None, task_id: str | None = None) -> list[MemoryItem]:
        # One plain condition per given filter, so that every list is served by an index (S16).
        filters = {"user_id": user_id, "level": level, "task_id": task_id}
        given = {column: value for column, value in filters.items() if value is not None}
        where = " AND ".join(f"{column} = ?" for column in given)
        rows = self._run(f"{schema.SELECT_ITEMS} WHERE {where} ORDER BY rowid", tuple(given.values()))
        return [item_of(row) for row in rows]

    def matching(self, user_id: str, level: str, terms: Iterable[str]) -> list[MemoryItem]:
        return sqlite_search.matching(self._run, user_id, level, terms)

    def search(self, user_id: str, level: str, terms: Sequence[str], limit: int) -> list[tuple[MemoryItem, float]]:
        return sqlite_search.search(self._run, user_id, level, terms, limit, self.k1, self.b)

    def adjacent(self, user_id: str, item_ids: Iterable[str]) -> dict[str, tuple[MemoryItem | None, ...]]:
        return sqlite_search.adjacent(self._run, user_id, item_ids)

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        return self._delete(
            "id = ? AND user_id = ?", [(item_id, user_id) for item_id in dict.fromkeys(item_ids)]
        )

    def delete_user(self, user_id: str) -> int:
        def work(db: sqlite3.Connection) -> int:
            db.execute(schema.POSTINGS_DELETE_USER, (user_id,))
            db.execute("DELETE FROM scopes WHERE user_id = ?", (user_id,))
            return db.execute("DELETE FROM items WHERE user_id = ?", (user_id,)).rowcount

        deleted = self._transaction(work)
        self._checkpoint()
        return deleted

    def _delete(self, where: str, parameters: list[tuple]) -> int:
        def work(db: sqlite3.Connection) -> int:
            doomed = [found for row in parameters for found in
                      db.execute(f"SELECT user_id, level, content, rowid FROM items WHERE {where}", row)]
            schema.reindex(db, doomed, [])
            return sum(db.execute(f"DELETE FROM items WHERE {where}", row).rowcount for row in parameters)

        return self._transaction(work)

    def users(self) -> list[str]:
        return [row[0] for row in self._run("SELECT DISTINCT user_id FROM items ORDER BY user_id")]

    def new_id(self, prefix: str) -> str:
        def take(db: sqlite3.Connection) -> str:
            row = db.execute("SELECT value FROM counters WHERE prefix = ?", (prefix,)).fetchone()
            number = (row[0] if row else 0) + 1
            while db.execute("SELECT 1 FROM items WHERE id = ?", (f"{prefix}-{number}",)).fetchone():
                number += 1
            db.execute("INSERT OR REPLACE INTO counters (prefix, value) VALUES (?, ?)", (prefix, number))
            return f"{prefix}-{number}"

        return self._transaction(take)

    def append_audit(self, records: Iterable[AuditRecord]) -> None:
        rows = [(r.at, r.user_id, r.item_id, r.operation, r.reason, r.weight) for r in records]
        statement = (
            "INSERT INTO audit (at, user_id, item_id, operation, reason, weight) VALUES (?, ?, ?, ?, ?, ?)"
        )
        self._transaction(lambda db: db.executemany(statement, rows))

    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditRecord]:
        rows = self._run(
            "SELECT item_id, operation, reason, at, weight, user_id FROM audit "
            "WHERE (? IS NULL OR user_id = ?) AND (? IS NULL OR item_id = ?) ORDER BY seq",
            (user_id, user_id, item_id, item_id),
        )
        return [AuditRecord(*row) for row in rows]

    def scrub_audit(self, user_id: str) -> int:
        statement = "UPDATE audit SET reason = '', weight = NULL WHERE user_id = ?"
        scrubbed = self._transaction(lambda db: db.execute(statement, (user_id,)).rowcount)
        self._checkpoint()
        return scrubbed

    def _checkpoint(self) -> None:
        # Old page images in the write-ahead log may still hold deleted text: fold them in.
        self._run("PRAGMA wal_checkpoint(TRUNCATE)")

    def integrity(self) -> str:
        """Return SQLite's `PRAGMA integrity_check` verdict ("ok" when intact)."""
        return self._run("PRAGMA integrity_check")[0][0]

    def close(self) -> None:
        self._db.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"
