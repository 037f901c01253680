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
    S13 `matching` returns exactly the items `list` would return that share a token with
        the query, in the same order.
"""

from __future__ import annotations

import sqlite3
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from . import sqlite_schema as schema
from .item import MemoryItem
from .records import AuditRecord
from .sqlite_schema import SCHEMA_VERSION, fts_query, item_of, row_of, terms_of
from .store import StoreError, check_owners
from .text import tokenize

__all__ = ["SQLiteStore", "SCHEMA_VERSION"]


class SQLiteStore:
    """A Store in one SQLite file (or ":memory:")."""

    def __init__(self, path: str | Path, create: bool = True, timeout: float = 5.0) -> None:
        """Open (and, if `create`, make) the store at path.

        Raises FileNotFoundError when the file is missing and `create` is False;
        StoreError when the file is not a recuris database of this schema version.
        """
        self.path = str(path)
        if not create and self.path != ":memory:" and not Path(self.path).is_file():
            raise FileNotFoundError(f"no recuris database at {self.path}")
        try:
            self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA secure_delete = ON")
            self._db.executescript(schema.SCHEMA)
            self.fts = self._term_index()
            versions = [row[0] for row in self._db.execute("SELECT version FROM schema_version")]
            if not versions:
                self._db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
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
            stored = {item.id: db.execute(schema.OWNER_AND_CONTENT, (item.id,)).fetchone() for item in batch}
            check_owners(batch, lambda item_id: stored[item_id] and stored[item_id][0])
            db.executemany(schema.UPSERT, [row_of(item) for item in batch])
            if self.fts:  # S12: the term index follows every write, in the same transaction
                # Only an item whose text changed needs new terms (a recall rewrites access
                # counts, not content); an id written twice in one batch counts once, as its last.
                last = {item.id: item for item in batch}.values()
                changed = [item for item in last if not stored[item.id] or stored[item.id][1] != item.content]
                db.executemany(schema.TERMS_DELETE, [(item.id,) for item in changed])
                db.executemany(schema.TERMS_INSERT, [(terms_of(item.content), item.id) for item in changed])

        self._transaction(write)

    def get(self, user_id: str, item_id: str) -> MemoryItem | None:
        rows = self._run(f"{schema.SELECT_ITEMS} WHERE id = ? AND user_id = ?", (item_id, user_id))
        return item_of(rows[0]) if rows else None

    def list(self, user_id: str, level: str | None = None, task_id: str | None = None) -> list[MemoryItem]:
        rows = self._run(
            f"{schema.SELECT_ITEMS} WHERE user_id = ? AND (? IS NULL OR level = ?) "
            "AND (? IS NULL OR task_id = ?) ORDER BY rowid",
            (user_id, level, level, task_id, task_id),
        )
        return [item_of(row) for row in rows]

    def iterate(self, user_id: str, level: str | None = None, batch_size: int = 1000) -> Iterator[list]:
        """Yield the user's items (optionally of one level), oldest first, `batch_size` at a time (S20)."""
        if batch_size < 1:
            raise ValueError(f"S20: batch_size must be >= 1, got {batch_size!r}")
        # One query per batch, after the last rowid seen: no cursor stays open across a delete.
        levels, last = [level] * (level is not None), 0
        statement = schema.iterate_statement(bool(levels))
        while rows := self._run(statement, (user_id, *levels, last, batch_size)):
            last = rows[-1][-1]
            yield [item_of(row[:-1]) for row in rows]

    def _term_index(self) -> bool:
        # FTS5 is in nearly every sqlite3 build; without it, `matching` filters in Python.
        try:
            self._db.execute(schema.FTS_SCHEMA)
            return True
        except sqlite3.OperationalError:
            return False

    def matching(self, user_id: str, level: str, tokens: Iterable[str]) -> list[MemoryItem]:
        """Return the user's items at a level that share a token with `tokens` (S12), oldest first."""
        tokens = set(tokens)
        if not tokens:
            return []
        if not self.fts:
            return [item for item in self.list(user_id, level) if tokens & set(tokenize(item.content))]
        return [item_of(row) for row in self._run(schema.MATCHING, (fts_query(tokens), user_id, level))]

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        # One statement per batch, the ids as one JSON array; `+` keeps SQLite on the id index.
        ids = json.dumps(list(dict.fromkeys(item_ids)), ensure_ascii=False)
        return self._delete("id IN (SELECT value FROM json_each(?)) AND +user_id = ?", [(ids, user_id)])

    def delete_user(self, user_id: str) -> int:
        deleted = self._delete("user_id = ?", [(user_id,)])
        if self.fts:  # FTS5 keeps deleted terms in old segments until they are merged away
            self._run("INSERT INTO items_terms (items_terms) VALUES ('optimize')")
        self._checkpoint()
        return deleted

    def _delete(self, where: str, parameters: list[tuple]) -> int:
        def work(db: sqlite3.Connection) -> int:
            if self.fts:
                terms = f"DELETE FROM items_terms WHERE rowid IN (SELECT rowid FROM items WHERE {where})"
                db.executemany(terms, parameters)
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
