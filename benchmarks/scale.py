"""Costs at scale: the forgetting cycle and semantic writes from 10,000 to a million items.

Document 004 §2 runs a forgetting cycle over all of a user's memory and quotes MemoryBank
slowing down past a few hundred items; docs/benchmarks/speed.md measures up to 100,000.
Here each cost is measured at growing sizes and printed with its growth exponent,
log(t2 / t1) / log(n2 / n1): 1 is linear, 2 quadratic; the forgetting cycle on either store.
The forgetting workload merges at every size: each memory holds six words of a 2,000-word
Zipf vocabulary and two specific tokens (names, numbers) from a pool that grows with the
store, and one in ten is a near-copy of a recent one. Each measurement runs in a fresh child
interpreter, so that its peak memory is its own.

Invariants:
    SZ1 the workload is a pure function of (size, seed), is written by batched `put` from a
        generator (never held whole), and merges at every size.
    SZ2 progress goes to standard error, only when it is a terminal and not `quiet`; the
        tables on standard output are the same either way.
    SZ3 each growth exponent is log(t2 / t1) / log(n2 / n1), taken between two sizes' runs of
        one round of `in_rounds`, whose sizes take turns (SB3), over the rounds both ran; the
        semantic-write measure writes facts through the manager, about half of them
        superseding the subject's valid fact.
"""

import functools
import gc
import math
import multiprocessing
import random
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from benchmarks.side_by_side import in_turns
from recuris.core.clock import DAY, ManualClock
from recuris.manager.manager import MemoryManager
from recuris.storage.item import MemoryItem
from recuris.storage.memory_store import InMemoryStore
from recuris.storage.sqlite_store import SQLiteStore

__all__ = [
    "Progress",
    "exponent",
    "in_rounds",
    "round_exponents",
    "memories",
    "forgetting_cycle",
    "semantic_writes",
]

STORES = ("sqlite", "memory")  # the stores a forgetting cycle can run on
HORIZON = 60 * DAY  # the workload's memories were last used over the 60 days before the cycle


