"""Example tests for recuris.mcp.server: `python -m recuris.mcp`, driven over real pipes and
over HTTP on 127.0.0.1 by a small standard-library client (tests/mcp_client.py)."""

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from mcp_client import ROOT, PipeClient, call, initialize, request
from outages import Outage

import recuris.mcp.server as program
from recuris import MemoryItem, MemoryManager, SQLiteStore, WorkingSettings
from recuris.core.text import estimate_tokens
from recuris.mcp.server import _closed, main
from recuris.mcp.session import INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR

pytestmark = [pytest.mark.processes, pytest.mark.slow]


def test_a_client_over_pipes_meets_every_kind_of_message(tmp_path):
    """MC2, MP1, MP3: initialize, tools, each tool, bad JSON, unknown method, oversized input,
    notifications: each request answered once on standard output, which holds nothing else."""
    client = PipeClient(tmp_path / "m.db")
    assert client.ask(initialize())["result"]["serverInfo"]["name"] == "recuris"
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = client.ask(request(2, "tools/list"))["result"]["tools"]
    assert [tool["name"] for tool in tools] == ["search_memory", "remember", "forget"]
    stored = client.ask(call(3, "remember", {"content": "the deploy region is eu-west"}))
    item_id = stored["result"]["structuredContent"]["id"]
    found = client.ask(call(4, "search_memory", {"query": "deploy region"}))
    assert [r["id"] for r in found["result"]["structuredContent"]["results"]] == [item_id]
    assert client.ask(b"{this is not json")["error"]["code"] == PARSE_ERROR
    assert client.ask(request(5, "memory/dump"))["error"]["code"] == METHOD_NOT_FOUND
    refused = client.ask(b'{"pad": "' + b"x" * 1_100_000 + b'"}')
    assert refused["id"] is None and refused["error"]["code"] == INVALID_REQUEST
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
    forgot = client.ask(call(6, "forget", {"id": item_id}))
    assert forgot["result"]["structuredContent"] == {"forgotten": True, "id": item_id}
    assert client.ask(request(7, "ping")) == {"jsonrpc": "2.0", "id": 7, "result": {}}
    status, rest, errors = client.close()
    assert (status, rest) == (0, b"") and b"Traceback" not in errors


def test_search_beside_a_stored_fact_no_layer_can_read_answers_with_the_rest(tmp_path):
    """MG8, FA4: a fact stored with `source_ids: []` leaves `search_memory` answering, not
    -32603: the fact is left out, the other memories found."""
    store = SQLiteStore(tmp_path / "m.db")
    broken = {"subject": "database", "value": "PostgreSQL", "source_ids": []}
    item = MemoryItem(
        id="fact-9", user_id="ana", level="semantic", content="database", metadata=broken
    )
    store.put([item])
    store.close()
    client = PipeClient(tmp_path / "m.db", "ana")
    client.ask(initialize())
    stored = client.ask(call(2, "remember", {"content": "the database runs on host db-7"}))
    client.send(call(3, "search_memory", {"query": "database"}))
    messages = [client.receive()]
    while "id" not in messages[-1]:  # the server's log notifications come before the answer
        messages.append(client.receive())
    *notes, found = messages
    results = found["result"]["structuredContent"]["results"]
    assert any("fact-9" in note["params"]["data"] for note in notes)
    assert [r["id"] for r in results] == [stored["result"]["structuredContent"]["id"]]
    status, _, errors = client.close()
    assert status == 0 and b"Traceback" not in errors


def test_thirty_working_notes_remembered_leave_the_working_tier_within_the_budget(tmp_path):
    """N9: the server has no task tool, so each `remember` at level working is a loose note;
    30 of them leave the user's working tier within the token budget, the newest kept whole."""
    client = PipeClient(tmp_path / "m.db", "ana")
    client.ask(initialize())
    for number in range(30):
        note = f"note {number}: the build cache for release 2 is on host {number}. " * 3
        client.ask(call(number + 2, "remember", {"content": note, "level": "working"}))
    status, _, errors = client.close()
    assert status == 0 and b"Traceback" not in errors
    store = SQLiteStore(tmp_path / "m.db")
    working = store.list("ana", "working")
    store.close()
    assert 1 < len(working) < 30 and working[-1].content == note
    assert sum(estimate_tokens(item.content) for item in working) <= WorkingSettings().token_budget


