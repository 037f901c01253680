"""Example tests for recuris.storage.sqlite_schema: migrating a version 5 file's tasks (SH3)."""

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from databases import version_5

from recuris import ManualClock, MemoryItem, MemoryManager, SQLiteStore
from recuris.core.records import Step
from recuris.storage.sqlite_schema import SCHEMA_VERSION, term_counts

ROOT = Path(__file__).resolve().parents[2]


def working(id, content, task_id="task-1", user_id="ana", created_at=10.0):
    return MemoryItem(
        id=id,
        user_id=user_id,
        level="working",
        content=content,
        task_id=task_id,
        created_at=created_at,
        metadata={"tags": [], "kind": "event"},
    )


def version_5_items():
    """Two users' tasks as version 5 kept them: a goal item, then one item per step."""
    return [
        MemoryItem(id="e1", user_id="ana", level="episodic", content="deploy the api"),
        working("w1", "goal: ship release 2"),
        working("w2", "1. build the image -> ok"),
        working("w3", "2. push the image -> error: registry down [failed]"),
        working("w4", "waiting for the registry"),  # a note of the task, not a step
        working("w5", "3. push the image -> ok: pushed"),
        working("b1", "goal: rotate the keys", "task-9", "ben"),
        working("b2", "1. revoke the old key -> ok", "task-9", "ben"),
    ]


def test_each_task_becomes_its_goal_item_holding_every_step(tmp_path):
    """SH3: a task's goal item holds its working memory, with every step in write order."""
    path = version_5(tmp_path / "m.db", version_5_items())
    store = SQLiteStore(path)
    [goal] = [item for item in store.list("ana", "working") if item.id == "w1"]
    trajectory = goal.metadata["working"]["trajectory"]
    assert [Step(*row) for row in trajectory] == [
        Step(1, "build the image", "ok", False),
        Step(2, "push the image", "error: registry down", True),
        Step(3, "push the image", "ok: pushed", False),
    ]
    assert (goal.metadata["kind"], goal.metadata["task_type"]) == ("task", "task")


def test_step_items_go_and_notes_and_other_levels_stay(tmp_path):
    """SH3: the step items are deleted; a note of the task and every other item are kept."""
    path = version_5(tmp_path / "m.db", version_5_items())
    store = SQLiteStore(path)
    assert [item.id for item in store.list("ana")] == ["e1", "w1", "w4"]
    assert [item.id for item in store.list("ben")] == ["b1"]
    assert store._run("SELECT version FROM schema_version") == [(SCHEMA_VERSION,)]


def test_the_term_index_forgets_the_deleted_steps(tmp_path):
    """SH1 after SH3: the working scope's totals and postings are those of the items kept."""
    path = version_5(tmp_path / "m.db", version_5_items())
    store = SQLiteStore(path)
    kept = store.list("ana", "working")
    [(documents, length)] = store._run(
        "SELECT documents, length FROM scopes WHERE user_id = 'ana' AND level = 'working'"
    )
    assert documents == len(kept)
    assert length == sum(sum(term_counts(item.content).values()) for item in kept)
    assert store.search("ana", "working", ["registry"], 5)[0][0].id == "w4"
    assert store.search("ana", "working", ["image"], 5) == []
    assert store.integrity() == "ok"


def test_a_manager_finishes_a_migrated_task_with_every_step(tmp_path):
    """SH3, N5: a manager on the migrated file finds the task and settles all its steps."""
    path = version_5(tmp_path / "m.db", version_5_items())
    manager = MemoryManager(SQLiteStore(path), clock=ManualClock(1_000))
    manager.record_step("ana", "tag the release", "ok")
    report = manager.finish_task("ana")
    assert [step.action for step in report.episode.trajectory] == [
        "build the image",
        "push the image",
        "push the image",
        "tag the release",
    ]
    assert report.episode.goal == "ship release 2" and manager.list("ana", "working") == []


MIGRATOR = """
import sys, time
sys.path.insert(0, sys.argv[2])
from recuris import SQLiteStore
from recuris.storage import sqlite_schema

merge = sqlite_schema.merge_task_items

def merge_then_pause(db):
    # Pause point: the tasks are merged, the migration's transaction not yet committed.
    merge(db)
    print("paused", flush=True)
    time.sleep(60)

sqlite_schema.merge_task_items = merge_then_pause
SQLiteStore(sys.argv[1])
"""


@pytest.mark.slow
def test_a_migration_killed_midway_loses_nothing_and_runs_again(tmp_path):
    """SH3, SF2: killed during the migration, the file is still version 5, whole; reopened, it
    migrates with every step."""
    path = version_5(tmp_path / "m.db", version_5_items())
    child = subprocess.Popen(
        [sys.executable, "-c", MIGRATOR, str(path), str(ROOT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = child.stdout.readline()
    os.kill(child.pid, signal.SIGKILL)
    _, errors = child.communicate()
    assert line == "paused\n", errors
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(5,)]
        assert db.execute("SELECT count(*) FROM items").fetchall() == [(8,)]
    db.close()
    store = SQLiteStore(path)
    [goal] = [item for item in store.list("ana", "working") if item.id == "w1"]
    assert len(goal.metadata["working"]["trajectory"]) == 3
    assert store.integrity() == "ok"
