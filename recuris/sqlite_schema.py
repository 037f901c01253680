"""SQLite schema: the tables, statements and row mapping of `SQLiteStore`, in one place.

Document 001 §2 stores every tier in one SQLite database with indexes on task and type;
docs/storage.md describes these tables. Beside the items there is a term index (an FTS5
table, when the sqlite3 build has it) holding each item's recuris tokens, hex-encoded so
that SQLite's own tokenizer keeps every token whole: recall then reads only the items
that share a token with the query, instead of every item of the user.

Invariants:
    S12 an item's row in the term index holds exactly the tokens of its content, so the
        items `matching` returns are exactly those that share a token with the query.
"""

import json

from .item import MemoryItem
from .text import tokenize

__all__ = ["SCHEMA", "SCHEMA_VERSION", "FTS_SCHEMA", "COLUMNS", "row_of", "item_of", "terms_of", "fts_query",
           "iterate_statement"]

SCHEMA_VERSION = 2
COLUMNS = (
    "id user_id level content task_id created_at last_access_at access_count importance metadata "
    "valid_from invalidated_at superseded_by"
).split()
SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL, level TEXT NOT NULL, content TEXT NOT NULL,
    task_id TEXT, created_at REAL NOT NULL, last_access_at REAL NOT NULL,
    access_count INTEGER NOT NULL, importance REAL NOT NULL, metadata TEXT NOT NULL,
    valid_from REAL NOT NULL, invalidated_at REAL, superseded_by TEXT);
CREATE INDEX IF NOT EXISTS items_user_level ON items (user_id, level);
CREATE INDEX IF NOT EXISTS items_task ON items (task_id);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, user_id TEXT NOT NULL,
    item_id TEXT NOT NULL, operation TEXT NOT NULL, reason TEXT NOT NULL, weight REAL);
CREATE INDEX IF NOT EXISTS audit_user ON audit (user_id);
CREATE INDEX IF NOT EXISTS audit_item ON audit (item_id);
CREATE TABLE IF NOT EXISTS counters (prefix TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""
SELECT_ITEMS = f"SELECT {', '.join(COLUMNS)} FROM items"
OWNER_AND_CONTENT = "SELECT user_id, content FROM items WHERE id = ?"
UPSERT = (
    f"INSERT INTO items ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))}) "
    f"ON CONFLICT (id) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in COLUMNS[1:])}"
)


def row_of(item: MemoryItem) -> tuple:
    data = item.to_dict()
    data["metadata"] = json.dumps(data["metadata"], ensure_ascii=False, sort_keys=True)
    return tuple(data[column] for column in COLUMNS)


def item_of(row: tuple) -> MemoryItem:
    data = dict(zip(COLUMNS, row, strict=True))
    data["metadata"] = json.loads(data["metadata"])
    # The row was checked when it was written; re-checking 100k rows would be most of a recall.
    return MemoryItem.trusted(data)


FTS_SCHEMA = "CREATE VIRTUAL TABLE IF NOT EXISTS items_terms USING fts5(terms)"
MATCHING = (
    f"{SELECT_ITEMS} WHERE rowid IN (SELECT rowid FROM items_terms WHERE items_terms MATCH ?) "
    "AND user_id = ? AND level = ? ORDER BY rowid"
)
TERMS_DELETE = "DELETE FROM items_terms WHERE rowid = (SELECT rowid FROM items WHERE id = ?)"
TERMS_INSERT = "INSERT INTO items_terms (rowid, terms) SELECT rowid, ? FROM items WHERE id = ?"


def terms_of(text: str) -> str:
    """Return the text's distinct tokens, hex-encoded and space-separated, for the term index."""
    return " ".join(sorted(token.encode().hex() for token in set(tokenize(text))))


def fts_query(tokens: set[str]) -> str:
    """Return an FTS5 query matching any of the tokens (hex words need no quoting)."""
    return " OR ".join(sorted(token.encode().hex() for token in tokens))


def iterate_statement(by_level: bool) -> str:
    """Return the keyset-paged read of one user's items (and level), rowid last, after a rowid."""
    # `+user_id` keeps SQLite on the rowid order instead of sorting the user's index entries.
    level = "AND level = ? " if by_level else ""
    return (f"SELECT {', '.join(COLUMNS)}, rowid FROM items WHERE +user_id = ? {level}AND rowid > ? "
            "ORDER BY rowid LIMIT ?")
