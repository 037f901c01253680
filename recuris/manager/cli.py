"""Command line: inspect and maintain a recuris SQLite database from a shell.

Document 003 §6.3 asks that memory be explainable after the fact ("why did this appear?")
and §7.2 that a user's data can be deleted on request; mem0 exposes the same operations
(search, history, delete) to operators. `python -m recuris COMMAND --db FILE` (the grammar,
with every option's help, is cli_arguments.py):

    stats                               users, items per level, audit records, integrity
    list --user U [--level L]           the user's items, oldest first
    search QUERY --user U [--top-k K] [--task-type T] [--at TIME]
                                        recall with each score's breakdown (counts no access)
    history ITEM_ID [--user U]          the audit trail of one item
    forget-user U --yes                 delete the user's items and scrub their audit text
    export --user U [--with-audit]      the user's items (and audit trail) as JSON Lines
    import FILE                         JSON Lines items ("-" for standard input), all or none

Invariants:
    V1  a command that reads never creates a database: a missing file is an error.
    V2  exit status: 0 done, 1 the database or the input is bad, 2 the command line is bad
        (a file it names that does not exist counts as the command line's).
    V3  `import` writes every line or none of them.
    V4  a reading command (stats, list, search, history, export) opens the file read-only:
        it writes no byte, and a file it refuses is left exactly as it was (SF2).
    V5  a search that could not read the database exits 1 with a message, never 0 with
        an empty answer.
    V6  with `--json`, a reading command prints one JSON object per line and nothing else.
    V7 `forget-user` without `--yes` opens the file read-only and exits 2, saying what
        would be deleted; a user with no item and no audit record is reported, exit 1, and
        nothing is written.
    V8 an `import` that fails leaves no file it created: a database that did not exist
        before still does not.
    V9 `export --with-audit` writes the user's audit records after their items, and
        `import` reads them back with the items, in the same transaction.
    V10 every database is opened through `main`'s `open_store` (`SQLiteStore` by default),
        so a fork's store gets the whole command line by passing its own opener.
    V11 `export` writes JSON Lines that `import` (a FILE, or `-` for standard input) reads back
        as they were.
"""

import json
import os
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from ..core.clock import ManualClock
from ..storage.audit import AuditEntry
from ..storage.item import LEVELS, MemoryItem
from ..storage.sqlite_store import SQLiteStore
from ..storage.store import StoreError
from .cli_arguments import READING, parse
from .manager import MemoryManager

__all__ = ["main"]

AUDIT_FIELDS = {"item_id": str, "operation": str, "reason": str, "at": (int, float), "user_id": str}


class UsageError(Exception):
    """The command line asked for something it must not get as written (exit 2, V2)."""


def _audit_of(data: dict) -> AuditEntry:
    if not isinstance(data, dict) or set(data) != {*AUDIT_FIELDS, "weight"}:
        raise TypeError(
            f"an audit record has exactly the fields {sorted({*AUDIT_FIELDS, 'weight'})}"
        )
    wrong = [name for name, kind in AUDIT_FIELDS.items() if not isinstance(data[name], kind)]
    if wrong or not isinstance(data["weight"], (int, float, type(None))):
        raise TypeError(f"audit fields of the wrong type: {wrong or ['weight']}")
    return AuditEntry(**data)


def _read_lines(name: str) -> tuple[list[MemoryItem], list[AuditEntry]]:
    # Bytes, decoded line by line, so that invalid UTF-8 is reported with its line number.
    handle = sys.stdin.buffer if name == "-" else open(name, "rb")  # noqa: SIM115 - closed below
    items = []
    records = []
    with handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    data = json.loads(line.decode("utf-8"))
                    if isinstance(data, dict) and set(data) == {"audit"}:  # V9
                        records.append(_audit_of(data["audit"]))
                    else:
                        items.append(MemoryItem.from_dict(data))
                except RecursionError:
                    raise ValueError(f"line {number}: JSON nested too deeply") from None
                except (ValueError, TypeError) as error:
                    raise ValueError(f"line {number}: {error}") from None
    return items, records


def _stats(store: SQLiteStore, arguments):
    users = store.users()
    levels = Counter(item.level for user in users for item in store.list(user))
    data = {
        "users": len(users),
        "levels": {level: levels[level] for level in LEVELS},
        "audit_records": len(store.audit()),
        "integrity": store.integrity(),
    }
    counts = "".join(f"{level}: {levels[level]}\n" for level in LEVELS)
    tail = f"audit records: {data['audit_records']}\nintegrity: {data['integrity']}"
    yield data, f"users: {len(users)}\n{counts}{tail}"


