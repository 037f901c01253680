"""`python -m recuris.mcp`: serve one user's memory in a SQLite file to MCP clients.

Document 003 §7 asks that memory serve each user alone and degrade rather than fail; this
is the program an agent's host starts (stdio) or connects to (HTTP). It opens the database,
makes the manager, serves until its input ends or it is stopped, then closes the manager,
which writes what it queued or says what it could not:

    python -m recuris.mcp --db FILE --user ID                         stdio
    python -m recuris.mcp --db FILE --user ID --http 127.0.0.1:PORT   Streamable HTTP, loopback
    python -m recuris.mcp --db FILE --tokens FILE --http 0.0.0.0:PORT --allow-remote

Invariants:
    MC1 a bad command line (no user or tokens, both, a blank user, tokens on stdio, a
        non-loopback address without `--allow-remote`, `--allow-remote` without tokens, an
        unreadable tokens file) exits 2 before the database is opened, saying why on
        standard error.
    MC2 standard output carries the protocol alone (TP1): the HTTP address, warnings and
        errors go to standard error.
    MC3 when serving ends (end of input, SIGINT or SIGTERM) the manager is closed, a second
        SIGINT or SIGTERM ignored meanwhile; if queued writes could still not be written they
        are saved (MC6) and the exit status is 1; otherwise it is 0. A write that reaches the
        manager once it is closed is refused (G15), never acknowledged.
    MC4 the database's folder is made when it is missing (`~` read as the home folder); a
        database that cannot be opened, or that SQLite can read but not write, exits 1
        before anything is served, saying so in one line on standard error: no write is
        acknowledged that would not be kept.
    MC5 with `--http` the address is bound before the database is opened: an address that
        cannot be bound (a port in use) exits 1, saying so in one line on standard error,
        and leaves no database file behind.
    MC6 no write acknowledged is lost at exit: when closing leaves writes queued (another
        process holds the database's lock, say), they are retried until `--timeout` has
        passed once more; what is still queued is saved, items then audit records, as the
        JSON Lines `python -m recuris export` writes (V11), to a new file
        `DB.unsaved-TIME-PID.jsonl` beside the database, and one line on standard error names
        the file and the `python -m recuris import --replace-stored` command that stores it
        (V22: a queued change to a stored memory is stored in its place).
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import signal
import sqlite3
import sys
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

from ..core.validation import require_text
from ..manager.cli import export_lines
from ..manager.cli_arguments import ENVIRONMENT_DATABASE, seconds
from ..manager.manager import MemoryManager
from ..storage.sqlite_file import LOCK_TIMEOUT_SECONDS, refuse_read_only
from ..storage.sqlite_store import SQLiteStore
from ..storage.store import StoreError
from .memory_tools import MemoryTools
from .session import Session
from .transports import Endpoint, Tokens, is_loopback, serve_http, serve_stdio

__all__ = ["main", "parser"]

# Between two tries at writing the queue at exit (MC6): a lock is waited for within each try
# (the store's busy timeout), so the pause only spaces out tries that fail at once.
RETRY_PAUSE_SECONDS = 0.1


def parser() -> argparse.ArgumentParser:
    """Return the command line's grammar, every option with its help."""
    grammar = argparse.ArgumentParser(
        prog="python -m recuris.mcp",
        description="Serve one user's recuris memory to MCP clients (stdio, or --http).",
    )
    grammar.add_argument(
        "--db", help=f"the SQLite database file (default: the {ENVIRONMENT_DATABASE} variable)"
    )
    grammar.add_argument("--user", help="the one user whose memory is served")
    grammar.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (PORT 0: any free)",
    )
    grammar.add_argument(
        "--tokens",
        type=Path,
        metavar="FILE",
        help='HTTP only: a JSON file {"TOKEN": "USER", ...}; each request carries its token',
    )
    grammar.add_argument(
        "--allow-remote",
        action="store_true",
        help="HTTP only: serve a non-loopback address (needs --tokens; put TLS in front)",
    )
    grammar.add_argument(
        "--timeout",
        type=seconds,
        default=LOCK_TIMEOUT_SECONDS,
        help=f"seconds to wait for a locked database (default {LOCK_TIMEOUT_SECONDS:g})",
    )
    return grammar


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or int(port) > 65_535:
        raise ValueError(f"--http takes HOST:PORT, got {text!r}")
    return host, int(port)


