"""Write speed: recuris's writes beside the plainest SQLite code a user would write instead.

Document 003 §7 wants writing a memory never to stall the agent. What a user runs is
`SQLiteStore.put` (a batch) and `MemoryManager.write` (one item), so those are timed, each
beside a plain database doing the same storing: a table with the columns and indexes of
recuris's `items`, filled with plain `INSERT`s, and an FTS5 table filled with
`INSERT INTO texts (rowid, content) VALUES (?, ?)` in the same transaction, so that the
texts can be searched. Both sides run with the same journal mode and `synchronous`.
`python -m benchmarks.speed` prints the rows; docs/benchmarks/write-speed.md describes both sides.

Invariants:
    WS1 the two sides store the same rows, in fresh files, with the same journal mode and
        `synchronous`, one transaction per batch each, and take turns (A, B, then B, A, run
        after run too, SB1), so that both meet the machine and the disk in the same state.
    WS2 every figure is a median of n runs (or writes) with its lowest and highest, and a
        ratio is taken within one pair of turns, never between medians of separate runs.
    WS3 the term index's layouts are compared on the same items and the same analysed terms
        (`term_counts`), each written with the plain rows in one transaction a batch.
"""

import os
import sqlite3
import tempfile
import time
from array import array
from collections.abc import Callable
from functools import partial
from pathlib import Path

from benchmarks.recall_scale import corpus, fill, items_of
from benchmarks.side_by_side import Turns, ratios, spread
from recuris.core.clock import ManualClock
from recuris.manager.manager import MemoryManager
from recuris.storage.item import MemoryItem
from recuris.storage.sqlite_schema import COLUMNS, ITEMS, ITEMS_INDEXES, SCHEMA, row_of, term_counts
from recuris.storage.sqlite_store import SQLiteStore

__all__ = [
    "batched_writes",
    "single_writes",
    "single_write_runs",
    "write_parts",
    "term_layouts",
]

# The plain side's statements: recuris's own row mapping, its rowid given so that the FTS5
# entry can name it without reading the row back.
PLAIN_INSERT = (
    f"INSERT INTO items (rowid, {', '.join(COLUMNS)}) "
    f"VALUES ({', '.join('?' * (len(COLUMNS) + 1))})"
)
FTS5_INSERT = "INSERT INTO texts (rowid, content) VALUES (?, ?)"


def _direct(path: Path, like: SQLiteStore) -> sqlite3.Connection:
    """Open the plain side's database with the journal mode and `synchronous` of `like` (WS1).

    It holds a table with the columns and indexes of recuris's `items`, and an FTS5 table
    `texts` of their contents, rowid for rowid.
    """
    db = sqlite3.connect(path, isolation_level=None)
    for setting in ("journal_mode", "synchronous"):
        db.execute(f"PRAGMA {setting} = {like._run(f'PRAGMA {setting}')[0][0]}")
    db.executescript(f"{ITEMS};\n{ITEMS_INDEXES};")
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(content)")
    return db


def _raw_write(db: sqlite3.Connection, items: list[MemoryItem], first: int) -> None:
    """Insert the items' rows (rowids `first` + 1 on) and FTS5 entries in one transaction."""
    rowids = range(first + 1, first + 1 + len(items))
    db.execute("BEGIN IMMEDIATE")
    db.executemany(
        PLAIN_INSERT, [(rowid, *row_of(item)) for rowid, item in zip(rowids, items, strict=True)]
    )
    db.executemany(
        FTS5_INSERT, [(rowid, item.content) for rowid, item in zip(rowids, items, strict=True)]
    )
    db.execute("COMMIT")


def _raw_fill(db: sqlite3.Connection, texts: list[str], batch: int = 10_000) -> float:
    """Write the texts' rows and FTS5 entries a transaction per batch; return the seconds taken."""
    items = items_of(texts)
    started = time.perf_counter()
    for offset in range(0, len(items), batch):
        _raw_write(db, items[offset : offset + batch], offset)
    return time.perf_counter() - started


def _spreads(turns: list[Turns], scale: float, names: tuple[str, str]) -> dict:
    """Return the spreads of both sides (times `scale`), their ratio and its CPU ratio (WS2)."""
    figures = [run.seconds for run in turns]
    return {
        names[0]: spread([run["ours"] * scale for run in figures]),
        names[1]: spread([run["plain"] * scale for run in figures]),
        "ratio": ratios([run["ours"] for run in figures], [run["plain"] for run in figures]),
        "cpu_ratio": ratios(
            [run["ours_cpu"] for run in figures], [run["plain_cpu"] for run in figures]
        ),
        "load": os.getloadavg(),
    }


