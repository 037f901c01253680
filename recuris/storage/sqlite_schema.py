"""SQLite schema: the tables, statements and row mapping of `SQLiteStore`, in one place.

Document 001 §2 stores every tier in one SQLite database with indexes on task and type;
docs/storage/sqlite-schema.md describes these tables. Beside the items there is a term index
in plain tables: one posting per (user and level, term, item) with the term's frequency and the
item's length, and per user and level the number of items and their total length. That
is all Okapi BM25 needs, so recall is scored in SQL with the statistics of one user and
level (an FTS5 index would rank with the whole file's, and fixes k1 and b). A small write's
postings wait in `pending_postings`, appended in write order, until enough of them are
merged at once: each posting of `postings` is a row in a B-tree keyed by (scope, term), so
writing them one item at a time would rewrite a page per term.

Invariants:
    SH1 an item's postings (in `postings`, or in `pending_postings` until merged) hold
        exactly the analysed terms of its content with their counts, and each scope's
        totals equal the sums over its items, after any write.
    SH2 migrating a file of an older version (`MIGRATES_FROM`) keeps every item whole, with
        its place (its rowid becomes its `number`), so that write order and the postings still
        refer to the same items; but SH3.
    SH3 migrating a version 5 file turns each task's working items, its goal item and one item
        per step, into the goal item alone holding the task's working memory (core/working.py),
        every step of those items in its trajectory, in write order; the step items go, with
        their postings; a working note of the task that is not a step stays as it was.
    SH4 postings and write order refer to an item by `number`, a declared integer key, which
        VACUUM, a dump (`.dump`, `iterdump`) and its restore keep: after any of them every
        search finds the same items.
    SH5 a row no item could hold (a file edited by hand) is no item to any read: one whose
        metadata is not a JSON object, or whose other columns break I1 (a level not in
        LEVELS, an importance outside [0, 1] or not a number, a time that is no number of
        seconds within ±MAX_TIME, an access count below 0, an id, user or content that is
        not text or is blank, a task or successor that is neither text nor NULL). `get`,
        `get_many`, `list`, `iterate`, `matching` and `search` leave it out, with a warning
        naming its id, SH5 and the rule it breaks, and the store counts its id among its
        user's `unreadable` ones; the row stays in the file unchanged, until it is erased.
"""

import json
import logging
import re
import sqlite3
from collections.abc import Iterable
from operator import attrgetter, itemgetter

from ..core.working import WorkingMemory
from ..retrieval.scoring import analyze
from .item import LEVELS, MAX_TIME, MemoryItem
from .working_state import working_to_dict

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "COLUMNS",
    "row_of",
    "item_of",
    "RowReader",
    "metadata_text",
    "term_counts",
    "reindex",
    "write",
    "insert_new",
    "stored_rows",
    "merge_task_items",
]

log = logging.getLogger("recuris.storage.sqlite_schema")

SCHEMA_VERSION = 7
# Versions a writing open upgrades in place: their items are all still here.
MIGRATES_FROM = (2, 3, 4, 5, 6)
PENDING_LIMIT = (
    1000  # postings waiting in `pending_postings` before they are merged into `postings`
)
COLUMNS = (
    "id user_id level content task_id created_at last_access_at access_count importance metadata "
    "invalidated_at superseded_by"
).split()
# `number` is the item's place in write order and the key its postings name (SH4). Declared,
# it is the rowid itself, so VACUUM, `.dump` and `iterdump` keep it; an implicit rowid they
# may renumber, and a restored file's postings would then name other items.
ITEMS = """CREATE TABLE IF NOT EXISTS items (
    number INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, user_id TEXT NOT NULL,
    level TEXT NOT NULL, content TEXT NOT NULL,
    task_id TEXT, created_at REAL NOT NULL, last_access_at REAL NOT NULL,
    access_count INTEGER NOT NULL, importance REAL NOT NULL, metadata TEXT NOT NULL,
    invalidated_at REAL, superseded_by TEXT)"""
ITEMS_INDEXES = """CREATE INDEX IF NOT EXISTS items_thread ON items (user_id, level, task_id);
CREATE INDEX IF NOT EXISTS items_task ON items (task_id)"""
# Append-only: without AUTOINCREMENT, whose counter row would be one more page per write.
AUDIT = """CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY, at REAL NOT NULL, user_id TEXT NOT NULL,
    item_id TEXT NOT NULL, operation TEXT NOT NULL, reason TEXT NOT NULL, weight REAL)"""
