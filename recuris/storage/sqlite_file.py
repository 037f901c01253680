"""Opening a database file: create it once, refuse what is not ours, read without writing.

Document 001 §2 keeps every tier in one SQLite file; document 003 §7 asks that memory never
damage what it does not own. Several processes may open one file at once, and an operator
may point a reading command at any file: so the schema is created in one transaction that
other creators wait for, every check that can refuse a file runs before anything is
written, and a reading open cannot write at all. A writing open brings an older version up
to date, a step per version (`_from_2` to `_from_6`; docs/storage/sqlite-schema.md).

Invariants:
    SF1 creating the schema is one transaction that other creators wait for: however many
        processes open a new file at once, it ends with exactly one schema_version row.
    SF2 a file is refused (another application's database, another schema version, an
        empty file opened for reading) before any byte of it is written; a read-only open
        writes nothing, and only a writing open creates a database or migrates an older
        version whose tables are all kept (`MIGRATES_FROM`), in one transaction.
    SF3 creating or migrating a database puts it in WAL mode, which the file keeps, so that
        readers do not wait behind a writer.
    SF4 a writing connection syncs as its `synchronous` says, one of SYNCHRONOUS: FULL (the
        default) loses no committed write on power loss; NORMAL, in WAL mode, may lose the
        last transactions committed before a power loss or an OS crash, never the file's
        integrity nor anything on a crash of the process. Any other value is refused
        (ValueError) before the file is opened.
    SF5 `refuse_read_only` raises StoreError for a database SQLite can read but not write
        (it opens such a file read-only, silently), having written nothing; another
        process's write lock is no refusal.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from . import sqlite_schema as schema
from .sqlite_schema import SCHEMA_VERSION
from .store import StoreError

__all__ = [
    "open_database",
    "SYNCHRONOUS",
    "LOCK_TIMEOUT_SECONDS",
    "check_synchronous",
    "refuse_read_only",
]

# `synchronous` values a store accepts, the default first. OFF is not one of them: a power
# loss in the middle of a checkpoint can then corrupt the file, not only lose a commit.
SYNCHRONOUS = ("FULL", "NORMAL", "EXTRA")
# How long a store waits for another process's lock before a write fails, by default: the
# store's, the command line's and the MCP server's `--timeout`.
LOCK_TIMEOUT_SECONDS = 5.0


def check_synchronous(synchronous: str) -> str:
    """Return `synchronous` if the store accepts it; else raise ValueError naming SF4."""
    if synchronous not in SYNCHRONOUS:
        raise ValueError(
            f"SF4: synchronous must be one of {SYNCHRONOUS} (FULL loses nothing on power loss, "
            f"NORMAL may lose the last commits), got {synchronous!r}"
        )
    return synchronous


def _tables(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _versions(db: sqlite3.Connection, tables: set[str]) -> list[int] | None:
    """Return the schema_version rows, or None when the file has no recuris schema at all."""
    if "schema_version" not in tables:
        return None
    return [row[0] for row in db.execute("SELECT version FROM schema_version")]


def _refusal(
    path: str, tables: set[str], versions: list[int] | None, read_only: bool, create: bool
) -> str | None:
    """Say why the file cannot be opened, or None if it can (SF2)."""
    if versions is None and tables:
        return (
            f"{path} is another application's SQLite database "
            f"(tables {sorted(tables)[:5]}), not recuris's"
        )
    if versions is None or versions == []:
        return f"{path} is empty, not a recuris database" if read_only or not create else None
    migratable = len(versions) == 1 and versions[0] in schema.MIGRATES_FROM
    if versions != [SCHEMA_VERSION] and (read_only or not migratable):
        migrate = " (a writing open migrates it)" if migratable else ""
        return f"schema version {versions} in {path}; this code reads {SCHEMA_VERSION}{migrate}"
    return None


def _connect(path: str, read_only: bool, timeout: float) -> sqlite3.Connection:
    if read_only:
        # The URI form is the only way to ask sqlite3 for a connection that cannot write.
        uri = f"{Path(path).resolve().as_uri()}?mode=ro"
        return sqlite3.connect(
            uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False
        )
    # Threads may share the connection: the store serialises them under its own lock.
    return sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)


def _create(db: sqlite3.Connection) -> None:
    """Create what the schema lacks in the caller's transaction, migrating an older version."""
    for statement in [*schema.SCHEMA.split(";"), schema.FORGOTTEN_SCHEMA]:
        if statement.strip():
            db.execute(statement)
    versions = [row[0] for row in db.execute("SELECT version FROM schema_version")]
    if not versions:
        db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
    elif versions[0] in schema.MIGRATES_FROM:  # one step after another, oldest first (SH2)
        for step in (_from_2, _from_3, _from_4, _from_5, _from_6)[versions[0] - 2 :]:
            step(db)
    db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))  # a migration ends here


