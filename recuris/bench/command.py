"""Benchmarks: `python -m recuris.bench locomo PATH...`, `... speed` and `... experience`.

Document 003 §6 asks for retrieval measured on labelled sets and for cost measured in
tokens and latency; document 004 quotes MemoryBank's slowdown and loss of recall at scale.
Both commands print markdown tables whose every comparison was measured in the same run;
docs/benchmarks.md records them with the machine they ran on.

Invariants:
    BC1 a benchmark reads only the paths it is given and writes only to a temporary folder.
    BC2 `locomo` prints a markdown table of R@1, R@5, R@10 and MRR@10 with one row per
        retriever (each store, each ablation, each reference), then R@5 / MRR@10 per
        category; a bad file exits 1.
    BC3 `locomo --store package.module:factory` adds the default manager's row on the store
        that factory makes, named by its spec: the fork kit's factory (tests/factories.py),
        given a fresh, empty folder per conversation; a spec that names no factory exits 1.
    BC4 `locomo --tried` adds a row per ranking of locomo_tried.py, on the in-memory store.
    BC5 `locomo` given a folder with no `*.json` file, or conversations with no question to
        measure, says what it looked for and exits 1 before measuring: a table of zeros
        would read as a result.
"""

import argparse
import importlib
import math
import os
import platform
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..manager.cli import run_piped
from ..storage.memory_store import InMemoryStore
from ..storage.sqlite_store import SQLiteStore
from . import experience_benchmark, locomo, locomo_tried, recall_scale, scale, speed, write_speed
from .side_by_side import spread
from .simulation import simulate

__all__ = ["main"]


def _row(*cells: object) -> None:
    print("| " + " | ".join(str(cell) for cell in cells) + " |")


def _files(paths: list[str]) -> list[Path]:
    """Expand each directory to its JSON files, sorted; keep files as given.

    Raises ValueError for a directory that holds no JSON file (BC5).
    """
    found = []
    for path in map(Path, paths):
        inside = sorted(path.glob("*.json")) if path.is_dir() else [path]
        if not inside:
            raise ValueError(
                f"BC5: no LoCoMo conversation in {path}: a folder is read for its *.json files, "
                "one conversation each (docs/bench/locomo.md says where they come from)"
            )
        found += inside
    return found


def factory_of(spec: str, named_by: str = "--store") -> Callable:
    """Return the factory a spec `package.module:name` names, imported (BC3).

    Raises ValueError naming `named_by`, the spec and the expected form when it names none.
    """
    module, _, name = spec.partition(":")
    if not (module and name.isidentifier()):
        raise ValueError(
            f"{named_by}={spec!r}: expected package.module:factory, such as "
            "my_fork.stores:make_store"
        )
    try:
        imported = importlib.import_module(module)
    except ModuleNotFoundError as error:
        raise ValueError(
            f"{named_by}={spec!r}: cannot import {module} ({error}); the module must be "
            "importable where the command runs: in the working folder, installed "
            "(`pip install -e` your fork), or in a folder on PYTHONPATH"
        ) from error
    if not hasattr(imported, name):
        raise ValueError(f"{named_by}={spec!r}: {module} has no {name}")
    return getattr(imported, name)


def _in_folders(factory: Callable, folder: str) -> Callable[[], object]:
    """Return a maker of stores from a fork kit factory, each in a fresh folder (BC3)."""
    counter = iter(range(10**6))

    def make() -> object:
        fresh = Path(folder) / f"store-{next(counter)}"
        fresh.mkdir()
        return factory(fresh)

    return make


