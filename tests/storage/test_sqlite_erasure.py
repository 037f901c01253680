"""Example tests for recuris.storage.sqlite_erasure: forgetting leaves no copy behind (SE1)."""

from pathlib import Path

import pytest
from databases import another_process_holding

from recuris import ErasureIncompleteError, MemoryManager, SQLiteStore
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
