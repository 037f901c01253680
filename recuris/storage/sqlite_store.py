"""SQLite storage: the same Store interface, persisted in one file with the standard sqlite3.

Document 001 §2 keeps every tier in SQLite with indexes on task and on (type, task);
document 003 §7 asks that deleting a user reach every copy. Here: a versioned schema
checked on open, WAL journaling, one transaction per write batch, parameterised SQL only,
and `secure_delete`, so deleted text is overwritten rather than left in free pages.
The layout is described in docs/storage/sqlite-schema.md.

Invariants:
    SQ1 closing and reopening gives back exactly the items and audit records written.
    SQ2 any text (quotes, `;`, NUL, any script, any length) round-trips unchanged and is
        only ever a bound parameter, never part of a statement.
    SQ3 a batch is written whole or not at all, even if the process dies mid-batch.
    S7, S8, S9, S16 (store.py) hold here as in the in-memory store: `matching`, `search`,
        `adjacent` and `get_many` read the postings, the thread index and the ids' index
        (sqlite_search.py); a row whose metadata cannot be read is left out of every read and
        listed by `unreadable` (SH5, sqlite_schema.py).
    SQ4 a write lock held by another connection delays a manager call by about `timeout`
        seconds at most: a write waits for it up to `timeout`, and once a wait has run out,
        for the next `timeout` seconds a write takes the lock only if it is free at once,
        else fails (StoreError, which the manager queues). A read waits up to `timeout`.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..retrieval.bm25 import BM25Settings
from . import sqlite_schema as schema
from . import sqlite_search
from .audit import AuditEntry
from .item import MemoryItem
from .sqlite_erasure import SQLiteErasure
from .sqlite_file import LOCK_TIMEOUT_SECONDS, SYNCHRONOUS, check_synchronous, open_database
from .sqlite_ids import ID_BLOCK, NewIds
from .sqlite_schema import SCHEMA_VERSION, RowReader
from .store import Access, StoreError, TermCounts, TermStatistics, check_owners, refuse_if_forgotten

__all__ = ["SQLiteStore", "SCHEMA_VERSION", "ID_BLOCK"]


class SQLiteStore(SQLiteErasure):
    """A Store in one SQLite file (or ":memory:")."""

    def __init__(
        self,
        path: str | Path,
        create: bool = True,
        timeout: float = LOCK_TIMEOUT_SECONDS,
        read_only: bool = False,
        bm25: BM25Settings = BM25Settings(),  # noqa: B008 (frozen)
        synchronous: str = SYNCHRONOUS[0],
    ) -> None:
        """Open (and, if `create` and not `read_only`, make) the store at path.

        A `read_only` store opens the file so that it cannot write (SF2). `synchronous` is
        FULL, NORMAL or EXTRA (SF4): FULL, the default, loses no committed write on power
        loss; NORMAL may lose the last ones, never the file's integrity. Raises ValueError
        for another `synchronous`, before the file is opened;
        FileNotFoundError when the file is missing and `create` is False or `read_only`;
        StoreError, having written nothing, when the file is not a recuris database of this
        schema version.
        """
        self.path = str(path)
        self.bm25 = bm25
        self.synchronous = check_synchronous(synchronous)
        missing = self.path != ":memory:" and not Path(self.path).is_file()
        if missing and (read_only or not create):
            raise FileNotFoundError(f"no recuris database at {self.path}")
        # One connection serves every thread, one statement or transaction at a time under `_lock`.
        self._db = open_database(self.path, read_only, timeout, create, synchronous)
        self._lock = threading.RLock()
        # Ids handed out, each guarded until its put commits (S3, ID2).
        self._ids = NewIds(self._transaction)
        self.timeout = timeout
        self._lock_wait_resumes = 0.0
        self._seen: dict[str, int] = {}  # per user: the forget generation this object last saw (S6)
        self.read_only = read_only
        # Rows to items; it remembers each user's rows that cannot be read (SH5).
        self.rows = RowReader()
        if not read_only:
            self._finish_pending_erasures()  # another process's, left for the next open (SE2)

    def _run(self, statement: str, parameters: tuple = ()) -> list[tuple]:
        try:
            with self._lock:
                return self._db.execute(statement, parameters).fetchall()
        except sqlite3.Error as error:
            raise StoreError(f"{type(error).__name__}: {error}") from error

    def _transaction(self, work):
        # One explicit transaction per batch (SQ3): all of it commits, or none of it.
        with self._lock:
            try:
                self._begin()
                try:
                    result = work(self._db)
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            except sqlite3.Error as error:
                raise StoreError(f"{type(error).__name__}: {error}") from error
            self._finish_pending_erasures()
            return result

    def _begin(self) -> None:
        # SQ4: a wait that ran out is not repeated by every write of the same call: for the
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
        self,
        items: Iterable[MemoryItem],
        audit: Iterable[AuditEntry] = (),
        delete: Iterable[MemoryItem] = (),
    ) -> None:
        """Delete `delete` (by id and user), then store the items and audit, all or none (S5)."""
        batch = list(items)
        doomed = [(old.id, old.user_id) for old in delete]
        records = [(r.at, r.user_id, r.item_id, r.operation, r.reason, r.weight) for r in audit]

        def write(db: sqlite3.Connection) -> None:
            users = [item.user_id for item in batch] + [record[1] for record in records]
            # One new item of one user this object has seen (a manager's write) goes in one
            # statement, which checks the user's generation (S6) and that the id is free; only if
            # it inserts nothing is either read on its own, and the stored row (S2, old postings).
            if not (
                len(batch) == 1
                and not doomed
                and len(set(users)) == 1
                and users[0] in self._seen
                and schema.insert_new(db, batch[0], self._seen[users[0]])
            ):
                refuse_if_forgotten(
                    users, self._seen, lambda user_id: self._generation(db, user_id)
                )
                stored = schema.stored_rows(db, ids)  # owners before deleting (S2)
                self._ids.refuse_taken(guarded, stored)
                check_owners(batch, lambda item_id: stored.get(item_id, (None,))[0])
                if doomed:
                    self._delete_rows(db, "id = ? AND user_id = ?", doomed)
                    stored = schema.stored_rows(db, ids)
                # The term index follows in the same transaction (SH1).
                schema.write(db, batch, stored)
            if records:
                db.executemany(schema.AUDIT_INSERT, records)

        # A new id stays guarded until its put commits, so a failed put's retry is too (ID2).
        with self._lock:
            ids = [item.id for item in batch]
            guarded = self._ids.guarded(ids)
            self._transaction(write)
            self._ids.written(ids)

    def get(self, user_id: str, item_id: str) -> MemoryItem | None:
        rows = self._run(f"{schema.SELECT_ITEMS} WHERE id = ? AND user_id = ?", (item_id, user_id))
        return self.rows.item(rows[0]) if rows else None

    def get_many(self, user_id: str, item_ids: Iterable[str]) -> dict[str, MemoryItem]:
        return sqlite_search.get_many(self._run, self.rows, user_id, item_ids)

    def list(
        self, user_id: str, level: str | None = None, task_id: str | None = None
    ) -> list[MemoryItem]:
        # One plain condition per given filter, so that every list is served by an index; the
        # thread index named, since with statistics (ANALYZE) SQLite scans every user's items in
        # write order rather than sort a level's few (SX1).
        given = {
            column: value
            for column, value in (("user_id", user_id), ("level", level), ("task_id", task_id))
            if value is not None
        }
        where = " AND ".join(f"{column} = ?" for column in given)
        return self.rows.items(
            self._run(
                f"{schema.SELECT_ITEMS} INDEXED BY items_thread WHERE {where} ORDER BY number",
                tuple(given.values()),
            )
        )

    def matching(self, user_id: str, level: str, terms: Iterable[str]) -> list[MemoryItem]:
        return sqlite_search.matching(self._run, self.rows, user_id, level, terms)

    def iterate(
        self, user_id: str, level: str | None = None, batch_size: int = 1000
    ) -> Iterator[list]:
        return sqlite_search.iterate(self._run, self.rows, user_id, level, batch_size)

    def search(
        self, user_id: str, level: str, terms: Sequence[str], limit: int
    ) -> list[tuple[MemoryItem, float]]:
        return sqlite_search.search(self._run, self.rows, user_id, level, terms, limit, self.bm25)

    def adjacent(
        self, user_id: str, item_ids: Iterable[str], width: int = 1
    ) -> dict[str, tuple[str | None, ...]]:
        return sqlite_search.adjacent(self._run, user_id, item_ids, width)

    def statistics(self, user_id: str, level: str, terms: Iterable[str]) -> TermStatistics:
        return sqlite_search.statistics(self._run, user_id, level, terms, self.bm25)

    def held_terms(
        self, user_id: str, level: str, item_ids: Iterable[str], terms: Iterable[str]
    ) -> dict[str, TermCounts]:
        return sqlite_search.held_terms(self._run, user_id, level, item_ids, terms)

    def unreadable(self, user_id: str) -> tuple[str, ...]:
        """Return the ids of the user's rows that reads met and left out, unreadable (SH5)."""
        return tuple(sorted(self.rows.unreadable.get(user_id, ())))

    def users(self) -> list[str]:
        return [row[0] for row in self._run("SELECT DISTINCT user_id FROM items ORDER BY user_id")]

    def new_id(self, prefix: str) -> str:
        # From a block reserved in the file, so a manager's write reads nothing first (S5, ID1).
        with self._lock:
            return self._ids.new(prefix)

    def append_audit(self, records: Iterable[AuditEntry]) -> None:
        self.put((), records)

    def record_access(self, accesses: Iterable[Access], audit: Iterable[AuditEntry] = ()) -> None:
        """Count each access on its stored item, if still stored, and append `audit` (S10, S6).

        One transaction: a recall's counts and its audit record cost one commit.
        """
        rows = [(access.at, access.id, access.user_id) for access in accesses]
        records = [(r.at, r.user_id, r.item_id, r.operation, r.reason, r.weight) for r in audit]

        def count(db: sqlite3.Connection) -> None:
            # Only the two access columns: a stale reader can never reopen or rewrite an item (S10).
            users = [row[2] for row in rows] + [record[1] for record in records]
            refuse_if_forgotten(users, self._seen, lambda user_id: self._generation(db, user_id))
            db.executemany(schema.RECORD_ACCESS, rows)
            if records:
                db.executemany(schema.AUDIT_INSERT, records)

        self._transaction(count)

    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditEntry]:
        return sqlite_search.audit(self._run, user_id, item_id)

    def integrity(self) -> str:
        """Return SQLite's `PRAGMA integrity_check` verdict ("ok" when intact)."""
        return self._run("PRAGMA integrity_check")[0][0]

    def close(self) -> None:
        with self._lock:
            if not self.read_only:
                self._finish_pending_erasures()
            self._db.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"
