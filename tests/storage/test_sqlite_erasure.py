"""Example tests for recuris.storage.sqlite_erasure: forgetting leaves no copy behind (SE1)."""

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from databases import another_process_holding

from recuris import ErasureIncompleteError, MemoryItem, MemoryManager, SQLiteStore
from recuris.manager.cli import main

pytestmark = [pytest.mark.processes, pytest.mark.slow]


def on_disk(tmp_path: Path, marker: bytes) -> bool:
    return any(marker in path.read_bytes() for path in tmp_path.iterdir() if path.is_file())


def forget_while_another_process_reads(tmp_path: Path, forget) -> None:
    """Write a marker for ana, then call forget() while a reader process holds a snapshot."""
    manager = MemoryManager(SQLiteStore(tmp_path / "m.db"))
    manager.write("vault code: ERASE-ME-4242", "ana", level="semantic")
    manager.store.close()
    with another_process_holding(tmp_path / "m.db", "BEGIN"):
        forget()
        assert on_disk(tmp_path, b"ERASE-ME-4242")  # the reason the forget must not claim success


def test_forget_user_says_the_erasure_is_incomplete_while_another_process_reads(tmp_path):
    """SE1: with a reader holding the log, forget_user
    raises after `timeout`; a later forget completes it."""
    manager = MemoryManager(SQLiteStore(tmp_path / "m.db", timeout=0.2))

    def forget():
        with pytest.raises(
            ErasureIncompleteError, match="SE1: erasure of user 'ana' is incomplete"
        ) as error:
            manager.forget_user("ana")
        assert error.value.deleted == 1

    forget_while_another_process_reads(tmp_path, forget)
    assert manager.forget_user("ana") == 0
    manager.store.close()
    assert not on_disk(tmp_path, b"ERASE-ME-4242")


def test_the_forget_user_command_exits_1_while_another_process_reads(tmp_path, capsys):
    """SE1, V2: forget-user reports an incomplete erasure as a data error, never as done."""
    command = ["--db", str(tmp_path / "m.db"), "--timeout", "0.2", "forget-user", "ana", "--yes"]
    statuses = []
    forget_while_another_process_reads(tmp_path, lambda: statuses.append(main(command)))
    assert statuses == [1] and "erasure of user 'ana' is incomplete" in capsys.readouterr().err


def test_a_checkpoint_that_copies_every_frame_but_cannot_empty_the_log_is_incomplete(tmp_path):
    """SE1: a reader that began after the forget lets every frame be copied, not the log emptied."""
    store = SQLiteStore(tmp_path / "m.db", timeout=0.2)
    store.put([MemoryItem(id="s1", user_id="ana", level="semantic", content="ERASE-ME-4242")])
    reader = sqlite3.connect(tmp_path / "m.db", isolation_level=None)

    def read_just_before_the_checkpoint(statement: str) -> None:
        if statement.startswith("PRAGMA wal_checkpoint"):
            reader.execute("BEGIN")
            reader.execute("SELECT COUNT(*) FROM items").fetchone()  # a snapshot of it all

    store._db.set_trace_callback(read_just_before_the_checkpoint)
    with pytest.raises(ErasureIncompleteError, match="SE1: erasure of user 'ana' is incomplete"):
        store.delete_user("ana")
    store._db.set_trace_callback(None)
    _, frames, folded = store._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert frames == folded > 0  # every frame was copied; only the log's reset was blocked
    reader.execute("COMMIT")
    reader.close()
    assert store.delete_user("ana") == 0
    store.close()
    assert not on_disk(tmp_path, b"ERASE-ME-4242")


NEXT_OPERATION = {
    "a write": "store.put([MemoryItem(id='b1', user_id='bob', level='episodic', content='hi')])",
    "an open": "pass",
}


@pytest.mark.parametrize("operation", NEXT_OPERATION, ids=str)
def test_an_incomplete_erasure_completes_at_another_processs_next_operation(tmp_path, operation):
    """SE2: a reader mid-read, a forget, the reader gone: another process's next step ends it."""
    store = SQLiteStore(tmp_path / "m.db", timeout=0.2)
    manager = MemoryManager(store)
    manager.write("vault code: ERASE-ME-4242", "ana", level="semantic")
    with another_process_holding(tmp_path / "m.db", "BEGIN"):
        with pytest.raises(ErasureIncompleteError, match="completes by itself"):
            manager.forget_user("ana")
        assert store.pending_erasures() == 1
    assert on_disk(tmp_path, b"ERASE-ME-4242")  # nothing of this process ran since the reader
    program = (
        "import os, sys\n"
        "from recuris import MemoryItem, SQLiteStore\n"
        "store = SQLiteStore(sys.argv[1])\n"
        f"{NEXT_OPERATION[operation]}\n"
        "os._exit(0)  # no close: the operation alone must end the erasure\n"
    )
    subprocess.run([sys.executable, "-c", program, str(tmp_path / "m.db")], check=True)
    assert not on_disk(tmp_path, b"ERASE-ME-4242")
    assert store.pending_erasures() == 0
    store.close()


def test_forget_memory_says_the_erasure_is_incomplete_while_another_process_reads(tmp_path):
    """SE1, S13: with a reader holding the log, erasing one memory raises after `timeout`,
    audited as incomplete; the next close completes it."""
    manager = MemoryManager(SQLiteStore(tmp_path / "m.db", timeout=0.2))
    secret = manager.write("vault code: ERASE-ME-4242", "ana", level="semantic")
    manager.write("the deploy region is eu-west", "ana")
    with another_process_holding(tmp_path / "m.db", "BEGIN"):
        with pytest.raises(ErasureIncompleteError, match="completes by itself") as error:
            manager.forget_memory(secret.id, "ana")
        assert error.value.deleted == 1
        assert on_disk(tmp_path, b"ERASE-ME-4242")
    assert manager.history("ana", secret.id)[-1].reason == "erased on request; erasure incomplete"
    manager.close()
    assert not on_disk(tmp_path, b"ERASE-ME-4242")
