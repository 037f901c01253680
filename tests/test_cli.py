"""Example tests for the command line, `python -m recuris` (V1-V3)."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from databases import another_application, corrupt, empty, future_version

from recuris import ManualClock, MemoryManager, SQLiteStore
from recuris.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def database(tmp_path):
    path = tmp_path / "memory.db"
    manager = MemoryManager(SQLiteStore(path), clock=ManualClock(1_000))
    manager.write("database: MySQL", "ana", level="semantic")
    manager.write("database: PostgreSQL", "ana", level="semantic")
    manager.write("deploy failed on step 3", "ana")
    manager.write("likes green tea", "bob")
    manager.store.close()
    return path


def cli(*arguments):
    out = io.StringIO()
    status = main(list(arguments), out)
    return status, out.getvalue()


def test_stats_counts_users_levels_and_integrity(database):
    """stats reports users, items per level, audit records and integrity."""
    status, text = cli("--db", str(database), "stats")
    assert status == 0 and "users: 2" in text and "semantic: 2" in text and "integrity: ok" in text


def test_list_and_search_are_scoped_to_the_user(database):
    """list and search show only the named user's items; search prints breakdowns."""
    status, text = cli("--db", str(database), "list", "--user", "bob")
    assert status == 0 and "green tea" in text and "database" not in text
    status, text = cli("--db", str(database), "search", "database", "--user", "ana")
    assert "relevance" in text and "PostgreSQL" in text and "MySQL" not in text


def test_history_shows_the_supersession(database):
    """history lists an item's audit trail."""
    status, text = cli("--db", str(database), "history", "fact-1", "--user", "ana")
    assert status == 0 and "supersede fact-1" in text


def test_export_then_import_round_trips(database, tmp_path):
    """export writes JSON Lines that import reads back into another database."""
    _, exported = cli("--db", str(database), "export", "--user", "ana")
    (tmp_path / "ana.jsonl").write_text(exported, encoding="utf-8")
    status, text = cli("--db", str(tmp_path / "copy.db"), "import", str(tmp_path / "ana.jsonl"))
    assert status == 0 and text == "imported 3 items\n"
    _, again = cli("--db", str(tmp_path / "copy.db"), "export", "--user", "ana")
    assert again == exported


def test_import_of_a_bad_line_writes_nothing(database, tmp_path):
    """V3: one invalid line, and no line is imported; the error names the line."""
    _, exported = cli("--db", str(database), "export", "--user", "bob")
    (tmp_path / "bad.jsonl").write_text(exported + json.dumps({"id": "x"}) + "\n", encoding="utf-8")
    status, _ = cli("--db", str(tmp_path / "copy.db"), "import", str(tmp_path / "bad.jsonl"))
    assert status == 1
    assert SQLiteStore(tmp_path / "copy.db").list("bob") == []


def test_forget_user_deletes_their_memory(database):
    """forget-user deletes the user's items and reports how many."""
    assert cli("--db", str(database), "forget-user", "ana") == (0, "deleted 3 items of ana\n")
    assert cli("--db", str(database), "list", "--user", "ana") == (0, "")


def test_missing_file_corrupt_file_and_bad_arguments_fail_clearly(tmp_path, capsys):
    """V1, V2: a missing file exits 2 without creating it; a corrupt one exits 1; a bad command exits 2."""
    assert cli("--db", str(tmp_path / "none.db"), "stats")[0] == 2 and not (tmp_path / "none.db").exists()
    (tmp_path / "junk.db").write_bytes(b"junk" * 1000)
    assert cli("--db", str(tmp_path / "junk.db"), "stats")[0] == 1
    assert cli("--db", str(tmp_path / "junk.db"), "explode")[0] == 2
    assert "error:" in capsys.readouterr().err


def test_python_dash_m_runs_the_command_line(database):
    """`python -m recuris` is the entry point."""
    completed = subprocess.run(
        [sys.executable, "-m", "recuris", "--db", str(database), "stats"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0 and "users: 2" in completed.stdout


READING = [["stats"], ["list", "--user", "ana"], ["search", "x", "--user", "ana"], ["history", "i1"],
           ["export", "--user", "ana"]]


@pytest.mark.parametrize("make", [another_application, future_version, empty])
@pytest.mark.parametrize("command", READING, ids=lambda command: command[0])
def test_a_reading_command_changes_no_byte_of_a_file_it_refuses(tmp_path, make, command):
    """V4, S16: a reading command refuses a file not its own with exit 1, and leaves it as it was."""
    path = make(tmp_path / "x.db")
    before = path.read_bytes()
    assert cli("--db", str(path), *command)[0] == 1
    assert path.read_bytes() == before


def test_search_on_a_corrupt_database_exits_1_with_a_message(database, capsys):
    """V5: a search whose recall could not read the database fails loudly, like the other reading commands."""
    corrupt(database, "items", "items_thread", "postings")
    assert cli("--db", str(database), "search", "database", "--user", "ana") == (1, "")
    assert "error: search could not read" in capsys.readouterr().err


ITEM = '{"id": "i9", "user_id": "ana", "level": "episodic", "content": "deploy failed"'


@pytest.mark.parametrize(
    "line, rule",
    [
        (ITEM.encode() + b', "access_count": "abc"}', "I1: access_count"),
        (ITEM.encode() + b', "access_count": 18446744073709551616}', "I1: access_count"),
        (ITEM.encode() + b', "created_at": 100000000000000000000}', "I1: created_at"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (ITEM.encode() + b', "metadata": ' + b'{"a": ' * 900 + b"1" + b"}" * 900 + b"}", "I2: metadata"),
        (ITEM.encode() + b', "metadata": {"note": "caf\\udce9"}}', "valid Unicode"),
        (ITEM.encode()[:-1] + b' \xff"}', "utf-8"),
    ],
    ids=["text count", "count past 2**63", "time past the cap", "nested line", "nested metadata",
         "lone surrogate", "invalid UTF-8"],
)
def test_a_bad_import_line_is_refused_by_number_and_rule_and_nothing_changes(database, tmp_path, capsys,
                                                                             line, rule):
    """V2, V3: a line that breaks a rule exits 1 naming its number and the rule; nothing stored changes."""
    _, before = cli("--db", str(database), "export", "--user", "ana")
    path = tmp_path / "bad.jsonl"
    path.write_bytes(before.splitlines()[0].encode() + b"\n" + line + b"\n")
    status, _ = cli("--db", str(database), "import", str(path))
    error = capsys.readouterr().err
    assert status == 1 and "line 2" in error and rule in error
    assert cli("--db", str(database), "export", "--user", "ana")[1] == before
