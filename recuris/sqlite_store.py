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
    S20 a write lock held by another connection delays a manager call by about `timeout`
        seconds at most: a write waits for it up to `timeout`, and once a wait has run out,
        for the next `timeout` seconds a write takes the lock only if it is free at once,
        else fails (StoreError, which the manager queues). A read waits up to `timeout`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path

from . import sqlite_schema as schema
from .item import MemoryItem
from .records import AuditRecord
from .sqlite_erasure import SQLiteErasure
from .sqlite_file import open_database
from .sqlite_schema import SCHEMA_VERSION, fts_query, item_of, row_of, terms_of
from .store import StoreError, check_owners, refuse_if_forgotten
from .text import tokenize

__all__ = ["SQLiteStore", "SCHEMA_VERSION"]


class SQLiteStore(SQLiteErasure):
    """A Store in one SQLite file (or ":memory:")."""

    def __init__(
        self, path: str | Path, create: bool = True, timeout: float = 5.0, read_only: bool = False
    ) -> None:
        """Open (and, if `create` and not `read_only`, make) the store at path.

        A `read_only` store opens the file so that it cannot write (S16). Raises
        FileNotFoundError when the file is missing and `create` is False or `read_only`;
        StoreError, having written nothing, when the file is not a recuris database of this
        schema version.
        """
        self.path = str(path)
        missing = self.path != ":memory:" and not Path(self.path).is_file()
        if missing and (read_only or not create):
            raise FileNotFoundError(f"no recuris database at {self.path}")
        self._db, self.fts = open_database(self.path, read_only, timeout, create)
        self.timeout, self._lock_wait_resumes = timeout, 0.0
        self._seen: dict[str, int] = {}  # per user: the forget generation this object last saw (S17)

    def _run(self, statement: str, parameters: tuple = ()) -> list[tuple]:
        try:
            return self._db.execute(statement, parameters).fetchall()
        except sqlite3.Error as error:
            raise StoreError(f"{type(error).__name__}: {error}") from error

    def _transaction(self, work):
        # One explicit transaction per batch (S9): all of it commits, or none of it.
        try:
            self._begin()
            try:
                result = work(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return result
        except sqlite3.Error as error:
            raise StoreError(f"{type(error).__name__}: {error}") from error

    def _begin(self) -> None:
        # S20: a wait that ran out is not repeated by every write of the same call: for the
        # next `timeout` seconds, a write takes the lock only if it is free right now.
        waits = time.monotonic() >= self._lock_wait_resumes
        if not waits:
            self._db.execute("PRAGMA busy_timeout = 0")
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if waits and "locked" in str(error):
                self._lock_wait_resumes = time.monotonic() + self.timeout
            raise
        finally:
            if not waits:
                self._db.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")

    def put(
        self, items: Iterable[MemoryItem],
        audit: Iterable[AuditRecord] = (), delete: Iterable[MemoryItem] = (),
    ) -> None:
        """Delete the `delete` items (by id and user), then store the items and audit, all or none (S14)."""
        batch, doomed = list(items), [(old.id, old.user_id) for old in delete]
        records = [(r.at, r.user_id, r.item_id, r.operation, r.reason, r.weight) for r in audit]

        def write(db: sqlite3.Connection) -> None:
            users = [item.user_id for item in batch] + [record[1] for record in records]
            refuse_if_forgotten(users, self._seen, lambda user_id: self._generation(db, user_id))
            self._delete_rows(db, "id = ? AND user_id = ?", doomed)
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
            db.executemany(schema.AUDIT_INSERT, records)

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

    def matching(self, user_id: str, level: str, tokens: Iterable[str]) -> list[MemoryItem]:
        """Return the user's items at a level that share a token with `tokens` (S12), oldest first."""
        tokens = set(tokens)
        if not tokens:
            return []
        if not self.fts:
            return [item for item in self.list(user_id, level) if tokens & set(tokenize(item.content))]
        return [item_of(row) for row in self._run(schema.MATCHING, (fts_query(tokens), user_id, level))]

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        return self._delete(
            "id = ? AND user_id = ?", [(item_id, user_id) for item_id in dict.fromkeys(item_ids)]
        )

    def _delete(self, where: str, parameters: list[tuple]) -> int:
        return self._transaction(lambda db: self._delete_rows(db, where, parameters))

    def _delete_rows(self, db: sqlite3.Connection, where: str, parameters: list[tuple]) -> int:
        if self.fts:
            terms = f"DELETE FROM items_terms WHERE rowid IN (SELECT rowid FROM items WHERE {where})"
            db.executemany(terms, parameters)
        return sum(db.execute(f"DELETE FROM items WHERE {where}", row).rowcount for row in parameters)

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
        self.put((), records)

    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditRecord]:
        rows = self._run(
            "SELECT item_id, operation, reason, at, weight, user_id FROM audit "
            "WHERE (? IS NULL OR user_id = ?) AND (? IS NULL OR item_id = ?) ORDER BY seq",
            (user_id, user_id, item_id, item_id),
        )
        return [AuditRecord(*row) for row in rows]

    def integrity(self) -> str:
        """Return SQLite's `PRAGMA integrity_check` verdict ("ok" when intact)."""
        return self._run("PRAGMA integrity_check")[0][0]

    def close(self) -> None:
        self._db.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"
