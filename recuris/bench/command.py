"""Benchmarks: `python -m recuris.bench locomo PATH...` and `... experience`.

Document 003 §6 asks for retrieval measured on labelled sets. Both commands print markdown
tables whose every comparison was measured in the same run; docs/benchmarks.md records them
with the machine they ran on. Speed and scale, and the rankings tried and not kept, are
measured from a clone, beside the package: `python -m benchmarks.speed` (benchmarks/).

Invariants:
    BC1 a benchmark reads only the paths it is given and writes only to a temporary folder.
    BC2 `locomo` prints a markdown table of R@1, R@5, R@10 and MRR@10 with one row per
        retriever (each store, each ablation, each reference), then R@5 / MRR@10 per
        category; a bad file exits 1.
    BC3 `locomo --store package.module:factory` adds the default manager's row on the store
        that factory makes, named by its spec (FK1): the fork kit's factory
        (tests/factories.py), given a fresh, empty folder per conversation; a spec that names
        no factory exits 1 (FK2).
    BC4 `run_locomo` takes further retrievers by name, each a row after the built-in ones in
        both tables: how benchmarks/locomo_tried.py adds the rankings tried.
    BC5 `locomo` given a folder with no `*.json` file, or conversations with no question to
        measure, says what it looked for and exits 1 before measuring: a table of zeros
        would read as a result.
"""

import argparse
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..manager.entry import run_piped
from ..manager.factory_spec import factory_of
from ..storage.memory_store import InMemoryStore
from ..storage.sqlite_store import SQLiteStore
from . import experience_benchmark, locomo

__all__ = ["main", "run_locomo", "table_row"]


def table_row(*cells: object) -> None:
    """Print one row of a markdown table."""
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
                "each one conversation or a list of them (docs/bench/locomo.md says where "
                "they come from)"
            )
        found += inside
    return found


def _in_folders(factory: Callable, folder: str) -> Callable[[], object]:
    """Return a maker of stores from a fork kit factory, each in a fresh folder (BC3)."""
    counter = iter(range(10**6))

    def make() -> object:
        fresh = Path(folder) / f"store-{next(counter)}"
        fresh.mkdir()
        return factory(fresh)

    return make


def _locomo_tables(
    paths: Sequence[str],
    stores: Sequence[str] = (),
    more: Mapping[str, Callable] | None = None,
) -> None:
    """Print the LoCoMo tables of the conversations at `paths` (BC2): built-in rows, then
    a row per store spec (BC3), then one per retriever of `more`, by its name (BC4).

    Raises ValueError when there is nothing to measure (BC5) or a spec names no factory (FK2).
    """
    factories = {spec: factory_of(spec, "--store") for spec in stores}
    conversations = [found for path in _files(paths) for found in locomo.load_all(path)]
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
            **(more or {}),
        }
        results = {
            name: locomo.evaluate(conversations, build) for name, build in retrievers.items()
        }
    table_row("retriever", "R@1", "R@5", "R@10", "MRR@10")
    table_row("---", "---", "---", "---", "---")
    for name, scores in results.items():
        figures = (scores.r1, scores.r5, scores.r10, scores.mrr)
        table_row(name, *(f"{value:.3f}" for value in figures))
    print("\nPer category, R@5 / MRR@10:\n")
    categories = [name for name, _ in next(iter(results.values())).by_category]
    table_row("retriever", *categories)
    table_row("---", *("---" for _ in categories))
    for name, scores in results.items():
        table_row(
            name,
            *(
                f"{part.r5:.3f} / {part.mrr:.3f} ({part.questions})"
                for _, part in scores.by_category
            ),
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
        help="also a store of your own, named as docs/manager/factory-spec.md says",
    )
    experience_benchmark.add_arguments(
        commands.add_parser("experience", help="does the agent stop repeating its mistakes?")
    )
    arguments = parser.parse_args(argv)
    if arguments.command == "experience":
        return run_piped(lambda: experience_benchmark.command(arguments))
    return run_piped(lambda: run_locomo(arguments.paths, arguments.store))


def run_locomo(
    paths: Sequence[str],
    stores: Sequence[str] = (),
    more: Mapping[str, Callable] | None = None,
) -> int:
    """Print the LoCoMo tables; return the exit status, 1 having said why (BC2-BC5)."""
    try:
        _locomo_tables(paths, stores, more)
    except BrokenPipeError:
        raise  # an OSError, but not a failure: `run_piped` ends the command quietly
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
