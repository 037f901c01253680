"""Rung 4: every layer behind one manager, persisted in SQLite, for isolated users.

Run: python examples/04_manager_with_sqlite.py [path/to/memory.db]
"""

import sys
import tempfile
from pathlib import Path

from recuris import ManualClock, MemoryManager, SQLiteStore

path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "memory.db"
clock = ManualClock(1_767_225_600)  # a fixed clock: the same output every run
manager = MemoryManager(SQLiteStore(path), clock=clock)
manager.write("database: MySQL", "ana", level="semantic")
manager.write("database: PostgreSQL", "ana", level="semantic")  # supersedes MySQL, keeps it for audit
manager.write(
    "deploy", "ana", level="procedural", metadata={"steps": ["test", "ship"], "task_types": ["release"]}
)
manager.write("likes green tea", "bob")

for result in manager.recall("which database do we release on", "ana", task_type="release").results:
    print(result.explain(), "|", result.render())
print("bob sees:", [r.render() for r in manager.recall("database", "bob").results])
manager.store.close()

reopened = MemoryManager(SQLiteStore(path, create=False), clock=clock)
print(f"reopened {path.name}: ana has {len(reopened.list('ana'))} items; history of fact-1:")
for record in reopened.history("ana", "fact-1"):
    print("  ", record.render())
print(f"try: python -m recuris --db {path} search database --user ana")
