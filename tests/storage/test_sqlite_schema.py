"""Example tests for recuris.storage.sqlite_schema: migrating a version 5 file's tasks (SH3),
and items linked to their postings by a key that VACUUM, a dump and a migration keep (SH4)."""

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from databases import as_version_6, version_5

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


# Run a migration in another process, paused after `module.step` (its transaction not yet
# committed) so that the test can kill it there. Arguments: file, root, module, step.
PAUSED_MIGRATION = """
import importlib, sys, time
sys.path.insert(0, sys.argv[2])
from recuris import SQLiteStore
module = importlib.import_module(sys.argv[3])
step = getattr(module, sys.argv[4])

def step_then_pause(db):
    step(db)
    print("paused", flush=True)
    time.sleep(60)

setattr(module, sys.argv[4], step_then_pause)
SQLiteStore(sys.argv[1])
"""


def kill_a_migration_after(path, module, step):
    """Open `path` to write in another process and kill it right after `module.step`."""
    child = subprocess.Popen(
        [sys.executable, "-c", PAUSED_MIGRATION, str(path), str(ROOT), module, step],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = child.stdout.readline()
    os.kill(child.pid, signal.SIGKILL)
    _, errors = child.communicate()
    assert line == "paused\n", errors


@pytest.mark.slow
def test_a_migration_killed_midway_loses_nothing_and_runs_again(tmp_path):
    """SH3, SF2: killed during the migration, the file is still version 5, whole; reopened, it
    migrates with every step."""
    path = version_5(tmp_path / "m.db", version_5_items())
    kill_a_migration_after(path, "recuris.storage.sqlite_schema", "merge_task_items")
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(5,)]
        assert db.execute("SELECT count(*) FROM items").fetchall() == [(8,)]
    db.close()
    store = SQLiteStore(path)
    [goal] = [item for item in store.list("ana", "working") if item.id == "w1"]
    assert len(goal.metadata["working"]["trajectory"]) == 3
    assert store.integrity() == "ok"


def with_gaps(path):
    """Write a store whose items' numbers have gaps, as deletions leave them: a restore that
    renumbers the items from 1 would give the postings' numbers to other items."""
    store = SQLiteStore(path)
    store.put([episode(f"i{n}", f"word{n} shared") for n in range(8)])
    store.delete("ana", ["i0", "i1", "i2", "i5"])
    return store


def episode(id, content):
    return MemoryItem(id=id, user_id="ana", level="episodic", content=content)


def found(store, *terms):
    return sorted(item.id for item in store.matching("ana", "episodic", terms))


def ranking(store):
    return [(item.id, score) for item, score in store.search("ana", "episodic", ["shared"], 10)]


def each_word_finds_its_item(store):
    return [found(store, f"word{n}") for n in (3, 4, 6, 7)] == [["i3"], ["i4"], ["i6"], ["i7"]]


def test_vacuum_keeps_every_search_right(tmp_path):
    """SH4: after VACUUM, each word finds the item that holds it, and search ranks the same."""
    store = with_gaps(tmp_path / "m.db")
    before = ranking(store)
    store.close()
    with sqlite3.connect(tmp_path / "m.db") as db:
        db.execute("VACUUM")
    db.close()
    store = SQLiteStore(tmp_path / "m.db")
    assert each_word_finds_its_item(store)
    assert [
        (item.id, score) for item, score in store.search("ana", "episodic", ["shared"], 10)
    ] == (before)


def test_a_dump_restored_into_a_new_file_keeps_every_search_right(tmp_path):
    """SH4: a file rebuilt from `iterdump` finds each word's item and ranks as the original."""
    store = with_gaps(tmp_path / "m.db")
    before = ranking(store)
    store.close()
    with sqlite3.connect(tmp_path / "m.db") as db:
        dump = "\n".join(db.iterdump())
    db.close()
    with sqlite3.connect(tmp_path / "restored.db") as db:
        db.executescript(dump)
    db.close()
    store = SQLiteStore(tmp_path / "restored.db")
    assert each_word_finds_its_item(store)
    assert [
        (item.id, score) for item, score in store.search("ana", "episodic", ["shared"], 10)
    ] == (before)
    store.put([episode("i8", "word8 shared")])  # a write after the restore takes a new number
    assert found(store, "word8") == ["i8"] and store.integrity() == "ok"


def test_a_version_6_file_is_migrated_with_each_rowid_as_the_items_number(tmp_path):
    """SH2, SH4: opening a version 6 file to write declares `number`, each item keeping its
    rowid, so that every posting still names its item."""
    with_gaps(tmp_path / "m.db").close()
    path = as_version_6(tmp_path / "m.db")
    with sqlite3.connect(path) as db:
        numbers = db.execute("SELECT id, rowid FROM items ORDER BY rowid").fetchall()
    db.close()
    assert [number for _, number in numbers] == [4, 5, 7, 8]
    store = SQLiteStore(path)
    assert store._run("SELECT id, number FROM items ORDER BY number") == numbers
    assert each_word_finds_its_item(store)
    assert store._run("SELECT version FROM schema_version") == [(SCHEMA_VERSION,)]
    assert store.integrity() == "ok"


