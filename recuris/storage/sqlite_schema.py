"""SQLite schema: the tables, statements and row mapping of `SQLiteStore`, in one place.

Document 001 §2 stores every tier in one SQLite database with indexes on task and type;
docs/storage/sqlite-schema.md describes these tables. Beside the items there is a term index in plain
tables: one posting per (user and level, term, item) with the term's frequency and the
item's length, and per user and level the number of items and their total length. That
is all Okapi BM25 needs, so recall is scored in SQL with the statistics of one user and
level (an FTS5 index would rank with the whole file's, and fixes k1 and b).

Invariants:
    SH1 an item's postings hold exactly the analysed terms of its content with their
        counts, and each scope's totals equal the sums over its items, after any write.
    SH2 migrating a file of an older version (`MIGRATES_FROM`) keeps every item whole, with
        its rowid, so that write order and the postings still refer to the same items.
"""

import json
import sqlite3
from collections import Counter

from .item import MemoryItem
from ..retrieval.scoring import analyze

__all__ = ["SCHEMA", "SCHEMA_VERSION", "COLUMNS", "row_of", "item_of", "term_counts", "reindex",
           "migrate_from_2", "migrate_from_3", "chunks", "iterate_statement", "reserve", "stored"]

SCHEMA_VERSION = 4
MIGRATES_FROM = (2, 3)  # versions a writing open upgrades in place: their items are all still here
COLUMNS = (
    "id user_id level content task_id created_at last_access_at access_count importance metadata "
    "invalidated_at superseded_by"
).split()
ITEMS = """CREATE TABLE IF NOT EXISTS items (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL, level TEXT NOT NULL, content TEXT NOT NULL,
    task_id TEXT, created_at REAL NOT NULL, last_access_at REAL NOT NULL,
    access_count INTEGER NOT NULL, importance REAL NOT NULL, metadata TEXT NOT NULL,
    invalidated_at REAL, superseded_by TEXT)"""
ITEMS_INDEXES = """CREATE INDEX IF NOT EXISTS items_thread ON items (user_id, level, task_id);
CREATE INDEX IF NOT EXISTS items_task ON items (task_id)"""
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
{ITEMS};
{ITEMS_INDEXES};
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, user_id TEXT NOT NULL,
    item_id TEXT NOT NULL, operation TEXT NOT NULL, reason TEXT NOT NULL, weight REAL);
CREATE INDEX IF NOT EXISTS audit_user ON audit (user_id);
CREATE INDEX IF NOT EXISTS audit_item ON audit (item_id);
CREATE TABLE IF NOT EXISTS counters (prefix TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS scopes (
    id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, level TEXT NOT NULL,
    documents INTEGER NOT NULL, length INTEGER NOT NULL, UNIQUE (user_id, level));
CREATE TABLE IF NOT EXISTS postings (
    scope INTEGER NOT NULL, term TEXT NOT NULL, item INTEGER NOT NULL,
    frequency INTEGER NOT NULL, length INTEGER NOT NULL,
    PRIMARY KEY (scope, term, item)) WITHOUT ROWID;
"""
# Forgetting a user raises their generation; every write checks it in its transaction (S6).
FORGOTTEN_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS forgotten (user_id TEXT PRIMARY KEY, generation INTEGER NOT NULL)"
)
SCRUB_AUDIT = "UPDATE audit SET reason = '', weight = NULL WHERE user_id = ?"
GENERATION = "SELECT generation FROM forgotten WHERE user_id = ?"
FORGET = (
    "INSERT INTO forgotten (user_id, generation) VALUES (?, 1) "
    "ON CONFLICT (user_id) DO UPDATE SET generation = generation + 1"
)
SELECT_ITEMS = f"SELECT {', '.join(COLUMNS)} FROM items"
STORED = "SELECT id, user_id, level, content, task_id, rowid FROM items"
AUDIT_INSERT = "INSERT INTO audit (at, user_id, item_id, operation, reason, weight) VALUES (?, ?, ?, ?, ?, ?)"
UPSERT = (
    f"INSERT INTO items ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))}) "
    f"ON CONFLICT (id) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in COLUMNS[1:])}"
)

RECORD_ACCESS = (
    "UPDATE items SET access_count = access_count + 1, last_access_at = ? WHERE id = ? AND user_id = ?"
)


def row_of(item: MemoryItem) -> tuple:
    """Return the item's row: its fields in column order, metadata as JSON text (I2's mapping)."""
    # Field by field rather than through `to_dict`: asdict deep-copies every value, and was
    # more than half the cost of a batched write.
    metadata = json.dumps(item.metadata, ensure_ascii=False, sort_keys=True)
    return tuple(metadata if column == "metadata" else getattr(item, column) for column in COLUMNS)


def item_of(row: tuple) -> MemoryItem:
    data = dict(zip(COLUMNS, row, strict=True))
    data["metadata"] = json.loads(data["metadata"])
    # The row was checked when it was written; re-checking 100k rows would be most of a recall.
    return MemoryItem.trusted(data)


SCOPE = "SELECT id, documents, length FROM scopes WHERE user_id = ? AND level = ?"
POSTINGS_DELETE_USER = "DELETE FROM postings WHERE scope IN (SELECT id FROM scopes WHERE user_id = ?)"
SELECT_WITH_ROWID = f"SELECT {', '.join(COLUMNS)}, rowid FROM items"


def chunks(values: list, size: int = 500):
    """Yield `values` in slices of at most `size`, to stay under SQLite's bound-parameter limit."""
    for start in range(0, len(values), size):
        yield values[start:start + size]


