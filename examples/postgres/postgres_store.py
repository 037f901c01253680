"""A PostgreSQL store: recuris's `Store` protocol over psycopg 3, one schema per store.

docs/beyond-one-machine.md is the chapter of this fork: the tables and statements below are
its tables and statements, as running them against a server corrected them. It mirrors
`recuris/storage/sqlite_store.py`: the same columns, an explicit write-order key (`number`,
an identity column, as SQLite's SH4), a term index of postings with per user-and-level
totals, and BM25 summed in SQL (`search`), so that every store returns the same items and
scores (S8). It is an example outside the package: it needs `psycopg` (requirements.txt),
which nothing in `recuris/` or `tests/` imports.

Invariants:
    PS1 every write of a user holds the user's row of `generations` from its first statement
        to its commit: `put` and `delete` FOR UPDATE, `record_access` FOR SHARE, users locked
        in sorted order; `delete_user` raises the generation under the same lock. So the
        writes of one user run one at a time (their postings move consistently, SH1), the
        writes of different users run together, and a write prepared before a forget never
        commits after it (S6). A delete holds its user without checking the generation: it
        writes nothing a forget must stop.
    PS2 content and audit reasons keep any text: NUL, which PostgreSQL's `text` refuses, is
        stored as `\\0` and a backslash as `\\\\`; metadata is JSON text (as in SQLite),
        whose escapes keep NUL. An id, user, level or task holding NUL is refused whole
        with ValueError naming SQ2, before anything is sent.
    PS3 `search` sums the BM25 weights in SQL with the same idf, k1, b and average length as
        `sqlite_search.search`, rounds the sum to 9 decimals (in float8), then orders and
        cuts: best first, ties to the higher `number`, the later write (S8).
    PS4 a schema holds its version; opening one of version 1 (the tables the chapter first
        proposed: `seq`, `jsonb` metadata, unescaped text) migrates it in one transaction,
        keeping every item, its place and its postings; another version is refused before
        anything is written (StoreError).
    PS5 new ids come from a counter per prefix shared by every connection (`counters`, a
        block of ID_BLOCK reserved in one statement), guarded until their put commits, as
        `sqlite_ids.NewIds` guards them (S3, ID1, ID2).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter

import psycopg
from psycopg import sql

from recuris.core.validation import require_count
from recuris.retrieval.bm25 import BM25Settings, bm25_idf
from recuris.storage.audit import AuditEntry
from recuris.storage.item import MemoryItem
from recuris.storage.sqlite_ids import ID_BLOCK, MINTED_LIMIT, NewIds
from recuris.storage.sqlite_schema import COLUMNS, term_counts
from recuris.storage.store import (
    SCORE_DIGITS,
    Access,
    IdTakenError,
    StoreError,
    TermCounts,
    TermStatistics,
    check_owners,
    erased_forms,
    held_from_rows,
    names_item,
    padded_neighbours,
    refuse_if_forgotten,
    without_erased,
)

__all__ = ["PostgresStore", "SCHEMA_VERSION", "MIGRATES_FROM"]

SCHEMA_VERSION = 2
MIGRATES_FROM = (1,)
# Each of COLUMNS' array type, for the batched writes through unnest
TYPES = "text text text text text float8 float8 int8 float8 text float8 text".split()
SCHEMA = """
CREATE TABLE schema_version (version integer NOT NULL);
CREATE TABLE items (
    number bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE, user_id text NOT NULL, level text NOT NULL, content text NOT NULL,
    task_id text, created_at float8 NOT NULL, last_access_at float8 NOT NULL,
    access_count bigint NOT NULL, importance float8 NOT NULL, metadata text NOT NULL,
    invalidated_at float8, superseded_by text);
CREATE INDEX items_thread ON items (user_id, level, task_id, number);
CREATE INDEX items_user ON items (user_id, number);
CREATE INDEX items_task ON items (task_id);
CREATE TABLE audit (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at float8 NOT NULL,
    user_id text NOT NULL, item_id text NOT NULL, operation text NOT NULL, reason text NOT NULL,
    weight float8);
CREATE INDEX audit_user ON audit (user_id, seq);
CREATE INDEX audit_item ON audit (item_id, seq);
CREATE TABLE generations (user_id text PRIMARY KEY, generation bigint NOT NULL DEFAULT 0);
CREATE TABLE counters (prefix text PRIMARY KEY, value bigint NOT NULL);
CREATE TABLE scopes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, user_id text NOT NULL,
    level text NOT NULL, documents bigint NOT NULL, length bigint NOT NULL,
    UNIQUE (user_id, level));
CREATE TABLE postings (
    scope bigint NOT NULL, term text NOT NULL, item bigint NOT NULL,
    frequency integer NOT NULL, length integer NOT NULL, PRIMARY KEY (scope, term, item));