def batched_writes(
    size: int, runs: int = 5, batch: int | None = 10_000, seed: int = 1, synchronous: str = "FULL"
) -> dict:
    """Time `SQLiteStore.put` of `size` items in batches (None: all in one) beside the plain side.

    Each run writes the same items into fresh files, the two sides taking turns (WS1, SB1).
    Returns the spreads (WS2) of `put_s` and `plain_s` (seconds), of their `ratio`, and of the
    ratio of the CPU seconds (`cpu_ratio`, which a busy machine moves less), and the load
    average.
    """
    texts = corpus(size, seed)
    items = items_of(texts)
    step = batch or size
    turns = []
    for number in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            store = SQLiteStore(Path(folder) / "recuris.db", synchronous=synchronous)
            direct = _direct(Path(folder) / "plain.db", store)
            run = Turns(reversed_first=number % 2 == 1)
            for offset in range(0, size, step):
                part = items[offset : offset + step]
                run.take(
                    {
                        "ours": partial(store.put, part),
                        "plain": partial(_raw_write, direct, part, offset),
                    }
                )
            store.close()
            direct.close()
        turns.append(run)
    return _spreads(turns, 1.0, ("put_s", "plain_s"))


def _written(texts: list[str]) -> list[MemoryItem]:
    """The plain side's rows of the manager's writes: its metadata, at level episodic."""
    return [
        MemoryItem(
            id=f"i{n}",
            user_id="u",
            level="episodic",
            content=text,
            metadata={"kind": "event", "tags": []},
        )
        for n, text in enumerate(texts)
    ]


def _single_run(count: int, seed: int, synchronous: str) -> Turns:
    texts = corpus(count, seed)
    run = Turns()
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "recuris.db", synchronous=synchronous)
        manager = MemoryManager(store, clock=ManualClock(0.0))
        direct = _direct(Path(folder) / "plain.db", store)
        for number, (text, row) in enumerate(zip(texts, _written(texts), strict=True)):
            run.take(
                {
                    "ours": partial(manager.write, text, "u", level="episodic"),
                    "plain": partial(_raw_write, direct, [row], number),
                }
            )
        store.close()
        direct.close()
    return run


def single_writes(count: int = 300, seed: int = 1, synchronous: str = "FULL") -> dict:
    """Time `MemoryManager.write` (ms, one item a transaction) beside one plain row + FTS5 entry.

    The two sides take turns, one write each (WS1); returns the mean of each side, in ms.
    """
    seconds = _single_run(count, seed, synchronous).seconds
    return {"write_ms": seconds["ours"] / count * 1000, "raw_ms": seconds["plain"] / count * 1000}


def single_write_runs(
    runs: int = 5, count: int = 500, synchronous: str = "FULL", seed: int = 1
) -> dict:
    """Run `runs` turns of `count` single writes, fresh files and texts each; return spreads.

    Keys (WS2): `write_ms` and `raw_ms` (each run's mean), `ratio` and `cpu_ratio` (each
    run's), and the load average.
    """
    turns = [_single_run(count, seed + run, synchronous) for run in range(runs)]
    return _spreads(turns, 1000 / count, ("write_ms", "raw_ms"))


