"""Side by side: two ways of doing one thing, timed in turns, each figure with its spread.

Document 003 §6 asks for cost measured in latency; a cost is only a figure beside what a
user would run instead. Every speed bench here times recuris and its plainest baseline the
same way: the sides take turns (A, B, A, B, ...), so that both meet the machine, its cache
and its neighbours in the same state, and every figure is reported as the median of its
runs with the lowest and the highest, never as one number.

Invariants:
    SB1 `Turns.take` runs every side once, in the order given at its first take (reversed
        if the turns were made `reversed_first`) and in the reverse order at the next (SB3's
        order, take by take), and adds up each side's wall-clock and CPU seconds, under the
        side's name and under `<name>_cpu`.
    SB2 `spread` returns the median, lowest and highest of its values and how many there
        are; `ratios` and `differences` spread a comparison over its pairs of turns, never
        take it between two medians.
    SB3 `in_turns` runs every query on every side, the sides in the order given for one
        query and in the reverse order for the next (A, B, C, then C, B, A), so that no
        side always meets the machine first and sides next to each other in the order
        always run one right after the other; it keeps what `measure` returns of each run,
        by default its milliseconds.
    SB4 `by_size` prints the table's header, a rule of as many columns, the rows `measure`
        prints for each size in the order given, then the load average before and after.
"""

import argparse
import os
import statistics
import time
from collections.abc import Callable, Iterable, Sequence

__all__ = [
    "spread",
    "shown",
    "ratios",
    "differences",
    "Turns",
    "timed_ms",
    "processor_ms",
    "in_turns",
    "by_size",
]


def spread(values: list[float]) -> dict:
    """Return the median, lowest and highest of the values, and how many there are (SB2).

    Raises statistics.StatisticsError if there are none.
    """
    return {
        "n": len(values),
        "median": statistics.median(values),
        "low": min(values),
        "high": max(values),
    }


def shown(figure: dict, digits: int = 2) -> str:
    """Show a spread as a table cell does: `median (lowest-highest)`, to `digits` places."""
    low = figure["low"]
    high = figure["high"]
    return f"{figure['median']:.{digits}f} ({low:.{digits}f}-{high:.{digits}f})"


def ratios(ours: Sequence[float], theirs: Sequence[float]) -> dict:
    """Return the spread of ours / theirs, taken pair by pair (SB2).

    Raises ValueError if the sides have not as many values.
    """
    return spread([mine / other for mine, other in zip(ours, theirs, strict=True)])


def differences(ours: Sequence[float], theirs: Sequence[float]) -> dict:
    """Return the spread of ours - theirs, taken pair by pair (SB2).

    Raises ValueError if the sides have not as many values.
    """
    return spread([mine - other for mine, other in zip(ours, theirs, strict=True)])


def timed_ms(function: Callable, argument) -> float:
    """Call `function(argument)`; return the milliseconds it took, wall clock."""
    started = time.perf_counter()
    function(argument)
    return (time.perf_counter() - started) * 1000


def processor_ms(function: Callable, argument) -> float:
    """Call `function(argument)`; return the milliseconds of processor time it took."""
    started = time.process_time()
    function(argument)
    return (time.process_time() - started) * 1000


def in_turns(
    sides: Sequence[Callable], queries: Iterable, measure: Callable = timed_ms
) -> list[list]:
    """Run each query on every side in turns (SB3); return each side's measures, in order.

    A run is measured by `measure(side, query)`: its milliseconds unless told otherwise.
    """
    measures: list[list] = [[] for _ in sides]
    forward = list(range(len(sides)))
    for turn, query in enumerate(queries):
        for side in forward if turn % 2 == 0 else reversed(forward):
            measures[side].append(measure(sides[side], query))
    return measures


class Turns:
    """Wall-clock and CPU seconds of each side, added up turn by turn (SB1)."""

    def __init__(self, reversed_first: bool = False) -> None:
        self.seconds: dict[str, float] = {}
        # Runs of one take each alternate through this: the second run's turns reversed first.
        self.taken = int(reversed_first)

    def take(self, sides: dict[str, Callable[[], object]]) -> None:
        """Run each side's work once, adding up the seconds each took (SB1).

        The sides run in the order given at the first take, reversed at the next, and so on.
        """
        order = list(sides.items())
        if self.taken % 2:
            order.reverse()  # no side always meets the machine first (SB1)
        self.taken += 1
        for side, work in order:
            wall = time.perf_counter()
            cpu = time.process_time()
            work()
            cpu = time.process_time() - cpu
            wall = time.perf_counter() - wall
            self.seconds[f"{side}_cpu"] = self.seconds.get(f"{side}_cpu", 0.0) + cpu
            self.seconds[side] = self.seconds.get(side, 0.0) + wall


def by_size(
    argv: Sequence[str] | None,
    description: str,
    header: str,
    measure: Callable[[int, int, int, int], None],
    sizes: Sequence[int],
) -> int:
    """Print a table of sizes (SB4): parse --sizes, --rounds, --queries and --seed, then call
    `measure(size, rounds, queries, seed)` for each size; return 0."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(sizes))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=5, help="per class and round")
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    print(header)
    print("|" + " --- |" * (header.count("|") - 1))
    for size in arguments.sizes:
        measure(size, arguments.rounds, arguments.queries, arguments.seed)
    print(f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    return 0