def term_counts(text: str) -> Counter:
    """Return the analysed terms of a text with their counts: what the postings hold (SH1)."""
    return Counter(analyze(text))


def reindex(db: sqlite3.Connection, removed: list[tuple], added: list[tuple]) -> None:
    """Move items out of and into the term index, in batches (SH1).

    Each row is (user_id, level, content, rowid); removals are applied before additions, so
    an item re-written in place may appear in both.
    """
    scopes, documents, lengths, deletions, insertions = {}, Counter(), Counter(), [], []
    for sign, rows in ((-1, removed), (1, added)):
        for user_id, level, content, rowid in rows:
            if (user_id, level) not in scopes:
                db.execute("INSERT OR IGNORE INTO scopes (user_id, level, documents, length) VALUES (?, ?, 0, 0)",
                           (user_id, level))
                scopes[user_id, level] = db.execute(SCOPE, (user_id, level)).fetchone()[0]
            scope, counts = scopes[user_id, level], term_counts(content)
            length = sum(counts.values())
            documents[scope] += sign
            lengths[scope] += sign * length
            if sign < 0:
                deletions += [(scope, term, rowid) for term in counts]
            else:
                insertions += [(scope, term, rowid, count, length) for term, count in counts.items()]
    # In key order, so that each B-tree page is visited once per batch rather than once per row.
    db.executemany("DELETE FROM postings WHERE scope = ? AND term = ? AND item = ?", sorted(deletions))
    db.executemany("INSERT INTO postings (scope, term, item, frequency, length) VALUES (?, ?, ?, ?, ?)",
                   sorted(insertions))
    db.executemany("UPDATE scopes SET documents = documents + ?, length = length + ? WHERE id = ?",
                   [(documents[scope], lengths[scope], scope) for scope in scopes.values()])


def migrate_from_2(db: sqlite3.Connection) -> None:
    """Replace version 2's FTS5 token table by version 3's postings, built from the items."""
    # Version 2 kept distinct tokens in an FTS5 table; version 3 keeps analysed terms with
    # their counts in plain tables. Rebuild the index from the items, in one transaction.
    db.execute("DROP TABLE IF EXISTS items_terms")
    db.execute("DROP INDEX IF EXISTS items_user_level")
    db.execute("DELETE FROM postings")  # built from scratch, so a repeated migration is harmless
    db.execute("DELETE FROM scopes")
    last = 0
    while rows := db.execute("SELECT user_id, level, content, rowid FROM items WHERE rowid > ? "
                             "ORDER BY rowid LIMIT 10000", (last,)).fetchall():
        reindex(db, [], rows)  # a page at a time, so a large file is never held whole
        last = rows[-1][3]


def migrate_from_3(db: sqlite3.Connection) -> None:
    """Drop version 3's `items.valid_from`, which nothing read, keeping every row and its rowid (SH2)."""
    # Rebuilt rather than `ALTER TABLE ... DROP COLUMN`, which SQLite before 3.35 lacks. The
    # rowid is copied: write order and the postings (whose `item` is the rowid) depend on it.
    columns = ", ".join(COLUMNS)
    db.execute("ALTER TABLE items RENAME TO items_3")
    db.execute(ITEMS)
    db.execute(f"INSERT INTO items (rowid, {columns}) SELECT rowid, {columns} FROM items_3")
    db.execute("DROP TABLE items_3")  # and its indexes, made again on the new table
    for statement in ITEMS_INDEXES.split(";"):
        db.execute(statement)


def iterate_statement(by_level: bool) -> str:
    """Return the keyset-paged read of one user's items (and level), rowid last, after a rowid."""
    # `+user_id` keeps SQLite on the rowid order instead of sorting the user's index entries.
    level = "AND level = ? " if by_level else ""
    return (f"SELECT {', '.join(COLUMNS)}, rowid FROM items WHERE +user_id = ? {level}AND rowid > ? "
            "ORDER BY rowid LIMIT ?")


def reserve(db: sqlite3.Connection, prefix: str, count: int) -> tuple[int, int]:
    """Reserve the next `count` id numbers of a prefix in the counters table; return the first and last."""
    row = db.execute("SELECT value FROM counters WHERE prefix = ?", (prefix,)).fetchone()
    last = row[0] if row else 0
    db.execute("INSERT OR REPLACE INTO counters (prefix, value) VALUES (?, ?)", (prefix, last + count))
    return last + 1, last + count


def stored(db: sqlite3.Connection, ids: list[str]) -> dict[str, tuple]:
    """Return (user, level, content, task, rowid) of each stored id, read in chunks."""
    found = {}
    for part in chunks(list(dict.fromkeys(ids))):
        marks = ", ".join("?" * len(part))
        found.update((row[0], row[1:]) for row in db.execute(f"{STORED} WHERE id IN ({marks})", part))
    return found
