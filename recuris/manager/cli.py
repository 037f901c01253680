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
    import FILE [--restore-forgotten] [--skip-unreadable] [--max-line-bytes N]
                                        JSON Lines items ("-" for standard input), all or none

Invariants:
    V1  a command that reads never creates a database: a missing file is an error.
    V2  exit status: 0 done, 1 the database or the input is bad, 2 the command line is bad
        (a file it names that does not exist counts as the command line's).
    V3  `import` writes every line or none of them.
    V4  a reading command (stats, list, search, history, export) opens the file read-only:
        it writes no byte of it, and a file it refuses is left exactly as it was (SF2). Beside
        a WAL database (every recuris database, SF3) SQLite's reader creates what it lacks
        of the two files through which readers and writers agree: an empty `-wal` and the
        `-shm` index (32 KiB); the next writing connection to close removes both.
    V5  a search that could not read the database exits 1 with a message, never 0 with
        an empty answer.
    V6  with `--json`, a command prints one JSON object per line and nothing else.
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
        as they were; a UTF-8 byte-order mark before the first line is read past. `export`
        writes every item of the user: one no layer can read (V12; MG8) is written too and
        named on standard error, one line each, with the rule `import` refuses it by, and the
        export exits 0; `import` refuses such a file whole (V3) unless told to leave those
        lines out (V21). A row of the file no item holds (SH5: its metadata is not JSON, or
        its level, importance, times or access count break I1) is not written, since no line
        of it could be imported: it is named on standard error, one line each, with the rule
        it breaks, so `import --skip-unreadable` never meets it and nothing is skipped
        silently.
    V12 `import` checks every line as a write does (an item by I1 and I2, a procedure's
        metadata by H5, a fact's by FA4, an insight's by Y8, an episode's by AR4, a task's by
        N8, the sources of an episodic or semantic item by O7; an audit record's ids and
        operation as text, its reason as Unicode text, its time within ±MAX_TIME, its weight
        a finite number or null) and refuses, naming the line, an id given twice, an audit
        record of an item another user owns, in the file or stored, and a second task in
        progress of a user, in the file or stored (N1). What it prints counts what it stored.
    V13 `import` refuses the items and audit records of a user forgotten in the database,
        saying how many, and an item the user's audit says was forgotten (a `forget` record
        of its id: erased on request, with its last source, or by decay), naming its line and
        id, unless `--restore-forgotten` is given. The guard reads only the forget record's
        id and operation, which every erasure keeps (S13).
    V14 `import` refuses a line longer than `--max-line-bytes` (default MAX_LINE_BYTES,
        1,000,000), having read no more of it than the cap and a byte.
    V15 a message names no Python class: a damaged file is called damaged, a lock waited out
        names `--timeout`, an item line lacking fields names them.
    V16 a reading command that finds nothing (history of an unknown id, list or export of a
        user with nothing) exits 0 and says so on standard error.
    V17 on a damaged file a reading command prints what it could read, names on standard
        error what it could not, and exits 1; `stats` reads its parts (users, items, audit
        records, integrity check) one by one, so that one damaged part hides no other.
    V18 Ctrl-C ends a command run through `run_piped` (entry.py: this command line, the demo,
        the benchmarks, the simulation, the MCP server) with one line on standard error and
        exit status 130, as a shell reports an interrupted command, while its modules load
        as much as while it works (EN1, EN2); an `import` it stops is undone (V3, V8).
    V19 importing a file the database already holds changes nothing: a line equal to what is
        stored (an item with the same id and every field equal, an audit record equal to a
        stored one of its user) is skipped and audited by no record; an item line whose id is
        stored with other fields is refused, naming the line, the id and the fields.
    V20 a JSON line written (`export`, `--json`) holds no character a line reader splits on:
        U+0085, U+2028 and U+2029 are written escaped (`escape_line_breaks`, T4).
    V21 `import --skip-unreadable` leaves out each item line no layer can read (V12's H5, FA4,
        Y8, AR4, N8, O7), naming its line, id and rule on standard error, one line each, and
        counts them; every other refusal of V12-V19 stands, and nothing is skipped silently.
    V22 `import --replace-stored` stores an item line whose id its user holds with other
        fields in place of the stored item (the MCP server's saved queue, MC6, holds such
        newer copies), each replacement audited; without it V19 refuses the line.
