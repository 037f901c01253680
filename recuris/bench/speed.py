"""Speed and scale: the figures behind the design's claims, measured side by side in one run.

Document 004 §2 quotes MemoryBank: past a few hundred items retrieval slows (120 ms to 410 ms)
and recall falls. These measurements check recuris where it could fail the same way: the
inverted index against the linear scan it must equal, prompt size over a long task against
full history, a decay cycle over a large store, and SQLite writes, reopen and recall.
Each comparison is measured in the same run on the same data; `bench.py` prints the table.

Invariants:
    SP1 every indexed top-k reported is checked equal to the linear scan's on the same query.
"""

import random
import statistics
import tempfile
import time
from pathlib import Path

from ..core.agent import AgentSettings, RecurisAgent
from ..core.clock import DAY, ManualClock
from ..core.decay import DecayManager
from ..core.episodic import EpisodicMemory
from ..core.mock_llm import ScriptedLLM
from ..core.records import Episode
from ..core.text import estimate_tokens
from ..core.working import WorkingMemory, WorkingSettings
from ..manager.manager import MemoryManager
from ..storage.item import MemoryItem
from ..storage.sqlite_store import SQLiteStore
from .mock_environment import MockEnvironment

__all__ = ["retrieval", "prompt_growth", "decay_cycle", "sqlite", "percentiles"]


def percentiles(seconds: list[float]) -> tuple[float, float]:
    """Return (p50, p95) in milliseconds."""
    ordered = sorted(seconds)
    return statistics.median(ordered) * 1000, ordered[
        min(len(ordered) - 1, int(0.95 * len(ordered)))
    ] * 1000


def _words(rng: random.Random, count: int) -> list[str]:
    return [
        "".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(3))
        for _ in range(count)
    ]


def retrieval(size: int, queries: int = 50, seed: int = 1) -> dict:
    """Time `retrieve` (indexed) and `retrieve_by_scan` on `size` synthetic episodes (SP1)."""
    rng = random.Random(seed)
    vocabulary = _words(rng, 5000)
    types = [f"type{n}" for n in range(200)]
    memory = EpisodicMemory()
    for n in range(size):
        goal = " ".join(rng.sample(vocabulary, 5))
        memory.add_episode(
            Episode(task_type=rng.choice(types), goal=goal, status="success", created_at=n)
        )
    timings = {"indexed": [], "scan": []}
    for _ in range(queries):
        query = f"{rng.choice(types)} " + " ".join(rng.sample(vocabulary, 3))
        started = time.perf_counter()
        indexed = memory.retrieve(query, top_k=5, threshold=0.1)
        timings["indexed"].append(time.perf_counter() - started)
        started = time.perf_counter()
        scanned = memory.retrieve_by_scan(query, top_k=5, threshold=0.1)
        timings["scan"].append(time.perf_counter() - started)
        if indexed != scanned:
            raise AssertionError(f"SP1: index and scan disagree on {query!r}")
    return {name: percentiles(values) for name, values in timings.items()}


def prompt_growth(steps: int = 1000, marks: tuple[int, ...] = (10, 50, 100, 1000)) -> dict:
    """Prompt tokens at each mark of a long task: recuris's window and summary vs full history."""
    result = {}
    # Full history keeps every step: a window past the task's length and no token budget.
    conditions = (
        ("recuris", WorkingSettings()),
        ("full history", WorkingSettings(window_size=steps + 1, token_budget=None)),
    )
    for name, settings in conditions:
        llm = ScriptedLLM([f"process record {n:05d} of the import" for n in range(steps)])
        agent = RecurisAgent(
            WorkingMemory(settings),
            EpisodicMemory(),
            llm,
            AgentSettings(max_steps=steps + 1),
            clock=ManualClock(0),
        )
        agent.run(
            "import every customer record without duplicates",
            "import",
            MockEnvironment(default="ok: saved"),
        )
        result[name] = {
            mark: estimate_tokens(llm.prompts[mark - 1])
            for mark in marks
            if mark <= len(llm.prompts)
        }
    return result


def _items(count: int, user: str, rng: random.Random, start: float = 0.0) -> list[MemoryItem]:
    vocabulary = _words(rng, 3000)
    items = []
    for n in range(count):
        content = " ".join(rng.sample(vocabulary, 8))
        created = start + rng.uniform(0, 60 * DAY)
        importance = rng.uniform(0.1, 1.0)
        items.append(
            MemoryItem(
                id=f"{user}-{n}",
                user_id=user,
                level="episodic",
                content=content,
                created_at=created,
                importance=importance,
            )
        )
    return items


def decay_cycle(size: int, seed: int = 2) -> dict:
    """Time one decision cycle over `size` items, and one full manager cycle (forget + merge)."""
    rng = random.Random(seed)
    items = _items(size, "u", rng)
    clock = ManualClock(60 * DAY)
    decay = DecayManager(clock=clock)
    started = time.perf_counter()
    report = decay.run_cycle(items)
    decide = time.perf_counter() - started
    manager = MemoryManager(clock=clock, decay=decay)
    manager.store.put(items)
    started = time.perf_counter()
    full = manager.run_decay("u")
    cycle = time.perf_counter() - started
    return {
        "decide_s": decide,
        "forgotten": len(report.forgotten),
        "manager_cycle_s": cycle,
        "after": full.size_after,
    }


def sqlite(size: int, batch: int = 1000, seed: int = 3) -> dict:
    """Items written per second in batches, reopen time, and recall latency at `size` items."""
    rng = random.Random(seed)
    items = _items(size, "u", rng)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        store = SQLiteStore(path)
        started = time.perf_counter()
        for offset in range(0, size, batch):
            store.put(items[offset : offset + batch])
        written = time.perf_counter() - started
        store.close()
        started = time.perf_counter()
        reopened = SQLiteStore(path, create=False)
        reopen = time.perf_counter() - started
        manager = MemoryManager(reopened, clock=ManualClock(60 * DAY))
        queries = [items[rng.randrange(size)].content.split()[0] for _ in range(21)]
        started = time.perf_counter()
        manager.recall(
            queries[0], "u", count_access=False
        )  # a fresh manager: nothing of the user loaded yet
        first = time.perf_counter() - started
        latencies = []
        for query in queries[1:]:
            started = time.perf_counter()
            manager.recall(query, "u", count_access=False)
            latencies.append(time.perf_counter() - started)
        reopened.close()
    return {
        "items_per_s": size / written,
        "reopen_ms": reopen * 1000,
        "first_recall_ms": first * 1000,
        "recall": percentiles(latencies),
    }
