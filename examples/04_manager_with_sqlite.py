"""Rung 4: every layer behind one manager, persisted in SQLite, for isolated users.

Run from the repository root after the README's set-up, `python -m pip install -e ".[test]"`:
    python examples/04_manager_with_sqlite.py [path/to/memory.db]
Without a path, the database lives in a temporary folder that is removed at the end.
"""

import sys
import tempfile
from pathlib import Path

from recuris import ManualClock, MemoryManager, SQLiteStore
from recuris.manager.entry import run_piped


def tour(path: Path) -> None:
    clock = ManualClock(1_767_225_600)  # a fixed clock, 2026-01-01: the same output every run
    manager = MemoryManager(SQLiteStore(path), clock=clock)
    manager.write("database: MySQL", "ana", level="semantic")
    # The second fact supersedes the first, which is kept for audit.
    manager.write("database: PostgreSQL", "ana", level="semantic")
    steps = {"steps": ["test", "ship"], "task_types": ["release"]}
    manager.write("deploy", "ana", level="procedural", metadata=steps)
    manager.write("likes green tea", "bob")

    recalled = manager.recall("which database do we release on", "ana", task_type="release")
    for result in recalled.results:
        print(result.explain(), "|", result.render())
    print("bob sees:", [r.render() for r in manager.recall("database", "bob").results])
    manager.store.close()

    reopened = MemoryManager(SQLiteStore(path, create=False), clock=clock)
    print(f"reopened {path.name}: ana has {len(reopened.list('ana'))} items; history of fact-1:")
    for record in reopened.history("ana", "fact-1"):
        print("  ", record.render())
    reopened.store.close()


def main() -> None:
    if len(sys.argv) > 1:
        tour(Path(sys.argv[1]))
        print(
            "try: python -m recuris search database --user ana --task-type release "
            f"--at 2026-01-01 --db {sys.argv[1]}"
        )
    else:
        # The folder is removed on the way out: nothing is left behind.
        with tempfile.TemporaryDirectory() as folder:
            tour(Path(folder) / "memory.db")
        print("to keep the database: python examples/04_manager_with_sqlite.py memory.db")


if __name__ == "__main__":
    sys.exit(run_piped(main))  # a reader who stops early (`| head`) ends it quietly