"""

import json
import logging
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from pathlib import Path

from ..core.clock import ManualClock
from ..core.text import escape_line_breaks
from ..core.validation import require_number, require_text, unicode_problem
from ..core.working import WorkingSettings
from ..evolution.forgetting import CYCLED_LEVELS, merge_sources
from ..evolution.procedural import procedure_of
from ..evolution.reflection import INSIGHT_KIND, check_insight
from ..evolution.stored_facts import check_semantic_item
from ..storage.archives import EPISODE_KIND, item_to_episode
from ..storage.audit import AuditEntry
from ..storage.item import LEVELS, MAX_TIME, MemoryItem
from ..storage.sqlite_schema import log as rows_log
from ..storage.sqlite_store import SQLiteStore
from ..storage.store import StoreError
from .cli_arguments import READING, parse
from .entry import run_piped
from .manager import MemoryManager
from .manager import log as recall_log
from .tasks import TASK_KIND, task_of

__all__ = ["main", "export_lines"]

AUDIT_FIELDS = ("item_id", "operation", "reason", "at", "weight", "user_id")


class UsageError(Exception):
    """The command line asked for something it must not get as written (exit 2, V2)."""


def _audit_of(data: dict) -> AuditEntry:
    """Return the audit record a line holds, checked as V12 says."""
    if not isinstance(data, dict) or set(data) != set(AUDIT_FIELDS):
        raise TypeError(f"V12: an audit record has exactly the fields {sorted(AUDIT_FIELDS)}")
    for name in ("item_id", "operation", "user_id"):
        require_text(f"V12: an audit record's {name}", data[name])
    if not isinstance(data["reason"], str) or unicode_problem(data["reason"]):
        raise ValueError("V12: an audit record's reason must be Unicode text (it may be empty)")
    require_number("V12: an audit record's at (seconds)", data["at"], -MAX_TIME, MAX_TIME)
    if data["weight"] is not None:
        require_number("V12: an audit record's weight", data["weight"])
    return AuditEntry(**{name: data[name] for name in AUDIT_FIELDS})


def _json_line(data: dict) -> str:
    """Return `data` as one JSON line that no line reader splits (V20)."""
    return escape_line_breaks(json.dumps(data, ensure_ascii=False, sort_keys=True))


def _check_layer(item: MemoryItem) -> None:
    """Raise ValueError if a part that reads the item back could not read it (V12)."""
    kind = item.metadata.get("kind")
    if item.level == "procedural":
        procedure_of(item)
    elif item.level == "semantic":
        check_semantic_item(item)
        if kind == INSIGHT_KIND:
            check_insight(item)
    elif item.level == "episodic" and kind == EPISODE_KIND:
        item_to_episode(item)
    elif _is_task(item):
        # The settings change how a task's working memory is fitted, never whether it is read.
        task_of(item, WorkingSettings())
    if item.level in CYCLED_LEVELS:
        merge_sources(item)


def _is_task(item: MemoryItem) -> bool:
    """Return whether the item holds a task in progress (N1)."""
    return item.level == "working" and item.metadata.get("kind") == TASK_KIND


def _lines(handle, limit: int):
    """Yield (number, bytes) for each line; refuse one past `limit` bytes, unread beyond (V14)."""
    number = 0
    while line := handle.readline(limit + 1):
        number += 1
        if len(line.rstrip(b"\r\n")) > limit:
            raise ValueError(
                f"line {number}: V14: longer than {limit:,} bytes; "
                "give --max-line-bytes to read longer lines"
            )
        yield number, line


def _read_lines(
    name: str, limit: int, skip_unreadable: bool = False
) -> tuple[list[tuple[int, MemoryItem]], list[tuple[int, AuditEntry]], list[str]]:
    """Return the items and the audit records, each with its line number, checked (V12), and
    what was said of each item line left out because no layer can read it (V21)."""
    # Bytes, decoded line by line, so that invalid UTF-8 is reported with its line number.
    handle = sys.stdin.buffer if name == "-" else open(name, "rb")  # noqa: SIM115 - closed below
    items = []
    records = []
    skipped = []
    lines_of_ids: dict[str, int] = {}
    lines_of_tasks: dict[str, int] = {}
    with handle:
        for number, line in _lines(handle, limit):
            if line.strip():
                try:
                    # An editor's byte-order mark is no part of the first line's JSON (V11).
                    data = json.loads(line.decode("utf-8-sig" if number == 1 else "utf-8"))
                    if isinstance(data, dict) and set(data) == {"audit"}:  # V9
                        records.append((number, _audit_of(data["audit"])))
                        continue
                    item = MemoryItem.from_dict(data)
                    first = lines_of_ids.setdefault(item.id, number)
                    if first != number:
                        raise ValueError(f"V12: id {item.id!r} is already on line {first}")
                    problem = _layer_problem(item)
                    if problem and skip_unreadable:
                        skipped.append(f"line {number}: left out item {item.id!r}: {problem}")
                        continue
                    if problem:
                        raise ValueError(f"{problem}; --skip-unreadable imports the other lines")
                    if _is_task(item):
                        first = lines_of_tasks.setdefault(item.user_id, number)
                        if first != number:
                            raise ValueError(
                                f"N1: user {item.user_id!r} already has a task in progress, "
                                f"on line {first}"
                            )
                    items.append((number, item))
                except RecursionError:
                    raise ValueError(f"line {number}: JSON nested too deeply") from None
                except (ValueError, TypeError) as error:
                    raise ValueError(f"line {number}: {error}") from None
    owners = {item.id: item.user_id for _, item in items}
    _refuse_others_items(records, lambda record: owners.get(record.item_id))
    return items, records, skipped


def _layer_problem(item: MemoryItem) -> str | None:
    """Return the rule by which no layer can read the item, in words, or None (V12, MG8)."""
    try:
        _check_layer(item)
    except (ValueError, TypeError) as error:
        return str(error)
    return None


def _new_items(
    store, items: list[tuple[int, MemoryItem]], replace_stored: bool = False
) -> tuple[list[tuple[int, MemoryItem]], list[MemoryItem]]:
    """Return the items the store does not hold, and those it holds with other fields to store
    in their place (V22); refuse these instead without `replace_stored` (V19)."""
    ids_of_users: dict[str, list[str]] = {}
    for _, item in items:
        ids_of_users.setdefault(item.user_id, []).append(item.id)
    stored = {
        (user, item_id): kept
        for user, ids in ids_of_users.items()
        for item_id, kept in store.get_many(user, ids).items()
    }
    new = []
    replacing = []
    for number, item in items:
        kept = stored.get((item.user_id, item.id))
        if kept is None:
            new.append((number, item))
            continue
        line = item.to_dict()
        held = kept.to_dict()
        different = [field for field in sorted(line) if line[field] != held[field]]
        if different and replace_stored:
            replacing.append(item)
        elif different:
            raise ValueError(
                f"line {number}: V19: id {item.id!r} is stored already, with other fields: "
                f"{', '.join(different)}; nothing was imported (--replace-stored stores the "
                "line in its place)"
            )
    return new, replacing


def _new_records(store, records: list[tuple[int, AuditEntry]]) -> list[AuditEntry]:
    """Return the records the store does not hold, each stored one skipped once (V19)."""
    stored = Counter(
        record
        for user in {record.user_id for _, record in records}
        for record in store.audit(user)
    )
    new = []
    for _, record in records:
        if stored[record]:
            stored[record] -= 1  # two equal lines need two equal records stored to be skipped
        else:
            new.append(record)
    return new


def _refuse_second_tasks(store, items: list[tuple[int, MemoryItem]]) -> None:
    """Raise ValueError at the first task line of a user with a task stored in progress (N1)."""
    for number, item in items:
        if not _is_task(item):
            continue
        held = [task.id for task in store.list(item.user_id, "working") if _is_task(task)]
        if held:
            raise ValueError(
                f"line {number}: N1: user {item.user_id!r} already has a task in progress "
                f"(item {held[0]!r}); nothing was imported"
            )


def _refuse_others_items(records: list[tuple[int, AuditEntry]], owner_of) -> None:
    """Raise ValueError at the first record whose item `owner_of` gives to another user (V12)."""
    for number, record in records:
        owner = owner_of(record)
        if owner is not None and owner != record.user_id:
            raise ValueError(
                f"line {number}: V12: an audit record of {record.user_id!r} names item "
                f"{record.item_id!r}, which is {owner!r}'s"
            )


def _stored_owner(store, users: list[str]):
    """Return a function giving the user who stores a record's item, if not its own user."""
    found: dict[str, str | None] = {}

    def owner_of(record: AuditEntry) -> str | None:
        if record.item_id not in found:
            if store.get(record.user_id, record.item_id) is not None:
                found[record.item_id] = record.user_id
            else:
                others = (user for user in users if user != record.user_id)
                found[record.item_id] = next(
                    (user for user in others if store.get(user, record.item_id) is not None),
                    None,
                )
        return found[record.item_id]

    return owner_of


