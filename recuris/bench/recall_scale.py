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
"""

import itertools
import random
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from ..core.clock import DAY, ManualClock
from ..manager.manager import MemoryManager
from ..storage.item import MemoryItem
from ..storage.memory_store import InMemoryStore
from ..storage.sqlite_store import SQLiteStore
from .write_speed import _direct, _fill, _raw_fill, single_writes  # noqa: F401 (bench.py's)

__all__ = ["corpus", "against_fts5", "unrelated_items"]


def corpus(size: int, seed: int = 1, words: int = 12, prefix: str = "w") -> list[str]:
    """Return `size` texts of `words` words from a Zipf-like vocabulary of 20,000 words."""
    rng = random.Random(seed)
    vocabulary = [f"{prefix}{rank}" for rank in range(1, 20_001)]
    # Cumulative weights summed once: `choices` would sum all 20,000 again at every call.
    cumulative = list(itertools.accumulate(1 / rank for rank in range(1, 20_001)))
    return [" ".join(rng.choices(vocabulary, cum_weights=cumulative, k=words)) for _ in range(size)]


def _median_ms(function, queries: list[str]) -> float:
    times = []
    for query in queries:
        started = time.perf_counter()
        function(query)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def against_fts5(size: int, queries: int = 30, seed: int = 1) -> dict:
    """Time recall (first, warm) and a direct FTS5 query at `size` items; trace recall's memory."""
    texts = corpus(size, seed)
    rng = random.Random(seed + 1)
    asked = [" ".join(rng.sample(text.split(), 3)) for text in rng.sample(texts, queries)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "recuris.db"
        store = SQLiteStore(path)
        fill_s = _fill(store, texts)
        direct = _direct(Path(folder) / "fts.db", store)
        store.close()
        raw_fill_s = _raw_fill(direct, texts)
        statement = (
            "SELECT rowid, bm25(texts) FROM texts WHERE texts MATCH ? ORDER BY rank LIMIT 10"
        )
        fts_ms = _median_ms(
            lambda q: direct.execute(statement, (" OR ".join(q.split()),)).fetchall(), asked
        )
        # The first recall runs in a manager that has never seen the user, on a fresh connection.
        tracemalloc.start()
        manager = MemoryManager(SQLiteStore(path), clock=ManualClock(size * 60.0 + DAY))
        first_ms = _median_ms(
            lambda q: manager.recall(q, "u", top_k=10, count_access=False), asked[:1]
        )
        warm_ms = _median_ms(lambda q: manager.recall(q, "u", top_k=10, count_access=False), asked)
        peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        used_ms = _median_ms(lambda q: manager.recall(q, "u", top_k=10), asked[:10])
        manager.store.close()
        direct.close()
    return {
        "fill_items_per_s": size / fill_s,
        "raw_fill_items_per_s": size / raw_fill_s,
        "fts5_ms": fts_ms,
        "first_ms": first_ms,
        "warm_ms": warm_ms,
        "counted_ms": used_ms,
        "peak_mb": peak_mb,
    }


def unrelated_items(related: int, unrelated: int, queries: int = 30, seed: int = 1) -> float:
    """Time warm recall (median ms) in memory: `related` items, plus `unrelated` sharing no term."""
    rng = random.Random(seed + 1)
    store = InMemoryStore()
    texts = corpus(related, seed) + corpus(unrelated, seed + 7, prefix="x")
    manager = MemoryManager(store, clock=ManualClock(len(texts) * 60.0))
    for offset in range(0, len(texts), 10_000):
        store.put(
            [
                MemoryItem(
                    id=f"i{offset + n}",
                    user_id="u",
                    level="episodic",
                    content=text,
                    created_at=(offset + n) * 60.0,
                )
                for n, text in enumerate(texts[offset : offset + 10_000])
            ]
        )
    asked = [" ".join(rng.sample(text.split(), 3)) for text in rng.sample(texts[:related], queries)]
    return _median_ms(lambda q: manager.recall(q, "u", top_k=10, count_access=False), asked)