def _locomo(paths: list[str], stores: list[str] = (), tried: bool = False) -> None:
    factories = {spec: factory_of(spec) for spec in stores}
    conversations = [locomo.load(path) for path in _files(paths)]
    questions = sum(len(c.questions) for c in conversations)
    if not questions:
        raise ValueError(
            f"BC5: {len(conversations)} conversations and no question to measure: a question "
            "counts if its category is 1 to 4 and it names evidence turns"
        )
    print(
        f"LoCoMo retrieval: {len(conversations)} conversations, {questions} questions "
        "(categories 1-4 with evidence)\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        counter = iter(range(10**6))
        retrievers = {
            "MemoryManager.recall, default, InMemoryStore (what users run)": locomo.through_manager(
                InMemoryStore
            ),
            "MemoryManager.recall, default, SQLiteStore (what users run)": locomo.through_manager(
                lambda: SQLiteStore(Path(folder) / f"conversation-{next(counter)}.db")
            ),
            "MemoryManager.recall, InMemoryStore, the speaker a word of each turn "
            "(no speaker given)": locomo.through_manager(InMemoryStore, speakers=False),
            **{
                f"MemoryManager.recall, default, {spec}": locomo.through_manager(
                    _in_folders(factory, folder)
                )
                for spec, factory in factories.items()
            },
            **{
                f"MemoryManager.recall, InMemoryStore, {name}": locomo.through_manager(
                    InMemoryStore, policy
                )
                for name, policy in locomo.ABLATIONS.items()
            },
            **{f"reference: {name}": build for name, build in locomo.RETRIEVERS.items()},
            **{
                f"tried: {name}": locomo.through_manager(
                    InMemoryStore, ranking=way.ranking, written=way.written
                )
                for name, way in (locomo_tried.TRIED.items() if tried else ())
            },
        }
        results = {
            name: locomo.evaluate(conversations, build) for name, build in retrievers.items()
        }
    _row("retriever", "R@1", "R@5", "R@10", "MRR@10")
    _row("---", "---", "---", "---", "---")
    for name, scores in results.items():
        _row(name, *(f"{value:.3f}" for value in (scores.r1, scores.r5, scores.r10, scores.mrr)))
    print("\nPer category, R@5 / MRR@10:\n")
    categories = [name for name, _ in next(iter(results.values())).by_category]
    _row("retriever", *categories)
    _row("---", *("---" for _ in categories))
    for name, scores in results.items():
        _row(
            name,
            *(
                f"{part.r5:.3f} / {part.mrr:.3f} ({part.questions})"
                for _, part in scores.by_category
            ),
        )


def _speed(quick: bool, large: bool = False) -> None:
    sizes = (1_000, 5_000) if quick else (1_000, 10_000, 100_000)
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}\n"
    )
    _row("measure", "size", "recuris", "baseline", "ratio")
    _row("---", "---", "---", "---", "---")
    for size in sizes:
        timing = speed.retrieval(size, queries=20 if quick else 50)
        p50, p95 = timing["indexed"]
        s50, s95 = timing["scan"]
        _row(
            "episodic retrieval p50 / p95 (ms): index vs scan, same top-5",
            f"{size:,} episodes",
            f"{p50:.2f} / {p95:.2f}",
            f"{s50:.2f} / {s95:.2f}",
            f"1/{s50 / max(p50, 1e-9):.0f}",
        )
    steps = 200 if quick else 1000
    growth = speed.prompt_growth(steps, marks=(10, 50, 100, steps))
    ours = growth["recuris"]
    full = growth["full history"]
    for mark in (10, 50, 100, steps):
        _row(
            f"prompt tokens at step {mark}",
            f"{steps}-step task",
            ours[mark],
            full[mark],
            f"{ours[mark] / full[mark]:.2f}",
        )
    _row(
        f"prompt tokens, step {steps} / step 50",
        "",
        f"{ours[steps] / ours[50]:.2f}",
        f"{full[steps] / full[50]:.2f}",
        "",
    )
    cycle = speed.decay_cycle(sizes[-1])
    _row(
        "decay cycle (s): decide / manager forget + merge",
        f"{sizes[-1]:,} items",
        f"{cycle['decide_s']:.3f} / {cycle['manager_cycle_s']:.3f}",
        "",
        f"{cycle['forgotten']:,} forgotten, {cycle['after']:,} left",
    )
    year = simulate(days=90 if quick else 365)
    _row(
        f"store size after {year.days} simulated days, {year.per_day} a day",
        f"{year.written:,} written",
        f"{year.sizes[-1]} (plateau {year.plateau:.0f})",
        f"{year.written:,} (no forgetting)",
        f"1/{year.written / max(1, year.sizes[-1]):.0f}",
    )
    store = speed.sqlite(sizes[-1])
    (r50, r95) = store["recall"]
    _row(
        "SQLite: items written per second, batches of 1,000",
        f"{sizes[-1]:,} items",
        f"{store['items_per_s']:,.0f}",
        "",
        "",
    )
    _row(
        "SQLite: reopen / first recall (ms)",
        f"{sizes[-1]:,} items",
        f"{store['reopen_ms']:.1f} / {store['first_recall_ms']:.0f}",
        "",
        "",
    )
    _row(
        "SQLite: manager recall p50 / p95 (ms), BM25 in SQL",
        f"{sizes[-1]:,} items",
        f"{r50:.1f} / {r95:.1f}",
        "",
        "",
    )
    _recall_at_scale(sizes[-1:] + ((1_000_000,) if large else ()), quick)


