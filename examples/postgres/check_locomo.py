"""LoCoMo through the PostgreSQL store: the same top 10 as SQLite for every question.

docs/beyond-one-machine.md, "What ran": the product's recall (`MemoryManager.recall`,
default settings) on the PostgreSQL store must rank exactly as on SQLite, since both sum
BM25 in SQL with the same statistics, rounding and ties (S8, PS3). Run by run.sh with
DATABASE_URL set and the LoCoMo files (or folders) as arguments: it runs
`python -m recuris.bench locomo --store postgres_factory:make_store PATH...`, prints its
table, checks that the PostgreSQL row equals the SQLiteStore row, overall and per category,
then compares each question's top 10 on both stores. Exits 1 on a difference.

Invariants:
    PE1 for every question, the ten turns recalled through the PostgreSQL store are those
        recalled through SQLite, in the same order; so R@1-R@10 and MRR@10 are equal.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from recuris import SQLiteStore
from recuris.bench import locomo
from recuris.bench.command import _files

SPEC = "postgres_factory:make_store"


def rows_of(table: str, name: str) -> list[list[str]]:
    """Return the figures of each row of the table whose retriever contains `name`."""
    return [
        line.split(" | ")[1:]
        for line in table.splitlines()
        if line.startswith("| ") and name in line.split(" | ")[0]
    ]


def same_table_rows(paths: list[str]) -> str:
    """Run the bench with the PostgreSQL store; check its rows equal SQLite's; return the table."""
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent)}
    completed = subprocess.run(
        [sys.executable, "-m", "recuris.bench", "locomo", "--store", SPEC, *paths],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    table = completed.stdout
    postgres = rows_of(table, f"default, {SPEC}")
    sqlite = rows_of(table, "default, SQLiteStore")
    assert len(postgres) == len(sqlite) == 2 and postgres == sqlite, (postgres, sqlite)
    return table


def same_top_ten(paths: list[str]) -> int:
    """Compare each question's top 10 on SQLite and PostgreSQL (PE1); return the questions."""
    from postgres_factory import make_store

    compared = 0
    with tempfile.TemporaryDirectory() as folder:
        counter = iter(range(10**6))

        def fresh() -> Path:
            made = Path(folder) / f"store-{next(counter)}"
            made.mkdir()
            return made

        sqlite = locomo.through_manager(lambda: SQLiteStore(fresh() / "store.db"))
        postgres = locomo.through_manager(lambda: make_store(fresh()))
        for path in _files(paths):
            conversation = locomo.load(path)
            on_sqlite = sqlite(conversation)
            on_postgres = postgres(conversation)
            for question in conversation.questions:
                expected = on_sqlite(question.text)[:10]
                found = on_postgres(question.text)[:10]
                assert found == expected, (path, question.text, expected, found)
                compared += 1
    return compared


def main(paths: list[str]) -> int:
    table = same_table_rows(paths)
    print(table, end="")
    print("ok   PE1 the table's PostgreSQL row equals its SQLiteStore row, overall and by category")
    print(f"ok   PE1 the same top 10, in the same order, for {same_top_ten(paths)} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
