"""SQLite search: BM25 scored and cut in SQL, term matching and neighbours, over the postings.

Document 002 §4 ranks by relevance among other parts and 003 §7 asks that a slow recall
never stall the agent; document 001 §2 indexes by task. These are the reads behind
`SQLiteStore.search`, `matching`, `statistics`, `held_terms`, `adjacent`, `get_many` and
`iterate` (a keyset-paged read by number): each is a few indexed statements, and `search`
sums the BM25 weights in SQL over the postings of the query's terms alone and reads only the
best `limit` items, in the same statement, so the cost follows the postings read, not the
store's size. The weight in SQL is `BM25Settings.weights` (retrieval/bm25.py) written out,
with the same settings and idf, and tested equal to it. The in-memory store answers the
same calls from `TermIndex`; both meet S7, S8, S9, S14, S15 and S16 (store.py).

Invariants:
    SX1 the work of every statement here follows the postings of the query's terms and the
        items it returns, never the store's size: a scope's postings by (scope, term), the
        items found by number in the same statement (never through the user's index, which
        holds all their items), neighbours by (user, level, task) and number, named items
        by id, the terms named items hold by each item's id and the postings' key (a term
        held by fewer items than are named, counted no further, by its postings); only the
        postings waiting to be merged, at most `PENDING_LIMIT` rows (sqlite_schema.py), are
        read whole (by a search, and for such a term).
        Counted in SQLite's steps, a rare word's search and recall cost the same among ten
        times more unrelated items, and the terms items hold the same among ten times more
        holders, with or without the planner's statistics.
"""

import json
from collections.abc import Callable, Iterable, Iterator, Sequence

from ..core.validation import require_count
from ..retrieval.bm25 import BM25Settings, bm25_idf
from .audit import AuditEntry
from .item import MemoryItem
from .sqlite_schema import COLUMNS, SCOPE, SELECT_ITEMS, RowReader
from .store import SCORE_DIGITS, TermCounts, TermStatistics, held_from_rows, padded_neighbours

__all__ = [
    "matching",
    "search",
    "statistics",
    "held_terms",
    "adjacent",
    "get_many",
    "iterate",
    "audit",
]

Run = Callable[..., list[tuple]]

# Each reads both postings tables; parameter 1 is the scope, 2 onwards the terms. Counted in
# each table apart (the third column is 1 in `pending_postings`): a term may be in both.
DOCUMENT_FREQUENCY = (
    "SELECT term, COUNT(*), 0 FROM postings WHERE scope = ?1 AND term IN ({0}) GROUP BY term "
    "UNION ALL "
    "SELECT term, COUNT(*), 1 FROM pending_postings WHERE scope = ?1 AND term IN ({0}) "
    "GROUP BY term"
)
MATCHING = (
    f"{SELECT_ITEMS} WHERE number IN ("
    "SELECT item FROM postings WHERE scope = ?1 AND term IN ({0}) "
    "UNION ALL SELECT item FROM pending_postings WHERE scope = ?1 AND term IN ({0})"
    ") ORDER BY number"
)
# Items by their ids, the id first. The unary + keeps SQLite on the id's own index: through
# the user's, it reads all their items.
BY_IDS = f"{SELECT_ITEMS} WHERE id IN ({{}}) AND +user_id = ?"
# One side of each named item's thread, as a JSON array of [number, id]: the `?` is how many.
# A correlated subquery per item and side, each a range of the thread index (user, level,
# task; its rowid is the number), all in one statement, where a statement per side and item
# made 41 for a chat's 20 hits (benchmarks/two_checkouts.py, "a chat's windows"). The
# numbers come along because an aggregate does not promise to keep its rows' order.
_SIDE = (
    "(SELECT json_group_array(json_array(number, id)) FROM (SELECT number, id FROM items "
    "WHERE user_id = named.user_id AND level = named.level AND task_id IS named.task_id "
    "AND number {} named.number ORDER BY number {} LIMIT ?))"
)
NEIGHBOURS = (
    f"SELECT id, {_SIDE.format('<', 'DESC')}, {_SIDE.format('>', 'ASC')} FROM items AS named "
    "WHERE id IN ({}) AND +user_id = ?"
)