def test_forgetting_an_early_working_note_erases_it_from_the_notes_summary(tmp_path):
    """N10, MG7: after 40 `remember`s at level working, `forget` of an early note folded into
    the notes summary says forgotten, and its text is in no item nor in the file's bytes."""
    client = PipeClient(tmp_path / "m.db", "ana")
    client.ask(initialize())
    ids = []
    for number in range(40):
        note = f"note {number}: the vault code is vault{number:03d}code. " * 3
        stored = client.ask(call(number + 2, "remember", {"content": note, "level": "working"}))
        ids.append(stored["result"]["structuredContent"]["id"])
    store = SQLiteStore(tmp_path / "m.db")
    [summary] = [item for item in store.list("ana", "working") if item.metadata["kind"] == "notes"]
    store.close()
    number = next(n for n in range(40) if f"vault{n:03d}code" in summary.content)
    forgot = client.ask(call(50, "forget", {"id": ids[number]}))
    assert forgot["result"]["structuredContent"] == {"forgotten": True, "id": ids[number]}
    status, _, errors = client.close()
    assert status == 0 and b"Traceback" not in errors
    store = SQLiteStore(tmp_path / "m.db")
    held = repr([item.to_dict() for item in store.list("ana")])
    store.close()
    assert f"vault{number:03d}code" not in held and f"vault{number + 1:03d}code" in held
    on_disk = b"".join(path.read_bytes() for path in tmp_path.iterdir())
    assert f"vault{number:03d}code".encode() not in on_disk


def test_end_of_input_closes_the_manager_and_what_was_written_stays(tmp_path):
    """MC3: when input ends the manager is closed; the memory is in the file, exit 0."""
    client = PipeClient(tmp_path / "m.db", "ana")
    client.ask(initialize())
    client.ask(call(2, "remember", {"content": "the staging host is stage-7"}))
    assert client.close()[0] == 0
    store = SQLiteStore(tmp_path / "m.db")
    assert [item.content for item in store.list("ana")] == ["the staging host is stage-7"]
    store.close()


@pytest.mark.parametrize(
    "arguments, says",
    [
        (["--user", "ana"], "--db"),
        (["--db", "m.db"], "--user"),
        (["--db", "m.db", "--user", "ana", "--tokens", "t.json", "--http", ":1"], "not both"),
        (["--db", "m.db", "--tokens", "t.json"], "for --http"),
        (["--db", "m.db", "--user", "ana", "--http", "10.1.2.3:8000"], "--allow-remote"),
        (["--db", "m.db", "--user", "ana", "--http", "0.0.0.0:1", "--allow-remote"], "--tokens"),
        (["--db", "m.db", "--tokens", "missing.json", "--http", "127.0.0.1:0"], "missing.json"),
        (["--db", "m.db", "--user", "ana", "--http", "localhost"], "HOST:PORT"),
        (["--db", "m.db", "--user", ""], "MC1: --user"),
        (["--db", "m.db", "--user", "  "], "MC1: --user"),
    ],
)
def test_a_bad_command_line_exits_2_before_opening_the_database(
    tmp_path, monkeypatch, capsys, arguments, says
):
    """MC1: each refused combination exits 2, says why on standard error, creates no file."""
    monkeypatch.chdir(tmp_path)
    assert main(arguments, environ={}) == 2
    captured = capsys.readouterr()
    assert says in captured.err and captured.out == ""
    assert not (tmp_path / "m.db").exists()


