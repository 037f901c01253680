"""Command-line arguments: what `python -m recuris` accepts, each option explained and checked.

Document 003 §6.3 asks that memory be explainable after the fact and §7.2 that a user's
data can be deleted on request; the command line (cli.py) is how an operator does both.
This module is its grammar: every option with its help text, the database named wherever
the operator writes it, and every malformed value refused here, before a file is opened.

Invariants:
    VA1 `--db` and `--timeout` are accepted before or after the command; without `--db`,
        the environment variable RECURIS_DB names the database; `--db` wins over it.
    VA2 a bad command line (unknown command, missing or malformed option, `--top-k` below
        1, an `--at` that is not a time, no database named) exits 2 before any file is
        opened, so it creates nothing and changes nothing.
    VA3 every option and argument of every command has help text.
    VA4 `--at` reads epoch seconds or an ISO 8601 time (UTC unless it gives an offset): one
        moment, however it is written, is one recall clock for `search`.
    VA5 every command takes `--json`.
    VA6 a path is checked before any work starts, each a usage error (exit 2): `--db` must not
        be a folder; `import`'s FILE must be a file (or `-`); the folder of the database an
        `import` creates must exist; a file a command writes (`file_to_write`: the demo's
        `--html`, the benchmarks' and the simulation's `--svg`) must not be a folder, its
        folder must exist, and it must be writable there, tried by opening it (a file that
        exists is left as it was, one that does not is created and removed).
    VA7 `search` refuses, as usage errors, a query with no word to search for once the
        scorer's stop words are left out (`query_problem`, SR5: "!!!" and "the of and" alike) and
        an `--at` outside the clock's range, ±MAX_TIME seconds (I4).
    VA8 every command refuses a blank user (`--user ""`, `forget-user " "`) or one that is not
        Unicode text as a usage error (exit 2), before any file is opened, as a write refuses
        it (VL1).
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from ..core.validation import require_text
from ..retrieval.scoring import query_problem
from ..storage.item import LEVELS, MAX_TIME
from ..storage.sqlite_file import LOCK_TIMEOUT_SECONDS

__all__ = [
    "parse",
    "parser",
    "file_to_write",
    "READING",
    "ENVIRONMENT_DATABASE",
    "MAX_LINE_BYTES",
]

ENVIRONMENT_DATABASE = "RECURIS_DB"
READING = ("stats", "list", "search", "history", "export")
# An exported line holds one item: a megabyte is a long document. Reading a 53 MB line whole
# took about 700 MB of memory, so a longer line is refused after reading the cap (V14).
MAX_LINE_BYTES = 1_000_000
DATABASE_HELP = (
    f"path of the SQLite database file (default: the {ENVIRONMENT_DATABASE} environment variable)"
)


def positive_int(text: str) -> int:
    """Return text as an int of at least 1, or refuse it as a usage error (VA2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def seconds(text: str) -> float:
    """Return text as a finite number of seconds, 0 or more (VA2)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"must be a finite number of seconds, 0 or more, got {text}"
        )
    return value


def moment(text: str) -> float:
    """Return a time as epoch seconds: a number, or ISO 8601 (UTC without an offset) (VA2, VA7)."""
    try:
        value = seconds(text)
    except argparse.ArgumentTypeError:
        value = _iso_seconds(text)
    return _on_the_clock(text, value)


def _iso_seconds(text: str) -> float:
    """Return an ISO 8601 time as epoch seconds, UTC without an offset (VA4)."""
    try:  # Python 3.10's fromisoformat does not read the "Z" suffix; it means +00:00
        when = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not epoch seconds or an ISO 8601 time: {text!r}"
        ) from None
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()


def _on_the_clock(text: str, value: float) -> float:
    """Return value if a clock may read it, or refuse it as a usage error (VA7)."""
    if not -MAX_TIME <= value <= MAX_TIME:
        raise argparse.ArgumentTypeError(
            f"VA7: {text!r} is outside the clock's range, ±{MAX_TIME:g} seconds (I4)"
        )
    return value


def user_name(text: str) -> str:
    """Return text as a user's id, or refuse a blank one as a usage error (VA8)."""
    try:
        return require_text("VA8: a user", text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def file_to_write(text: str) -> str:
    """Return the path of a file to write, or refuse it: a folder, in none, or not writable (VA6).

    A file that exists is left as it was; one that does not is created and removed again.
    """
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"VA6: {text} is a folder; name a file in it")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"VA6: there is no folder {str(path.parent)!r} to write {text} in"
        )
    # Tried, not asked: os.access says root may write in /proc, where no file can be created.
    # Opening to append writes no byte and changes no time.
    try:
        if path.exists():
            with open(path, "a"):
                pass
        else:
            with open(path, "x"):
                pass
            path.unlink()
    except OSError as error:
        raise argparse.ArgumentTypeError(
            f"VA6: cannot write {text}: {error.strerror or error}"
        ) from None
    return text


def _shared(suppress: bool) -> argparse.ArgumentParser:
    # The same options on the main parser and on every command (VA1). On a command they
    # default to "absent", so that one written before the command is not overwritten.
    shared = argparse.ArgumentParser(add_help=False)
    default = argparse.SUPPRESS if suppress else None
    shared.add_argument("--db", metavar="FILE", default=default, help=DATABASE_HELP)
    shared.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=seconds,
        default=argparse.SUPPRESS if suppress else LOCK_TIMEOUT_SECONDS,
        help=f"seconds to wait for another process's lock (default {LOCK_TIMEOUT_SECONDS:g})",
    )
    return shared