IDS_A_STATEMENT = 500  # ids named in one statement, well within SQLite's parameters
# Parameter 1 is the scope, then the terms, then the item ids. The named items are found by
# their ids once (the id's index holds each number: nothing of the table is read), then each
# term's posting by the postings' key: the work follows ids times terms. Used by both parts,
# the named items are materialized (SQLite 3.35 on) rather than found again in each part
# (benchmarks/two_checkouts.py, "a chat's windows", times this with `adjacent`). CROSS JOIN
# holds SQLite to that order: given 160 ids, it read three common terms' whole postings
# instead, 66 ms against 2 ms at 100,000 items.
HELD_TERMS = "WITH named (id, number) AS (SELECT id, number FROM items WHERE id IN ({1})) " + (
    " UNION ALL ".join(
        f"SELECT named.id, {table}.term, {table}.frequency, {table}.length FROM named CROSS "
        f"JOIN {table} ON {table}.scope = ?1 AND {table}.term IN ({{0}}) "
        f"AND {table}.item = named.number"
        for table in ("postings", "pending_postings")
    )
)
# How many of a scope's items hold each term (parameters 3 on), counted no further than `?2`:
# whether a term's postings are fewer than the items named, at a cost bounded by their number.
HOLDERS_UP_TO = (
    "SELECT asked.column1, (SELECT COUNT(*) FROM (SELECT 1 FROM postings WHERE scope = ?1 "
    "AND term = asked.column1 LIMIT ?2)) FROM (VALUES {0}) AS asked"
)
# Every holder of a few terms, by the postings' key, each item's id found by its number; the
# pending postings, keyed by item, are read whole (at most PENDING_LIMIT rows).
HELD_BY_TERM = " UNION ALL ".join(
    f"SELECT items.id, {table}.term, {table}.frequency, {table}.length FROM {table} "
    f"CROSS JOIN items ON items.number = {table}.item "
    f"WHERE {table}.scope = ?1 AND {table}.term IN ({{0}})"
    for table in ("postings", "pending_postings")
)


def search_statement(terms: int, pending: bool = False) -> str:
    """Return the BM25 query over `terms` query terms, scored in SQL, with the items found (S8).

    Parameters, in order: a (term, idf) pair per term, then k1 + 1, k1, 1 - b, b, the
    average length, the scope, the limit and the user. Each term's weight is written as
    `BM25Settings.weights` computes it, and the sum is rounded to 9 decimals before it orders
    and cuts, as the in-memory store does, so that the two stores rank alike (S8). With
    `pending`, the postings waiting in `pending_postings` are read too (an item's postings are
    all in one table). Each row is the item's columns, its number, then its score.
    """
    values = ", ".join(f"(?{2 * n + 1}, ?{2 * n + 2})" for n in range(terms))
    after_terms = 2 * terms
    k1_plus_one = f"?{after_terms + 1}"
    k1 = f"?{after_terms + 2}"
    flat = f"?{after_terms + 3}"
    b = f"?{after_terms + 4}"
    average = f"?{after_terms + 5}"
    scope = f"?{after_terms + 6}"
    limit = f"?{after_terms + 7}"
    user = f"?{after_terms + 8}"
    tables = ("postings", "pending_postings") if pending else ("postings",)
    read = " UNION ALL ".join(
        f"SELECT query.idf, {table}.item, {table}.frequency, {table}.length "
        f"FROM query JOIN {table} ON {table}.scope = {scope} AND {table}.term = query.term"
        for table in tables
    )
    # `+user_id`: the items found are read by number, never through the user's index (SX1).
    return (
        f"WITH query (term, idf) AS (VALUES {values}), "
        f"found (item, score) AS (SELECT item, ROUND(SUM(idf * frequency * {k1_plus_one} / "
        f"(frequency + {k1} * ({flat} + {b} * length / {average}))), {SCORE_DIGITS}) AS score "
        f"FROM ({read}) GROUP BY item ORDER BY score DESC, item DESC LIMIT {limit}) "
        f"SELECT {', '.join(COLUMNS)}, items.number, found.score "
        "FROM found JOIN items ON items.number = found.item "
        f"WHERE +items.user_id = {user} ORDER BY found.score DESC, found.item DESC"
    )