def test_http_through_the_command_serves_a_client_and_ends_cleanly_on_sigterm(tmp_path):
    """MC2, MC3: the address is on standard error; a client is served; SIGTERM exits 0."""
    command = [sys.executable, "-m", "recuris.mcp", "--db", str(tmp_path / "m.db")]
    command += ["--user", "ana", "--http", "127.0.0.1:0"]
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        url = re.search(rb"http://\S+/mcp", server.stderr.readline()).group(0).decode()

        def post(message: dict, session: str | None = None):
            headers = {"Content-Type": "application/json", "Accept": "application/json"}
            headers.update({"Mcp-Session-Id": session} if session else {})
            sent = urllib.request.Request(url, json.dumps(message).encode(), headers)
            return urllib.request.urlopen(sent, timeout=10)

        opened = post(initialize())
        session = opened.headers["Mcp-Session-Id"]
        answered = json.load(
            post(call(2, "remember", {"content": "the region is eu-west"}), session)
        )
        assert answered["result"]["structuredContent"]["stored"] is True
    finally:
        server.send_signal(signal.SIGTERM)
        output, errors = server.communicate(timeout=30)
    assert (server.returncode, output) == (0, b"") and b"Traceback" not in errors
    manager = MemoryManager(SQLiteStore(tmp_path / "m.db"))
    assert [item.content for item in manager.list("ana")] == ["the region is eu-west"]
    manager.close()


def test_writes_that_cannot_be_written_at_shutdown_are_saved_and_exit_1(tmp_path, capsys):
    """MC3, MC6: a close that leaves writes queued saves them, names the file; the status is 1."""
    store = Outage()
    manager = MemoryManager(store)
    store.down = "writes"
    manager.write("the staging host is stage-7", "ana")
    assert _closed(manager, tmp_path / "m.db", 0.0) == 1
    [saved] = tmp_path.glob("m.db.unsaved-*.jsonl")
    assert "MC6" in capsys.readouterr().err
    assert json.loads(saved.read_text().splitlines()[0])["content"] == "the staging host is stage-7"


def test_a_store_back_within_the_timeout_at_exit_takes_the_queue_and_nothing_is_saved(
    tmp_path, monkeypatch
):
    """MC6: the first close fails; the store is back at the retry: written, no file, status 0."""
    store = Outage()
    manager = MemoryManager(store)
    store.down = "writes"
    manager.write("the staging host is stage-7", "ana")
    # The pause between two tries is where another process would let its lock go.
    monkeypatch.setattr(program.time, "sleep", lambda seconds: setattr(store, "down", None))
    assert _closed(manager, tmp_path / "m.db", 60.0) == 0
    assert list(tmp_path.iterdir()) == []
    assert [item.content for item in store.list("ana")] == ["the staging host is stage-7"]


def test_a_memory_queued_behind_another_process_lock_is_saved_at_exit_and_imports(tmp_path):
    """MC6, MT9: while another connection holds the database's lock until the server ends,
    remember says the memory is queued, not stored; at exit it is saved beside the database,
    one line names the file and the import command, and that command stores the memory."""
    database = tmp_path / "m.db"
    SQLiteStore(database).close()
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    client = PipeClient(database, "ana", "--timeout", "0.2")
    asked = [initialize(), call(2, "remember", {"content": "the vault code is 4711"})]
    lines = b"".join(json.dumps(message).encode() + b"\n" for message in asked)
    output, errors = client.process.communicate(lines, timeout=60)
    holder.execute("ROLLBACK")
    holder.close()
    [remembered] = [json.loads(line) for line in output.splitlines() if b'"id": 2' in line]
    answer = remembered["result"]["structuredContent"]
    assert (answer["stored"], answer["queued"], client.process.returncode) == (False, True, 1)
    said = errors.decode().splitlines()[-1]
    [saved] = tmp_path.glob("m.db.unsaved-*.jsonl")
    assert said.startswith("error: MC6: ") and str(saved) in said
    command = said.split("store them with: ")[1]
    assert command == f"python -m recuris import {saved} --db {database} --replace-stored"
    imported = subprocess.run(
        [sys.executable, *command.split()[1:]], cwd=ROOT, capture_output=True, timeout=60
    )
    assert imported.returncode == 0, imported.stderr
    store = SQLiteStore(database)
    assert [item.content for item in store.list("ana")] == ["the vault code is 4711"]
    assert [record.operation for record in store.audit("ana", answer["id"])] == ["write", "import"]
    store.close()