def _stats(store: SQLiteStore, arguments):
    unreadable: dict[str, StoreError] = {}

    def read(part: str, how):
        # Each part on its own, so that one damaged table hides no other (V17).
        try:
            return how()
        except StoreError as error:
            unreadable[part] = error
            return None

    users = read("users", store.users)
    levels = None
    if users is None:
        unreadable["items"] = unreadable["users"]
    else:
        levels = read(
            "items", lambda: Counter(item.level for user in users for item in store.list(user))
        )
    audit = read("audit records", lambda: len(store.audit()))
    integrity = read("integrity check", store.integrity)
    pending = read("pending erasures", store.pending_erasures)
    data = {
        "users": None if users is None else len(users),
        "levels": None if levels is None else {level: levels[level] for level in LEVELS},
        "audit_records": audit,
        "integrity": integrity,
        "pending_erasures": pending,
    }
    shown = {key: "unreadable" if value is None else value for key, value in data.items()}
    counts = (
        "items: unreadable\n"
        if levels is None
        else "".join(f"{level}: {levels[level]}\n" for level in LEVELS)
    )
    text = f"users: {shown['users']}\n{counts}audit records: {shown['audit_records']}\n"
    erasures = f"erasures pending (SE2): {shown['pending_erasures']}"
    yield data, f"{text}integrity: {shown['integrity']}\n{erasures}"
    if unreadable:
        [first, *_] = unreadable.values()
        parts = " and ".join(f"the {part}" for part in unreadable)
        raise StoreError(f"could not read {parts}; {_in_words(first, arguments)}")
    if integrity != "ok":
        raise StoreError(f"{arguments.db} is damaged: its integrity check did not say ok")


