"""Speed and scale: the figures behind the design's claims, measured side by side in one run.

Document 004 §2 quotes MemoryBank: past a few hundred items retrieval slows (120 ms to 410 ms)
and recall falls. These measurements check recuris where it could fail the same way: the
inverted index against the linear scan it must equal, prompt size over a long task against
full history, a decay cycle over a large store, and SQLite writes, reopen and recall.
Each comparison is measured in the same run on the same data. Run from a clone's root,
`python -m benchmarks.speed [--quick] [--large] [--quiet]` prints every speed and scale table
of docs/benchmarks.md: these measures, recall and writes beside plain SQLite
(recall_scale.py, write_speed.py) and the costs at growing sizes (scale.py).

Invariants:
    SP1 every indexed top-k reported is checked equal to the linear scan's on the same query.
    SP2 `python -m benchmarks.speed` prints one markdown table, a row per measure, each of its
        comparisons measured in the same run; it writes only to temporary folders (BC1).
"""

import argparse
import math
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import recall_scale, scale, write_speed
from benchmarks.side_by_side import shown, spread
from recuris.bench.command import table_row
from recuris.tour.mock_environment import MockEnvironment
from recuris.tour.simulation import simulate
from recuris.core.agent import AgentSettings, RecurisAgent
from recuris.core.clock import DAY, ManualClock
from recuris.core.decay import DecayManager
from recuris.core.episodic import EpisodicMemory
from recuris.core.mock_llm import ScriptedLLM
from recuris.core.records import Episode
from recuris.core.text import estimate_tokens
from recuris.core.working import WorkingMemory, WorkingSettings
from recuris.manager.manager import MemoryManager
from recuris.storage.item import MemoryItem
from recuris.storage.sqlite_store import SQLiteStore

__all__ = ["retrieval", "prompt_growth", "decay_cycle", "sqlite", "percentiles", "main"]


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


def _speed(quick: bool, large: bool = False) -> None:
    """Rows for retrieval, prompt growth, a decay cycle, a year, SQLite and recall at scale."""
    sizes = (1_000, 5_000) if quick else (1_000, 10_000, 100_000)
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}\n"
    )
    table_row("measure", "size", "recuris", "baseline", "ratio")
    table_row("---", "---", "---", "---", "---")
    for size in sizes:
        timing = retrieval(size, queries=20 if quick else 50)
        p50, p95 = timing["indexed"]
        s50, s95 = timing["scan"]
        table_row(
            "episodic retrieval p50 / p95 (ms): index vs scan, same top-5",
            f"{size:,} episodes",
            f"{p50:.2f} / {p95:.2f}",
            f"{s50:.2f} / {s95:.2f}",
            f"1/{s50 / max(p50, 1e-9):.0f}",
        )
    steps = 200 if quick else 1000
    growth = prompt_growth(steps, marks=(10, 50, 100, steps))
    ours = growth["recuris"]
    full = growth["full history"]
    for mark in (10, 50, 100, steps):
        table_row(
            f"prompt tokens at step {mark}",
            f"{steps}-step task",
            ours[mark],
            full[mark],
            f"{ours[mark] / full[mark]:.2f}",
        )
    table_row(
        f"prompt tokens, step {steps} / step 50",
        "",
        f"{ours[steps] / ours[50]:.2f}",
        f"{full[steps] / full[50]:.2f}",
        "",
    )
    cycle = decay_cycle(sizes[-1])
    table_row(
        "decay cycle (s): decide / manager forget + merge",
        f"{sizes[-1]:,} items",
        f"{cycle['decide_s']:.3f} / {cycle['manager_cycle_s']:.3f}",
        "",
        f"{cycle['forgotten']:,} forgotten, {cycle['after']:,} left",
    )
    year = simulate(days=90 if quick else 365)
    table_row(
        f"store size after {year.days} simulated days, {year.per_day} a day",
        f"{year.written:,} written",
        f"{year.sizes[-1]} (plateau {year.plateau:.0f})",
        f"{year.written:,} (no forgetting)",
        f"1/{year.written / max(1, year.sizes[-1]):.0f}",
    )
    store = sqlite(sizes[-1])
    (r50, r95) = store["recall"]
    table_row(
        "SQLite: items written per second, batches of 1,000",
        f"{sizes[-1]:,} items",
        f"{store['items_per_s']:,.0f}",
        "",
        "",
    )
    table_row(
        "SQLite: reopen / first recall (ms)",
        f"{sizes[-1]:,} items",
        f"{store['reopen_ms']:.1f} / {store['first_recall_ms']:.0f}",
        "",
        "",
    )
    table_row(
        "SQLite: manager recall p50 / p95 (ms), BM25 in SQL",
        f"{sizes[-1]:,} items",
        f"{r50:.1f} / {r95:.1f}",
        "",
        "",
    )
    _recall_at_scale(sizes[-1:] + ((1_000_000,) if large else ()), quick)