def _spread(figure: dict, digits: int = 2) -> str:
    """Show a figure as its median (lowest-highest)."""
    low = figure["low"]
    high = figure["high"]
    return f"{figure['median']:.{digits}f} ({low:.{digits}f}-{high:.{digits}f})"


def _runs(size: int) -> int:
    """Return how many times a scale or write measure runs at a size: fewer at a million.

    Five at most sizes; three from a million items, which keeps `--large` within a
    developer's session (docs/bench/scale.md says so).
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
                else _spread(row["ratio"])
            )
            _row(
                f"SQLite recall (count_access=False) vs one FTS5 query, {row['class']} words, "
                f"{row['state']}: ms, median (lowest-highest) of {row['n']}, load "
                f"{row['load']:.1f}",
                f"{size:,} items",
                _spread(row["recall_ms"]),
                _spread(row["fts5_ms"]),
                compared,
            )
    if len(peaks) > 1:
        small = min(peaks)
        large = max(peaks)
        _row(
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
        _row(
            f"SQLite recall in sessions of {sessions['session']}, with its context vs without "
            f"(ms), {row['class']} words, warm, median (lowest-highest) of {row['n']}; vs one "
            f"FTS5 query {_spread(row['to_fts5'])}, {above['median']:+.2f} ms; load "
            f"{sessions['load']:.1f}",
            f"{sizes[0]:,} items",
            _spread(row["recall_ms"]),
            _spread(row["alone_ms"]),
            _spread(row["to_alone"]),
        )
    counting = recall_scale.access_counting(sizes[0])
    _row(
        "SQLite recall counting accesses: at once vs batched by 10 (ms, commits per recall); "
        f"not counting {_spread(counting['inspect_ms'])} ms",
        f"{sizes[0]:,} items",
        f"{_spread(counting['counted_ms'])}; {counting['counted_commits']:.2f}",
        f"{_spread(counting['batched_ms'])}; {counting['batched_commits']:.2f}",
        "",
    )
    for size in sizes:
        # At a million, in batches only: one transaction of a million rows adds minutes to the
        # run and its ratio stays within the batches' (docs/bench/write-speed.md).
        for batch in (10_000,) if size >= 1_000_000 else (10_000, None):
            writes = write_speed.batched_writes(size, runs=_runs(size), batch=batch)
            shape = "in batches of 10,000" if batch else "in one transaction"
            _row(
                f"SQLite put {shape} vs plain INSERTs + FTS5 (s), median (lowest-highest) of "
                f"{writes['ratio']['n']}, load {writes['load'][0]:.1f}",
                f"{size:,} items",
                _spread(writes["put_s"]),
                _spread(writes["plain_s"]),
                f"{_spread(writes['ratio'])} (CPU {writes['cpu_ratio']['median']:.2f})",
            )
    for synchronous in ("FULL", "NORMAL"):
        single = write_speed.single_write_runs(
            runs=5, count=100 if quick else 500, synchronous=synchronous
        )
        _row(
            f"one MemoryManager.write vs one plain row + FTS5 entry, synchronous={synchronous} "
            f"(ms), median (lowest-highest) of {single['ratio']['n']} runs, load "
            f"{single['load'][0]:.1f}",
            "one item a transaction",
            _spread(single["write_ms"], 3),
            _spread(single["raw_ms"], 3),
            f"{_spread(single['ratio'])} (CPU {single['cpu_ratio']['median']:.2f})",
        )
    related, unrelated = (2_000, 20_000) if quick else (10_000, 100_000)
    alone, crowded = recall_scale.unrelated_items(related, unrelated)
    exponent = math.log(crowded / alone) / math.log((related + unrelated) / related)
    _row(
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
    text = f"exponent {_spread(spread(exponents))} from {smaller:,}"
    if apart is None:
        return text
    less = scale.round_exponents(
        smaller, runs[n - 1], sizes[n], runs[n], lambda run: run[key] - run[apart]
    )
    return text + f"; {_spread(spread(less))} without GC"


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
            _row(
                f"forgetting cycle, {name} filled by batched put: cycle s, median "
                f"(lowest-highest) of {len(runs)}; its CPU s and cyclic GC s, and the fill's s, "
                "medians; highest peak MB",
                f"{size:,} items",
                f"{_spread(spread([run['cycle_s'] for run in runs]))}; "
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
            _row(
                f"semantic writes through the manager, {where}: µs per write, median "
                f"(lowest-highest) of {len(runs)}; total s and cyclic GC s, medians",
                f"{size:,} writes",
                f"{_spread(per_write, 0)}; total {_median(runs, 'seconds'):.2f}; "
                f"GC {_median(runs, 'gc_s'):.2f}",
                f"{runs[0]['superseded']:,} superseded a fact",
                _growth(counts, writes, n, "seconds", "gc_s"),
            )


def main(argv: list[str] | None = None) -> int:
    """Run a benchmark; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m recuris.bench", description=__doc__.splitlines()[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    locomo_command = commands.add_parser(
        "locomo", help="retrieval on LoCoMo files or folders of them"
    )
    locomo_command.add_argument("paths", nargs="+")
    locomo_command.add_argument(
        "--store",
        action="append",
        default=[],
        metavar="package.module:factory",
        help="also a store of your own, made by a fork kit factory (tests/factories.py)",
    )
    locomo_command.add_argument(
        "--tried", action="store_true", help="also the rankings tried that did not pay"
    )
    speed_command = commands.add_parser("speed", help="speed and scale")
    speed_command.add_argument("--quick", action="store_true")
    speed_command.add_argument(
        "--large", action="store_true", help="also measure costs at 1,000,000 items"
    )
    speed_command.add_argument("--quiet", action="store_true", help="no progress on standard error")
    experience_benchmark.add_arguments(
        commands.add_parser("experience", help="does the agent stop repeating its mistakes?")
    )
    arguments = parser.parse_args(argv)
    if arguments.command == "experience":
        return run_piped(lambda: experience_benchmark.command(arguments))
    return run_piped(lambda: _measure(arguments))


def _measure(arguments: argparse.Namespace) -> int:
    """Run `locomo` or `speed`; return the exit status, 1 having said why (BC2, BC3, BC5)."""
    try:
        if arguments.command == "locomo":
            _locomo(arguments.paths, arguments.store, arguments.tried)
        else:
            _speed(arguments.quick, arguments.large)
            sizes = (1_000, 10_000) if arguments.quick else (10_000, 100_000)
            _scale(sizes + ((1_000_000,) if arguments.large else ()), arguments.quiet)
    except BrokenPipeError:
        raise  # an OSError, but not a failure: `run_piped` ends the command quietly
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