class _Timed:
    """A connection's stand-in that adds up the seconds each statement takes, by its text."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.seconds: dict[str, float] = {}

    def _timed(self, method, statement: str, *arguments):
        started = time.perf_counter()
        result = method(statement, *arguments)
        name = " ".join(statement.split())
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
        return result

    def execute(self, statement: str, *arguments):
        return self._timed(self.db.execute, statement, *arguments)

    def executemany(self, statement: str, *arguments):
        return self._timed(self.db.executemany, statement, *arguments)


def write_parts(
    count: int = 500, seed: int = 1, synchronous: str = "NORMAL", batch: int | None = None
) -> dict:
    """Say where a write's time goes: µs per item for each statement, and the rest.

    Times `count` manager writes, one item each, or with `batch`, `SQLiteStore.put` of
    `count` items in batches of `batch`. The rest is Python: the manager's and the store's
    own work between statements. Returns {"total_us": ..., "statements": {statement: µs},
    "python_us": ...}, each per item.
    """
    texts = corpus(count, seed)
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "recuris.db", synchronous=synchronous)
        manager = MemoryManager(store, clock=ManualClock(0.0))
        timed = _Timed(store._db)
        # The store's one connection, every statement of a write passing through the stand-in.
        store._db = timed
        if batch:
            total = fill(store, texts, batch)
        else:
            started = time.perf_counter()
            for text in texts:
                manager.write(text, "u", level="episodic")
            total = time.perf_counter() - started
        store._db = timed.db
        store.close()
    per_item = {name: seconds / count * 1e6 for name, seconds in timed.seconds.items()}
    return {
        "total_us": total / count * 1e6,
        "statements": dict(sorted(per_item.items(), key=lambda pair: -pair[1])),
        "python_us": (total - sum(timed.seconds.values())) / count * 1e6,
    }


# Beside recuris's own `postings` (a row per posting, made by SCHEMA), two layouts that write
# fewer rows: a row per term of a batch with its postings packed, and FTS5 over the terms.
LAYOUTS = (
    "CREATE TABLE blocks (scope INTEGER NOT NULL, term TEXT NOT NULL, first INTEGER NOT NULL, "
    "postings BLOB NOT NULL, PRIMARY KEY (scope, term, first)) WITHOUT ROWID",
    "CREATE VIRTUAL TABLE terms USING fts5(words, content='')",
)


def _posting_rows(counted: list[tuple]) -> tuple[str, list]:
    rows = [
        (1, term, rowid, frequency, sum(counts.values()))
        for rowid, counts in counted
        for term, frequency in counts.items()
    ]
    rows.sort(key=lambda row: row[1])  # by term, rowids in order: as the store merges
    return "INSERT INTO postings VALUES (?, ?, ?, ?, ?)", rows


def _term_blocks(counted: list[tuple]) -> tuple[str, list]:
    blocks: dict[str, array] = {}
    for rowid, counts in counted:
        length = sum(counts.values())
        for term, frequency in counts.items():
            blocks.setdefault(term, array("q")).extend((rowid, frequency, length))
    first = counted[0][0]
    rows = [(1, term, first, block.tobytes()) for term, block in sorted(blocks.items())]
    return "INSERT INTO blocks VALUES (?, ?, ?, ?)", rows


def _terms_in_fts5(counted: list[tuple]) -> tuple[str, list]:
    rows = [
        (rowid, " ".join(term for term, frequency in counts.items() for _ in range(frequency)))
        for rowid, counts in counted
    ]
    return "INSERT INTO terms (rowid, words) VALUES (?, ?)", rows


def _layout_write(
    db: sqlite3.Connection, items: list[MemoryItem], first: int, layout: Callable
) -> None:
    """Write the items' plain rows and their terms in one layout, in one transaction (WS3)."""
    rowids = range(first + 1, first + 1 + len(items))
    db.execute("BEGIN IMMEDIATE")
    db.executemany(
        PLAIN_INSERT, [(rowid, *row_of(item)) for rowid, item in zip(rowids, items, strict=True)]
    )
    counted = [
        (rowid, term_counts(item.content)) for rowid, item in zip(rowids, items, strict=True)
    ]
    db.executemany(*layout(counted))
    db.execute("COMMIT")


def term_layouts(size: int = 100_000, runs: int = 3, batch: int = 10_000, seed: int = 1) -> dict:
    """Time three layouts of the term index beside the plain side, batch by batch (WS1, WS3).

    Each layout writes the plain rows and the terms of the same items, analysed in Python:
    "posting rows" (the store's `postings`), "term blocks" (one row per term of a batch,
    its postings packed as integers) and "terms in FTS5" (a contentless FTS5 table of each
    item's analysed terms). Returns the spread of each one's ratio to the plain side (wall
    and CPU seconds), and the load average.
    """
    items = items_of(corpus(size, seed))
    layouts = {
        "posting rows": _posting_rows,
        "term blocks": _term_blocks,
        "terms in FTS5": _terms_in_fts5,
    }
    ratios: dict[str, list[float]] = {}
    for number in range(runs):
        run = Turns(reversed_first=number % 2 == 1)
        with tempfile.TemporaryDirectory() as folder:
            store = SQLiteStore(Path(folder) / "like.db")
            databases = {
                name: _direct(Path(folder) / f"{number}.db", store)
                for number, name in enumerate(["plain", *layouts])
            }
            store.close()
            for name in layouts:
                databases[name].executescript(f"{SCHEMA};\n{';'.join(LAYOUTS)};")
            for offset in range(0, size, batch):
                part = items[offset : offset + batch]
                sides = {"plain": partial(_raw_write, databases["plain"], part, offset)}
                for name, layout in layouts.items():
                    sides[name] = partial(_layout_write, databases[name], part, offset, layout)
                run.take(sides)
            for db in databases.values():
                db.close()
        for name in layouts:
            ratios.setdefault(name, []).append(run.seconds[name] / run.seconds["plain"])
            ratios.setdefault(f"{name} (CPU)", []).append(
                run.seconds[f"{name}_cpu"] / run.seconds["plain_cpu"]
            )
    return {name: spread(values) for name, values in ratios.items()} | {"load": os.getloadavg()}