def marks(count: int) -> str:
    """Return the numbered parameters of `count` terms after the scope: ?2, ?3, ..."""
    return ", ".join(f"?{n}" for n in range(2, count + 2))


def iterate_statement(by_level: bool) -> str:
    """Return the keyset-paged read of one user's items (and level), number last, after one."""
    # `+user_id` keeps SQLite on the number order instead of sorting the user's index entries.
    level = "AND level = ? " if by_level else ""
    return (
        f"SELECT {', '.join(COLUMNS)}, number FROM items WHERE +user_id = ? {level}AND number > ? "
        "ORDER BY number LIMIT ?"
    )


def _scope(run, user_id: str, level: str) -> tuple[int, int, int] | None:
    rows = run(SCOPE, (user_id, level))
    return rows[0] if rows else None


def matching(
    run: Run, read: RowReader, user_id: str, level: str, terms: Iterable[str]
) -> list[MemoryItem]:
    """Return the user's items at a level whose analysed terms share one with `terms` (S7)."""
    terms = sorted(set(terms))
    scope = _scope(run, user_id, level)
    if not terms or scope is None:
        return []
    statement = MATCHING.format(marks(len(terms)))
    return read.items(run(statement, (scope[0], *terms)))


def _frequencies(run: Run, scope_id: int, terms: list[str]) -> tuple[dict[str, int], bool]:
    """Return how many of the scope's items hold each term, and whether any posting waits."""
    frequencies: dict[str, int] = {}
    pending = False
    statement = DOCUMENT_FREQUENCY.format(marks(len(terms)))
    for term, count, waiting in run(statement, (scope_id, *terms)):
        frequencies[term] = frequencies.get(term, 0) + count
        pending = pending or bool(waiting)
    return dict(sorted(frequencies.items())), pending


def statistics(
    run: Run, user_id: str, level: str, terms: Iterable[str], bm25: BM25Settings
) -> TermStatistics:
    """Return the user's item count, total length and each term's holders at a level (S14)."""
    terms = sorted(set(terms))
    scope = _scope(run, user_id, level)
    if scope is None:
        return TermStatistics(0, 0, {}, bm25)
    scope_id, documents, length = scope
    frequencies = _frequencies(run, scope_id, terms)[0] if terms else {}
    return TermStatistics(documents, length, frequencies, bm25)


def held_terms(
    run: Run, user_id: str, level: str, item_ids: Iterable[str], terms: Iterable[str]
) -> dict[str, TermCounts]:
    """Return the length and asked terms' counts of each named item holding one (S15, SX1)."""
    terms = sorted(set(terms))
    item_ids = list(dict.fromkeys(item_ids))
    scope = _scope(run, user_id, level)
    if not terms or not item_ids or scope is None:
        return {}
    # A term fewer items hold than are named is read whole: a rare word's few dozen postings,
    # where seeking each named item's postings made a chat's recall seek 180 items for it.
    asked = ", ".join(f"(?{n})" for n in range(3, len(terms) + 3))
    counted = run(HOLDERS_UP_TO.format(asked), (scope[0], len(item_ids) + 1, *terms))
    rare = {term for term, holders in counted if holders <= len(item_ids)}
    rows = run(HELD_BY_TERM.format(marks(len(rare))), (scope[0], *sorted(rare))) if rare else []
    sought = [term for term in terms if term not in rare]
    first_id = len(sought) + 2
    for offset in range(0, len(item_ids) if sought else 0, IDS_A_STATEMENT):
        named = item_ids[offset : offset + IDS_A_STATEMENT]
        ids = ", ".join(f"?{n}" for n in range(first_id, first_id + len(named)))
        rows += run(HELD_TERMS.format(marks(len(sought)), ids), (scope[0], *sought, *named))
    return held_from_rows(rows, item_ids)


