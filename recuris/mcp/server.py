"""`python -m recuris.mcp`: serve one user's memory in a SQLite file to MCP clients.

Document 003 §7 asks that memory serve each user alone and degrade rather than fail; this
is the program an agent's host starts (stdio) or connects to (HTTP). It opens the database,
makes the manager, serves until its input ends or it is stopped, then closes the manager,
which writes what it queued or says what it could not:

    python -m recuris.mcp --db FILE --user ID                         stdio
    python -m recuris.mcp --db FILE --user ID --http 127.0.0.1:PORT   Streamable HTTP, loopback
    python -m recuris.mcp --db FILE --tokens FILE --http 0.0.0.0:PORT --allow-remote

Invariants:
    MC1 a bad command line (no user or tokens, both, tokens on stdio, a non-loopback
        address without `--allow-remote`, `--allow-remote` without tokens, an unreadable
        tokens file) exits 2 before the database is opened, saying why on standard error.
    MC2 standard output carries the protocol alone (TP1): the HTTP address, warnings and
        errors go to standard error.
    MC3 when serving ends (end of input, SIGINT or SIGTERM) the manager is closed; queued
        writes that could not be written are named on standard error and the exit status
        is 1; otherwise it is 0.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from pathlib import Path

from ..manager.cli_arguments import ENVIRONMENT_DATABASE, seconds
from ..manager.manager import MemoryManager
from ..storage.sqlite_store import SQLiteStore
from ..storage.store import StoreError
from .memory_tools import MemoryTools
from .session import Session
from .transports import Endpoint, Tokens, is_loopback, serve_http, serve_stdio

__all__ = ["main", "parser"]


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
        "--timeout", type=seconds, default=5.0, help="seconds to wait for a locked database"
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
    """Serve until input ends or a signal stops it; return the exit status (MC1-MC3)."""
    environ = environ if environ is not None else dict(os.environ)
    arguments = parser().parse_args(argv)
    try:
        database, address, tokens = _checked(arguments, environ)
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(stream=sys.stderr, format="recuris.mcp: %(levelname)s: %(message)s")
    try:
        manager = MemoryManager(SQLiteStore(database, timeout=arguments.timeout))
    except (StoreError, OSError, ValueError) as error:
        print(f"error: {database}: {error}", file=sys.stderr)
        return 1

    def open_session(user: str) -> Session:
        return Session(MemoryTools(manager, user))

    signal.signal(signal.SIGTERM, _stop)
    try:
        if address is None:
            serve_stdio(open_session(arguments.user), sys.stdin.buffer, sys.stdout.buffer)
        else:
            endpoint = Endpoint(
                open_session,
                user=arguments.user,
                tokens=tokens,
                allow_remote=arguments.allow_remote,
            )
            _serve(endpoint, *address)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    return _closed(manager)


def _serve(endpoint: Endpoint, host: str, port: int) -> None:
    server = serve_http(endpoint, host, port)
    bound = server.server_address[1]
    shown = f"[{host}]" if ":" in host else host
    print(f"serving MCP at http://{shown}:{bound}/mcp", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


def _closed(manager: MemoryManager) -> int:
    """Close the manager; say on standard error what could not be written (MC3)."""
    try:
        manager.close()
    except StoreError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
