"""The command line, `python -m recuris`, as an operator runs it (V1-V21, VA1-VA8).

Through `subprocess` where the rule is about the shell (exit status, environment, standard
streams), in process where it is about data.
"""

import contextlib
import io
import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
from databases import (
    another_application,
    another_process_holding,
    corrupt,
    empty,
    future_version,
)
from interrupted import interrupted_reading

from recuris import ManualClock, MemoryItem, MemoryManager, ReflectionCallback, SQLiteStore
from recuris.manager.cli import main
from recuris.manager.cli_arguments import ENVIRONMENT_DATABASE
from recuris.manager.entry import run_piped

ROOT = Path(__file__).resolve().parents[2]


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
    """MG1, Q4: list and search show only the named user's items; search prints breakdowns."""
    status, text = cli("--db", str(database), "list", "--user", "bob")
    assert status == 0 and "green tea" in text and "database" not in text
    status, text = cli("--db", str(database), "search", "database", "--user", "ana")
    assert "relevance" in text and "PostgreSQL" in text and "MySQL" not in text


def test_history_shows_the_supersession(database):
    """MG4: history lists an item's audit trail, its supersession among it."""
    status, text = cli("--db", str(database), "history", "fact-1", "--user", "ana")
    assert status == 0 and "supersede fact-1" in text


def test_export_then_import_round_trips(database, tmp_path):
    """V11: export writes JSON Lines that import reads back into another database."""
    _, exported = cli("--db", str(database), "export", "--user", "ana")
    (tmp_path / "ana.jsonl").write_text(exported, encoding="utf-8")
    status, text = cli("--db", str(tmp_path / "copy.db"), "import", str(tmp_path / "ana.jsonl"))
    assert status == 0 and text == "imported 3 items\n"
    _, again = cli("--db", str(tmp_path / "copy.db"), "export", "--user", "ana")
    assert again == exported


def test_an_exported_user_imported_into_another_file_is_found_by_the_same_searches(
    database, tmp_path
):
    """V11, SH4: after export and import, each search finds the same items in the copy."""
    store = SQLiteStore(database)
    store.delete("ana", ["fact-1"])  # a gap in the numbers, which the copy does not have
    store.close()
    _, exported = cli("--db", str(database), "export", "--user", "ana")
    (tmp_path / "ana.jsonl").write_text(exported, encoding="utf-8")
    cli("--db", str(tmp_path / "copy.db"), "import", str(tmp_path / "ana.jsonl"))
    for query in ("database", "deploy step", "postgresql failed"):
        searched = [
            cli("--db", str(path), "search", query, "--user", "ana", "--at", "5000", "--json")[1]
            for path in (database, tmp_path / "copy.db")
        ]
        assert searched[0] == searched[1] and searched[0].strip()


def test_a_reading_command_whose_reader_closed_the_pipe_ends_quietly_with_status_0(database):
    """V2: a reader that stops early (`| head`) is not an error: no message, status 0."""
    reading, writing = os.pipe()
    os.close(reading)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "recuris", "--db", str(database), "list", "--user", "ana"],
            cwd=ROOT,
            stdout=writing,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(writing)
    assert (done.returncode, done.stderr) == (0, "")


def test_import_of_a_bad_line_writes_nothing(database, tmp_path):
    """V3: one invalid line, and no line is imported; the error names the line."""
    _, exported = cli("--db", str(database), "export", "--user", "bob")
    (tmp_path / "bad.jsonl").write_text(exported + json.dumps({"id": "x"}) + "\n", encoding="utf-8")
    status, _ = cli("--db", str(tmp_path / "copy.db"), "import", str(tmp_path / "bad.jsonl"))
    assert status == 1
    assert SQLiteStore(tmp_path / "copy.db").list("bob") == []


def test_forget_user_deletes_their_memory(database):
    """MG3: forget-user deletes the user's items and reports how many."""
    assert cli("--db", str(database), "forget-user", "ana", "--yes") == (
        0,
        "deleted 3 items of ana\n",
    )
    assert cli("--db", str(database), "list", "--user", "ana") == (0, "")


def test_missing_file_corrupt_file_and_bad_arguments_fail_clearly(tmp_path, capsys):
    """V1, V2: a missing file exits 2, not created; a corrupt one exits 1; a bad command exits 2."""
    assert (
        cli("--db", str(tmp_path / "none.db"), "stats")[0] == 2
        and not (tmp_path / "none.db").exists()
    )
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


READING = [
    ["stats"],
    ["list", "--user", "ana"],
    ["search", "x", "--user", "ana"],
    ["history", "i1"],
    ["export", "--user", "ana"],
]


@pytest.mark.parametrize("make", [another_application, future_version, empty])
@pytest.mark.parametrize("command", READING, ids=lambda command: command[0])
def test_a_reading_command_changes_no_byte_of_a_file_it_refuses(tmp_path, make, command):
    """V4, SF2: a reading command refuses a file not its own with exit 1, leaving it as it was."""
    path = make(tmp_path / "x.db")
    before = path.read_bytes()
    assert cli("--db", str(path), *command)[0] == 1
    assert path.read_bytes() == before


def test_search_on_a_corrupt_database_exits_1_with_a_message(database, capsys):
    """V5: a search whose recall could not read the database fails loudly, like other reads."""
    corrupt(database, "items", "items_thread", "postings")
    assert cli("--db", str(database), "search", "database", "--user", "ana") == (1, "")
    assert "is damaged (database disk image is malformed)" in capsys.readouterr().err


ITEM = '{"id": "i9", "user_id": "ana", "level": "episodic", "content": "deploy failed"'