def search(
    run: Run,
    read: RowReader,
    user_id: str,
    level: str,
    terms: Sequence[str],
    limit: int,
    bm25: BM25Settings,
) -> list[tuple[MemoryItem, float]]:
    """Return the `limit` best items by BM25 for `terms`, scored and cut in SQL (S8)."""
    terms = sorted(set(terms))
    scope = _scope(run, user_id, level)
    if not terms or scope is None or not scope[1]:
        return []
    scope_id, documents, length = scope
    frequencies, pending = _frequencies(run, scope_id, terms)
    weighted = [
        (term, bm25_idf(documents, frequencies[term])) for term in terms if term in frequencies
    ]
    if not weighted:
        return []
    average = max(length / documents, 1e-9)
    parameters = (
        *(value for pair in weighted for value in pair),
        bm25.k1 + 1,
        bm25.k1,
        1 - bm25.b,
        bm25.b,
        average,
        scope_id,
        max(0, limit),
        user_id,
    )
    # Another process may delete an item between the two statements: it is simply not found.
    rows = run(search_statement(len(weighted), pending), parameters)
    scored = ((read.item(row[:-2]), row[-1]) for row in rows)
    return [(item, score) for item, score in scored if item is not None]


def _by_ids(
    run: Run, statement: str, user_id: str, item_ids: list[str], leading: tuple = ()
) -> dict[str, tuple]:
    """Return the rows `statement` reads for the ids (500 a run), keyed by their first column.

    The parameters of a run are `leading`, the ids, then the user.
    """
    rows = []
    for offset in range(0, len(item_ids), IDS_A_STATEMENT):
        named = item_ids[offset : offset + IDS_A_STATEMENT]
        rows += run(statement.format(", ".join("?" * len(named))), (*leading, *named, user_id))
    return {row[0]: row for row in rows}


def adjacent(
    run: Run, user_id: str, item_ids: Iterable[str], width: int = 1
) -> dict[str, tuple[str | None, ...]]:
    """Return the ids `width` before and after each of the user's items in its thread (S9).

    Raises ValueError naming S9 for a width that is not an int >= 0.
    """
    require_count("S9: width", width, 0)
    item_ids = list(dict.fromkeys(item_ids))
    rows = _by_ids(run, NEIGHBOURS, user_id, item_ids, (width, width))
    found = {}
    for item_id in item_ids:
        if item_id in rows:
            # Nearest first on each side, by number: the thread's order.
            before = sorted(json.loads(rows[item_id][1]), reverse=True)
            after = sorted(json.loads(rows[item_id][2]))
            found[item_id] = padded_neighbours(
                [pair[1] for pair in before], [pair[1] for pair in after], width
            )
    return found


def get_many(
    run: Run, read: RowReader, user_id: str, item_ids: Iterable[str]
) -> dict[str, MemoryItem]:
    """Return each of the user's items among the ids, keyed by id in the order named (S16)."""
    item_ids = list(dict.fromkeys(item_ids))
    found = _by_ids(run, BY_IDS, user_id, item_ids)
    items = {item_id: read.item(found[item_id]) for item_id in item_ids if item_id in found}
    return {item_id: item for item_id, item in items.items() if item is not None}


def iterate(
    run: Run, read: RowReader, user_id: str, level: str | None, batch_size: int
) -> Iterator[list[MemoryItem]]:
    """Yield the user's items (of one level, if given), oldest first, `batch_size` at a time (S11).

    Raises ValueError naming S11 for a batch size that is not an int >= 1.
    """
    require_count("S11: batch_size", batch_size, 1)
    # One query per batch, after the last number seen: no cursor stays open across a delete.
    levels = [level] * (level is not None)
    last = 0
    statement = iterate_statement(bool(levels))
    while rows := run(statement, (user_id, *levels, last, batch_size)):
        last = rows[-1][-1]
        yield read.items(row[:-1] for row in rows)


def audit(run: Run, user_id: str | None, item_id: str | None) -> list[AuditEntry]:
    """Return the audit records of a user and/or an item, oldest first (SX1).

    Each filter is a plain condition on an indexed column.
    """
    given = [
        (column, value)
        for column, value in (("user_id", user_id), ("item_id", item_id))
        if value is not None
    ]
    where = f"WHERE {' AND '.join(f'{column} = ?' for column, _ in given)} " if given else ""
    rows = run(
        f"SELECT item_id, operation, reason, at, weight, user_id FROM audit {where}ORDER BY seq",
        tuple(value for _, value in given),
    )
    return [AuditEntry(*row) for row in rows]
