"""Recall at scale: the manager's recall beside a direct FTS5 query on the same rows, in one run.

Document 004 quotes MemoryBank: past 200 items the median retrieval rose from 120 ms to
410 ms, and document 003 §7 wants a slow recall never to stall the agent. What a user runs
is `MemoryManager.recall`, so that is what is timed here, on `SQLiteStore` filled with
batched `put`, beside the fastest thing SQLite itself offers for the same question: one
FTS5 `bm25()` query with `LIMIT`, on a table holding the same texts. A second measure puts
items that share no term with the queries into the in-memory store and checks that recall
does not notice them. `bench.py` prints the rows.

Invariants:
    RS1 every timing is a median over the same queries for both sides, measured in one run
        on the same rows; the queries are drawn from the corpus's own distribution.
    RS2 `in_sessions` times three sides on the same queries, each query taken by all three
        in turns (SB3).
"""

import itertools
import os
import random
import sqlite3
import statistics
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path

from benchmarks.side_by_side import differences, in_turns, ratios, spread, timed_ms
from recuris.core.clock import DAY, ManualClock
from recuris.manager.context import Context
from recuris.manager.manager import ManagerSettings, MemoryManager
from recuris.manager.recall import RecallPolicy
from recuris.storage.item import MemoryItem
from recuris.storage.memory_store import InMemoryStore
from recuris.storage.sqlite_store import SQLiteStore
from recuris.storage.store import Store

__all__ = [
    "corpus",
    "unrelated_items",
    "CLASSES",
    "class_queries",
    "query_classes",
    "in_sessions",
    "access_counting",
]


def corpus(size: int, seed: int = 1, words: int = 12, prefix: str = "w") -> list[str]:
    """Return `size` texts of `words` words from a Zipf-like vocabulary of 20,000 words."""
    rng = random.Random(seed)
    vocabulary = [f"{prefix}{rank}" for rank in range(1, 20_001)]
    # Cumulative weights summed once: `choices` would sum all 20,000 again at every call.
    cumulative = list(itertools.accumulate(1 / rank for rank in range(1, 20_001)))
    return [" ".join(rng.choices(vocabulary, cum_weights=cumulative, k=words)) for _ in range(size)]


def items_of(texts: list[str], first: int = 0, session: int | None = None) -> list[MemoryItem]:
    """Return the texts as one user's episodic items, a minute apart, ids from `first`.

    With `session`, every `session` consecutive items share a task: a chat's sessions.
    """
    return [
        MemoryItem(
            id=f"i{first + n}",
            user_id="u",
            level="episodic",
            content=text,
            created_at=60.0 * n,
            task_id=None if session is None else f"session-{(first + n) // session}",
        )
        for n, text in enumerate(texts)
    ]


def fill(store: Store, texts: list[str], batch: int = 10_000, session: int | None = None) -> float:
    """Put the texts' items in batches; return the seconds the puts alone took."""
    items = items_of(texts, session=session)
    started = time.perf_counter()
    for offset in range(0, len(items), batch):
        store.put(items[offset : offset + batch])
    return time.perf_counter() - started


def unrelated_items(
    related: int, unrelated: int, queries: int = 30, seed: int = 1
) -> tuple[float, float]:
    """Time warm recall in memory among `related` items, without and with `unrelated` more.

    The unrelated items share no term with any query. Both stores are filled, then each
    query is recalled from both in turns (RS1, SB3). Returns the two
    medians in ms: (without, with).
    """
    rng = random.Random(seed + 1)
    texts = corpus(related, seed)
    crowd = corpus(unrelated, seed + 7, prefix="x")
    asked = [" ".join(rng.sample(text.split(), 3)) for text in rng.sample(texts, queries)]
    sides = []
    for extra in ([], crowd):
        store = InMemoryStore()
        fill(store, texts + extra)
        manager = MemoryManager(store, clock=ManualClock((related + unrelated) * 60.0))
        sides.append(_recall(manager))
    for side in sides:
        side(asked[0])  # the user's layers loaded
    alone, crowded = in_turns(sides, asked)
    return statistics.median(alone), statistics.median(crowded)


# The query classes, each timed alone: one word in a few dozen documents, one word in more than
# 40 % of them, three words of different frequency ranks, three words of one stored document.
CLASSES = ("rare", "common", "mixed", "document")
RARE_DOCUMENTS = (20, 50)  # a rare word's document frequency, at any size
COMMON_SHARE = 0.4  # a common word is in more than this share of the documents
MIDDLE_SHARE = (0.005, 0.02)  # the mixed class's middle word
FTS5_TOP = "SELECT rowid, bm25(texts) FROM texts WHERE texts MATCH ? ORDER BY rank LIMIT 10"