AUDIT_INDEXES = """CREATE INDEX IF NOT EXISTS audit_user ON audit (user_id);
CREATE INDEX IF NOT EXISTS audit_item ON audit (item_id)"""
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
{ITEMS};
{ITEMS_INDEXES};
{AUDIT};
{AUDIT_INDEXES};
CREATE TABLE IF NOT EXISTS counters (prefix TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS scopes (
    id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, level TEXT NOT NULL,
    documents INTEGER NOT NULL, length INTEGER NOT NULL, UNIQUE (user_id, level));
CREATE TABLE IF NOT EXISTS postings (
    scope INTEGER NOT NULL, term TEXT NOT NULL, item INTEGER NOT NULL,
    frequency INTEGER NOT NULL, length INTEGER NOT NULL,
    PRIMARY KEY (scope, term, item)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pending_postings (
    scope INTEGER NOT NULL, term TEXT NOT NULL, item INTEGER NOT NULL,
    frequency INTEGER NOT NULL, length INTEGER NOT NULL,
    PRIMARY KEY (item, term)) WITHOUT ROWID;
"""
# Forgetting a user raises their generation; every write checks it in its transaction (S6).
FORGOTTEN_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS forgotten (user_id TEXT PRIMARY KEY, generation INTEGER NOT NULL)"
)
# Erasures whose checkpoint could not complete, made by the forget and dropped by the checkpoint
# that completes them, so that a file holds this table only while one is pending (SE2).
PENDING_ERASURES = "CREATE TABLE IF NOT EXISTS pending_erasures (what TEXT NOT NULL)"
ERASURE_PENDING = "SELECT COUNT(*) FROM sqlite_master WHERE name = 'pending_erasures'"
SCRUB_AUDIT = "UPDATE audit SET reason = '', weight = NULL WHERE user_id = ?"
GENERATION = "SELECT generation FROM forgotten WHERE user_id = ?"
FORGET = (
    "INSERT INTO forgotten (user_id, generation) VALUES (?, 1) "
    "ON CONFLICT (user_id) DO UPDATE SET generation = generation + 1"
)
_NAMES = ", ".join(COLUMNS)
_PLACES = ", ".join("?" * len(COLUMNS))
SELECT_ITEMS = f"SELECT {_NAMES} FROM items"
STORED = "user_id, level, content, task_id, number"  # what a write compares with, by id
AUDIT_INSERT = (
    "INSERT INTO audit (at, user_id, item_id, operation, reason, weight) VALUES (?, ?, ?, ?, ?, ?)"
)
UPSERT = (
    f"INSERT INTO items ({_NAMES}) VALUES ({_PLACES}) ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS[1:])
)
INSERT_NEW = (
    f"INSERT INTO items ({_NAMES}) SELECT {_PLACES} WHERE coalesce(({GENERATION}), 0) = ? "
    "ON CONFLICT (id) DO NOTHING"
)  # free id, user kept (S6)
RECORD_ACCESS = (
    "UPDATE items SET access_count = access_count + 1, last_access_at = ? "
    "WHERE id = ? AND user_id = ?"
)
# Encoders made once: `json.dumps` with any option builds a new encoder at every call.
_METADATA_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
_JSON = json.JSONEncoder(ensure_ascii=False).encode
_BEFORE_METADATA = attrgetter(*COLUMNS[:9])
_AFTER_METADATA = attrgetter(*COLUMNS[10:])


def row_of(item: MemoryItem) -> tuple:
    """Return the item's row: its fields in column order, metadata as JSON text (I2's mapping)."""
    # Field by field rather than through `to_dict`: asdict deep-copies every value, and was
    # more than half the cost of a batched write.
    return *_BEFORE_METADATA(item), metadata_text(item.metadata), *_AFTER_METADATA(item)


def metadata_text(metadata: dict) -> str:
    """Return the metadata column's text for an item's metadata ("{}" when empty)."""
    return _METADATA_JSON(metadata) if metadata else "{}"


def item_of(row: tuple) -> MemoryItem:
    """Return the item a row holds; raise ValueError naming SH5 if no item could hold it."""
    data = dict(zip(COLUMNS, row, strict=True))
    text = data["metadata"]
    # `row_of` writes empty metadata as "{}": read back without the decoder, an item costs
    # 3.4 µs instead of 7.4, a tenth of a rare word's recall (which builds its whole pool).
    try:
        data["metadata"] = {} if text == "{}" else json.loads(text)
    except (TypeError, ValueError):
        data["metadata"] = None
    if not isinstance(data["metadata"], dict):
        raise ValueError(f"SH5: item {data['id']!r} has metadata that is not a JSON object")
    # The row was checked when it was written; re-checking 100k rows would be most of a recall.
    # Its columns are only looked over, at a tenth of the cost; one that looks wrong is
    # checked whole, so that the rule it breaks is named (or it is read, if it breaks none).
    if _looks_whole(row):
        return MemoryItem.trusted(data)
    try:
        return MemoryItem(**data)
    except (TypeError, ValueError) as error:
        raise ValueError(f"SH5: item {data['id']!r} breaks {error}") from None


_LEVELS = frozenset(LEVELS)


def _looks_whole(row: tuple) -> bool:
    """Return whether a row's columns are of the kinds and within the ranges I1 gives them."""
    # What SQLite hands back: REAL columns as float, INTEGER as int, TEXT as str, NULL as None.
    # Unpacked from the row, not read from a dict or sliced: this runs for every row a read meets.
    (
        item_id,
        user_id,
        level,
        content,
        task,
        created,
        accessed,
        count,
        importance,
        _,
        closed,
        successor,
    ) = row  # the metadata, `_`, is read by `item_of`
    return (
        level in _LEVELS
        and type(importance) is float
        and 0.0 <= importance <= 1.0
        and type(created) is float
        and -MAX_TIME <= created <= MAX_TIME
        and type(accessed) is float
        and -MAX_TIME <= accessed <= MAX_TIME
        and (closed is None or (type(closed) is float and -MAX_TIME <= closed <= MAX_TIME))
        and type(count) is int
        and count >= 0
        and type(item_id) is str
        and type(user_id) is str
        and type(content) is str
        and not (item_id.isspace() or user_id.isspace() or content.isspace())
        and "" not in (item_id, user_id, content)
        and (task is None or (type(task) is str and task != "" and not task.isspace()))
        and (
            successor is None
            or (type(successor) is str and successor != "" and not successor.isspace())
        )
    )


class RowReader:
    """Rows to items, leaving out and remembering, per user, those SH5 makes unreadable."""

    def __init__(self) -> None:
        # user id -> the ids of their rows met and left out (SH5).
        self.unreadable: dict[str, set[str]] = {}

    def item(self, row: tuple) -> MemoryItem | None:
        """Return the item a row holds, or None, warned and remembered, if it is unreadable."""
        try:
            return item_of(row)
        except ValueError as error:
            # COLUMNS begins with the id and the user.
            self.unreadable.setdefault(row[1], set()).add(row[0])
            log.warning("%s; left out, unchanged in the file", error)
            return None

    def items(self, rows: Iterable[tuple]) -> list[MemoryItem]:
        """Return the items the rows hold, in order, leaving out the unreadable ones (SH5)."""
        return [item for item in map(self.item, rows) if item is not None]

    def forget(self, user_id: str, item_ids: Iterable[str] | None = None) -> None:
        """Forget the user's unreadable rows among `item_ids` (all if None): they are deleted."""
        if item_ids is None:
            self.unreadable.pop(user_id, None)
        elif user_id in self.unreadable:
            self.unreadable[user_id].difference_update(item_ids)


SCOPE = "SELECT id, documents, length FROM scopes WHERE user_id = ? AND level = ?"
POSTING = "scope, term, item, frequency, length"  # both postings tables' columns, in key order
AMONG = "item IN (SELECT value FROM json_each(?))"  # the numbers of one JSON array
POSTINGS_DELETE_USER = [
    f"DELETE FROM {table} WHERE scope IN (SELECT id FROM scopes WHERE user_id = ?)"
    for table in ("postings", "pending_postings")
]


def term_counts(text: str) -> dict[str, int]:
    """Return the analysed terms of a text with their counts: what the postings hold (SH1)."""
    # A plain dict: building a Counter added a third to the analysis (0.23 s more per 100k texts).
    counts: dict[str, int] = {}
    for term in analyze(text):
        counts[term] = counts.get(term, 0) + 1
    return counts


def write(db: sqlite3.Connection, batch: list[MemoryItem], stored: dict[str, tuple]) -> None:
    """Upsert the batch's rows and move their postings (SH1); `stored` is its `stored_rows`."""
    # Only an item whose text, level or task changed needs new postings: a recall rewrites
    # access counts, not content. An id written twice in one batch counts once, as its last.
    changed = [
        item
        for item in {item.id: item for item in batch}.values()
        if item.id not in stored or stored[item.id][1:4] != (item.level, item.content, item.task_id)
    ]
    removed = [
        (item.user_id, *stored[item.id][1:3], stored[item.id][4])
        for item in changed
        if item.id in stored
    ]
    db.executemany(UPSERT, [row_of(item) for item in batch])
    # New items get their numbers from the insert; a stored item keeps its number (upsert).
    found = stored_rows(db, [item.id for item in changed if item.id not in stored], "number")
    numbers = {item_id: row[4] for item_id, row in stored.items()}
    numbers.update((item_id, row[0]) for item_id, row in found.items())
    added = [(item.user_id, item.level, item.content, numbers[item.id]) for item in changed]
    reindex(db, removed, added)


def insert_new(db: sqlite3.Connection, item: MemoryItem, generation: int) -> bool:
    """Insert the item and its postings if its id is free and its user at `generation`.

    Return whether it did.
    """
    cursor = db.execute(INSERT_NEW, (*row_of(item), item.user_id, generation))
    if cursor.rowcount:
        reindex(db, [], [(item.user_id, item.level, item.content, cursor.lastrowid)])
    return cursor.rowcount == 1


# A scope's totals move by a write's sums; its row is made by the first write to it.
SCOPE_ADD = (
    "INSERT INTO scopes (user_id, level, documents, length) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (user_id, level) DO UPDATE SET "
    "documents = documents + excluded.documents, length = length + excluded.length"
)
# One statement an item; the scope is found in the statement, by its unique (user, level).
PENDING_ADD = (
    f"INSERT INTO pending_postings ({POSTING}) "
    "SELECT (SELECT id FROM scopes WHERE user_id = ?1 AND level = ?2), key, ?3, value, ?4 "
    "FROM json_each(?5)"
)


def reindex(db: sqlite3.Connection, removed: list[tuple], added: list[tuple]) -> None:
    """Move items out of and into the term index, in batches (SH1).

    Each row is (user_id, level, content, number); removals come first, so an item rewritten
    in place may be in both. New postings wait in `pending_postings` up to PENDING_LIMIT rows.
    """
    totals: dict[tuple[str, str], list[int]] = {}  # per (user, level): documents, length
    # Removals, additions: (user, level, number, length, counts)
    changes: tuple[list, list] = ([], [])
    for sign, rows in ((-1, removed), (1, added)):
        for user_id, level, content, number in sorted(rows, key=itemgetter(3)):  # in write order
            counts = term_counts(content)
            length = sum(counts.values())
            total = totals.setdefault((user_id, level), [0, 0])
            total[0] += sign
            total[1] += sign * length
            changes[sign > 0].append((user_id, level, number, length, counts))
    # One statement a scope, before any posting names it.
    db.executemany(SCOPE_ADD, [(*key, *total) for key, total in totals.items()])
    if removed:
        _remove(db, changes[0], _scope_ids(db, totals))
    count = sum(len(change[4]) for change in changes[1])
    waiting = db.execute("SELECT COUNT(*) FROM pending_postings").fetchone()[0] if count else 0
    if count and waiting + count <= PENDING_LIMIT:  # a few new postings: appended, a page or two
        db.executemany(PENDING_ADD, [(*change[:4], _JSON(change[4])) for change in changes[1]])
    elif count:  # many: merged with those waiting, in key order
        if waiting:
            db.execute(
                f"INSERT INTO postings ({POSTING}) "
                f"SELECT {POSTING} FROM pending_postings ORDER BY {POSTING}"
            )
            db.execute("DELETE FROM pending_postings")
        scopes = _scope_ids(db, totals)
        postings = [
            (scopes[user_id, level], term, number, frequency, length)
            for user_id, level, number, length, counts in changes[1]
            for term, frequency in counts.items()
        ]
        _sort_by_key(postings, len(scopes))
        db.executemany(f"INSERT INTO postings ({POSTING}) VALUES (?, ?, ?, ?, ?)", postings)


def _scope_ids(db: sqlite3.Connection, totals: dict) -> dict[tuple[str, str], int]:
    """Return the id of each (user, level) of `totals`, whose scope rows exist."""
    return {key: db.execute(SCOPE, key).fetchone()[0] for key in totals}


def _remove(db: sqlite3.Connection, removals: list[tuple], scopes: dict) -> None:
    """Delete the postings of removed items, wherever they wait (SH1)."""
    # Removed items whose postings still wait: deleted there, not sought in `postings`.
    numbers = json.dumps([change[2] for change in removals])
    pending = {
        row for (row,) in db.execute(f"SELECT item FROM pending_postings WHERE {AMONG}", (numbers,))
    }
    if pending:
        db.execute(f"DELETE FROM pending_postings WHERE {AMONG}", (numbers,))
    doomed = [
        (scopes[user_id, level], term, number)
        for user_id, level, number, _, counts in removals
        if number not in pending
        for term in counts
    ]
    _sort_by_key(doomed, len(scopes))
    db.executemany("DELETE FROM postings WHERE scope = ? AND term = ? AND item = ?", doomed)


def _sort_by_key(postings: list[tuple], scope_count: int) -> None:
    """Sort in place postings (scope, term, number, ...) given in write order, by their key."""
    # So that each B-tree page is written once per batch, not once per row. A stable sort by term
    # (scope and term, if several) keeps the write order: twice as fast as sorting whole tuples.
    postings.sort(key=itemgetter(0, 1) if scope_count > 1 else itemgetter(1))


def stored_rows(db: sqlite3.Connection, ids: list[str], columns: str = STORED) -> dict[str, tuple]:
    """Return (user, level, content, task, number) of each stored id, or other `columns`.

    Reads 500 ids a query.
    """
    ids = list(dict.fromkeys(ids))
    found = {}
    for start in range(0, len(ids), 500):  # under SQLite's bound-parameter limit
        part = ids[start : start + 500]
        statement = f"SELECT id, {columns} FROM items WHERE id IN ({', '.join('?' * len(part))})"
        found.update((row[0], row[1:]) for row in db.execute(statement, part))
    return found


# Version 5 wrote a task's goal as `goal: ...` and each step as `Step.render()` did then:
# `index. action -> result`, each side on one line, ` [failed]` after a failed one.
_GOAL_PREFIX = "goal: "
_OLD_STEP = re.compile(r"^\d+\. (.*?) -> (.*?)( \[failed\])?$")


def merge_task_items(db: sqlite3.Connection) -> None:
    """Turn each task's version 5 working items into its goal item holding the working memory (SH3).

    Runs inside the caller's transaction, as one step of a migration.
    """
    # `rowid`, not `number`: a migration step; a version 4 or 5 table has no `number` yet.
    rows = db.execute(
        "SELECT rowid, user_id, content, task_id, metadata FROM items "
        "WHERE level = 'working' AND task_id IS NOT NULL ORDER BY rowid"
    ).fetchall()
    tasks: dict[tuple[str, str], list[tuple]] = {}
    for row in rows:
        tasks.setdefault((row[1], row[3]), []).append(row)
    for held in tasks.values():
        goals = [row for row in held if row[2].startswith(_GOAL_PREFIX)]
        if goals:
            _merge_task(db, goals[0], [row for row in held if row is not goals[0]])


def _merge_task(db: sqlite3.Connection, goal: tuple, others: list[tuple]) -> None:
    working = WorkingMemory()
    working.init_task(goal[2][len(_GOAL_PREFIX) :])
    steps = []
    for row in others:
        match = _OLD_STEP.match(row[2])
        if match is None or not match.group(1).strip():
            continue  # a working note of the task, not a step: it stays an item
        working.add_step(match.group(1), match.group(2), bool(match.group(3)))
        steps.append(row)
    metadata = json.loads(goal[4])
    # The names Tasks reads (manager/tasks.py, N1); version 5 kept no task type.
    metadata.update(kind="task", task_type="task", working=working_to_dict(working))
    db.execute("UPDATE items SET metadata = ? WHERE rowid = ?", (_METADATA_JSON(metadata), goal[0]))
    if steps:
        reindex(db, [(row[1], "working", row[2], row[0]) for row in steps], [])
        db.executemany("DELETE FROM items WHERE rowid = ?", [(row[0],) for row in steps])
