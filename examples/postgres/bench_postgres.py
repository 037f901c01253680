"""The PostgreSQL store beside the plainest PostgreSQL a user would write: `run.sh --measure`.

docs/beyond-one-machine.md, "Measured": as benchmarks/recall_scale.py and write_speed.py
do for SQLite, two figures, each a ratio within a pair of turns (A, B, then B, A):
    - warm recall: `MemoryManager.recall(query, top_k=10, count_access=False)` on the store
      holding SIZE items of one user, beside one full-text query on a plain table of the same
      texts, `ts_rank` over a GIN-indexed `tsvector` with `LIMIT 10`, per query class;
    - batched writes: `PostgresStore.put` of SIZE items in batches of 10,000, beside plain
      `INSERT`s of the same rows into a table with the same columns and a GIN-indexed
      `tsvector` (psycopg's `executemany`), one transaction per batch each, fresh tables.
Prints markdown rows: median (lowest-highest) of n, with the load average.

Invariants:
    PB1 both sides hold the same texts in the same database, with the same server settings;
        every ratio is taken within one pair of turns, never between two medians (SB2).
"""

import os
import sys

import psycopg
from postgres_factory import conninfo
from postgres_store import PostgresStore, columns_of
from psycopg import sql

from benchmarks.recall_scale import CLASSES, class_queries, corpus, fill, items_of
from benchmarks.side_by_side import Turns, spread, timed_ms
from recuris import ManualClock, MemoryManager
from recuris.core.clock import DAY

SCHEMA = "recuris_bench"
PLAIN = "recuris_bench_plain"
BATCH = 10_000
PLAIN_TABLE = """
CREATE TABLE items (
    number bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE, user_id text NOT NULL, level text NOT NULL, content text NOT NULL,
    task_id text, created_at float8 NOT NULL, last_access_at float8 NOT NULL,
    access_count bigint NOT NULL, importance float8 NOT NULL, metadata text NOT NULL,
    invalidated_at float8, superseded_by text,
    document tsvector GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED);
CREATE INDEX items_document ON items USING gin (document);
CREATE INDEX items_thread ON items (user_id, level, task_id, number);
"""
PLAIN_INSERT = (
    "INSERT INTO items (id, user_id, level, content, task_id, created_at, last_access_at, "
    "access_count, importance, metadata, invalidated_at, superseded_by) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
TS_RANK_TOP = (
    "SELECT id, ts_rank(document, query) AS rank FROM items, to_tsquery('simple', %s) AS query "
    "WHERE document @@ query ORDER BY rank DESC LIMIT 10"
)


def fresh(connection: psycopg.Connection, schema: str) -> None:
    """Drop and make the schema, and read and write in it from now on."""
    name = sql.Identifier(schema)
    connection.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(name))
    connection.execute(sql.SQL("CREATE SCHEMA {}").format(name))
    connection.execute(sql.SQL("SET search_path TO {}").format(name))


def plain_write(connection: psycopg.Connection, rows: list[tuple]) -> None:
    """Insert the rows in one transaction, as a user would, their tsvector made by the table."""
    with connection.transaction():
        with connection.cursor() as cursor:
            cursor.executemany(PLAIN_INSERT, rows)


def plain_rows(items) -> list[tuple]:
    """Return the items as rows of PLAIN_INSERT, metadata as JSON text (the store's mapping)."""
    return [tuple(row) for row in zip(*columns_of(items), strict=True)]