@pytest.mark.parametrize(
    "line, rule",
    [
        (ITEM.encode() + b', "access_count": "abc"}', "I1: access_count"),
        (ITEM.encode() + b', "access_count": 18446744073709551616}', "I1: access_count"),
        (ITEM.encode() + b', "created_at": 100000000000000000000}', "I1: created_at"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (
            ITEM.encode() + b', "metadata": ' + b'{"a": ' * 900 + b"1" + b"}" * 900 + b"}",
            "I2: metadata",
        ),
        (ITEM.encode() + b', "metadata": {"note": "caf\\udce9"}}', "valid Unicode"),
        (ITEM.encode()[:-1] + b' \xff"}', "utf-8"),
    ],
    ids=[
        "text count",
        "count past 2**63",
        "time past the cap",
        "nested line",
        "nested metadata",
        "lone surrogate",
        "invalid UTF-8",
    ],
)
def test_a_bad_import_line_is_refused_by_number_and_rule_and_nothing_changes(
    database, tmp_path, capsys, line, rule
):
    """V2, V3: a line breaking a rule exits 1 naming its number and rule; nothing changes."""
    _, before = cli("--db", str(database), "export", "--user", "ana")
    path = tmp_path / "bad.jsonl"
    path.write_bytes(before.splitlines()[0].encode() + b"\n" + line + b"\n")
    status, _ = cli("--db", str(database), "import", str(path))
    error = capsys.readouterr().err
    assert status == 1 and "line 2" in error and rule in error
    assert cli("--db", str(database), "export", "--user", "ana")[1] == before


def shell(*arguments, environment=None, stdin=None):
    """Run `python -m recuris ARGUMENTS` as a user does; return the completed process."""
    env = {key: value for key, value in os.environ.items() if key != ENVIRONMENT_DATABASE}
    return subprocess.run(
        [sys.executable, "-m", "recuris", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**env, **(environment or {})},
        input=stdin,
        timeout=60,
    )


def test_help_of_a_command_explains_its_options():
    """VA3: `search --help` shows each option of search with its explanation."""
    completed = shell("search", "--help")
    text = " ".join(completed.stdout.split())  # argparse wraps lines to the terminal's width
    assert completed.returncode == 0 and "--task-type" in text and "the recall clock" in text
    assert "RECURIS_DB environment variable" in text


def test_db_is_accepted_before_or_after_the_command(database):
    """VA1: `--db FILE stats` and `stats --db FILE` do the same thing."""
    before, after = shell("--db", str(database), "stats"), shell("stats", "--db", str(database))
    assert before.returncode == after.returncode == 0 and before.stdout == after.stdout
    assert "users: 2" in after.stdout


def test_the_database_can_come_from_the_environment_and_the_option_wins(database, tmp_path):
    """VA1: RECURIS_DB names the database when --db is absent; a --db on the command line wins."""
    from_environment = shell(
        "list", "--user", "bob", environment={ENVIRONMENT_DATABASE: str(database)}
    )
    assert from_environment.returncode == 0 and "green tea" in from_environment.stdout
    absent = str(tmp_path / "absent.db")
    assert (
        shell(
            "list",
            "--user",
            "bob",
            "--db",
            str(database),
            environment={ENVIRONMENT_DATABASE: absent},
        ).stdout
        == from_environment.stdout
    )


def test_no_database_named_is_a_usage_error():
    """VA2: neither --db nor RECURIS_DB exits 2 and says how to name one."""
    completed = shell("stats")
    assert completed.returncode == 2 and ENVIRONMENT_DATABASE in completed.stderr


JSON_COMMANDS = [
    ["stats"],
    ["list", "--user", "ana"],
    ["search", "database", "--user", "ana", "--at", "1000"],
    ["history", "fact-1"],
    ["export", "--user", "ana"],
]


@pytest.mark.parametrize("command", JSON_COMMANDS, ids=lambda command: command[0])
def test_json_prints_one_object_per_line_on_every_reading_command(database, command):
    """V6: with --json, each output line is one JSON object, and there is at least one."""
    completed = shell(*command, "--json", "--db", str(database))
    lines = completed.stdout.splitlines()
    assert completed.returncode == 0 and lines
    assert all(isinstance(json.loads(line), dict) for line in lines)


@pytest.mark.parametrize(
    "bad",
    [
        ["search", "x", "--user", "ana", "--top-k", "0"],
        ["search", "x", "--user", "ana", "--top-k", "many"],
        ["search", "x", "--user", "ana", "--at", "yesterday"],
        ["stats", "--timeout", "-1"],
        ["list"],
        ["explode"],
    ],
    ids=["top-k-0", "top-k-word", "at-word", "negative-timeout", "no-user", "no-command"],
)
def test_a_bad_command_line_exits_2_and_creates_no_file(tmp_path, bad):
    """V2, VA2: a malformed command line exits 2 with a message and creates no file."""
    completed = shell("--db", str(tmp_path / "new.db"), *bad)
    assert completed.returncode == 2 and "error:" in completed.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_bad_command_line_changes_no_byte_of_the_database(database):
    """VA2: a usage error on an existing database (`--top-k 0` on search) leaves it as it was."""
    before = database.read_bytes()
    assert (
        shell("search", "x", "--user", "ana", "--top-k", "0", "--db", str(database)).returncode == 2
    )
    assert database.read_bytes() == before


def test_search_at_a_time_scores_recency_from_that_time_and_a_task_type_brings_procedures(database):
    """VA4, H1: `--at` is the recall clock; `--task-type` triggers the procedures of that type."""
    manager = MemoryManager(SQLiteStore(database), clock=ManualClock(1_000))
    manager.write(
        "release",
        "ana",
        level="procedural",
        metadata={"steps": ["test", "ship"], "task_types": ["deploy"]},
    )
    manager.store.close()
    found = shell("search", "database", "--user", "ana", "--at", "1000", "--db", str(database))
    assert found.returncode == 0 and "recency 1.00" in found.stdout
    procedure = shell(
        "search", "what next", "--user", "ana", "--task-type", "deploy", "--db", str(database)
    )
    assert procedure.returncode == 0 and "[procedural]" in procedure.stdout


def test_at_reads_iso_8601_as_the_same_moment_as_epoch_seconds(database):
    """VA4: `--at 1970-01-01T00:16:40Z` and `--at 1000` are the same recall clock."""
    runs = [
        shell(
            "search", "database", "--user", "ana", "--json", "--at", at, "--db", str(database)
        ).stdout
        for at in ("1000", "1970-01-01T00:16:40Z", "1970-01-01T01:16:40+01:00")
    ]
    assert runs[0] and runs[0] == runs[1] == runs[2]


def test_import_reads_standard_input_for_a_dash_and_says_so_in_its_help(database, tmp_path):
    """V11, VA3: `import -` reads standard input, and `import --help` says that "-" means it."""
    exported = shell("export", "--user", "bob", "--db", str(database)).stdout
    completed = shell("import", "-", "--db", str(tmp_path / "copy.db"), stdin=exported)
    assert completed.returncode == 0 and completed.stdout == "imported 1 items\n"
    assert '"-" reads standard input' in " ".join(shell("import", "--help").stdout.split())


def test_an_import_that_fails_creates_no_database(database, tmp_path):
    """V8: a bad line, or a batch the store refuses, leaves no database file nor journal behind."""
    item = json.loads(shell("export", "--user", "bob", "--db", str(database)).stdout)
    folder = tmp_path / "imports"
    folder.mkdir()
    (folder / "bad.jsonl").write_text(json.dumps(item) + "\nnot json\n", encoding="utf-8")
    stolen = {
        **item,
        "user_id": "eve",
    }  # the same id for another user: the store refuses the batch (S2)
    (folder / "refused.jsonl").write_text(
        f"{json.dumps(item)}\n{json.dumps(stolen)}\n", encoding="utf-8"
    )
    for name in ("bad.jsonl", "refused.jsonl"):
        completed = shell("import", str(folder / name), "--db", str(folder / "copy.db"))
        assert completed.returncode == 1 and "error:" in completed.stderr
        assert sorted(path.name for path in folder.iterdir()) == ["bad.jsonl", "refused.jsonl"]


def test_forget_user_without_yes_says_what_it_would_delete_and_deletes_nothing(database):
    """V7: forget-user without --yes exits 2 naming what would be deleted, and changes no byte."""
    before = database.read_bytes()
    completed = shell("forget-user", "ana", "--db", str(database))
    assert completed.returncode == 2 and "would delete 3 items of 'ana'" in completed.stderr
    assert "--yes" in completed.stderr and database.read_bytes() == before


def test_forget_user_of_a_user_with_nothing_says_so_and_writes_nothing(database):
    """V7: forgetting a user the database has never heard of exits 1 and adds no audit record."""
    records = len(SQLiteStore(database, read_only=True).audit())
    completed = shell("forget-user", "anna", "--yes", "--db", str(database))
    assert completed.returncode == 1 and "'anna' has no memory" in completed.stderr
    assert len(SQLiteStore(database, read_only=True).audit()) == records


def test_export_with_audit_carries_the_trail_and_import_restores_it(database, tmp_path):
    """V9: `export --with-audit` adds the user's audit records; `import` brings them back."""
    exported = shell("export", "--user", "ana", "--with-audit", "--db", str(database)).stdout
    trail = [json.loads(line)["audit"] for line in exported.splitlines() if '"audit"' in line[:9]]
    assert {"supersede", "write"} <= {record["operation"] for record in trail}
    completed = shell("import", "-", "--db", str(tmp_path / "copy.db"), stdin=exported)
    assert completed.returncode == 0 and f"and {len(trail)} audit records" in completed.stdout
    copied = SQLiteStore(tmp_path / "copy.db", read_only=True).audit("ana")
    assert [asdict(record) for record in copied][: len(trail)] == trail


def exported_lines(database, user="ana", *options):
    """Return the lines `export` writes for a user, as JSON objects."""
    _, text = cli("--db", str(database), "export", "--user", user, *options)
    return [json.loads(line) for line in text.splitlines()]


def import_lines(database, tmp_path, lines, *options):
    """Write JSON objects as a JSON Lines file and import it; return (status, out, err)."""
    path = tmp_path / "lines.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = io.StringIO()
    error = io.StringIO()
    with contextlib.redirect_stderr(error):
        status = main(["--db", str(database), "import", str(path), *options], out)
    return status, out.getvalue(), error.getvalue()


def test_import_refuses_an_id_given_twice_in_one_file(database, tmp_path):
    """V12: an id on two lines of one file is refused, naming both lines; nothing is stored."""
    [item] = exported_lines(database, "bob")
    twice = [{**item, "id": "new-1"}, {**item, "id": "new-1", "content": "likes coffee"}]
    status, out, error = import_lines(database, tmp_path, twice)
    assert status == 1 and "line 2" in error and "line 1" in error and "new-1" in error
    assert out == "" and [i["id"] for i in exported_lines(database, "bob")] == [item["id"]]


@pytest.mark.parametrize(
    "field, value",
    [("superseded_by", 5), ("superseded_by", ["fact-2"]), ("task_id", ["t"]), ("task_id", " ")],
)
def test_import_refuses_a_link_field_of_the_wrong_type(database, tmp_path, capsys, field, value):
    """I1, V2: task_id and superseded_by are text or null; anything else exits 1, naming I1."""
    [item] = exported_lines(database, "bob")
    status, _, error = import_lines(database, tmp_path, [{**item, field: value}])
    assert status == 1 and "line 1" in error and f"I1: {field}" in error
    assert "ProgrammingError" not in error and "MemoryItem" not in error


def test_import_counts_what_it_stored(database, tmp_path):
    """V12: the count printed is the count of items stored, and of audit records written."""
    lines = exported_lines(database, "ana", "--with-audit")
    status, out, _ = import_lines(tmp_path / "copy.db", tmp_path, lines)
    stored = SQLiteStore(tmp_path / "copy.db", read_only=True)
    items = len(stored.list("ana"))
    assert status == 0 and out == f"imported {items} items and {len(lines) - items} audit records\n"


def test_import_refuses_the_items_of_a_forgotten_user_unless_told(database, tmp_path):
    """V13: a user forgotten in the file is not brought back silently: counted, then refused."""
    lines = exported_lines(database, "ana", "--with-audit")
    assert cli("--db", str(database), "forget-user", "ana", "--yes")[0] == 0
    status, out, error = import_lines(database, tmp_path, lines)
    assert status == 1 and out == "" and "3 items" in error and "--restore-forgotten" in error
    assert "'ana'" in error and exported_lines(database, "ana") == []
    status, out, _ = import_lines(database, tmp_path, lines, "--restore-forgotten")
    assert status == 0 and out.startswith("imported 3 items")
    assert len(exported_lines(database, "ana")) == 3


@pytest.mark.parametrize("where", ["stored", "in the file"])
def test_import_refuses_an_audit_record_of_another_users_item(database, tmp_path, where):
    """V12: an audit line of user eve naming bob's item is refused, naming the line."""
    [item] = exported_lines(database, "bob")
    record = {
        "item_id": item["id"],
        "operation": "write",
        "reason": "mine",
        "at": 1.0,
        "weight": None,
        "user_id": "eve",
    }
    lines = [{"audit": record}] if where == "stored" else [item, {"audit": record}]
    status, _, error = import_lines(database, tmp_path, lines)
    assert status == 1 and f"{item['id']!r}" in error and "'bob'" in error
    assert all(entry.user_id != "eve" for entry in SQLiteStore(database, read_only=True).audit())


@pytest.mark.parametrize(
    "field, value",
    [
        ("at", float("nan")),
        ("at", 1e300),
        ("user_id", " "),
        ("item_id", "\ud800"),
        ("weight", True),
    ],
)
def test_import_refuses_an_audit_record_breaking_a_rule(database, tmp_path, field, value):
    """V12: an audit line is checked as an item is: a time a store keeps, text, a weight."""
    record = {
        "item_id": "x",
        "operation": "write",
        "reason": "",
        "at": 1.0,
        "weight": None,
        "user_id": "ana",
        field: value,
    }
    status, _, error = import_lines(database, tmp_path, [{"audit": record}])
    assert status == 1 and "line 1" in error and "V12" in error and field in error


class CountingInput(io.BytesIO):
    """Standard input that counts the bytes read from it."""

    read_bytes = 0

    def readline(self, size=-1):
        line = super().readline(size)
        self.read_bytes += len(line)
        return line

    def __iter__(self):
        return iter(self.readline, b"")


def test_import_refuses_a_line_past_the_cap_before_reading_it_whole(database, monkeypatch, capsys):
    """V14: a line longer than --max-line-bytes is refused, having read no more than the cap."""
    from recuris.manager.cli_arguments import MAX_LINE_BYTES

    [item] = exported_lines(database, "bob")
    long = json.dumps({**item, "id": "long-1", "content": "x" * 10 * MAX_LINE_BYTES}).encode()
    stdin = CountingInput(long + b"\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stdin))
    assert main(["--db", str(database), "import", "-"], io.StringIO()) == 1
    error = capsys.readouterr().err
    assert "line 1" in error and "--max-line-bytes" in error and f"{MAX_LINE_BYTES:,}" in error
    assert stdin.read_bytes <= MAX_LINE_BYTES + 1
    small = CountingInput(long + b"\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(small))
    arguments = ["--db", str(database), "import", "-", "--max-line-bytes", str(len(long))]
    assert main(arguments, io.StringIO()) == 0


def test_import_reads_a_file_that_begins_with_a_byte_order_mark(database, tmp_path):
    """V11: a UTF-8 byte-order mark (as some editors write) is read as the start of the file."""
    _, exported = cli("--db", str(database), "export", "--user", "bob")
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + exported.encode("utf-8"))
    status, text = cli("--db", str(tmp_path / "copy.db"), "import", str(path))
    assert (status, text) == (0, "imported 1 items\n")


def with_procedure(database):
    """Give ana a procedure in the database; return her exported lines, audit included."""
    manager = MemoryManager(SQLiteStore(database), clock=ManualClock(1_000))
    manager.write(
        "deploy", "ana", level="procedural", metadata={"steps": ["build"], "keywords": ["deploy"]}
    )
    manager.store.close()
    return exported_lines(database, "ana", "--with-audit")


def edited_import(tmp_path, lines, chosen, field, value) -> tuple[int, int, str, str]:
    """Edit the metadata `field` of the first line `chosen` picks (None deletes it), import the
    lines into a new copy.db; return the line's number, the status, standard output and error."""
    [number, line] = next((number, line) for number, line in enumerate(lines, 1) if chosen(line))
    metadata = {key: kept for key, kept in line["metadata"].items() if key != field}
    lines[number - 1] = {
        **line,
        "metadata": metadata if value is None else {**metadata, field: value},
    }
    return (number, *import_lines(tmp_path / "copy.db", tmp_path, lines))


EDITS = {
    "procedure-without-keywords": ("procedural", "keywords", None, "H5"),
    "procedure-without-name": ("procedural", "name", None, "H5"),
    "procedure-with-steps-as-text": ("procedural", "steps", "build", "H5"),
    "fact-without-sources": ("semantic", "source_ids", None, "FA4"),
    "fact-with-no-source": ("semantic", "source_ids", [], "FA4"),
    "fact-with-sources-5": ("semantic", "source_ids", 5, "FA4"),
}


@pytest.mark.parametrize("level, field, value, rule", EDITS.values(), ids=EDITS)
def test_import_refuses_a_procedure_or_fact_line_its_layer_cannot_read(
    database, tmp_path, level, field, value, rule
):
    """V12, H5, FA4: a procedure's or a fact's metadata edited in an export is refused, naming
    the line and the rule; nothing is stored."""
    lines = with_procedure(database)
    picked = lambda line: line.get("level") == level  # noqa: E731
    number, status, out, error = edited_import(tmp_path, lines, picked, field, value)
    assert status == 1 and out == "" and f"line {number}: {rule}" in error
    assert not (tmp_path / "copy.db").exists()


def with_episode_insight_and_task(database):
    """Give ana an episode, an insight and a task in progress; return her exported lines."""
    manager = MemoryManager(SQLiteStore(database), clock=ManualClock(1_000))
    manager.start_task("ana", "deploy the api", "deploy")
    manager.record_step("ana", "build", "ok")
    manager.finish_task("ana")
    manager.start_task("ana", "deploy the api again", "deploy")
    reply = (
        '{"insights": [{"type": "user_fact", "content": "deploys on Fridays", '
        '"confidence": 0.9, "supersedes": null}]}'
    )
    callback = ReflectionCallback(lambda prompt: reply, manager, user_id="ana")
    callback.add_interaction("We deploy on Fridays.", "Noted.")
    assert not callback.reflect().failed
    manager.store.close()
    return exported_lines(database, "ana")


KINDS = {
    "episode": lambda line: line["metadata"].get("kind") == "episode",
    "insight": lambda line: line["metadata"].get("kind") == "insight",
    "task": lambda line: line["metadata"].get("kind") == "task",
    "event": lambda line: line["metadata"].get("kind") == "event",
}

UNREADABLE_LINES = {
    "episode-without-trajectory": ("episode", "trajectory", None, "AR4"),
    "episode-with-trajectory-as-text": ("episode", "trajectory", "build", "AR4"),
    "episode-with-an-unknown-status": ("episode", "status", "weird", "AR4"),
    "insight-without-type": ("insight", "type", None, "Y8"),
    "insight-without-sources": ("insight", "source_ids", None, "Y8"),
    "task-with-type-as-number": ("task", "task_type", 5, "N8"),
    "task-without-working-memory": ("task", "working", None, "N8"),
    "event-with-merged-ids-as-text": ("event", "merged_ids", "item-1", "O7"),
    "event-with-sources-as-object": ("event", "source_ids", {"item-1": True}, "O7"),
    "insight-with-merged-ids-as-number": ("insight", "merged_ids", 5, "O7"),
}


@pytest.mark.parametrize(
    "kind, field, value, rule", UNREADABLE_LINES.values(), ids=UNREADABLE_LINES
)
def test_import_refuses_an_episode_insight_task_or_item_to_merge_its_reader_cannot_read(
    database, tmp_path, kind, field, value, rule
):
    """V12, AR4, Y8, N8, O7: an episode's, an insight's, a task's or an episodic or semantic
    item's sources edited in an export are refused, naming the line and the rule; nothing is
    stored."""
    lines = [*with_episode_insight_and_task(database), *exported_lines(database, "bob")]
    number, status, out, error = edited_import(tmp_path, lines, KINDS[kind], field, value)
    assert status == 1 and out == "" and f"line {number}: {rule}" in error
    assert not (tmp_path / "copy.db").exists()


def test_import_refuses_a_second_task_in_progress_of_a_user(database, tmp_path):
    """V12, N1: a task line of a user with a task in progress, stored or on an earlier line, is
    refused, naming the line and N1; nothing is stored."""
    manager = MemoryManager(SQLiteStore(database), clock=ManualClock(1_000))
    manager.start_task("ana", "move the database to PostgreSQL")
    manager.store.close()
    [task] = [line for line in exported_lines(database, "ana") if line["level"] == "working"]
    other = {**task, "id": "item-77", "task_id": "task-77"}
    status, out, error = import_lines(database, tmp_path, [other])
    assert status == 1 and out == "" and "line 1: N1" in error and task["id"] in error
    status, out, error = import_lines(tmp_path / "copy.db", tmp_path, [task, other])
    assert status == 1 and out == "" and "line 2: N1" in error and "line 1" in error
    assert not (tmp_path / "copy.db").exists()
    assert [line["id"] for line in exported_lines(database, "ana")].count("item-77") == 0


@pytest.mark.parametrize("into", ["a copy", "the database exported"])
def test_importing_one_file_again_changes_nothing(database, tmp_path, into):
    """V19: lines equal to what is stored are skipped, audited by no record, and said so."""
    lines = with_procedure(database)
    target = tmp_path / "copy.db" if into == "a copy" else database
    if into == "a copy":
        assert import_lines(target, tmp_path, lines)[0] == 0
    before = exported_lines(target, "ana", "--with-audit")
    items = sum("audit" not in line for line in lines)
    status, out, _ = import_lines(target, tmp_path, lines)
    skipped = f"skipped {items} items and {len(lines) - items} audit records"
    assert status == 0 and out.startswith("imported 0 items;") and skipped in out
    assert exported_lines(target, "ana", "--with-audit") == before


def test_import_refuses_a_line_whose_id_is_stored_with_other_fields(database, tmp_path):
    """V19: an item line whose id is stored with another value is refused, naming the line,
    the id and the fields; nothing is stored, the stored fact is unchanged."""
    lines = exported_lines(database, "ana")
    before = exported_lines(database, "ana", "--with-audit")
    [number, fact] = next((n, line) for n, line in enumerate(lines, 1) if line["id"] == "fact-2")
    changed = {**fact, "content": "database: SQLite", "metadata": {**fact["metadata"]}}
    changed["metadata"]["value"] = "SQLite"
    lines[number - 1] = changed
    status, out, error = import_lines(database, tmp_path, [*lines, {**fact, "id": "fact-new"}])
    assert status == 1 and out == "" and f"line {number}: V19" in error and "'fact-2'" in error
    assert "content, metadata" in error
    assert exported_lines(database, "ana", "--with-audit") == before


def test_import_replace_stored_stores_a_changed_line_in_place_of_the_stored_item(
    database, tmp_path
):
    """V22: with --replace-stored, an item line whose id is stored with other fields is
    stored in its place, audited as a replacement; the other lines import as before."""
    lines = exported_lines(database, "ana")
    [number, fact] = next((n, line) for n, line in enumerate(lines, 1) if line["id"] == "fact-2")
    changed = {**fact, "content": "database: SQLite", "metadata": {**fact["metadata"]}}
    changed["metadata"]["value"] = "SQLite"
    lines[number - 1] = changed
    refused = import_lines(database, tmp_path, lines)
    assert refused[0] == 1 and "--replace-stored" in refused[2]
    status, out, error = import_lines(database, tmp_path, lines, "--replace-stored")
    assert (status, error) == (0, "") and "replaced 1 stored items" in out
    stored = {line["id"]: line for line in exported_lines(database, "ana")}
    assert stored["fact-2"] == changed
    history = exported_lines(database, "ana", "--with-audit")
    assert any(
        "audit" in line
        and line["audit"]["item_id"] == "fact-2"
        and "replaced" in line["audit"]["reason"]
        for line in history
    )


def test_export_escapes_the_line_breaks_json_leaves_raw(database, tmp_path):
    """V20: U+0085, U+2028 and U+2029 in a memory are written escaped, so a line reader that
    splits on them reads one line per item; import reads the text back as it was."""
    text = "first\u2028second\u2029third\x85fourth"
    manager = MemoryManager(SQLiteStore(database), clock=ManualClock(1_000))
    manager.write(text, "eve", level="episodic")
    manager.store.close()
    for options in ([], ["--json"]):
        _, exported = cli("--db", str(database), "export", "--user", "eve", *options)
        assert len(exported.splitlines()) == 1 and "\\u2028" in exported
    (tmp_path / "eve.jsonl").write_text(exported, encoding="utf-8")
    assert cli("--db", str(tmp_path / "copy.db"), "import", str(tmp_path / "eve.jsonl"))[0] == 0
    assert [line["content"] for line in exported_lines(tmp_path / "copy.db", "eve")] == [text]


def test_search_beside_a_stored_item_its_layer_cannot_read_answers_and_warns(database):
    """MG8, H5: a procedure stored without keywords (written by a fork, say) is left out of
    `search`, which answers with the rest, exit 0, and names the item and H5 on stderr."""
    with_unreadable_procedure(database)
    found = shell("search", "database", "--user", "ana", "--db", str(database))
    assert found.returncode == 0 and "PostgreSQL" in found.stdout
    assert "procedure-9" in found.stderr and "H5" in found.stderr
    assert "Traceback" not in found.stderr


def test_an_item_line_missing_fields_is_named_in_words(database, tmp_path):
    """V15: a line missing required fields names them, not a Python signature."""
    status, _, error = import_lines(database, tmp_path, [{"id": "x"}])
    assert status == 1 and "line 1" in error and "user_id" in error and "content" in error
    assert "__init__" not in error and "MemoryItem" not in error


def test_a_damaged_file_is_named_as_damaged_in_words(database, capsys):
    """V15: a damaged file's error names no Python class and says the file is damaged."""
    corrupt(database, "items", "items_thread", "postings")
    for command in (["list", "--user", "ana"], ["search", "database", "--user", "ana"]):
        assert cli("--db", str(database), *command)[0] == 1
        error = capsys.readouterr().err
        assert "damaged" in error and "Error" not in error.replace("error:", ""), error


@pytest.mark.processes
def test_a_locked_database_says_to_wait_or_give_a_longer_timeout(database, capsys):
    """V15: a write that waited out --timeout says so and names the option, not a class."""
    with another_process_holding(database, "BEGIN IMMEDIATE"):
        status, _ = cli("--db", str(database), "--timeout", "0.1", "forget-user", "bob", "--yes")
    error = capsys.readouterr().err
    assert status == 1 and "--timeout" in error and "OperationalError" not in error


@pytest.mark.parametrize(
    "command, said",
    [
        (["history", "no-such-id"], "no audit record of item 'no-such-id'"),
        (["history", "fact-1", "--user", "bob"], "no audit record of item 'fact-1'"),
        (["list", "--user", "nobody"], "no items of user 'nobody'"),
        (["list", "--user", "bob", "--level", "semantic"], "no semantic items of user 'bob'"),
        (["export", "--user", "nobody"], "nothing to export for user 'nobody'"),
    ],
)
def test_a_reading_command_that_finds_nothing_says_so_on_stderr(database, capsys, command, said):
    """V16: history of an unknown id, list or export of an unknown user: exit 0, said on stderr."""
    assert cli("--db", str(database), *command) == (0, "")
    assert said in capsys.readouterr().err


@pytest.mark.parametrize(
    "command, expected",
    [
        (["forget-user", "bob", "--yes"], {"user": "bob", "deleted_items": 1}),
        (
            ["import", "FILE"],
            {
                "imported_items": 1,
                "replaced_items": 0,
                "imported_audit_records": 0,
                "skipped_items": 0,
                "skipped_audit_records": 0,
            },
        ),
    ],
    ids=["forget-user", "import"],
)
def test_json_works_on_the_writing_commands_too(database, tmp_path, command, expected):
    """V6: forget-user and import take --json and print one JSON object."""
    _, exported = cli("--db", str(database), "export", "--user", "bob")
    (tmp_path / "bob.jsonl").write_text(exported, encoding="utf-8")
    target = database if command[0] == "forget-user" else tmp_path / "copy.db"
    command = [str(tmp_path / "bob.jsonl") if part == "FILE" else part for part in command]
    status, text = cli("--db", str(target), *command, "--json")
    assert status == 0 and json.loads(text) == expected


DAMAGES = ["items", "items_thread", "postings", "audit"]


@pytest.mark.parametrize("damaged", DAMAGES)
def test_stats_on_a_damaged_file_reads_what_it_can_like_list_and_says_what_it_could_not(
    database, capsys, damaged
):
    """V17: stats prints what it could read, names the rest, and exits 1, as list does."""
    corrupt(database, damaged)
    status, text = cli("--db", str(database), "stats")
    error = capsys.readouterr().err
    assert status == 1 and "damaged" in error and "integrity:" in text
    listed, _ = cli("--db", str(database), "list", "--user", "ana")
    assert ("items: unreadable" in text) == (listed == 1)
    audit, _ = cli("--db", str(database), "history", "fact-1")
    assert ("audit records: unreadable" in text) == (audit == 1)


def test_a_reading_command_writes_no_byte_of_the_database_and_only_the_named_companions(
    database,
):
    """V4: reading writes no byte of the file; SQLite's WAL readers add an empty -wal and -shm."""
    from recuris.manager import cli as module

    before = database.read_bytes()
    for command in READING:
        assert cli("--db", str(database), *command)[0] in (0, 1)
    assert database.read_bytes() == before
    companions = sorted(path.name[len(database.name) :] for path in database.parent.iterdir())
    assert companions == ["", "-shm", "-wal"]
    assert database.with_name(database.name + "-wal").stat().st_size == 0
    assert "-shm" in module.__doc__ and "-wal" in module.__doc__


class FoundDamage(SQLiteStore):
    """A store whose integrity check reads, and reports damage."""

    def integrity(self):
        return "row 3 missing from index items_thread"


def test_stats_exits_1_when_the_integrity_check_reads_but_finds_damage(database, capsys):
    """V17: every part read, but the check's verdict is not ok: printed, then exit 1."""
    out = io.StringIO()
    assert main(["--db", str(database), "stats"], out, open_store=FoundDamage) == 1
    assert "integrity: row 3 missing" in out.getvalue() and "users: 2" in out.getvalue()
    assert "damaged" in capsys.readouterr().err


def test_stats_says_whether_an_erasure_is_pending(database, capsys):
    """SE2: while a reader keeps a forget from completing, stats counts it; it reads only, and
    the next store that opens the file for writing completes the erasure."""
    with another_process_holding(database, "BEGIN"):
        status, _ = cli("--db", str(database), "--timeout", "0.2", "forget-user", "ana", "--yes")
        assert status == 1 and "completes by itself" in capsys.readouterr().err
        assert "erasures pending (SE2): 1" in cli("--db", str(database), "stats")[1]
    assert "erasures pending (SE2): 1" in cli("--db", str(database), "stats")[1]
    SQLiteStore(database).close()
    assert "erasures pending (SE2): 0" in cli("--db", str(database), "stats")[1]


def test_ctrl_c_ends_a_command_with_one_line_and_status_130(capsys):
    """V18: a KeyboardInterrupt in a command run through run_piped is one line and 130."""

    def interrupted():
        raise KeyboardInterrupt

    assert run_piped(interrupted) == 130
    assert capsys.readouterr().err == "interrupted (Ctrl-C)\n"


@pytest.mark.processes
def test_ctrl_c_during_an_import_says_one_line_exits_130_and_leaves_no_database(tmp_path):
    """V18, V8: Ctrl-C while `import` reads its file prints one line, exits 130, creates nothing."""
    fifo = tmp_path / "lines.fifo"
    database = tmp_path / "new.db"
    status, out, err = interrupted_reading(
        fifo, "-m", "recuris", "import", str(fifo), "--db", str(database)
    )
    assert (status, out, err) == (130, "", "interrupted (Ctrl-C)\n")
    assert not database.exists()


@pytest.mark.parametrize("name", ["missing.jsonl", "folder"])
def test_an_import_of_a_missing_file_or_a_folder_exits_2_and_creates_nothing(tmp_path, name):
    """V2, VA6: `import` of a FILE that is missing or a folder is one usage error, exit 2."""
    (tmp_path / "folder").mkdir()
    completed = shell("import", str(tmp_path / name), "--db", str(tmp_path / "new.db"))
    assert completed.returncode == 2 and "error: VA6: import" in completed.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["folder"]


def test_stats_on_a_folder_says_it_is_a_folder(tmp_path):
    """VA6: `stats --db FOLDER` says the database named is a folder, exit 2, not "no database"."""
    completed = shell("stats", "--db", str(tmp_path))
    assert completed.returncode == 2 and f"--db {tmp_path} is a folder" in completed.stderr


def test_an_item_forgotten_on_request_is_not_imported_back_unless_told(database, tmp_path):
    """V13: an earlier export does not bring back an item the user asked to forget: the import
    exits 1 naming its line, its id and V13, and stores nothing; the forget record it relies
    on keeps the id through the erasure; `--restore-forgotten` imports it."""
    exported = shell("export", "--user", "ana", "--db", str(database)).stdout
    (tmp_path / "ana.jsonl").write_text(exported, encoding="utf-8")
    number, erased = next(
        (number, json.loads(line)["id"])
        for number, line in enumerate(exported.splitlines(), 1)
        if "deploy failed" in line
    )
    manager = MemoryManager(SQLiteStore(database), clock=ManualClock(2_000))
    assert manager.forget_memory(erased, "ana")
    manager.store.close()
    before = shell("export", "--user", "ana", "--with-audit", "--db", str(database)).stdout
    refused = shell("import", str(tmp_path / "ana.jsonl"), "--db", str(database))
    assert refused.returncode == 1 and refused.stdout == ""
    assert f"line {number}: V13: item {erased!r} of 'ana'" in refused.stderr
    assert "nothing was imported" in refused.stderr and "--restore-forgotten" in refused.stderr
    assert shell("export", "--user", "ana", "--with-audit", "--db", str(database)).stdout == before
    trail = shell("history", erased, "--user", "ana", "--db", str(database)).stdout
    assert f"forget {erased}" in trail and "deploy failed" not in trail
    file = str(tmp_path / "ana.jsonl")
    again = shell("import", file, "--restore-forgotten", "--db", str(database))
    assert again.returncode == 0 and again.stdout.startswith("imported 1 items")
    assert "deploy failed" in shell("list", "--user", "ana", "--db", str(database)).stdout


def with_unreadable_procedure(database):
    """Store for ana a procedure no layer can read (no keywords, H5), as a fork might."""
    broken = {"name": "deploy", "steps": ["build"], "task_types": []}
    store = SQLiteStore(database)
    item = MemoryItem(
        id="procedure-9", user_id="ana", level="procedural", content="deploy", metadata=broken
    )
    store.put([item])
    store.close()


def test_export_writes_an_item_no_layer_can_read_and_names_it_with_its_rule(database):
    """V11, MG8: export writes every item, one no layer can read too, exits 0, and names that
    one on stderr, one line, with the rule import refuses it by."""
    with_unreadable_procedure(database)
    exported = shell("export", "--user", "ana", "--db", str(database))
    assert exported.returncode == 0
    assert [json.loads(line)["id"] for line in exported.stdout.splitlines()].count("procedure-9")
    [said] = exported.stderr.splitlines()
    assert "'procedure-9'" in said and "H5" in said and "--skip-unreadable" in said


def test_import_leaves_out_an_unreadable_item_only_when_told_and_names_it(database, tmp_path):
    """V21, V3: without `--skip-unreadable` a line no layer can read refuses the whole file,
    naming the option; with it the other lines are stored and the line left out is named,
    with its id and rule, on stderr."""
    with_unreadable_procedure(database)
    exported = shell("export", "--user", "ana", "--with-audit", "--db", str(database)).stdout
    (tmp_path / "ana.jsonl").write_text(exported, encoding="utf-8")
    number = next(
        number for number, line in enumerate(exported.splitlines(), 1) if "procedure-9" in line
    )
    copy = tmp_path / "copy.db"
    refused = shell("import", str(tmp_path / "ana.jsonl"), "--db", str(copy))
    assert refused.returncode == 1 and f"line {number}: H5" in refused.stderr
    assert "--skip-unreadable" in refused.stderr and not copy.exists()
    done = shell("import", str(tmp_path / "ana.jsonl"), "--skip-unreadable", "--db", str(copy))
    assert done.returncode == 0 and "left out 1 items no layer can read" in done.stdout
    [said] = done.stderr.splitlines()
    assert said.startswith(f"line {number}: left out item 'procedure-9': H5")
    kept = [json.loads(line) for line in exported.splitlines() if "procedure-9" not in line]
    items = [line for line in kept if "audit" not in line]
    copied = shell("export", "--user", "ana", "--db", str(copy)).stdout
    assert [json.loads(line) for line in copied.splitlines()] == items


@pytest.mark.parametrize(
    "command",
    [
        ["list", "--user", ""],
        ["search", "deploy", "--user", ""],
        ["history", "fact-1", "--user", " "],
        ["export", "--user", ""],
        ["forget-user", "", "--yes"],
    ],
    ids=lambda command: command[0],
)
def test_a_blank_user_exits_2_on_every_command_before_the_file_is_opened(tmp_path, command):
    """VA8, V2: every command refuses a blank user as a usage error, naming the rule, and
    opens no file: a database that does not exist is not created."""
    missing = tmp_path / "missing.db"
    refused = shell(*command, "--db", str(missing))
    assert refused.returncode == 2 and "VA8" in refused.stderr and not missing.exists()


@pytest.mark.parametrize(
    "command, said",
    [
        (["history", "no-such-id"], "no audit record of item 'no-such-id' of any user in"),
        (["history", "fact-1", "--user", "bob"], "no audit record of item 'fact-1' of user 'bob'"),
    ],
)
def test_history_that_finds_nothing_names_the_user_it_looked_at(database, command, said):
    """V16: the note of a history that finds nothing names the user asked about, or says
    that every user was."""
    found = shell(*command, "--db", str(database))
    assert found.returncode == 0 and said in found.stderr


def test_a_query_of_stop_words_only_exits_2_as_one_of_punctuation_does(database):
    """VA7, V2: `search "the of and"` is the usage error `search "!!!"` is, not exit 0 with
    "nothing found"."""
    for query in ("the of and", "!!!"):
        refused = shell("search", query, "--user", "ana", "--db", str(database))
        assert refused.returncode == 2 and "VA7" in refused.stderr and refused.stdout == ""


def test_list_search_and_export_go_on_beside_a_row_whose_metadata_is_not_json(database):
    """MG8 (SH5): `list`, `search` and `export` of a file whose row was edited by hand into
    metadata that is not JSON exit 0 without it, warn naming its id and SH5, and keep the row."""
    with sqlite3.connect(database) as db:
        spoiled = db.execute("SELECT id FROM items WHERE content LIKE 'deploy%'").fetchone()[0]
        db.execute("UPDATE items SET metadata = '{not json' WHERE id = ?", (spoiled,))
        row = db.execute("SELECT * FROM items WHERE id = ?", (spoiled,)).fetchone()
    db.close()
    for command in (
        ["list", "--user", "ana"],
        ["search", "--user", "ana", "deploy database"],
        ["export", "--user", "ana"],
    ):
        done = shell("--db", str(database), *command)
        assert done.returncode == 0, done.stderr
        assert spoiled not in done.stdout and "PostgreSQL" in done.stdout
        assert spoiled in done.stderr and "SH5" in done.stderr
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT * FROM items WHERE id = ?", (spoiled,)).fetchone() == row
    db.close()


@pytest.mark.parametrize("edit", ["level = 'bogus'", "importance = 'high'", "access_count = -5"])
def test_list_search_and_export_go_on_beside_a_row_whose_columns_break_i1(
    database, tmp_path, edit
):
    """SH5, V11: `list`, `search` and `export` of a file whose row was edited by hand into
    what I1 refuses exit 0 without it, each naming its id, SH5 and the rule on stderr, and
    keep the row; export says in one line that the row is not written, so the export
    imports whole, with nothing skipped silently."""
    with sqlite3.connect(database) as db:
        spoiled = db.execute("SELECT id FROM items WHERE content LIKE 'deploy%'").fetchone()[0]
        db.execute(f"UPDATE items SET {edit} WHERE id = ?", (spoiled,))
        row = db.execute("SELECT * FROM items WHERE id = ?", (spoiled,)).fetchone()
    db.close()
    for command in (["list", "--user", "ana"], ["search", "--user", "ana", "deploy database"]):
        done = shell("--db", str(database), *command)
        assert done.returncode == 0, done.stderr
        assert spoiled not in done.stdout and "PostgreSQL" in done.stdout
        assert f"SH5: item {spoiled!r} breaks I1" in done.stderr
    exported = shell("export", "--user", "ana", "--db", str(database))
    assert exported.returncode == 0 and spoiled not in exported.stdout
    [said] = exported.stderr.splitlines()
    assert said.startswith(f"SH5: item {spoiled!r} breaks I1") and "not written" in said
    (tmp_path / "ana.jsonl").write_text(exported.stdout, encoding="utf-8")
    copy = tmp_path / "copy.db"
    imported = shell("import", str(tmp_path / "ana.jsonl"), "--skip-unreadable", "--db", str(copy))
    assert imported.returncode == 0 and imported.stderr == ""
    assert "imported 2 items" in imported.stdout
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT * FROM items WHERE id = ?", (spoiled,)).fetchone() == row
    db.close()
