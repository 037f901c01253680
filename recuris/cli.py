"""Command line: inspect and maintain a recuris SQLite database from a shell.

Document 003 §6.3 asks that memory be explainable after the fact ("why did this appear?")
and §7.2 that a user's data can be deleted on request; mem0 exposes the same operations
(search, history, delete) to operators. `python -m recuris --db FILE [--timeout S] COMMAND`:

    stats                               users, items per level, audit records, integrity
    list --user U [--level L]           the user's items, oldest first
    search QUERY --user U [--top-k K]   recall with each score's breakdown (counts no access)
    history ITEM_ID [--user U]          the audit trail of one item
    forget-user U                       delete the user's items and scrub their audit text
    export --user U                     the user's items as JSON Lines on standard output
    import FILE                         JSON Lines items ("-" for standard input), all or none

Invariants:
    V1  a command that reads never creates a database: a missing file is an error.
    V2  exit status: 0 done, 1 the database or the input is bad, 2 the command line is bad.
    V3  `import` writes every line or none of them.
    V4  a reading command (stats, list, search, history, export) opens the file read-only:
        it writes no byte, and a file it refuses is left exactly as it was (S16).
    V5  a search that could not read the database exits 1 with a message, never 0 with
        an empty answer.
"""

import argparse
import json
import sys
from collections import Counter

from .item import LEVELS, MemoryItem
from .manager import MemoryManager
from .records import AuditRecord
from .sqlite_store import SQLiteStore
from .store import StoreError

__all__ = ["main"]

READING = ("stats", "list", "search", "history", "export")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m recuris", description="Inspect a recuris SQLite database."
    )
    parser.add_argument("--db", required=True, help="path of the SQLite database file")
    parser.add_argument(
        "--timeout", type=float, default=5.0, help="seconds to wait for another process's lock (default 5)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("stats", help="users, items per level, audit records, integrity")
    listing = commands.add_parser("list", help="a user's items")
    listing.add_argument("--user", required=True)
    listing.add_argument("--level", choices=LEVELS)
    search = commands.add_parser("search", help="recall with score breakdowns")
    search.add_argument("query")
    search.add_argument("--user", required=True)
    search.add_argument("--top-k", type=int, default=5)
    history = commands.add_parser("history", help="the audit trail of one item")
    history.add_argument("item_id")
    history.add_argument("--user")
    commands.add_parser("forget-user", help="delete a user's memory").add_argument("user")
    commands.add_parser("export", help="a user's items as JSON Lines").add_argument("--user", required=True)
    commands.add_parser("import", help="items from JSON Lines").add_argument("file")
    return parser


def _read_items(name: str) -> list[MemoryItem]:
    # Bytes, decoded line by line, so that invalid UTF-8 is reported with its line number.
    handle = sys.stdin.buffer if name == "-" else open(name, "rb")  # noqa: SIM115 - closed below
    items = []
    with handle:
        for number, line in enumerate(handle, 1):
            try:
                if line.strip():
                    items.append(MemoryItem.from_dict(json.loads(line.decode("utf-8"))))
            except RecursionError:
                raise ValueError(f"line {number}: JSON nested too deeply") from None
            except (ValueError, TypeError) as error:
                raise ValueError(f"line {number}: {error}") from None
    return items


def _run(arguments: argparse.Namespace, out) -> None:
    command = arguments.command
    store = SQLiteStore(
        arguments.db, create=command == "import", timeout=arguments.timeout, read_only=command in READING
    )
    manager = MemoryManager(store)
    try:
        if arguments.command == "stats":
            users = store.users()
            levels = Counter(item.level for user in users for item in store.list(user))
            print(f"users: {len(users)}", file=out)
            for level in LEVELS:
                print(f"{level}: {levels[level]}", file=out)
            print(f"audit records: {len(store.audit())}\nintegrity: {store.integrity()}", file=out)
        elif arguments.command == "list":
            for item in manager.list(arguments.user, arguments.level):
                print(f"{item.id}\t{item.render(120)}", file=out)
        elif arguments.command == "search":
            found = manager.recall(arguments.query, arguments.user, arguments.top_k, count_access=False)
            if found.degraded:  # recall degrades to nothing for an agent; an operator must hear of it (V5)
                raise StoreError(f"search could not read {arguments.db}; see the warning above")
            for result in found.results:
                print(f"{result.item.id}\t{result.explain()}\n\t{result.render()}", file=out)
        elif arguments.command == "history":
            for record in store.audit(arguments.user, arguments.item_id):
                print(f"{record.render()} (user {record.user_id})", file=out)
        elif arguments.command == "forget-user":
            print(f"deleted {manager.forget_user(arguments.user)} items of {arguments.user}", file=out)
        elif arguments.command == "export":
            for data in manager.export(arguments.user):
                print(json.dumps(data, ensure_ascii=False, sort_keys=True), file=out)
        elif arguments.command == "import":
            items = _read_items(arguments.file)
            now = max((item.created_at for item in items), default=0.0)
            why = "imported from JSON Lines"
            audit = [AuditRecord(item.id, "import", why, now, None, item.user_id) for item in items]
            store.put(items, audit)  # one transaction: all lines or none, with their audit (V3)
            print(f"imported {len(items)} items", file=out)
    finally:
        store.close()


def main(argv: list[str] | None = None, out=None) -> int:
    """Run one command; return the exit status (V2)."""
    out = out or sys.stdout
    try:
        arguments = _parser().parse_args(argv)
    except SystemExit as exit:
        return int(exit.code or 0)
    try:
        _run(arguments, out)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (StoreError, ValueError, TypeError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
