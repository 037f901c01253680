"""Many processes on one SQLite file: real child processes, made deterministic by pause points.

A child runs a short script after `PRELUDE`, which gives it `PausingStore`: once armed, it
stops for good after its next committed write and says so on standard output, so that the
test can kill it at exactly that point, or act while it waits (S14, S15, N4).
"""

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from recuris import SQLiteStore
from recuris.sqlite_store import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parent.parent

PRELUDE = f"""
import sys, time
sys.path.insert(0, {str(ROOT)!r})
from recuris import ManualClock, MemoryManager, SQLiteStore

class PausingStore(SQLiteStore):
    armed = False

    def pause(self):
        if self.armed:
            print("paused", flush=True)
            time.sleep(60)

    def put(self, *arguments, **keywords):
        super().put(*arguments, **keywords)
        self.pause()

    def delete(self, *arguments):
        deleted = super().delete(*arguments)
        self.pause()
        return deleted

    def append_audit(self, records):
        super().append_audit(records)
        self.pause()
"""


def kill_when_paused(script: str, *arguments: str) -> None:
    """Run PRELUDE + script in a child process and kill it at its pause point."""
    child = subprocess.Popen(
        [sys.executable, "-c", PRELUDE + script, *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = child.stdout.readline()
    child.kill()
    _, errors = child.communicate()
    assert line == "paused\n", errors


def test_a_manager_killed_while_finishing_a_task_loses_no_step(tmp_path):
    """N4: killed right after finishing's first write, the store still holds every step of the task."""
    path = tmp_path / "m.db"
    kill_when_paused(
        """
manager = MemoryManager(PausingStore(sys.argv[1]), clock=ManualClock(1_000))
manager.start_task("ana", "ship release 2", "release")
for number in range(3):
    manager.record_step("ana", f"step number {number}", "ok")
manager.store.inner.armed = True
manager.finish_task("ana")
""",
        str(path),
    )
    stored = json.dumps([item.to_dict() for item in SQLiteStore(path, create=False).list("ana")])
    assert [n for n in range(3) if f"step number {n}" not in stored] == []


def test_a_manager_killed_while_writing_leaves_no_item_without_its_audit_record(tmp_path):
    """S14: killed right after a write's first commit, every stored item has its "write" audit record."""
    path = tmp_path / "m.db"
    kill_when_paused(
        """
manager = MemoryManager(PausingStore(sys.argv[1]), clock=ManualClock(1_000))
manager.store.inner.armed = True
manager.write("deploy failed on step 3", "ana")
""",
        str(path),
    )
    store = SQLiteStore(path, create=False)
    items, audited = store.list("ana"), {r.item_id for r in store.audit("ana") if r.operation == "write"}
    assert items and [item.id for item in items if item.id not in audited] == []


CREATOR = f"""
import os, sqlite3, sys, time
from pathlib import Path
sys.path.insert(0, {str(ROOT)!r})
from recuris import SQLiteStore
from recuris.sqlite_store import SCHEMA_VERSION

arrivals, creators = Path(sys.argv[2]), int(sys.argv[3])
connect = sqlite3.connect

class Pausing(sqlite3.Connection):
    # Pause point: a creator about to write the schema version waits until every creator
    # has reached it, or is waiting for the lock that guards it (at most 5 s).
    arrived = False

    def execute(self, statement, *arguments):
        if not self.arrived and statement.startswith(("BEGIN IMMEDIATE", "INSERT INTO schema_version")):
            self.arrived = True
            (arrivals / str(os.getpid())).touch()
        if statement.startswith("INSERT INTO schema_version"):
            deadline = time.monotonic() + 5
            while len(list(arrivals.iterdir())) < creators and time.monotonic() < deadline:
                time.sleep(0.01)
        return super().execute(statement, *arguments)

sqlite3.connect = lambda *arguments, **keywords: connect(*arguments, factory=Pausing, **keywords)
SQLiteStore(sys.argv[1]).close()
print("opened")
"""


def test_processes_creating_one_new_file_at_once_leave_one_schema_version(tmp_path):
    """S15: six processes opening a new file together create its schema once; every one of them opens it."""
    path, arrivals, creators = tmp_path / "new.db", tmp_path / "arrivals", 6
    arrivals.mkdir()
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CREATOR, str(path), str(arrivals), str(creators)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(creators)
    ]
    outputs = [child.communicate(timeout=30) for child in children]
    assert [errors for out, errors in outputs if out != "opened\n"] == []
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