def _checked(arguments: argparse.Namespace, environ: dict) -> tuple:
    """Return the database, the address (or None for stdio) and the tokens (MC1)."""
    database = arguments.db or environ.get(ENVIRONMENT_DATABASE)
    if not database:
        raise ValueError(f"name the database with --db FILE or {ENVIRONMENT_DATABASE}")
    if (arguments.user is None) == (arguments.tokens is None):
        raise ValueError("give --user ID, or --tokens FILE with --http, not both")
    if arguments.user is not None:
        require_text("MC1: --user", arguments.user)
    if arguments.http is None and (arguments.tokens or arguments.allow_remote):
        raise ValueError("--tokens and --allow-remote are for --http")
    address = _address(arguments.http) if arguments.http is not None else None
    if address and not is_loopback(address[0]) and not arguments.allow_remote:
        raise ValueError(f"{address[0]} is not loopback: add --allow-remote (and --tokens)")
    if arguments.allow_remote and arguments.tokens is None:
        raise ValueError("--allow-remote needs --tokens: each request must say whose memory")
    tokens = Tokens.load(arguments.tokens) if arguments.tokens else None
    return database, address, tokens


def _stop(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM ends serving as Ctrl-C does, through the same `finally`


def main(argv: list[str] | None = None, environ: dict | None = None) -> int:
    """Serve until input ends or a signal stops it; return the exit status (MC1-MC5)."""
    environ = environ if environ is not None else dict(os.environ)
    arguments = parser().parse_args(argv)
    try:
        database, address, tokens = _checked(arguments, environ)
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(stream=sys.stderr, format="recuris.mcp: %(levelname)s: %(message)s")

    def open_session(user: str) -> Session:
        # Called for the first request, once the manager below is made.
        return Session(MemoryTools(manager, user))

    server = None
    if address is not None:
        endpoint = Endpoint(
            open_session, user=arguments.user, tokens=tokens, allow_remote=arguments.allow_remote
        )
        try:
            server = serve_http(endpoint, *address)  # MC5: before the database is opened
        except OSError as error:
            print(f"error: MC5: cannot serve at {arguments.http}: {error}", file=sys.stderr)
            return 1
    try:
        manager = _opened(database, arguments.timeout)
    except (StoreError, OSError, ValueError, sqlite3.Error) as error:
        # The store's own message names the file already; a lower layer's does not.
        named = str(error) if database in str(error) else f"{database}: {error}"
        print(f"error: MC4: {named}", file=sys.stderr)
        if server is not None:
            server.server_close()
        return 1
    signal.signal(signal.SIGTERM, _stop)
    try:
        if server is None:
            serve_stdio(open_session(arguments.user), sys.stdin.buffer, sys.stdout.buffer)
        else:
            _serve(server, address[0])
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    # A second Ctrl-C or SIGTERM must not cut the close short: the queue is written, or saved
    # (MC6), within the timeout whatever arrives meanwhile.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    return _closed(manager, Path(database).expanduser(), arguments.timeout)


def _opened(database: str, timeout: float) -> MemoryManager:
    """Return a manager on the database, its folder made if missing (MC4).

    Raises StoreError for a database SQLite can read but not write, having written nothing;
    StoreError, OSError or sqlite3.Error for one that cannot be opened.
    """
    path = Path(database).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(path, timeout=timeout)
    try:
        refuse_read_only(str(path), timeout)  # MC4
    except StoreError:
        store.close()
        raise
    return MemoryManager(store)


def _serve(server: ThreadingHTTPServer, host: str) -> None:
    bound = server.server_address[1]
    shown = f"[{host}]" if ":" in host else host
    print(f"serving MCP at http://{shown}:{bound}/mcp", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


def _closed(manager: MemoryManager, database: Path, timeout: float) -> int:
    """Close the manager, retrying for `timeout` seconds; save what it cannot write (MC3, MC6)."""
    try:
        manager.close()
        return 0
    except StoreError as error:
        failure = error
    # MC6: the queue is tried once more for a timeout: another process's lock may be gone.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(RETRY_PAUSE_SECONDS)
        try:
            manager.close()
            return 0
        except StoreError as error:
            failure = error
    items, records = manager.store.unwritten()
    if not items and not records:
        print(f"error: {failure}", file=sys.stderr)
        return 1
    try:
        saved = _saved(database, items, records)
    except OSError as error:
        print(f"error: {failure}; MC6: they could not be saved either: {error}", file=sys.stderr)
        return 1
    named = " --db ".join(shlex.quote(str(path)) for path in (saved, database))
    print(
        f"error: MC6: the database could not take {len(items)} queued memories and "
        f"{len(records)} audit records; they are saved in {saved}; once it can be written, "
        f"store them with: python -m recuris import {named} --replace-stored",
        file=sys.stderr,
    )
    return 1


def _saved(database: Path, items: list, records: list) -> Path:
    """Write the items and audit records to a new file beside the database; return it (MC6).

    Raises OSError if the file cannot be made or written there.
    """
    # The process id tells apart two servers of one database that end in the same second.
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = database.with_name(f"{database.name}.unsaved-{stamp}-{os.getpid()}.jsonl")
    with open(path, "x", encoding="utf-8") as file:  # never over a file already there
        for data, line in export_lines(items, records):
            if data is not None:  # a note on an item no layer reads is for a person, not the file
                file.write(line + "\n")
        file.flush()
        os.fsync(file.fileno())
    return path