class _KeptErrors(logging.Handler):
    """Keep the store errors that recall logs, so that `search` can say what went wrong (V5)."""

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[StoreError] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.errors += [value for value in record.args or () if isinstance(value, StoreError)]


def _search(store: SQLiteStore, arguments):
    clock = ManualClock(arguments.at) if arguments.at is not None else None
    manager = MemoryManager(store, clock=clock) if clock else MemoryManager(store)
    # Recall logs a store error and degrades to nothing, as an agent needs; an operator
    # must hear of it instead (V5), once, in words (V15).
    kept = _KeptErrors()
    recall_log.addHandler(kept)
    try:
        found = manager.recall(
            arguments.query,
            arguments.user,
            arguments.top_k,
            task_type=arguments.task_type,
            count_access=False,
        )
    finally:
        recall_log.removeHandler(kept)
    if found.degraded:
        raise kept.errors[0] if kept.errors else StoreError(f"search could not read {arguments.db}")
    for result in found.results:
        data = {
            "id": result.item.id,
            "level": result.item.level,
            **result.breakdown(),
            "reason": result.reason,
            "content": result.item.content,
        }
        yield data, f"{result.item.id}\t{result.explain()}\n\t{result.render()}"


def export_lines(items: Iterable[MemoryItem], records: Iterable[AuditEntry] = ()) -> Iterator:
    """Yield (data, JSON line) for each item, then each audit record, as `import` reads them.

    After an item no layer can read comes (None, a note naming it and its rule) for standard
    error (V9, V11, V20).
    """
    for item in items:
        data = item.to_dict()
        yield data, _json_line(data)
        # Written all the same: an export is the user's whole memory (V11).
        problem = _layer_problem(item)
        if problem:
            yield None, (
                f"item {item.id!r} is written, but no layer can read it ({problem}): import "
                "refuses its line, and leaves it out with --skip-unreadable (V11)"
            )
    for record in records:
        data = {"audit": asdict(record)}
        yield data, _json_line(data)


class _LeftOut(logging.Filter):
    """Keep, instead of logging them, the rows a read leaves out because no item holds them."""

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[ValueError] = []

    def filter(self, record: logging.LogRecord) -> bool:
        self.errors += [value for value in record.args or () if isinstance(value, ValueError)]
        return False