def _runs(size: int) -> int:
    """Return how many times a scale or write measure runs at a size: fewer at a million.

    Five at most sizes; three from a million items, which keeps `--large` within a
    developer's session (docs/benchmarks/scale.md says so).
    """
    return 3 if size >= 1_000_000 else 5


def _recall_at_scale(sizes: tuple[int, ...], quick: bool) -> None:
    """Rows for recall by query class beside FTS5, access counting, writes beside plain SQL."""
    peaks = {}
    for size in sizes:
        # n of each row: the queries of a class differ in what they find (a rare word's 20 to
        # 50 documents), so nine at 100,000; five at a million, where one common word's two
        # turns take a second or two.
        classes = recall_scale.query_classes(size, repeats=5 if size >= 1_000_000 else 9)
        peaks[size] = classes["peak_mb"]
        for row in classes["rows"]:
            above = row["above_ms"]
            # A rare word's FTS5 query takes tens of microseconds: its goal is a difference.
            compared = (
                f"+{above['median']:.2f} ms ({above['low']:+.2f} to {above['high']:+.2f})"
                if row["class"] == "rare"
                else shown(row["ratio"])
            )
            table_row(
                f"SQLite recall (count_access=False) vs one FTS5 query, {row['class']} words, "
                f"{row['state']}: ms, median (lowest-highest) of {row['n']}, load "
                f"{row['load']:.1f}",
                f"{size:,} items",
                shown(row["recall_ms"]),
                shown(row["fts5_ms"]),
                compared,
            )
    if len(peaks) > 1:
        small = min(peaks)
        large = max(peaks)
        table_row(
            "SQLite: recall's peak traced memory (MB), largest vs smallest store",
            f"{large:,} / {small:,} items",
            f"{peaks[large]:.2f}",
            f"{peaks[small]:.2f}",
            f"{peaks[large] / peaks[small]:.2f}",
        )
    # A chat's store: the same texts in sessions of 20, where recall reads each found
    # episode's window (chapter manager/context); beside the recall without it and FTS5.
    sessions = recall_scale.in_sessions(sizes[0], repeats=9)  # n as the rows above
    for row in sessions["rows"]:
        above = row["above_fts5_ms"]
        table_row(
            f"SQLite recall in sessions of {sessions['session']}, with its context vs without "
            f"(ms), {row['class']} words, warm, median (lowest-highest) of {row['n']}; vs one "
            f"FTS5 query {shown(row['to_fts5'])}, {above['median']:+.2f} ms; load "
            f"{sessions['load']:.1f}",
            f"{sizes[0]:,} items",
            shown(row["recall_ms"]),
            shown(row["alone_ms"]),
            shown(row["to_alone"]),
        )
    counting = recall_scale.access_counting(sizes[0])
    table_row(
        "SQLite recall counting accesses: at once vs batched by 10 (ms, commits per recall); "
        f"not counting {shown(counting['inspect_ms'])} ms",
        f"{sizes[0]:,} items",
        f"{shown(counting['counted_ms'])}; {counting['counted_commits']:.2f}",
        f"{shown(counting['batched_ms'])}; {counting['batched_commits']:.2f}",
        "",
    )
    for size in sizes:
        # At a million, in batches only: one transaction of a million rows adds minutes to the
        # run and its ratio stays within the batches' (docs/benchmarks/write-speed.md).
        for batch in (10_000,) if size >= 1_000_000 else (10_000, None):
            writes = write_speed.batched_writes(size, runs=_runs(size), batch=batch)
            shape = "in batches of 10,000" if batch else "in one transaction"
            table_row(
                f"SQLite put {shape} vs plain INSERTs + FTS5 (s), median (lowest-highest) of "
                f"{writes['ratio']['n']}, load {writes['load'][0]:.1f}",
                f"{size:,} items",
                shown(writes["put_s"]),
                shown(writes["plain_s"]),
                f"{shown(writes['ratio'])} (CPU {writes['cpu_ratio']['median']:.2f})",
            )
    for synchronous in ("FULL", "NORMAL"):
        single = write_speed.single_write_runs(
            runs=5, count=100 if quick else 500, synchronous=synchronous
        )
        table_row(
            f"one MemoryManager.write vs one plain row + FTS5 entry, synchronous={synchronous} "
            f"(ms), median (lowest-highest) of {single['ratio']['n']} runs, load "
            f"{single['load'][0]:.1f}",
            "one item a transaction",
            shown(single["write_ms"], 3),
            shown(single["raw_ms"], 3),
            f"{shown(single['ratio'])} (CPU {single['cpu_ratio']['median']:.2f})",
        )
    related, unrelated = (2_000, 20_000) if quick else (10_000, 100_000)
    alone, crowded = recall_scale.unrelated_items(related, unrelated)
    exponent = math.log(crowded / alone) / math.log((related + unrelated) / related)
    table_row(
        "in-memory recall p50 (ms): with vs without items sharing no term",
        f"{related:,} + {unrelated:,}",
        f"{crowded:.1f}",
        f"{alone:.1f}",
        f"{crowded / alone:.2f} (exponent {exponent:.2f})",
    )