class Progress:
    """Report phase, items done, rate and elapsed time on one standard error line (SZ2)."""

    def __init__(self, phase: str, total: int, quiet: bool = False, stream=None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.phase = phase
        self.total = total
        self.started = time.perf_counter()
        self.shown = 0.0
        self.live = not quiet and self.stream.isatty()

    def update(self, done: int) -> None:
        now = time.perf_counter()
        if self.live and (now - self.shown >= 0.5 or done >= self.total):
            self.shown = now
            elapsed = now - self.started
            rate = done / elapsed if elapsed > 0 else 0.0
            line = f"{self.phase}: {done:,} of {self.total:,}, {rate:,.0f}/s, {elapsed:.0f} s"
            self.stream.write(f"\r{line}   ")
            self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()


def exponent(size_a: int, seconds_a: float, size_b: int, seconds_b: float) -> float:
    """Return the growth exponent between two measurements: log(t2 / t1) / log(n2 / n1)."""
    return math.log(seconds_b / seconds_a) / math.log(size_b / size_a)


def memories(
    size: int, seed: int = 7, user: str = "u", batch: int = 1000
) -> Iterator[list[MemoryItem]]:
    """Yield the forgetting workload in batches (SZ1)."""
    rng = random.Random(seed)
    common = [
        f"{rng.choice('bdfgklmnprstvz')}{rng.choice('aeiou')}{rng.choice('lmnrst')}{n}"
        for n in range(2000)
    ]
    cumulative = list(_accumulate(1 / rank for rank in range(1, len(common) + 1)))
    pool = max(100, size // 4)
    recent = []
    items = []
    for n in range(size):
        if recent and rng.random() < 0.1:
            words, used, importance = list(rng.choice(recent))
            words = [*words[:-1], rng.choices(common, cum_weights=cumulative)[0]]  # a near-copy
            used += rng.uniform(0, DAY)
        else:
            names = [f"n{rng.randrange(pool)}", f"t{rng.randrange(pool)}"]
            words = [*names, *rng.choices(common, cum_weights=cumulative, k=6)]
            used = rng.uniform(0, HORIZON)
            importance = rng.uniform(0.1, 1.0)
            recent = [*recent[-99:], (words, used, importance)]
        items.append(
            MemoryItem(
                id=f"{user}-{n}",
                user_id=user,
                level="episodic",
                content=" ".join(words),
                created_at=used,
                last_access_at=used,
                importance=importance,
            )
        )
        if len(items) == batch:
            yield items
            items = []
    if items:
        yield items


def _accumulate(values) -> Iterator[float]:
    total = 0.0
    for value in values:
        total += value
        yield total


def _in_child(function, *arguments):
    # A fresh interpreter measures alone: its peak memory is the measurement's, not the
    # bench's (a forked child would start from the parent's resident size).
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(function, arguments)


def _peak_mb() -> float:
    # VmHWM is the peak of this address space only; ru_maxrss survives exec, so a spawned
    # child would report its parent's peak if that was higher.
    try:
        status = Path("/proc/self/status").read_text()
        return (
            next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
            / 1024
        )
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux and BSD report KiB


def _cycle(size: int, seed: int, quiet: bool, kind: str) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "cycle.db") if kind == "sqlite" else InMemoryStore()
        progress = Progress(f"fill {size:,}", size, quiet)
        written = 0
        started = time.perf_counter()
        for batch in memories(size, seed):
            store.put(batch)
            written += len(batch)
            progress.update(written)
        progress.close()
        filled = time.perf_counter() - started
        clock = ManualClock(HORIZON)
        manager = MemoryManager(store, clock=clock)
        progress = Progress(f"cycle {size:,}", size, quiet)
        collector = _CollectorClock()
        gc.callbacks.append(collector)
        started = time.perf_counter()
        cpu = time.process_time()
        report = manager.run_decay("u", itemized=False, on_batch=progress.update)
        seconds = time.perf_counter() - started
        cpu = time.process_time() - cpu
        gc.callbacks.remove(collector)
        progress.close()
        left = sum(len(batch) for batch in store.iterate("u"))
        store.close()
    if left != report.size_after:
        raise AssertionError(
            f"the report says {report.size_after} items are left, the store holds {left}"
        )
    return {
        "fill_s": filled,
        "cycle_s": seconds,
        "cycle_cpu_s": cpu,
        "cycle_gc_s": collector.seconds,  # of the cycle's seconds, in the garbage collector
        "forgotten": report.forgotten_count,
        "merged": report.merged_count,
        "left": left,
        "peak_mb": _peak_mb(),
    }


def forgetting_cycle(size: int, seed: int = 7, quiet: bool = False, store: str = "sqlite") -> dict:
    """Fill a store with `size` memories by batched put, then time one full cycle over it.

    `store` is "sqlite" (a SQLiteStore in a temporary folder) or "memory" (an InMemoryStore,
    the manager's default). Raises ValueError for any other.
    """
    if store not in STORES:
        raise ValueError(f"store must be one of {STORES}, not {store!r}")
    return _in_child(_cycle, size, seed, quiet, store)


class _CollectorClock:
    """Seconds the cyclic garbage collector spent while installed (it walks every live object)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.started = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self.started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self.started


def _writes(count: int, seed: int, quiet: bool, sqlite: bool) -> dict:
    collector = _CollectorClock()
    gc.callbacks.append(collector)
    folder = tempfile.TemporaryDirectory()
    store = SQLiteStore(Path(folder.name) / "facts.db") if sqlite else None
    rng = random.Random(seed)
    manager = MemoryManager(store, clock=ManualClock(0))
    progress = Progress(f"semantic writes {count:,}", count, quiet)
    subjects = max(1, count // 2)
    current = {}
    superseded = 0
    started = time.perf_counter()
    for n in range(count):
        subject = f"setting {rng.randrange(subjects)}"
        value = next(v for v in (f"v{rng.randrange(3)}", "v3", "v4") if v != current.get(subject))
        superseded += subject in current
        current[subject] = value
        manager.write(f"{subject}: {value}", "u", level="semantic")
        if n % 1000 == 0:
            progress.update(n)
    seconds = time.perf_counter() - started
    progress.update(count)
    progress.close()
    gc.callbacks.remove(collector)
    if store is not None:
        store.close()
    folder.cleanup()
    return {
        "seconds": seconds,
        "gc_s": collector.seconds,
        "superseded": superseded,
        "peak_mb": _peak_mb(),
    }


def semantic_writes(count: int, seed: int = 8, quiet: bool = False, sqlite: bool = False) -> dict:
    """Time `count` semantic writes through the manager (in memory or SQLite), half superseding."""
    return _in_child(_writes, count, seed, quiet, sqlite)


def in_rounds(
    measure: Callable[[int], dict], sizes: Sequence[int], rounds: Sequence[int]
) -> list[list[dict]]:
    """Run `measure(size)` at every size once a round, the sizes taking turns (SZ3, SB3).

    `rounds` gives each size its number of runs: a size with fewer runs than another runs in
    the first rounds only. Returns each size's runs, round by round. Raises ValueError if
    there are not as many counts as sizes.
    """
    # A run of a few seconds moves by several percent with the machine's minute, and a growth
    # exponent over a tenfold size by a few hundredths: two sizes' runs of one round, one
    # right after the other, met the machine in much the same state.
    sides = [
        (functools.partial(measure, size), count)
        for size, count in zip(sizes, rounds, strict=True)
    ]

    def run(side: tuple[Callable[[], dict], int], round_number: int) -> dict | None:
        work, count = side
        return work() if round_number < count else None  # done with its rounds: skipped

    ran = in_turns(sides, range(max(rounds, default=0)), measure=run)
    return [[result for result in results if result is not None] for results in ran]


def round_exponents(
    smaller: int,
    smaller_runs: list[dict],
    larger: int,
    larger_runs: list[dict],
    seconds: Callable[[dict], float],
) -> list[float]:
    """Return each round's growth exponent, between the two sizes' runs of that round (SZ3).

    The rounds paired are those both sizes ran: the first ones of each (`in_rounds`).
    """
    return [
        exponent(smaller, seconds(before), larger, seconds(after))
        for before, after in zip(smaller_runs, larger_runs)
    ]
