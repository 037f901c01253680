"""Many processes on one SQLite file: real child processes, made deterministic by pause points.

A child runs a short script after `PRELUDE`, which gives it `PausingStore`: once armed, it
stops for good after its next committed write and says so on standard output, so that the
test can kill it at exactly that point, or act while it waits (S5, N4).
"""

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from databases import another_process_holding
from sqlite_counting import lock_waits_of

from recuris import MemoryManager, SQLiteStore
from recuris.storage import sqlite_store

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.processes, pytest.mark.slow]

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


WAITING = (
    PRELUDE
    + """
from pathlib import Path

go = Path(sys.argv[2])

def wait_for_go():
    print("paused", flush=True)
    while not go.exists():
        time.sleep(0.01)

class WaitingStore(SQLiteStore):
    # Pause point: once armed, the next write waits, prepared, until the test says go.
    armed = False

    def put(self, *arguments, **keywords):
        if self.armed:
            self.armed = False
            wait_for_go()
        super().put(*arguments, **keywords)
"""
)


class Child:
    """A child process running WAITING + script, which the test releases from its pause point."""

    def __init__(self, tmp_path: Path, script: str, *arguments: str) -> None:
        self.go = tmp_path / "go"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                WAITING + script,
                str(tmp_path / "m.db"),
                str(self.go),
                *arguments,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def paused(self) -> None:
        line = self.process.stdout.readline()
        if line != "paused\n":
            self.process.kill()
            raise AssertionError(line + self.process.communicate()[1])

    def release(self) -> str:
        """Let the child go on from its pause point; return the rest of what it printed."""
        self.go.touch()
        out, errors = self.process.communicate(timeout=30)
        assert self.process.returncode == 0, errors
        return out


def forget_ana(tmp_path: Path) -> None:
    """Forget user ana from this process, through its own manager and connection."""
    manager = MemoryManager(SQLiteStore(tmp_path / "m.db"))
    manager.forget_user("ana")
    manager.store.close()


def leftovers(tmp_path: Path, marker: str) -> list:
    """Return ana's items and every audit reason
    holding the marker, as another process finds them."""
    store = SQLiteStore(tmp_path / "m.db", create=False)
    return store.list("ana") + [r.reason for r in store.audit() if marker in r.reason]


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
    """N4: killed right after finishing's first write,
    the store still holds every step of the task."""
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
    """S5: killed right after a write's first commit,
    every stored item has its "write" audit record."""
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
    items = store.list("ana")
    audited = {r.item_id for r in store.audit("ana") if r.operation == "write"}
    assert items and [item.id for item in items if item.id not in audited] == []


def test_a_write_prepared_before_another_process_forgets_the_user_never_lands(tmp_path):
    """S6: a superseding fact, prepared from a cached
    fact before the forget, is refused after it."""
    child = Child(
        tmp_path,
        """
manager = MemoryManager(WaitingStore(sys.argv[1]), clock=ManualClock(1_000))
manager.write("vault code: 1111 MARKER", "ana", level="semantic")
manager.store.inner.armed = True
try:
    manager.write("vault code: 2222 MARKER", "ana", level="semantic")
    print("landed")
except ValueError as error:
    print(error)
""",
    )
    child.paused()
    forget_ana(tmp_path)
    assert child.release().startswith("S6: user 'ana' was forgotten")
    assert leftovers(tmp_path, "MARKER") == []


def test_writes_queued_during_an_outage_are_not_flushed_after_another_process_forgets_the_user(
    tmp_path,
):
    """S6, G3: writes a manager queued while the database was locked are dropped after a forget."""
    lock = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    child = Child(
        tmp_path,
        """
manager = MemoryManager(SQLiteStore(sys.argv[1], timeout=0.05), clock=ManualClock(1_000))
manager.write("vault code: 1111 MARKER", "ana", level="semantic")
wait_for_go()
manager.write("vault code: 2222 MARKER", "ana", level="semantic")
print("queued", manager.store.pending)
Path(sys.argv[3]).touch()
while Path(sys.argv[3]).exists():
    time.sleep(0.01)
manager.write("likes green tea", "bob")
print("left", manager.store.pending)
""",
        str(tmp_path / "outage"),
    )
    child.paused()
    lock.execute("BEGIN IMMEDIATE")  # the outage: another process holds the write lock
    child.go.touch()
    while not (tmp_path / "outage").exists():
        time.sleep(0.01)
    lock.execute("ROLLBACK")
    forget_ana(tmp_path)
    (tmp_path / "outage").unlink()
    assert child.release().split() == ["queued", "1", "left", "0"]
    assert leftovers(tmp_path, "MARKER") == []


def test_after_another_process_forgets_a_user_recall_with_a_task_type_finds_nothing(tmp_path):
    """UL1: a manager that had the user loaded drops
    its caches: recall neither raises nor finds them."""
    child = Child(
        tmp_path,
        """
manager = MemoryManager(SQLiteStore(sys.argv[1]), clock=ManualClock(1_000))
steps = {"steps": ["open the vault MARKER"], "task_types": ["release"]}
manager.write("vault", "ana", level="procedural", metadata=steps)
manager.write("vault code: 1111 MARKER", "ana", level="semantic")
manager.start_task("ana", "open the vault MARKER", "release")
wait_for_go()
print(manager.recall("vault code", "ana", task_type="release").results, sorted(manager.tasks))
manager.write("vault code: 2222", "ana", level="semantic")
""",
    )
    child.paused()
    forget_ana(tmp_path)
    assert child.release() == "() []\n"
    assert [item.content for item in SQLiteStore(tmp_path / "m.db").list("ana")] == [
        "vault code: 2222"
    ]


def test_a_write_lock_held_by_another_process_delays_a_write_or_a_recall_by_one_timeout(
    tmp_path, monkeypatch
):
    """SQ4: while another process holds the write lock,
    a write and a recall each wait for it at most once, for at most `timeout`."""
    path = tmp_path / "m.db"
    MemoryManager(SQLiteStore(path)).write("deploy failed on step 3", "ana")
    # The store's clock, which times the seconds after a wait ran out, stands still: however
    # slow the machine, the call ends inside that window, so only the rule decides the count.
    monkeypatch.setattr(sqlite_store, "time", SimpleNamespace(monotonic=lambda: 0.0))
    calls = [
        lambda manager: manager.recall("deploy failed", "ana"),
        lambda manager: manager.write("deploy failed on step 4", "ana"),
    ]
    waits = []
    with another_process_holding(path, "BEGIN IMMEDIATE"):
        for call in calls:
            manager = MemoryManager(SQLiteStore(path, timeout=0.1))
            waits.append(lock_waits_of(manager.store.inner, lambda: call(manager)))
    assert waits == [1, 1]