def _search(store: SQLiteStore, arguments):
    clock = ManualClock(arguments.at) if arguments.at is not None else None
    manager = MemoryManager(store, clock=clock) if clock else MemoryManager(store)
    found = manager.recall(
        arguments.query,
        arguments.user,
        arguments.top_k,
        task_type=arguments.task_type,
        count_access=False,
    )
    # Recall degrades to nothing for an agent; an operator must hear of it (V5).
    if found.degraded:
        raise StoreError(f"search could not read {arguments.db}; see the warning above")
    for result in found.results:
        data = {
            "id": result.item.id,
            "level": result.item.level,
            **result.breakdown(),
            "reason": result.reason,
            "content": result.item.content,
        }
        yield data, f"{result.item.id}\t{result.explain()}\n\t{result.render()}"


def _export(store: SQLiteStore, arguments):
    for item in store.list(arguments.user):
        data = item.to_dict()
        yield data, json.dumps(data, ensure_ascii=False, sort_keys=True)
    for record in store.audit(arguments.user) if arguments.with_audit else ():
        data = {"audit": asdict(record)}
        yield data, json.dumps(data, ensure_ascii=False, sort_keys=True)


def _reading(store: SQLiteStore, arguments):
    if arguments.command == "stats":
        yield from _stats(store, arguments)
    elif arguments.command == "list":
        for item in store.list(arguments.user, arguments.level):
            yield item.to_dict(), f"{item.id}\t{item.render(120)}"
    elif arguments.command == "search":
        yield from _search(store, arguments)
    elif arguments.command == "history":
        for record in store.audit(arguments.user, arguments.item_id):
            yield asdict(record), f"{record.render()} (user {record.user_id})"
    else:
        yield from _export(store, arguments)


def _forget(store: SQLiteStore, arguments) -> str:
    user = arguments.user
    items = len(store.list(user))
    records = len(store.audit(user))
    if not items and not records:  # a mistyped name must not look like a deletion done (V7)
        raise ValueError(f"user {user!r} has no memory in {arguments.db}: nothing to delete")
    if not arguments.yes:
        raise UsageError(
            f"forget-user would delete {items} items of {user!r} and scrub the text of "
            f"{records} audit records; run it again with --yes to do it"
        )
    return f"deleted {MemoryManager(store).forget_user(user)} items of {user}"


def _import(arguments, open_store) -> str:
    # Read and checked before any file is opened (V8).
    items, records = _read_lines(arguments.file)
    path = Path(arguments.db)
    companions = [
        path,
        *(path.with_name(path.name + suffix) for suffix in ("-wal", "-shm", "-journal")),
    ]
    existed = path.exists()
    store = None
    try:
        store = open_store(path, create=True, timeout=arguments.timeout)
        now = max((item.created_at for item in items), default=0.0)
        why = "imported from JSON Lines"
        audit = [
            *records,
            *(AuditEntry(item.id, "import", why, now, None, item.user_id) for item in items),
        ]
        store.put(items, audit)  # one transaction: all lines or none, with their audit (V3, V9)
    except BaseException:
        if store is not None:
            store.close()
        if not existed:  # what this import created goes with it (V8)
            for companion in companions:
                companion.unlink(missing_ok=True)
        raise
    store.close()
    return f"imported {len(items)} items" + (
        f" and {len(records)} audit records" if records else ""
    )


def _run(arguments, out, open_store) -> None:
    if arguments.command == "import":
        print(_import(arguments, open_store), file=out)
        return
    read_only = arguments.command in READING or not getattr(arguments, "yes", False)
    store = open_store(arguments.db, create=False, timeout=arguments.timeout, read_only=read_only)
    try:
        if arguments.command == "forget-user":
            print(_forget(store, arguments), file=out)
            return
        for data, text in _reading(store, arguments):
            print(
                json.dumps(data, ensure_ascii=False, sort_keys=True) if arguments.json else text,
                file=out,
            )
    finally:
        store.close()


def main(argv: list[str] | None = None, out=None, environ=None, open_store=SQLiteStore) -> int:
    """Run one command; return the exit status (V2). `environ` defaults to os.environ (VA1).

    `open_store(path, create=, timeout=, read_only=)` opens every database (V10).
    """
    out = out or sys.stdout
    try:
        arguments = parse(argv, environ)
    except SystemExit as exit:
        return int(exit.code or 0)
    try:
        _run(arguments, out, open_store)
    except BrokenPipeError:
        # The reader stopped early (`| head`): not an error, and nothing to say. Standard
        # output goes to the null device, so that the interpreter's last flush finds nothing.
        if out is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (FileNotFoundError, UsageError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (StoreError, ValueError, TypeError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