def _export(store: SQLiteStore, arguments):
    def records():
        # Read once the items are written, so that a damaged audit hides no item (V17).
        yield from store.audit(arguments.user) if arguments.with_audit else ()

    # A row no item holds (SH5) cannot be written as a line that imports back as it was:
    # it is named once, saying so, instead of by the read's own warning (V11).
    left_out = _LeftOut()
    rows_log.addFilter(left_out)
    try:
        items = store.list(arguments.user)
    finally:
        rows_log.removeFilter(left_out)
    yield from export_lines(items, records())
    for error in left_out.errors:
        yield None, (
            f"{error}: not written, since no item holds it, so no line of it can be imported "
            "(V11); it stays unchanged in the file until forget_memory erases it"
        )


def _reading(store: SQLiteStore, arguments):
    """Yield (data, text) for each line of output; (None, text) for a note on stderr (V16)."""
    where = f"in {arguments.db}"
    if arguments.command == "stats":
        yield from _stats(store, arguments)
    elif arguments.command == "list":
        items = store.list(arguments.user, arguments.level)
        for item in items:
            yield item.to_dict(), f"{item.id}\t{item.render(120)}"
        if not items:
            level = f"{arguments.level} " if arguments.level else ""
            yield None, f"no {level}items of user {arguments.user!r} {where}"
    elif arguments.command == "search":
        found = False
        for data, text in _search(store, arguments):
            found = True
            yield data, text
        if not found:
            yield None, f"nothing found for {arguments.query!r} in the memory of {arguments.user!r}"
    elif arguments.command == "history":
        records = store.audit(arguments.user, arguments.item_id)
        for record in records:
            yield asdict(record), f"{record.render()} (user {record.user_id})"
        if not records:
            whose = f"user {arguments.user!r}" if arguments.user else "any user"
            yield None, f"no audit record of item {arguments.item_id!r} of {whose} {where}"
    else:
        empty = True
        for data, text in _export(store, arguments):
            empty = False
            yield data, text
        if empty:
            yield None, f"nothing to export for user {arguments.user!r} {where}"


def _forget(store: SQLiteStore, arguments) -> tuple[dict, str]:
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
    deleted = MemoryManager(store).forget_user(user)
    return {"user": user, "deleted_items": deleted}, f"deleted {deleted} items of {user}"


def _refuse_forgotten(store, items: list[MemoryItem], records: list[AuditEntry], db) -> None:
    """Raise ValueError if any line belongs to a user forgotten in the database (V13)."""
    users = {item.user_id for item in items} | {record.user_id for record in records}
    forgotten = sorted(user for user in users if store.generation(user) > 0)
    if forgotten:
        back = sum(item.user_id in forgotten for item in items)
        trail = sum(record.user_id in forgotten for record in records)
        names = ", ".join(repr(user) for user in forgotten)
        raise ValueError(
            f"V13: {back} items and {trail} audit records of {names}, forgotten in {db}, "
            "would come back; nothing was imported (--restore-forgotten imports them)"
        )


def _refuse_forgotten_items(store, items: list[tuple[int, MemoryItem]], db) -> None:
    """Raise ValueError at the first item line the user's audit says was forgotten (V13)."""
    forgotten: dict[str, set[str]] = {}
    for _, item in items:
        if item.user_id not in forgotten:
            # The forget's record keeps its id and operation through every erasure (S13).
            trail = store.audit(item.user_id)
            forgotten[item.user_id] = {
                record.item_id for record in trail if record.operation == "forget"
            }
    back = [(number, item) for number, item in items if item.id in forgotten[item.user_id]]
    if back:
        [(number, item), *more] = back
        others = f" (and {len(more)} more)" if more else ""
        raise ValueError(
            f"line {number}: V13: item {item.id!r} of {item.user_id!r}{others} was forgotten "
            f"in {db} and would come back; nothing was imported "
            "(--restore-forgotten imports it)"
        )