def _growth(
    sizes: tuple[int, ...], runs: list[list[dict]], n: int, key: str, apart: str | None = None
) -> str:
    """Show the exponent from the previous size, over rounds (SZ3); with `apart`, less those."""
    if not n:
        return ""
    smaller = sizes[n - 1]
    exponents = scale.round_exponents(
        smaller, runs[n - 1], sizes[n], runs[n], lambda run: run[key]
    )
    text = f"exponent {shown(spread(exponents))} from {smaller:,}"
    if apart is None:
        return text
    less = scale.round_exponents(
        smaller, runs[n - 1], sizes[n], runs[n], lambda run: run[key] - run[apart]
    )
    return text + f"; {shown(spread(less))} without GC"


def _median(runs: list[dict], key: str) -> float:
    """Return the median of the runs' `key`."""
    return statistics.median(run[key] for run in runs)


def _scale(sizes: tuple[int, ...], quiet: bool) -> None:
    """Rows for the forgetting cycle and semantic writes at each size, with growth exponents."""
    for store, name in (("sqlite", "SQLite"), ("memory", "InMemoryStore")):
        cycles = scale.in_rounds(
            lambda size, store=store: scale.forgetting_cycle(size, quiet=quiet, store=store),
            sizes,
            [_runs(size) for size in sizes],
        )
        for n, (size, runs) in enumerate(zip(sizes, cycles)):
            counted = runs[0]  # what a cycle forgets and merges depends on the size alone (SZ1)
            table_row(
                f"forgetting cycle, {name} filled by batched put: cycle s, median "
                f"(lowest-highest) of {len(runs)}; its CPU s and cyclic GC s, and the fill's s, "
                "medians; highest peak MB",
                f"{size:,} items",
                f"{shown(spread([run['cycle_s'] for run in runs]))}; "
                f"CPU {_median(runs, 'cycle_cpu_s'):.2f}; GC {_median(runs, 'cycle_gc_s'):.2f}; "
                f"fill {_median(runs, 'fill_s'):.1f}; {max(run['peak_mb'] for run in runs):.0f} MB",
                f"{counted['forgotten']:,} forgotten, {counted['merged']:,} merged, "
                f"{counted['left']:,} left",
                _growth(sizes, cycles, n, "cycle_s"),
            )
    # Each SQLite write commits (and waits for the disk): a fifth of the sizes keeps the run short.
    for where, counts in (("in memory", sizes), ("SQLite", tuple(size // 5 for size in sizes[:2]))):
        writes = scale.in_rounds(
            lambda size, where=where: scale.semantic_writes(
                size, quiet=quiet, sqlite=where == "SQLite"
            ),
            counts,
            [_runs(size) for size in counts],
        )
        for n, (size, runs) in enumerate(zip(counts, writes)):
            per_write = spread([run["seconds"] / size * 1e6 for run in runs])
            # The collector walks every live object, so its share grows with the heap: shown apart.
            table_row(
                f"semantic writes through the manager, {where}: µs per write, median "
                f"(lowest-highest) of {len(runs)}; total s and cyclic GC s, medians",
                f"{size:,} writes",
                f"{shown(per_write, 0)}; total {_median(runs, 'seconds'):.2f}; "
                f"GC {_median(runs, 'gc_s'):.2f}",
                f"{runs[0]['superseded']:,} superseded a fact",
                _growth(counts, writes, n, "seconds", "gc_s"),
            )


def main(argv: list[str] | None = None) -> int:
    """Print the speed and scale table (SP2); return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.speed", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer queries")
    parser.add_argument(
        "--large", action="store_true", help="also measure costs at 1,000,000 items"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on standard error")
    arguments = parser.parse_args(argv)
    _speed(arguments.quick, arguments.large)
    sizes = (1_000, 10_000) if arguments.quick else (10_000, 100_000)
    _scale(sizes + ((1_000_000,) if arguments.large else ()), arguments.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