def class_queries(texts: list[str], count: int, seed: int = 1) -> dict[str, list[str]]:
    """Return `count` queries of each class of CLASSES, chosen by measured document frequency.

    Raises ValueError if the texts hold no word of a class (too few texts for a common word).
    """
    rng = random.Random(seed)
    frequency = Counter(word for text in texts for word in set(text.split()))
    by_rank = sorted(frequency, key=lambda word: (-frequency[word], word))
    size = len(texts)
    low, high = RARE_DOCUMENTS
    kinds = {
        "rare": [word for word in by_rank if low <= frequency[word] <= high],
        "common": [word for word in by_rank if frequency[word] > COMMON_SHARE * size],
        "middle": [
            word
            for word in by_rank
            if MIDDLE_SHARE[0] * size <= frequency[word] <= MIDDLE_SHARE[1] * size
        ],
        "frequent": by_rank[:10],
    }
    empty = [kind for kind, words in kinds.items() if not words]
    if empty:
        raise ValueError(f"no {' or '.join(empty)} word in {size} texts")

    def some(kind: str) -> list[str]:
        words = kinds[kind]
        return [words[n % len(words)] for n in rng.sample(range(max(count, len(words))), count)]

    mixed = zip(some("frequent"), some("middle"), some("rare"), strict=True)
    return {
        "rare": some("rare"),
        "common": some("common"),
        "mixed": [" ".join(words) for words in mixed],
        "document": [" ".join(rng.sample(text.split(), 3)) for text in rng.sample(texts, count)],
    }


def _plain_fts5(path: Path, texts: list[str], like: SQLiteStore) -> None:
    """Write the texts, by rowid, into a plain FTS5 table with the store's journal settings."""
    db = sqlite3.connect(path, isolation_level=None)
    for setting in ("journal_mode", "synchronous"):
        db.execute(f"PRAGMA {setting} = {like._run(f'PRAGMA {setting}')[0][0]}")
    db.execute("CREATE VIRTUAL TABLE texts USING fts5(content)")
    for offset in range(0, len(texts), 10_000):
        db.execute("BEGIN IMMEDIATE")
        db.executemany(
            "INSERT INTO texts (rowid, content) VALUES (?, ?)",
            enumerate(texts[offset : offset + 10_000], offset + 1),
        )
        db.execute("COMMIT")
    db.close()


def _row(kind: str, state: str, ours: list[float], fts5: list[float]) -> dict:
    """Return one class's figures: each side's ms, their ratio and difference pair by pair."""
    return {
        "class": kind,
        "state": state,
        "n": len(ours),
        "recall_ms": spread(ours),
        "fts5_ms": spread(fts5),
        "ratio": ratios(ours, fts5),
        "above_ms": differences(ours, fts5),
        "load": os.getloadavg()[0],
    }


def _fts5_query(db: sqlite3.Connection):
    return lambda query: db.execute(FTS5_TOP, (" OR ".join(query.split()),)).fetchall()


def query_classes(size: int, repeats: int = 5, seed: int = 1, folder: str | None = None) -> dict:
    """Time recall beside one FTS5 query per query class, warm and first after a reopen.

    Recall is `MemoryManager.recall(query, top_k=10, count_access=False)` on a `SQLiteStore`
    of `size` corpus texts; the FTS5 side is FTS5_TOP on a plain FTS5 table of the same texts,
    with the store's journal mode and `synchronous`. Each class is timed alone, the two sides
    taking turns (A, B, then B, A), `repeats` queries warm and `repeats` reopens. Returns
    {"size", "load" (the 1-minute load average before), "rows": one `_row` per class and
    state, "peak_mb": the most memory traced while a fresh manager recalls every query once}.
    """
    texts = corpus(size, seed)
    asked = class_queries(texts, repeats, seed + 1)
    load = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(dir=folder) as place:
        path = Path(place) / "recuris.db"
        plain = Path(place) / "fts5.db"
        store = SQLiteStore(path)
        fill(store, texts)
        _plain_fts5(plain, texts, store)
        store.close()
        clock = ManualClock(size * 60.0 + DAY)
        for kind in CLASSES:
            rows.append(_warm(kind, asked[kind], path, plain, clock))
            rows.append(_first(kind, asked[kind], path, plain, clock))
        peak_mb = _peak_mb([query for kind in CLASSES for query in asked[kind]], path, clock)
    return {"size": size, "load": load, "rows": rows, "peak_mb": peak_mb}


def _peak_mb(queries: list[str], path: Path, clock: ManualClock) -> float:
    """Return the most memory (MB) traced while a fresh manager recalls each query once."""
    # Traced apart from the timings: tracing slows every allocation several times over.
    tracemalloc.start()
    manager = MemoryManager(SQLiteStore(path), clock=clock)
    for query in queries:
        _recall(manager)(query)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    manager.store.close()
    return peak


def _warm(kind: str, queries: list[str], path: Path, plain: Path, clock: ManualClock) -> dict:
    manager = MemoryManager(SQLiteStore(path), clock=clock)
    db = sqlite3.connect(plain)
    sides = (_recall(manager), _fts5_query(db))
    for side in sides:
        side(queries[0])  # caches filled, the user's layers loaded
    times = in_turns(sides, queries)
    manager.store.close()
    db.close()
    return _row(kind, "warm", *times)


def _recall(manager: MemoryManager, count_access: bool = False):
    return lambda query: manager.recall(query, "u", top_k=10, count_access=count_access)