def _from_2(db: sqlite3.Connection) -> None:
    """Replace version 2's FTS5 token table by postings built from the items."""
    # Version 2 kept distinct tokens in an FTS5 table; version 3 keeps analysed terms with
    # their counts in plain tables. Rebuild the index from the items, in one transaction.
    db.execute("DROP TABLE IF EXISTS items_terms")
    db.execute("DROP INDEX IF EXISTS items_user_level")
    for table in (
        "postings",
        "pending_postings",
        "scopes",
    ):  # built from scratch: a repeat is harmless
        db.execute(f"DELETE FROM {table}")
    last = 0
    while rows := db.execute(
        "SELECT user_id, level, content, rowid FROM items WHERE rowid > ? "
        "ORDER BY rowid LIMIT 10000",
        (last,),
    ).fetchall():
        schema.reindex(db, [], rows)  # a page at a time, so a large file is never held whole
        last = rows[-1][3]


def _from_3(db: sqlite3.Connection) -> None:
    """Drop version 3's unread `items.valid_from`, keeping every row and its place (SH2)."""
    # Rebuilt rather than `ALTER TABLE ... DROP COLUMN`, which SQLite before 3.35 lacks.
    _rebuild_items(db)


def _from_4(db: sqlite3.Connection) -> None:
    """Rebuild version 4's audit without AUTOINCREMENT, each record kept with its `seq` (SH2)."""
    columns = "seq, at, user_id, item_id, operation, reason, weight"
    _rebuild(db, "audit", schema.AUDIT, columns, schema.AUDIT_INDEXES)


def _from_5(db: sqlite3.Connection) -> None:
    """Keep each task in progress of a version 5 file as one item holding its working memory."""
    schema.merge_task_items(db)


def _from_6(db: sqlite3.Connection) -> None:
    """Declare version 6's implicit rowid as `items.number`, keeping every row's (SH2, SH4)."""
    # SQLite cannot add a primary key to a table: the table is rebuilt. A file of version 3 or
    # older was rebuilt as today's by `_from_3` already.
    if "number" not in {row[1] for row in db.execute("PRAGMA table_info(items)")}:
        _rebuild_items(db)


def _rebuild_items(db: sqlite3.Connection) -> None:
    """Rebuild items as `schema.ITEMS` makes it, each row with its rowid as its `number`."""
    # The rowid is copied: write order and the postings (whose `item` is it) depend on it.
    _rebuild(db, "items", schema.ITEMS, ", ".join(["rowid", *schema.COLUMNS]), schema.ITEMS_INDEXES)


def _rebuild(db: sqlite3.Connection, table: str, create: str, columns: str, indexes: str) -> None:
    db.execute(f"ALTER TABLE {table} RENAME TO {table}_old")
    db.execute(create)
    db.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {table}_old")
    # And its indexes (and counter row), made again on the new table
    db.execute(f"DROP TABLE {table}_old")
    for statement in indexes.split(";"):
        db.execute(statement)


def open_database(
    path: str,
    read_only: bool,
    timeout: float,
    create: bool = True,
    synchronous: str = SYNCHRONOUS[0],
) -> sqlite3.Connection:
    """Open path as a recuris database; return the connection.

    Creates the schema in an empty file only if `create` and not `read_only`. A writing
    connection syncs as `synchronous` says (SF4).

    Raises StoreError, having written nothing, when the file is refused (SF2).
    """
    check_synchronous(synchronous)
    db = _connect(path, read_only, timeout)
    try:
        tables = _tables(db)
        versions = _versions(db, tables)
        refusal = _refusal(path, tables, versions, read_only, create)
        if refusal:
            raise StoreError(refusal)
        if not read_only:
            # Deleted text is overwritten, not left in free pages
            db.execute("PRAGMA secure_delete = ON")
            # A pragma takes no parameter; the value was checked to be one of SYNCHRONOUS.
            db.execute(f"PRAGMA synchronous = {synchronous}")
        if read_only or versions == [SCHEMA_VERSION]:
            return db
        db.execute("PRAGMA journal_mode = WAL")
        # The one creator; any other waits here, then finds the schema (SF1)
        db.execute("BEGIN IMMEDIATE")
        try:
            tables = _tables(db)
            refusal = _refusal(path, tables, _versions(db, tables), read_only, create)
            if refusal:
                raise StoreError(refusal)
            _create(db)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return db
    except sqlite3.Error as error:
        db.close()
        raise StoreError(f"cannot open {path} as a recuris database: {error}") from error
    except StoreError:
        db.close()
        raise


def refuse_read_only(database: str, timeout: float) -> None:
    """Raise StoreError if SQLite opens the database for reading alone (SF5)."""
    # SQLite opens a file it may not write read-only, silently: only a write tells. This
    # one is rolled back, so the file is left as it was.
    probe = sqlite3.connect(database, timeout=timeout, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("UPDATE schema_version SET version = version")
        probe.execute("ROLLBACK")
    except sqlite3.OperationalError as error:
        # Another process's write lock is no refusal: the store waits for it (SQ4).
        if "readonly" in str(error):
            raise StoreError(
                f"SQLite can read it but not write it ({error}): nothing remembered would be "
                "kept; give a file this user may write"
            ) from error
    finally:
        probe.close()
