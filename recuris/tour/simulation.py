"""Simulation: a year of memories under daily forgetting cycles, to see the store level off.

Document 004 §2 quotes the cost of never forgetting (MemoryBank: retrieval slows and recall
falls as memory grows; an unmaintained store where half the items are never hit) and
proposes daily decay cycles with retrieval reinforcement. This module runs that design on
the real manager: memories arrive at a constant rate for a simulated year, a few "habits"
are recalled regularly, and a cycle runs every night. The figures in docs/evolution/forgetting.md
come from `simulate()`; the tests check the same shape on a shorter run. `year_plot` draws
the store's size by day (`python -m recuris.simulation --svg FILE`).

Invariants:
    YR1 a simulation is a pure function of its arguments (its clock and random source
        are its own), so its figures can be quoted and reproduced.
"""

import argparse
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from ..core.clock import DAY, ManualClock
from ..core.decay import DecayManager, DecaySettings
from ..manager.entry import run_piped
from ..manager.cli_arguments import file_to_write
from ..manager.manager import MemoryManager
from ..storage.memory_store import InMemoryStore
from .svg import Reference, Series, line_plot

__all__ = ["simulate", "SimulationReport", "year_plot"]

TOPICS = "billing deploy login search export invoice backup alerts onboarding quota".split()
VERBS = "checked fixed reviewed discussed reported tested".split()
# A vocabulary of 400 syllable pairs: enough that two fresh notes rarely look alike.
WORDS = [
    a + b
    for a in "ka lo mi nu pe ra si to vu ze bo du fa gi hu jo ly qi we xo".split()
    for b in "n r s t l m k d p g b v z x c f h j q w".split()
]


@dataclass(frozen=True)
class SimulationReport:
    """Store size by day, and who survived."""

    days: int
    per_day: int
    sizes: tuple[int, ...]  # items in the store at the end of each day, after the cycle
    written: int
    habit_survival: float  # share of the habit memories still stored at the end
    one_off_survival: float  # share of the other memories written in the first half still stored
    forgotten: int
    merged: int

    @property
    def plateau(self) -> float:
        """Mean store size over the last quarter of the run."""
        tail = self.sizes[-max(1, self.days // 4) :]
        return sum(tail) / len(tail)


def simulate(
    days: int = 365,
    per_day: int = 20,
    habits: int = 8,
    recall_probability: float = 0.3,
    repeat_probability: float = 0.1,
    half_life_days: float = DecaySettings.half_life_days,
    seed: int = 7,
) -> SimulationReport:
    """Run `days` of arrivals, habit recalls and nightly cycles on a fresh manager."""
    rng = random.Random(seed)
    clock = ManualClock(0.0)
    decay = DecayManager(DecaySettings(half_life_days=half_life_days), clock=clock)
    manager = MemoryManager(InMemoryStore(), clock=clock, decay=decay)
    habit_texts = [
        f"{TOPICS[n % len(TOPICS)]} runbook: " + " ".join(rng.sample(WORDS, 6))
        for n in range(habits)
    ]
    habit_ids = [
        manager.write(text, "sim", level="episodic", importance=0.6).id for text in habit_texts
    ]
    one_off_ids = []
    one_off_texts = []
    sizes = []
    forgotten = 0
    merged = 0
    for day in range(days):
        for _ in range(per_day):
            if one_off_texts and rng.random() < repeat_probability:
                # People repeat themselves: merge fodder
                text = rng.choice(one_off_texts[-per_day * 7 :])
            else:
                words = " ".join(rng.choice(WORDS) for _ in range(5))
                text = f"{rng.choice(VERBS)} the {rng.choice(TOPICS)} ticket: {words}"
            item = manager.write(
                text, "sim", level="episodic", importance=round(rng.uniform(0.3, 0.7), 2)
            )
            one_off_texts.append(text)
            if day < days // 2:
                one_off_ids.append(item.id)
            clock.advance(DAY / (per_day + 1))
        for text in habit_texts:
            if rng.random() < recall_probability:
                manager.recall(text, "sim", top_k=1)
        clock.advance(DAY / (per_day + 1))
        report = manager.run_decay("sim")
        forgotten += len(report.forgotten)
        merged += sum(len(others) for _, others in report.merged)
        sizes.append(report.size_after)
    alive = {item.id for item in manager.list("sim")}
    return SimulationReport(
        days=days,
        per_day=per_day,
        sizes=tuple(sizes),
        written=habits + days * per_day,
        habit_survival=sum(i in alive for i in habit_ids) / max(1, habits),
        one_off_survival=sum(i in alive for i in one_off_ids) / max(1, len(one_off_ids)),
        forgotten=forgotten,
        merged=merged,
    )


def year_plot(report: SimulationReport) -> str:
    """Draw the store's size at the end of each day, with its plateau, as SVG."""
    return line_plot(
        f"Store size over a simulated year ({report.per_day} memories a day, nightly forgetting "
        "cycles)",
        "day of the simulated year (days)",
        "memories in the store (items)",
        [
            Series(
                f"items in the store after each night's cycle ({report.written:,} written in all)",
                [(day, size) for day, size in enumerate(report.sizes, 1)],
            )
        ],
        [
            Reference(
                f"plateau: mean of the last quarter, {report.plateau:.0f} items", report.plateau
            )
        ],
        whole_x=True,
    )


def main(argv: list[str] | None = None) -> None:
    """Print the simulated year: size by day, plateau, what survived; `--svg` plots it."""
    parser = argparse.ArgumentParser(prog="python -m recuris.simulation", description=main.__doc__)
    parser.add_argument(
        "--svg",
        metavar="FILE",
        type=file_to_write,
        help="also write the store size by day as an SVG plot",
    )
    arguments = parser.parse_args(argv)
    result = simulate()
    print(f"{result.written} memories written over {result.days} days ({result.per_day} a day)")
    for day in (30, 90, 180, 270, 365):
        print(f"  day {day:>3}: {result.sizes[day - 1]} items in the store")
    print(f"  plateau (mean of the last quarter): {result.plateau:.0f}; peak: {max(result.sizes)}")
    print(f"  forgotten: {result.forgotten}; merged away: {result.merged}")
    print(
        f"  habits surviving: {result.habit_survival:.0%}; one-offs from the first half surviving: "
        f"{result.one_off_survival:.0%}"
    )
    if arguments.svg:
        Path(arguments.svg).write_text(year_plot(result), encoding="utf-8")
        print(f"  plot written to {arguments.svg}")


if __name__ == "__main__":
    sys.exit(run_piped(main))