"""
# Version 1, the chapter's first tables, to this one (PS4): `seq` becomes `number`, metadata
# leaves jsonb (which refuses NUL and drops nothing else: its text reads back equal), and the
# backslashes already stored are escaped, so that PS2's reading gives back the same text.
MIGRATION_FROM_1 = r"""
ALTER TABLE items RENAME COLUMN seq TO number;
ALTER TABLE items ALTER COLUMN metadata TYPE text USING metadata::text;
UPDATE items SET content = replace(content, '\', '\\') WHERE strpos(content, '\') > 0;
UPDATE audit SET reason = replace(reason, '\', '\\') WHERE strpos(reason, '\') > 0;
CREATE INDEX items_user ON items (user_id, number);
CREATE TABLE counters (prefix text PRIMARY KEY, value bigint NOT NULL);
UPDATE schema_version SET version = 2;
"""
_NAMES = ", ".join(COLUMNS)
SELECT_ITEMS = f"SELECT {_NAMES} FROM items"
# One statement a batch: each column an array, the rows their unnest (PS1 holds the user).
UPSERT = (
    f"INSERT INTO items ({_NAMES}) SELECT * FROM unnest("
    + ", ".join(f"%s::{kind}[]" for kind in TYPES)
    + ") ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{column} = excluded.{column}" for column in COLUMNS[1:])
    + " WHERE items.user_id = excluded.user_id RETURNING id, number"
)
AUDIT_INSERT = (
    "INSERT INTO audit (at, user_id, item_id, operation, reason, weight) SELECT * FROM "
    "unnest(%s::float8[], %s::text[], %s::text[], %s::text[], %s::text[], %s::float8[])"
)
# Blank what an erased item left in the user's audit: records naming it or quoting its content.
SCRUB_ERASED = (
    "UPDATE audit SET reason = '', weight = NULL WHERE user_id = %s AND (item_id = ANY(%s) "
    "OR EXISTS (SELECT 1 FROM unnest(%s::text[]) AS form(value) "
    "WHERE strpos(reason, form.value) > 0))"
)
# The user's other records whose reason holds an erased id; `names_item` keeps those holding
# it whole (S13: `item-19` holds `item-1`, but does not name it).
HOLDING_ERASED_IDS = (
    "SELECT seq, reason FROM audit WHERE user_id = %s AND reason <> '' "
    "AND EXISTS (SELECT 1 FROM unnest(%s::text[]) AS erased(value) "
    "WHERE strpos(reason, erased.value) > 0)"
)
# S13: the user's items whose metadata holds an erased id as a JSON string somewhere; those
# whose lists of quoted ids name it are rewritten without it (`without_erased`).
QUOTING_ERASED = (
    "SELECT id, metadata FROM items WHERE user_id = %s AND EXISTS (SELECT 1 FROM "
    "unnest(%s::text[]) AS quoted(form) WHERE strpos(metadata, quoted.form) > 0)"
)
METADATA_UPDATE = "UPDATE items SET metadata = %s WHERE id = %s AND user_id = %s"
BLANK_RECORDS = "UPDATE audit SET reason = '', weight = NULL WHERE seq = ANY(%s::bigint[])"
ADD_USERS = (
    "INSERT INTO generations (user_id) SELECT unnest(%s::text[]) ORDER BY 1 ON CONFLICT DO NOTHING"
)
LOCK_USERS = (
    "SELECT user_id, generation FROM generations WHERE user_id = ANY(%s::text[]) "
    "ORDER BY user_id FOR {0}"
)
SCOPE = "SELECT id, documents, length FROM scopes WHERE user_id = %s AND level = %s"
SCOPE_ADD = (
    "INSERT INTO scopes (user_id, level, documents, length) "
    "SELECT * FROM unnest(%s::text[], %s::text[], %s::int8[], %s::int8[]) "
    "ON CONFLICT (user_id, level) DO UPDATE SET documents = scopes.documents + "
    "excluded.documents, length = scopes.length + excluded.length RETURNING user_id, level, id"
)
POSTINGS_ADD = (
    "INSERT INTO postings (scope, term, item, frequency, length) "
    "SELECT * FROM unnest(%s::int8[], %s::text[], %s::int8[], %s::int4[], %s::int4[])"
)
POSTINGS_REMOVE = (
    "DELETE FROM postings USING unnest(%s::int8[], %s::text[], %s::int8[]) AS gone(s, t, i) "
    "WHERE postings.scope = gone.s AND postings.term = gone.t AND postings.item = gone.i"
)
RECORD_ACCESS = (
    "UPDATE items SET access_count = access_count + used.times, last_access_at = used.at "
    "FROM unnest(%s::text[], %s::text[], %s::int8[], %s::float8[]) AS used(id, user_id, times, at) "
    "WHERE items.id = used.id AND items.user_id = used.user_id"
)
DOCUMENT_FREQUENCY = (
    "SELECT term, count(*) FROM postings WHERE scope = %s AND term = ANY(%s::text[]) GROUP BY term"
)
# Each named item by its id, then each asked term's posting by the postings' key (S15):
# LATERAL runs the inner read once per item found, never over a common term's postings.
HELD_TERMS = (
    "SELECT items.id, held.term, held.frequency, held.length FROM items CROSS JOIN LATERAL "
    "(SELECT term, frequency, length FROM postings WHERE postings.scope = %s "
    "AND postings.term = ANY(%s::text[]) AND postings.item = items.number) AS held "
    "WHERE items.id = ANY(%s::text[])"
)
# PS3: the weight is `sqlite_search.search_statement`'s, term for term. The sum is rounded in
# float8: through numeric (`round(x::numeric, 9)`), a common word's search took twice as long.
SEARCH = (
    "WITH query (term, idf) AS (SELECT * FROM unnest(%(terms)s::text[], %(idfs)s::float8[])), "
    "found (item, score) AS (SELECT postings.item, round(sum(query.idf * postings.frequency * "
    "%(k1_plus_one)s::float8 / (postings.frequency + %(k1)s::float8 * (%(flat)s::float8 + "
    f"%(b)s::float8 * postings.length / %(average)s::float8))) * 1e{SCORE_DIGITS}) "
    f"/ 1e{SCORE_DIGITS} "
    "FROM query JOIN postings ON postings.scope = %(scope)s AND postings.term = query.term "
    "GROUP BY postings.item ORDER BY 2 DESC, postings.item DESC LIMIT %(limit)s) "
    f"SELECT {_NAMES}, found.score FROM found JOIN items ON items.number = found.item "
    "WHERE items.user_id = %(user)s ORDER BY found.score DESC, found.item DESC"
)
MATCHING = (
    f"{SELECT_ITEMS} WHERE number IN (SELECT item FROM postings WHERE scope = %s "
    "AND term = ANY(%s::text[])) ORDER BY number"
)
NEIGHBOUR = (
    "SELECT id FROM items WHERE user_id = %s AND level = %s AND task_id {0} AND number {1} %s "
    "ORDER BY number {2} LIMIT %s"
)
# Encoders made once, as sqlite_schema's: the same JSON text for the same metadata.
_METADATA_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)
# Columns that are matched and compared as given, so never escaped: NUL there is refused (PS2).
_PLAIN = ("id", "user_id", "level", "task_id", "superseded_by")


def escape(text: str) -> str:
    """Return text PostgreSQL's `text` can hold: NUL as `\\0`, a backslash doubled (PS2)."""
    if "\\" in text or "\x00" in text:
        return text.replace("\\", "\\\\").replace("\x00", "\\0")
    return text


def unescape(text: str) -> str:
    """Return the text `escape` was given (PS2)."""
    if "\\" not in text:
        return text
    return _ESCAPED.sub(lambda found: "\x00" if found.group(1) == "0" else found.group(1), text)


def item_of(row: Sequence) -> MemoryItem:
    """Return the item of a row of SELECT_ITEMS's columns."""
    data = dict(zip(COLUMNS, row, strict=False))
    data["content"] = unescape(data["content"])
    text = data["metadata"]
    data["metadata"] = {} if text == "{}" else json.loads(text)
    return MemoryItem.trusted(data)


def columns_of(items: list[MemoryItem]) -> list[list]:
    """Return the items as one list per column, in COLUMNS order, for UPSERT's arrays (PS2)."""
    for item in items:
        for name in _PLAIN:
            value = getattr(item, name)
            if value is not None and "\x00" in value:
                raise ValueError(f"SQ2: this store cannot keep NUL in an item's {name}: {value!r}")
    columns = [[getattr(item, name) for item in items] for name in COLUMNS]
    columns[COLUMNS.index("content")] = [escape(text) for text in columns[COLUMNS.index("content")]]
    columns[COLUMNS.index("metadata")] = [
        _METADATA_JSON(item.metadata) if item.metadata else "{}" for item in items
    ]
    return columns


def audit_columns(records: list[AuditEntry]) -> list[list]:
    """Return the records as AUDIT_INSERT's arrays, the reasons escaped (PS2)."""
    for record in records:
        if "\x00" in record.user_id or "\x00" in record.item_id:
            raise ValueError(f"SQ2: this store cannot keep NUL in an audit record's ids: {record}")
    return [
        [record.at for record in records],
        [record.user_id for record in records],
        [record.item_id for record in records],
        [record.operation for record in records],
        [escape(record.reason) for record in records],
        [record.weight for record in records],
    ]


class PostgresIds(NewIds):
    """`NewIds` whose blocks come from the schema's `counters` table (PS5)."""

    def new(self, prefix: str) -> str:
        """Return a new id of the prefix, reserving a block when none is left (ID1)."""
        while not self._reserved.get(prefix):
            self._reserved[prefix] = self._transaction(lambda cursor: _reserve(cursor, prefix))
        item_id = self._reserved[prefix].popitem()[0]
        self._minted[item_id] = None
        if len(self._minted) > MINTED_LIMIT:
            self._minted.popitem(last=False)
        return item_id


def _reserve(cursor: psycopg.Cursor, prefix: str) -> dict[str, None]:
    """Reserve the prefix's next ID_BLOCK ids; return those not taken, last first (ID1)."""
    last = cursor.execute(
        "INSERT INTO counters (prefix, value) VALUES (%s, %s) ON CONFLICT (prefix) DO UPDATE "
        "SET value = counters.value + excluded.value RETURNING value",
        (prefix, ID_BLOCK),
    ).fetchone()[0]
    block = [f"{prefix}-{number}" for number in range(last, last - ID_BLOCK, -1)]
    taken = {
        row[0]
        for row in cursor.execute("SELECT id FROM items WHERE id = ANY(%s::text[])", (block,))
    }
    return dict.fromkeys(item_id for item_id in block if item_id not in taken)


class PostgresStore:
    """A Store in one schema of a PostgreSQL database, over one connection."""

    def __init__(
        self,
        conninfo: str,
        schema: str = "recuris",
        create: bool = True,
        timeout: float = 5.0,
        bm25: BM25Settings = BM25Settings(),  # noqa: B008 (frozen)
    ) -> None:
        """Connect, and make (if `create`) or migrate the schema's tables (PS4).

        `timeout` bounds every wait for a lock, in seconds (`lock_timeout`): a write that
        runs out raises StoreError, which a manager queues. Raises StoreError, having
        written nothing, for a schema of another version, or missing when `create` is False.
        """
        self.conninfo = conninfo
        self.schema = schema
        self.bm25 = bm25
        self.timeout = timeout
        self._lock = threading.RLock()  # one connection: one statement or transaction at a time
        self._seen: dict[str, int] = {}  # per user: the generation this object last saw (S6)
        try:
            self._db = psycopg.connect(conninfo, autocommit=True)
            self._db.execute(
                sql.SQL("SET lock_timeout = {}").format(sql.Literal(f"{int(timeout * 1000)}ms"))
            )
        except psycopg.Error as error:
            raise StoreError(f"{type(error).__name__}: {error}") from error
        self._ids = PostgresIds(self._transaction)
        self._transaction(lambda cursor: self._open(cursor, create))
        self._db.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))

    def _open(self, cursor: psycopg.Cursor, create: bool) -> None:
        # One opener at a time per schema, across hosts: the creation and a migration run once.
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"recuris {self.schema}",))
        cursor.execute(sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(self.schema)))
        exists = cursor.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = %s AND tablename = 'schema_version'",
            (self.schema,),
        ).fetchone()[0]
        if not exists:
            if not create:
                raise StoreError(f"no recuris schema {self.schema!r} at {self._where()}")
            cursor.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
            )
            cursor.execute(SCHEMA)
            cursor.execute("INSERT INTO schema_version VALUES (%s)", (SCHEMA_VERSION,))
            return
        version = cursor.execute("SELECT version FROM schema_version").fetchone()[0]
        if version in MIGRATES_FROM:
            cursor.execute(MIGRATION_FROM_1)
        elif version != SCHEMA_VERSION:
            raise StoreError(
                f"schema {self.schema!r} is version {version}, this store reads "
                f"{SCHEMA_VERSION} and migrates {MIGRATES_FROM}: nothing was written"
            )

    def _where(self) -> str:
        return self._db.info.dsn

    def _run(self, statement, parameters: Sequence | dict = ()) -> list[tuple]:
        try:
            with self._lock:
                return self._db.execute(statement, parameters).fetchall()
        except psycopg.Error as error:
            raise StoreError(f"{type(error).__name__}: {error}") from error

    def _transaction(self, work):
        # One transaction per batch: all of it commits, or none of it (S5).
        with self._lock:
            try:
                with self._db.transaction():
                    return work(self._db.cursor())
            except psycopg.Error as error:
                raise StoreError(f"{type(error).__name__}: {error}") from error

    def _lock_users(
        self, cursor: psycopg.Cursor, users: Iterable[str], mode: str, checked: Iterable[str]
    ) -> None:
        """Hold each user's generation row (PS1); refuse the write if a `checked` one moved (S6).

        The users checked are those of the write's items and audit records (S6); a user
        whose items are only deleted is held, not checked, as SQLite's delete checks none.
        """
        users = sorted(set(users))
        if not users:
            return
        cursor.execute(ADD_USERS, (users,))
        current = dict(cursor.execute(LOCK_USERS.format(mode), (users,)).fetchall())
        refuse_if_forgotten(checked, self._seen, current.__getitem__)

    def put(
        self,
        items: Iterable[MemoryItem],
        audit: Iterable[AuditEntry] = (),
        delete: Iterable[MemoryItem] = (),
    ) -> None:
        """Delete `delete` (by id and user), then store the items and audit, all or none (S5)."""
        batch = list(items)
        doomed = list(delete)
        records = list(audit)
        # An id written twice in one batch is written once, as its last version, in the place
        # of its first: one statement may not change a row twice.
        last = list({item.id: item for item in batch}.values())
        columns = columns_of(last)
        audit_rows = audit_columns(records)
        ids = [item.id for item in last]

        def write(cursor: psycopg.Cursor) -> None:
            users = [item.user_id for item in batch] + audit_rows[1]
            self._lock_users(cursor, users + [old.user_id for old in doomed], "UPDATE", users)
            stored = self._stored(cursor, ids)  # owners before deleting (S2)
            self._ids.refuse_taken(guarded, stored)
            check_owners(batch, lambda item_id: stored.get(item_id, (None,))[0])
            if doomed:
                self._delete_rows(cursor, [(old.id, old.user_id) for old in doomed])
                stored = self._stored(cursor, ids)
            if last:
                self._write(cursor, last, columns, stored, guarded)
            if records:
                cursor.execute(AUDIT_INSERT, audit_rows)

        with self._lock:  # a new id stays guarded until its put commits (ID2)
            guarded = self._ids.guarded(ids)
            self._transaction(write)
            self._ids.written(ids)

    @staticmethod
    def _stored(cursor: psycopg.Cursor, ids: list[str]) -> dict[str, tuple]:
        """Return (user, level, content, task, number) of each stored id, content unescaped."""
        rows = cursor.execute(
            "SELECT id, user_id, level, content, task_id, number FROM items "
            "WHERE id = ANY(%s::text[])",
            (ids,),
        ).fetchall()
        return {row[0]: (row[1], row[2], unescape(row[3]), *row[4:]) for row in rows}

    def _write(self, cursor, last: list[MemoryItem], columns, stored, guarded) -> None:
        """Upsert the rows and move the changed items' postings (SH1)."""
        written = dict(cursor.execute(UPSERT, columns).fetchall())
        refused = [item for item in last if item.id not in written]
        if refused:
            # Another user's write took the id between our read and our insert (PS1 holds
            # users, not ids): the whole batch is refused, as S2 and S3 refuse it.
            taken = [item.id for item in refused if item.id in guarded]
            if taken:
                raise IdTakenError(f"S3: new id(s) {', '.join(taken)} were taken by another write")
            raise ValueError(f"S2: item {refused[0].id!r} belongs to another user")
        changed = [
            item
            for item in last
            if item.id not in stored
            or stored[item.id][1:4] != (item.level, item.content, item.task_id)
        ]
        removed = [
            (item.user_id, stored[item.id][1], stored[item.id][2], stored[item.id][4])
            for item in changed
            if item.id in stored
        ]
        added = [(item.user_id, item.level, item.content, written[item.id]) for item in changed]
        reindex(cursor, removed, added)

    def get(self, user_id: str, item_id: str) -> MemoryItem | None:
        rows = self._run(f"{SELECT_ITEMS} WHERE id = %s AND user_id = %s", (item_id, user_id))
        return item_of(rows[0]) if rows else None

    def get_many(self, user_id: str, item_ids: Iterable[str]) -> dict[str, MemoryItem]:
        """Return each of the user's items among the ids, keyed by id in the order named (S16)."""
        item_ids = list(dict.fromkeys(item_ids))
        if not item_ids:
            return {}
        statement = f"{SELECT_ITEMS} WHERE id = ANY(%s::text[]) AND user_id = %s"
        rows = self._run(statement, (item_ids, user_id))
        found = {row[0]: row for row in rows}  # `id` is the first of COLUMNS
        return {item_id: item_of(found[item_id]) for item_id in item_ids if item_id in found}

    def list(
        self, user_id: str, level: str | None = None, task_id: str | None = None
    ) -> list[MemoryItem]:
        given = {
            column: value
            for column, value in (("user_id", user_id), ("level", level), ("task_id", task_id))
            if value is not None
        }
        where = " AND ".join(f"{column} = %s" for column in given)
        rows = self._run(f"{SELECT_ITEMS} WHERE {where} ORDER BY number", tuple(given.values()))
        return [item_of(row) for row in rows]

    def iterate(
        self, user_id: str, level: str | None = None, batch_size: int = 1000
    ) -> Iterator[list[MemoryItem]]:
        """Yield the user's items (of one level, if given), oldest first, in batches (S11)."""
        require_count("S11: batch_size", batch_size, 1)
        return self._batches(user_id, level, batch_size)

    def _batches(self, user_id: str, level: str | None, batch_size: int) -> Iterator[list]:
        # One query per batch, after the last number seen: no cursor stays open across a delete.
        levels = [level] * (level is not None)
        statement = (
            f"SELECT {_NAMES}, number FROM items WHERE user_id = %s "
            f"{'AND level = %s ' if levels else ''}AND number > %s ORDER BY number LIMIT %s"
        )
        last = 0
        while rows := self._run(statement, (user_id, *levels, last, batch_size)):
            last = rows[-1][-1]
            yield [item_of(row) for row in rows]

    def _scope(self, user_id: str, level: str) -> tuple | None:
        rows = self._run(SCOPE, (user_id, level))
        return rows[0] if rows else None

    def matching(self, user_id: str, level: str, terms: Iterable[str]) -> list[MemoryItem]:
        terms = sorted(set(terms))
        scope = self._scope(user_id, level)
        if not terms or scope is None:
            return []
        return [item_of(row) for row in self._run(MATCHING, (scope[0], terms))]

    def search(
        self, user_id: str, level: str, terms: Sequence[str], limit: int
    ) -> list[tuple[MemoryItem, float]]:
        """Return the `limit` best items by BM25 for `terms`, scored and cut in SQL (S8, PS3)."""
        terms = sorted(set(terms))
        scope = self._scope(user_id, level)
        if not terms or scope is None or not scope[1]:
            return []
        scope_id, documents, length = scope
        frequencies = dict(self._run(DOCUMENT_FREQUENCY, (scope_id, terms)))
        held = [term for term in terms if term in frequencies]
        if not held:
            return []
        parameters = {
            "terms": held,
            "idfs": [bm25_idf(documents, frequencies[term]) for term in held],
            "k1_plus_one": self.bm25.k1 + 1,
            "k1": self.bm25.k1,
            "flat": 1 - self.bm25.b,
            "b": self.bm25.b,
            "average": max(length / documents, 1e-9),
            "scope": scope_id,
            "limit": max(0, limit),
            "user": user_id,
        }
        return [(item_of(row[:-1]), row[-1]) for row in self._run(SEARCH, parameters)]

    def statistics(self, user_id: str, level: str, terms: Iterable[str]) -> TermStatistics:
        """Return the user's item count, total length and each term's holders at a level (S14)."""
        terms = sorted(set(terms))
        scope = self._scope(user_id, level)
        if scope is None:
            return TermStatistics(0, 0, {}, self.bm25)
        _, documents, length = scope
        held = dict(self._run(DOCUMENT_FREQUENCY, (scope[0], terms))) if terms else {}
        return TermStatistics(documents, length, dict(sorted(held.items())), self.bm25)

    def held_terms(
        self, user_id: str, level: str, item_ids: Iterable[str], terms: Iterable[str]
    ) -> dict[str, TermCounts]:
        """Return the length and asked terms' counts of each named item holding one (S15)."""
        terms = sorted(set(terms))
        item_ids = list(dict.fromkeys(item_ids))
        scope = self._scope(user_id, level)
        if not terms or not item_ids or scope is None:
            return {}
        return held_from_rows(self._run(HELD_TERMS, (scope[0], terms, item_ids)), item_ids)

    def adjacent(
        self, user_id: str, item_ids: Iterable[str], width: int = 1
    ) -> dict[str, tuple[str | None, ...]]:
        """Return the ids `width` before and after each of the user's items in its thread (S9).

        Raises ValueError naming S9 for a width that is not an int >= 0.
        """
        require_count("S9: width", width, 0)
        found = {}
        for item_id in dict.fromkeys(item_ids):
            rows = self._run(
                "SELECT level, task_id, number FROM items WHERE id = %s AND user_id = %s",
                (item_id, user_id),
            )
            if not rows:
                continue
            level, task_id, number = rows[0]
            # `task_id IS NULL` and `task_id = %s` apart: each is one probe of items_thread.
            task = "IS NULL" if task_id is None else "= %s"
            tasks = [task_id] * (task_id is not None)
            sides = [[], []]
            for rows, (side, order) in zip(sides, (("<", "DESC"), (">", "ASC"))):
                if width:
                    statement = NEIGHBOUR.format(task, side, order)
                    found_rows = self._run(statement, (user_id, level, *tasks, number, width))
                    rows.extend(row[0] for row in found_rows)
            found[item_id] = padded_neighbours(*sides, width)
        return found

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        doomed = [(item_id, user_id) for item_id in dict.fromkeys(item_ids)]

        def remove(cursor: psycopg.Cursor) -> int:
            self._lock_users(cursor, [user_id], "UPDATE", ())
            return self._delete_rows(cursor, doomed)

        return self._transaction(remove) if doomed else 0

    def erase(self, user_id: str, item_ids: Iterable[str]) -> int:
        """Delete the user's named items and blank the audit about them in one transaction.

        An audit record of the user is blanked when it names an erased item (filed under it,
        or its reason holding the id whole, `names_item`) or quotes its content
        (`erased_forms`, S13), and an item kept loses the erased ids from its `source_ids`
        and `merged_ids` (`without_erased`, S13). As with `delete_user`, the old row
        versions stay in the table's pages until VACUUM, and in the write-ahead log
        (docs/beyond-one-machine.md).
        """
        ids = list(dict.fromkeys(item_ids))

        def erase(cursor: psycopg.Cursor) -> int:
            self._lock_users(cursor, [user_id], "UPDATE", ())
            rows = cursor.execute(
                "SELECT id, content FROM items WHERE user_id = %s AND id = ANY(%s)",
                (user_id, ids),
            ).fetchall()
            # Reasons are stored escaped (PS2): so are the forms sought in them.
            forms = [escape(form) for form in erased_forms(unescape(row[1]) for row in rows)]
            found = [row[0] for row in rows]
            cursor.execute(SCRUB_ERASED, (user_id, found, forms))
            holding = cursor.execute(
                HOLDING_ERASED_IDS, (user_id, [escape(item_id) for item_id in found])
            ).fetchall()
            naming = [
                seq
                for seq, reason in holding
                if any(names_item(unescape(reason), item_id) for item_id in found)
            ]
            cursor.execute(BLANK_RECORDS, (naming,))
            deleted = self._delete_rows(cursor, [(row[0], user_id) for row in rows])
            # The items kept that quote an erased id lose it from their lists of ids (S13).
            quoted = [json.dumps(item_id, ensure_ascii=False) for item_id in found]
            for item_id, text in cursor.execute(QUOTING_ERASED, (user_id, quoted)).fetchall():
                try:
                    rewritten = without_erased(json.loads(text), set(found))
                except (AttributeError, ValueError):
                    continue  # metadata no read makes an item's is left as it is (SH5)
                if rewritten is not None:
                    cursor.execute(METADATA_UPDATE, (_METADATA_JSON(rewritten), item_id, user_id))
            return deleted

        return self._transaction(erase) if ids else 0

    @staticmethod
    def _delete_rows(cursor: psycopg.Cursor, doomed: list[tuple[str, str]]) -> int:
        """Delete the (id, user) rows and their postings (SH1); return how many were deleted."""
        rows = cursor.execute(
            "DELETE FROM items USING unnest(%s::text[], %s::text[]) AS gone(id, user_id) "
            "WHERE items.id = gone.id AND items.user_id = gone.user_id "
            "RETURNING items.user_id, items.level, items.content, items.number",
            ([pair[0] for pair in doomed], [pair[1] for pair in doomed]),
        ).fetchall()
        reindex(cursor, [(row[0], row[1], unescape(row[2]), row[3]) for row in rows], [])
        return len(rows)

    def delete_user(self, user_id: str) -> int:
        """Forget the user in one transaction: delete items, blank audit, raise the generation.

        Waits for the user's writes in progress (PS1); the old row versions stay in the
        table's pages until VACUUM, and in the write-ahead log (docs/beyond-one-machine.md).
        """

        def forget(cursor: psycopg.Cursor) -> tuple[int, int]:
            cursor.execute(ADD_USERS, ([user_id],))
            cursor.execute(LOCK_USERS.format("UPDATE"), ([user_id],))
            cursor.execute(
                "DELETE FROM postings WHERE scope IN (SELECT id FROM scopes WHERE user_id = %s)",
                (user_id,),
            )
            cursor.execute("DELETE FROM scopes WHERE user_id = %s", (user_id,))
            deleted = cursor.execute("DELETE FROM items WHERE user_id = %s", (user_id,)).rowcount
            self._scrub(cursor, user_id)
            generation = cursor.execute(
                "UPDATE generations SET generation = generation + 1 WHERE user_id = %s "
                "RETURNING generation",
                (user_id,),
            ).fetchone()[0]
            return deleted, generation

        deleted, self._seen[user_id] = self._transaction(forget)  # its own forget is seen
        return deleted

    @staticmethod
    def _scrub(cursor: psycopg.Cursor, user_id: str) -> int:
        return cursor.execute(
            "UPDATE audit SET reason = '', weight = NULL WHERE user_id = %s", (user_id,)
        ).rowcount

    def scrub_audit(self, user_id: str) -> int:
        """Blank the reasons and weights of the user's audit records; return how many (S12)."""
        return self._transaction(lambda cursor: self._scrub(cursor, user_id))

    def generation(self, user_id: str) -> int:
        """Return how many times the user was forgotten, and take it as seen by this object (S6)."""
        rows = self._run("SELECT generation FROM generations WHERE user_id = %s", (user_id,))
        self._seen[user_id] = rows[0][0] if rows else 0
        return self._seen[user_id]

    def users(self) -> list[str]:
        return [row[0] for row in self._run("SELECT DISTINCT user_id FROM items ORDER BY 1")]

    def new_id(self, prefix: str) -> str:
        with self._lock:
            return self._ids.new(prefix)

    def append_audit(self, records: Iterable[AuditEntry]) -> None:
        self.put((), records)

    def record_access(self, accesses: Iterable[Access], audit: Iterable[AuditEntry] = ()) -> None:
        """Count each access on its stored item, if still stored, and append `audit` (S10, S6)."""
        counted: dict[tuple[str, str], list] = {}  # per (id, user): times, the last access
        for access in accesses:
            entry = counted.setdefault((access.id, access.user_id), [0, access.at])
            entry[0] += 1
            entry[1] = access.at
        records = list(audit)
        audit_rows = audit_columns(records)
        used = [
            [key[0] for key in counted],
            [key[1] for key in counted],
            [entry[0] for entry in counted.values()],
            [entry[1] for entry in counted.values()],
        ]

        def count(cursor: psycopg.Cursor) -> None:
            # FOR SHARE: recalls of one user run together; a forget waits for them (PS1).
            users = used[1] + audit_rows[1]
            self._lock_users(cursor, users, "SHARE", users)
            if counted:
                cursor.execute(RECORD_ACCESS, used)
            if records:
                cursor.execute(AUDIT_INSERT, audit_rows)

        self._transaction(count)

    def audit(self, user_id: str | None = None, item_id: str | None = None) -> list[AuditEntry]:
        given = [
            (column, value)
            for column, value in (("user_id", user_id), ("item_id", item_id))
            if value is not None
        ]
        where = f"WHERE {' AND '.join(f'{column} = %s' for column, _ in given)} " if given else ""
        rows = self._run(
            f"SELECT item_id, operation, reason, at, weight, user_id FROM audit {where}"
            "ORDER BY seq",
            tuple(value for _, value in given),
        )
        return [AuditEntry(row[0], row[1], unescape(row[2]), *row[3:]) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return f"PostgresStore(schema={self.schema!r})"


def reindex(cursor: psycopg.Cursor, removed: list[tuple], added: list[tuple]) -> None:
    """Move items out of and into the term index, in one statement each (SH1).

    Each row is (user_id, level, content, number), content unescaped; removals come first,
    so an item rewritten in place may be in both.
    """
    totals: dict[tuple[str, str], list[int]] = {}  # per (user, level): documents, length
    changes: tuple[list, list] = ([], [])  # removals, additions: (user, level, number, counts)
    for sign, rows in ((-1, removed), (1, added)):
        for user_id, level, content, number in sorted(rows, key=itemgetter(3)):
            counts = term_counts(content)
            total = totals.setdefault((user_id, level), [0, 0])
            total[0] += sign
            total[1] += sign * sum(counts.values())
            changes[sign > 0].append((user_id, level, number, counts))
    if not totals:
        return
    keys = list(totals)
    scopes = {
        (row[0], row[1]): row[2]
        for row in cursor.execute(
            SCOPE_ADD,
            (
                [key[0] for key in keys],
                [key[1] for key in keys],
                [totals[key][0] for key in keys],
                [totals[key][1] for key in keys],
            ),
        ).fetchall()
    }
    for statement, rows in ((POSTINGS_REMOVE, changes[0]), (POSTINGS_ADD, changes[1])):
        postings = sorted(
            (scopes[user_id, level], term, number, frequency, sum(counts.values()))
            for user_id, level, number, counts in rows
            for term, frequency in counts.items()
        )
        if postings:
            arrays = [list(column) for column in zip(*postings, strict=True)]
            cursor.execute(statement, arrays[:3] if statement is POSTINGS_REMOVE else arrays)