def test_the_configured_database_folder_is_made_on_a_new_machine(tmp_path):
    """MC4: `--db ~/.recuris/memory.db` with no such folder yet: made, and the memory kept."""
    home = tmp_path / "home"
    home.mkdir()
    client = PipeClient("~/.recuris/memory.db", "ana", environment={"HOME": str(home)})
    client.ask(initialize())
    stored = client.ask(call(2, "remember", {"content": "the staging host is stage-7"}))
    assert stored["result"]["structuredContent"]["stored"] is True
    status, rest, errors = client.close()
    assert (status, rest, errors) == (0, b"", b"")
    store = SQLiteStore(home / ".recuris" / "memory.db")
    assert [item.content for item in store.list("ana")] == ["the staging host is stage-7"]
    store.close()


def test_a_database_that_cannot_be_opened_exits_1_in_one_line(tmp_path):
    """MC4: a --db path that is a folder: exit 1, one line naming the file, no traceback."""
    (tmp_path / "m.db").mkdir()
    status, rest, errors = PipeClient(tmp_path / "m.db").close()
    assert (status, rest) == (1, b"")
    assert errors.decode().startswith(f"error: MC4: {tmp_path / 'm.db'}: ")
    assert errors.count(b"\n") == 1


def test_a_file_that_is_no_database_is_named_once_in_its_one_line(tmp_path):
    """MC4: a --db file that is not a database: exit 1, one line naming the file once."""
    (tmp_path / "other.db").write_bytes(b"not a database, only text")
    status, rest, errors = PipeClient(tmp_path / "other.db").close()
    assert (status, rest) == (1, b"")
    assert errors.decode().startswith("error: MC4: ")
    assert errors.decode().count(str(tmp_path / "other.db")) == 1
    assert errors.count(b"\n") == 1


@contextmanager
def unwritable(path: Path):
    """Keep a file that this user's processes can read but not write while the block runs."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(0o644)
        return
    # Root writes a file whatever its mode; the immutable attribute stops root too.
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", path]).returncode:
        pytest.skip("root, and no immutable attribute to make a file it cannot write")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", path], check=True)


def test_a_read_only_database_is_refused_at_start_and_nothing_is_acknowledged(tmp_path):
    """MC4: a file SQLite can only read: exit 1 before serving, saying so; the file unchanged."""
    manager = MemoryManager(SQLiteStore(tmp_path / "m.db"))
    manager.write("the deploy region is eu-west", "ana")
    manager.close()
    before = (tmp_path / "m.db").read_bytes()
    with unwritable(tmp_path / "m.db"):
        process = PipeClient(tmp_path / "m.db").process
        asked = [initialize(), call(2, "remember", {"content": "the staging host is stage-7"})]
        # communicate, not send: the server may have ended before it reads its input
        lines = b"".join(json.dumps(message).encode() + b"\n" for message in asked)
        output, errors = process.communicate(lines, timeout=30)
    assert (process.returncode, output) == (1, b"")
    assert b"MC4" in errors and b"not write" in errors and b"Traceback" not in errors
    assert errors.count(b"\n") == 1
    assert (tmp_path / "m.db").read_bytes() == before


def test_a_port_in_use_exits_1_before_the_database_is_made(tmp_path):
    """MC5: --http at a bound port: exit 1, one line saying so, and no database file."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "recuris.mcp", "--db", str(tmp_path / "m.db")]
        command += ["--user", "ana", "--http", f"127.0.0.1:{port}"]
        completed = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=60)
    assert (completed.returncode, completed.stdout) == (1, b"")
    assert completed.stderr.startswith(f"error: MC5: cannot serve at 127.0.0.1:{port}".encode())
    assert completed.stderr.count(b"\n") == 1
    assert list(tmp_path.iterdir()) == []