def _first(kind: str, queries: list[str], path: Path, plain: Path, clock: ManualClock) -> dict:
    """Time each side's first query on a store or connection opened for it, in turns (SB3)."""

    def recuris_first(query: str) -> float:
        manager = MemoryManager(SQLiteStore(path), clock=clock)
        took = timed_ms(_recall(manager), query)
        manager.store.close()
        return took

    def fts5_first(query: str) -> float:
        db = sqlite3.connect(plain)
        took = timed_ms(_fts5_query(db), query)
        db.close()
        return took

    # Only the query is timed: opening and closing are the sides' own work, outside it.
    times = in_turns((recuris_first, fts5_first), queries, measure=lambda side, query: side(query))
    return _row(kind, "first", *times)


def in_sessions(
    size: int, repeats: int = 5, session: int = 20, seed: int = 1, folder: str | None = None
) -> dict:
    """Time recall over a chat's sessions, with and without the context, beside FTS5.

    The same corpus texts as `query_classes`, every `session` of them one task, as a chat
    writes its turns: the default recall reads each found episode's window (CX1), the
    recall with `Context(width=0)` scores each alone, and FTS5_TOP is the plain query. The
    three take turns on each query (SB3), warm, per class. Returns
    {"size", "session", "load", "rows": per class, each side's ms and the ratios of the
    default to the other two, pair by pair}.
    """
    texts = corpus(size, seed)
    asked = class_queries(texts, repeats, seed + 1)
    load = os.getloadavg()[0]
    clock = ManualClock(size * 60.0 + DAY)
    rows = []
    with tempfile.TemporaryDirectory(dir=folder) as place:
        path = Path(place) / "recuris.db"
        plain = Path(place) / "fts5.db"
        store = SQLiteStore(path)
        fill(store, texts, session=session)
        _plain_fts5(plain, texts, store)
        store.close()
        alone = ManagerSettings(recall=RecallPolicy(context=Context(width=0)))
        for kind in CLASSES:
            managers = [
                MemoryManager(SQLiteStore(path), clock=clock),
                MemoryManager(SQLiteStore(path), clock=clock, settings=alone),
            ]
            db = sqlite3.connect(plain)
            sides = (_recall(managers[0]), _recall(managers[1]), _fts5_query(db))
            for side in sides:
                side(asked[kind][0])  # caches filled, the user's layers loaded
            times = in_turns(sides, asked[kind])
            for manager in managers:
                manager.store.close()
            db.close()
            context, single, fts5 = times
            rows.append(
                {
                    "class": kind,
                    "n": len(context),
                    "recall_ms": spread(context),
                    "alone_ms": spread(single),
                    "fts5_ms": spread(fts5),
                    "to_alone": ratios(context, single),
                    "to_fts5": ratios(context, fts5),
                    "above_fts5_ms": differences(context, fts5),
                }
            )
    return {"size": size, "session": session, "load": load, "rows": rows}


def access_counting(
    size: int, repeats: int = 5, batch: int = 10, seed: int = 1, folder: str | None = None
) -> dict:
    """Time recall counting use, at once and deferred, beside the same recall counting none.

    Three managers on one `SQLiteStore` file of `size` corpus texts take turns on the same
    `repeats` queries of the "document" class: `count_access=False`, counted at once (one
    commit a recall, Q6), and counted with `access_batch=batch` (one commit per `batch`
    recalls, G10). Returns {"size", "load", "n", "inspect_ms", "counted_ms", "batched_ms"
    (each median, lowest, highest), "counted_commits", "batched_commits" (per recall)}.
    """
    texts = corpus(size, seed)
    asked = class_queries(texts, repeats, seed + 1)["document"]
    load = os.getloadavg()[0]
    clock = ManualClock(size * 60.0 + DAY)
    with tempfile.TemporaryDirectory(dir=folder) as place:
        path = Path(place) / "recuris.db"
        store = SQLiteStore(path)
        fill(store, texts)
        store.close()
        stores = [SQLiteStore(path) for _ in range(3)]
        managers = [
            MemoryManager(store, clock=clock, settings=ManagerSettings(access_batch=every))
            for store, every in zip(stores, (1, 1, batch), strict=True)
        ]
        counts = (False, True, True)
        statements: list[list[str]] = [[], [], []]
        for store, seen in zip(stores, statements, strict=True):
            store._db.set_trace_callback(seen.append)
        sides = [_recall(manager, count) for manager, count in zip(managers, counts, strict=True)]
        # The first round fills the caches and is left out.
        times = [side[len(asked) :] for side in in_turns(sides, asked * 2)]
        for manager in managers:
            manager.store.close()
    commits = [seen.count("COMMIT") / len(asked * 2) for seen in statements]
    return {
        "size": size,
        "load": load,
        "n": len(asked),
        "inspect_ms": spread(times[0]),
        "counted_ms": spread(times[1]),
        "batched_ms": spread(times[2]),
        "counted_commits": commits[1],
        "batched_commits": commits[2],
    }