def _import(arguments, open_store) -> tuple[dict, str]:
    # Read and checked before any file is opened (V8).
    lines, numbered, skipped = _read_lines(
        arguments.file, arguments.max_line_bytes, arguments.skip_unreadable
    )
    items = [item for _, item in lines]
    records = [record for _, record in numbered]
    path = Path(arguments.db)
    companions = [
        path,
        *(path.with_name(path.name + suffix) for suffix in ("-wal", "-shm", "-journal")),
    ]
    existed = path.exists()
    store = None
    try:
        store = open_store(path, create=True, timeout=arguments.timeout)
        if not arguments.restore_forgotten:
            _refuse_forgotten(store, items, records, arguments.db)
        _refuse_others_items(numbered, _stored_owner(store, store.users()))
        new, replacing = _new_items(store, lines, arguments.replace_stored)
        if not arguments.restore_forgotten:
            _refuse_forgotten_items(store, new, arguments.db)
        _refuse_second_tasks(store, new)
        new_items = [item for _, item in new]
        new_records = _new_records(store, numbered)
        now = max((item.created_at for item in new_items), default=0.0)
        why = "imported from JSON Lines"
        replaced_why = "replaced by a line imported from JSON Lines (V22)"
        audit = [
            *new_records,
            *(AuditEntry(item.id, "import", why, now, None, item.user_id) for item in new_items),
            *(
                AuditEntry(item.id, "import", replaced_why, now, None, item.user_id)
                for item in replacing
            ),
        ]
        if audit:  # a file the database holds already writes nothing (V19)
            # One transaction: all lines or none, with their audit (V3, V9).
            store.put([*new_items, *replacing], audit)
    except BaseException:
        if store is not None:
            store.close()
        if not existed:  # what this import created goes with it (V8)
            for companion in companions:
                companion.unlink(missing_ok=True)
        raise
    store.close()
    # Ids are distinct (V12), so every new item read is one item stored.
    data = {
        "imported_items": len(new_items),
        "imported_audit_records": len(new_records),
        "replaced_items": len(replacing),
        "skipped_items": len(items) - len(new_items) - len(replacing),
        "skipped_audit_records": len(records) - len(new_records),
    }
    trail = f" and {len(new_records)} audit records" if new_records else ""
    held = (
        f"; skipped {data['skipped_items']} items and {data['skipped_audit_records']} audit "
        "records the database holds already"
        if data["skipped_items"] + data["skipped_audit_records"]
        else ""
    )
    left_out = ""
    if arguments.skip_unreadable:
        data["unreadable_items_left_out"] = len(skipped)
        left_out = f"; left out {len(skipped)} items no layer can read" if skipped else ""
    for said in skipped:  # one line each, once the import is done (V21)
        print(said, file=sys.stderr)
    replaced = f"; replaced {len(replacing)} stored items" if replacing else ""
    return data, f"imported {len(new_items)} items{trail}{replaced}{held}{left_out}"


def _show(data: dict | None, text: str, arguments, out) -> None:
    if data is None:
        print(text, file=sys.stderr)
    else:
        print(_json_line(data) if arguments.json else text, file=out)


def _run(arguments, out, open_store) -> None:
    if arguments.command == "import":
        _show(*_import(arguments, open_store), arguments, out)
        return
    read_only = arguments.command in READING or not getattr(arguments, "yes", False)
    store = open_store(arguments.db, create=False, timeout=arguments.timeout, read_only=read_only)
    try:
        if arguments.command == "forget-user":
            _show(*_forget(store, arguments), arguments, out)
            return
        for data, text in _reading(store, arguments):
            _show(data, text, arguments, out)
    finally:
        store.close()


def _in_words(error: Exception, arguments) -> str:
    """Return a store's error as an operator reads it: no Python class, what to do (V15)."""
    text = str(error)
    cause = error.__cause__
    if cause is None:  # raised here, in words already
        return text
    if text.startswith(f"{type(cause).__name__}: "):
        text = text[len(type(cause).__name__) + 2 :]
    if "locked" in text:
        return (
            f"{text}: another process holds {arguments.db}; try again, or wait longer with "
            f"--timeout SECONDS (this run waited {arguments.timeout:g} s)"
        )
    if "malformed" in text:
        hint = "" if arguments.command == "stats" else "; `stats` names the parts still readable"
        return f"{arguments.db} is damaged ({text}){hint}"
    return text


def main(argv: list[str] | None = None, out=None, environ=None, open_store=SQLiteStore) -> int:
    """Run one command; return the exit status (V2). `environ` defaults to os.environ (VA1).

    `open_store(path, create=, timeout=, read_only=)` opens every database (V10). A reader
    who closes standard output early (`| head`) ends it with status 0, silently.
    """
    out = out or sys.stdout
    try:
        arguments = parse(argv, environ)
    except SystemExit as exit:
        return int(exit.code or 0)
    return run_piped(lambda: _answer(arguments, out, open_store))


def _answer(arguments, out, open_store) -> int:
    """Run the parsed command; return its exit status, having said in words what failed."""
    try:
        _run(arguments, out, open_store)
    except BrokenPipeError:
        raise  # an OSError, but not a failure: `run_piped` ends the command quietly
    except (FileNotFoundError, UsageError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except StoreError as error:
        print(f"error: {_in_words(error, arguments)}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