def parser() -> argparse.ArgumentParser:
    """Return the parser of the whole command line."""
    main = argparse.ArgumentParser(
        prog="python -m recuris",
        parents=[_shared(False)],
        description="Inspect and maintain a recuris SQLite database. Exit status: 0 done, "
        "1 the database or the input is bad, 2 the command line is bad, 130 interrupted.",
        epilog=f"--db and --timeout may be written before or after the command; without --db, "
        f"the {ENVIRONMENT_DATABASE} environment variable names the database.",
    )
    commands = main.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
        help="what to do; `COMMAND --help` explains its options",
    )
    common = [_shared(True)]

    def command(name: str, text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=text, description=text, parents=common)
        sub.add_argument("--json", action="store_true", help="print one JSON object per line")
        return sub

    command("stats", "users, items per level, audit records, integrity")
    listing = command("list", "a user's items, oldest first")
    listing.add_argument("--user", required=True, type=user_name, help="whose items")
    listing.add_argument("--level", choices=LEVELS, help="only items of this level")
    search = command("search", "recall with each score's breakdown and reason (counts no access)")
    search.add_argument("query", help="what to recall, in words")
    search.add_argument(
        "--user", required=True, type=user_name, help="whose memory to search"
    )
    search.add_argument(
        "--top-k", type=positive_int, default=5, help="how many results, 1 or more (default 5)"
    )
    search.add_argument("--task-type", help="the task type that triggers procedures (e.g. release)")
    search.add_argument(
        "--at",
        type=moment,
        metavar="TIME",
        help="the recall clock: epoch seconds or "
        "ISO 8601, UTC unless an offset is given (default: now)",
    )
    history = command("history", "the audit trail of one item")
    history.add_argument("item_id", help="the item's id, as list or search print it")
    history.add_argument(
        "--user",
        type=user_name,
        help="only this user's records (default: whoever owns the item)",
    )
    forget = command("forget-user", "delete a user's items and scrub their audit text")
    forget.add_argument("user", type=user_name, help="whose memory to delete")
    forget.add_argument(
        "--yes", action="store_true", help="do it (without it, say what would be deleted)"
    )
    export = command("export", "a user's items as JSON Lines on standard output")
    export.add_argument("--user", required=True, type=user_name, help="whose items")
    export.add_argument(
        "--with-audit",
        action="store_true",
        help='also the user\'s audit trail, one {"audit": {...}} line per record',
    )
    importing = command("import", "items from JSON Lines, all of them or none")
    importing.add_argument(
        "file", help='a JSON Lines file as export writes it; "-" reads standard input'
    )
    importing.add_argument(
        "--restore-forgotten",
        action="store_true",
        help="also import the items and audit records of users forgotten in this database "
        "(refused without it)",
    )
    importing.add_argument(
        "--replace-stored",
        action="store_true",
        help="store an item line whose id is stored with other fields in its place (V22; "
        "refused without it)",
    )
    importing.add_argument(
        "--skip-unreadable",
        action="store_true",
        help="leave out, naming each, the item lines no layer can read (refused without it)",
    )
    importing.add_argument(
        "--max-line-bytes",
        type=positive_int,
        default=MAX_LINE_BYTES,
        metavar="BYTES",
        help=f"refuse a line longer than this (default {MAX_LINE_BYTES:,})",
    )
    return main


def parse(argv: list[str] | None, environ: Mapping[str, str] | None = None) -> argparse.Namespace:
    """Return the parsed command line, its database resolved (VA1); exit 2 on a bad one (VA2)."""
    environ = os.environ if environ is None else environ
    grammar = parser()
    arguments = grammar.parse_args(argv)
    arguments.db = arguments.db or environ.get(ENVIRONMENT_DATABASE) or None
    if arguments.db is None:
        grammar.error(f"no database: give --db FILE or set {ENVIRONMENT_DATABASE}")
    problem = _path_problem(arguments) or _query_problem(arguments)
    if problem:
        grammar.error(problem)
    return arguments


def _path_problem(arguments: argparse.Namespace) -> str | None:
    """Say what is wrong with a path the command line names, before it is opened (VA6)."""
    database = Path(arguments.db)
    if database.is_dir():
        return f"VA6: --db {arguments.db} is a folder, not a database file"
    if arguments.command != "import":
        return None
    if not database.parent.is_dir():
        folder = str(database.parent)
        return f"VA6: --db {arguments.db}: there is no folder {folder!r} to create it in"
    if arguments.file == "-":
        return None
    if Path(arguments.file).is_dir():
        return f"VA6: import {arguments.file}: a folder, not a JSON Lines file"
    if not Path(arguments.file).exists():
        return f"VA6: import {arguments.file}: no such file"
    return None


def _query_problem(arguments: argparse.Namespace) -> str | None:
    """Say why a search query cannot find anything, if it cannot (VA7)."""
    # The scorer's own analysis, so that the words refused are exactly those it never finds.
    problem = query_problem(arguments.query) if arguments.command == "search" else None
    return f"VA7: {problem}" if problem else None