@pytest.mark.slow
def test_a_version_6_migration_killed_midway_loses_nothing_and_runs_again(tmp_path):
    """SH2, SF2: killed after rebuilding items, the file is still version 6, whole; reopened,
    it migrates with every item at its number."""
    with_gaps(tmp_path / "m.db").close()
    path = as_version_6(tmp_path / "m.db")
    kill_a_migration_after(path, "recuris.storage.sqlite_file", "_rebuild_items")
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(6,)]
        assert db.execute("SELECT count(*) FROM items").fetchall() == [(4,)]
        assert "number" not in {row[1] for row in db.execute("PRAGMA table_info(items)")}
    db.close()
    store = SQLiteStore(path)
    assert each_word_finds_its_item(store)
    assert store.integrity() == "ok"


def spoil_metadata(path, item_id: str) -> bytes:
    """Write metadata that is not JSON into an item's row, as a hand edit does; return the row."""
    with sqlite3.connect(path) as db:
        db.execute("UPDATE items SET metadata = '{not json' WHERE id = ?", (item_id,))
    db.close()
    return stored_row(path, item_id)


def stored_row(path, item_id: str) -> bytes:
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT * FROM items WHERE id = ?", (item_id,)).fetchone()
    db.close()
    return repr(row).encode()


def two_rows(folder) -> Path:
    """Return a database holding ana's item-1 and item-2, both on "deploy", closed."""
    path = folder / "memory.db"
    store = SQLiteStore(path)
    kept = MemoryItem(id="item-1", user_id="ana", level="episodic", content="deploy the database")
    spoiled = MemoryItem(id="item-2", user_id="ana", level="episodic", content="deploy on Friday")
    store.put([kept, spoiled])
    store.close()
    return path


def assert_only_item_1_is_read(store) -> None:
    """Every read of the store (SH5's list) answers item-1 and leaves item-2 out."""
    assert store.get("ana", "item-2") is None
    assert list(store.get_many("ana", ["item-1", "item-2"])) == ["item-1"]
    assert [item.id for item in store.list("ana")] == ["item-1"]
    assert [item.id for batch in store.iterate("ana") for item in batch] == ["item-1"]
    assert [item.id for item in store.matching("ana", "episodic", ["deploy"])] == ["item-1"]
    assert [item.id for item, _ in store.search("ana", "episodic", ["deploy"], 5)] == ["item-1"]


def test_a_row_whose_metadata_is_not_json_is_left_out_of_every_read_and_kept(tmp_path, caplog):
    """SH5: get, get_many, list, iterate, matching and search leave out a row whose metadata is
    not a JSON object, warn naming its id and SH5, count it as unreadable, and keep it whole."""
    path = two_rows(tmp_path)
    row = spoil_metadata(path, "item-2")
    store = SQLiteStore(path)
    with caplog.at_level("WARNING"):
        assert_only_item_1_is_read(store)
    assert "item-2" in caplog.text and "SH5" in caplog.text
    assert store.unreadable("ana") == ("item-2",) and store.unreadable("bob") == ()
    store.close()
    assert stored_row(path, "item-2") == row


# Hand edits of a row's columns, each with the rule of I1 it breaks.
SPOILED_COLUMNS = {
    "level": ("level = 'bogus'", "I1: level"),
    "importance-text": ("importance = 'high'", "I1: importance"),
    "importance-5": ("importance = 5", "I1: importance"),
    "created-text": ("created_at = 'yesterday'", "I1: created_at"),
    "access-count": ("access_count = -5", "I1: access_count"),
    "content-blank": ("content = ' '", "I1: content"),
}


@pytest.mark.parametrize("edit, rule", SPOILED_COLUMNS.values(), ids=SPOILED_COLUMNS)
def test_a_row_whose_columns_break_i1_is_left_out_of_every_read_and_kept(
    tmp_path, caplog, edit, rule
):
    """SH5: get, get_many, list, iterate, matching and search leave out a row whose level,
    importance, time, access count or content breaks I1, warn naming its id, SH5 and the
    rule, count it as unreadable, and keep it whole."""
    path = two_rows(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE items SET {edit} WHERE id = 'item-2'")
    db.close()
    row = stored_row(path, "item-2")
    store = SQLiteStore(path)
    with caplog.at_level("WARNING"):
        assert_only_item_1_is_read(store)
    assert f"SH5: item 'item-2' breaks {rule}" in caplog.text
    assert store.unreadable("ana") == ("item-2",)
    store.close()
    assert stored_row(path, "item-2") == row


def test_an_unreadable_row_erased_is_gone_and_unreadable_no_more(tmp_path):
    """SH5: the row stays until it is erased; then it is gone and no longer counted."""
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    store.put([MemoryItem(id="item-2", user_id="ana", level="episodic", content="on Friday")])
    store.close()
    spoil_metadata(path, "item-2")
    store = SQLiteStore(path)
    assert store.list("ana") == [] and store.unreadable("ana") == ("item-2",)
    assert store.erase("ana", ["item-2"]) == 1
    assert store.unreadable("ana") == ()
    store.close()
    assert b"on Friday" not in path.read_bytes()