def recall_row(size: int, repeats: int) -> list[str]:
    """Time warm recall beside one ts_rank query per query class; return markdown rows."""
    texts = corpus(size)
    asked = class_queries(texts, repeats, 2)
    with psycopg.connect(conninfo(), autocommit=True) as connection:
        fresh(connection, PLAIN)
        connection.execute(PLAIN_TABLE)
        items = items_of(texts)
        for offset in range(0, size, BATCH):
            plain_write(connection, plain_rows(items[offset : offset + BATCH]))
        connection.execute("VACUUM ANALYZE items")
        fresh(connection, SCHEMA)
        store = PostgresStore(conninfo(), SCHEMA)
        fill(store, texts)
        connection.execute("VACUUM ANALYZE items, postings, scopes")
        manager = MemoryManager(store, clock=ManualClock(size * 60.0 + DAY))
        connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(PLAIN)))

        def recall(query: str):
            return manager.recall(query, "u", top_k=10, count_access=False)

        def ts_rank(query: str):
            return connection.execute(TS_RANK_TOP, (" | ".join(query.split()),)).fetchall()

        rows = []
        for kind in CLASSES:
            queries = asked[kind]
            sides = (recall, ts_rank)
            for side in sides:
                side(queries[0])  # warm: the user's layers loaded, the pages cached
            times = ([], [])
            for turn, query in enumerate(queries):
                for side in (0, 1) if turn % 2 == 0 else (1, 0):
                    times[side].append(timed_ms(sides[side], query))
            ratio = spread([a / b for a, b in zip(*times, strict=True)])
            above = spread([a - b for a, b in zip(*times, strict=True)])
            # A rare word's ts_rank query takes a fraction of a millisecond: its figure is a
            # difference, as the SQLite rows show it beside FTS5.
            compared = (
                f"+{above['median']:.2f} ms ({above['low']:+.2f} to {above['high']:+.2f})"
                if kind == "rare"
                else shown(ratio)
            )
            rows.append(
                f"| PostgreSQL recall (count_access=False) vs one ts_rank query over a GIN index, "
                f"{kind} words, warm: ms, median (lowest-highest) of {ratio['n']}, load "
                f"{os.getloadavg()[0]:.1f} | {size:,} items | {shown(spread(times[0]))} | "
                f"{shown(spread(times[1]))} | {compared} |"
            )
        store.close()
        for schema in (SCHEMA, PLAIN):
            connection.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
    return rows


def write_row(size: int, runs: int) -> str:
    """Time batched puts beside plain INSERTs of the same rows, in turns; return a markdown row."""
    items = items_of(corpus(size))
    turns = []
    with psycopg.connect(conninfo(), autocommit=True) as connection:
        for _ in range(runs):
            fresh(connection, PLAIN)
            connection.execute(PLAIN_TABLE)
            fresh(connection, SCHEMA)
            store = PostgresStore(conninfo(), SCHEMA)
            connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(PLAIN)))
            run = Turns()
            for offset in range(0, size, BATCH):
                part = items[offset : offset + BATCH]
                rows = plain_rows(part)
                run.take(
                    {
                        "ours": lambda part=part, store=store: store.put(part),
                        "plain": lambda rows=rows: plain_write(connection, rows),
                    }
                )
            store.close()
            turns.append(run.seconds)
        for schema in (SCHEMA, PLAIN):
            connection.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
    ratio = spread([run["ours"] / run["plain"] for run in turns])
    cpu = spread([run["ours_cpu"] / run["plain_cpu"] for run in turns])
    return (
        f"| PostgreSQL put in batches of 10,000 vs plain INSERTs (executemany) into a table "
        f"with a GIN-indexed tsvector (s), median (lowest-highest) of {ratio['n']}, load "
        f"{os.getloadavg()[0]:.1f} | {size:,} items | "
        f"{shown(spread([run['ours'] for run in turns]))} | "
        f"{shown(spread([run['plain'] for run in turns]))} | "
        f"{shown(ratio)} (client CPU {cpu['median']:.2f}) |"
    )


def shown(figure: dict) -> str:
    """Show a figure as its median (lowest-highest)."""
    return f"{figure['median']:.2f} ({figure['low']:.2f}-{figure['high']:.2f})"


def main(arguments: list[str]) -> int:
    size = int(arguments[0]) if arguments else 100_000
    print("| measure | size | recuris | baseline | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for row in recall_row(size, repeats=7):
        print(row, flush=True)
    print(write_row(size, runs=5), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
