"""Many hosts on one PostgreSQL database: real processes, each with its own connection.

docs/beyond-one-machine.md, "What ran": the promises that matter across hosts, checked with
child processes made deterministic by pause points, as tests/test_processes.py checks them
on one SQLite file. Run by run.sh with DATABASE_URL set; each check works in its own schema,
dropped after. Prints one line per check and what it measured; exits 1 if one fails.

Invariants (the checks, by name):
    PC1 writers: several processes write one user's items and their own at once; every
        acknowledged write is stored, no id is handed out twice, and the term index holds
        exactly the stored items' terms (S3, S5, SH1, PS1).
    PC2 a write prepared before another process forgets the user is refused (S6), a delete
        after it deletes nothing and is not refused; a write in progress when the forget
        starts makes the forget wait for its commit, then is forgotten with the rest (PS1).
    PC3 a manager that had the user loaded, after another process forgets them, recalls
        nothing, drops their task, and a new write is stored once (UL1).
    PC4 a reader in a long transaction during an erasure: the forget does not wait for it;
        new transactions see nothing at once; the reader's snapshot still sees the old rows
        until it ends, and VACUUM cannot remove them until then (what PostgreSQL does not
        guarantee: bytes on disk, said with what was measured).
    PC5 a schema of version 1 is migrated on open with every item, its order and its
        search; an unknown version is refused, nothing written (PS4); any text round-trips,
        NUL and backslashes included (PS2).
    PC6 while another connection holds a user's row, a manager's write for that user fails
        after about the store's `timeout` (lock_timeout) with StoreError and is queued, not
        lost; once the row is free, the next write flushes it (SQ4's bound, G1).
"""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
from postgres_factory import PREFIX, conninfo
from postgres_store import PostgresStore, unescape
from psycopg import sql

from recuris import MemoryItem, MemoryManager
from recuris.storage.audit import AuditEntry
from recuris.storage.sqlite_schema import term_counts
from recuris.storage.store import StoreError

HERE = Path(__file__).resolve().parent
WRITERS = 4
WRITES = 60  # per writer: half to the shared user, half to its own

PRELUDE = f"""
import sys, time
from pathlib import Path
sys.path.insert(0, {str(HERE)!r})
from postgres_store import PostgresStore
from recuris import ManualClock, MemoryItem, MemoryManager

url, schema, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])

def wait_for_go():
    print("paused", flush=True)
    while not go.exists():
        time.sleep(0.01)

class WaitingStore(PostgresStore):
    # Pause point: once armed, the next put waits, prepared, until the check says go.
    armed = False

    def put(self, *arguments, **keywords):
        if self.armed:
            self.armed = False
            wait_for_go()
        super().put(*arguments, **keywords)

class HoldingStore(PostgresStore):
    # Pause point: once armed, the next put waits inside its transaction, its user held.
    armed = False

    def _write(self, *arguments):
        super()._write(*arguments)
        if self.armed:
            self.armed = False
            wait_for_go()
"""


class Child:
    """A child process running PRELUDE + script, released from its pause point by the check."""

    def __init__(self, folder: Path, schema: str, script: str, *arguments: str) -> None:
        self.go = folder / f"go-{time.monotonic_ns()}"
        self.process = subprocess.Popen(
            [sys.executable, "-c", PRELUDE + script, conninfo(), schema, str(self.go), *arguments],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def paused(self) -> None:
        line = self.process.stdout.readline()
        if line != "paused\n":
            self.process.kill()
            raise AssertionError(line + self.process.communicate()[1])

    def release(self) -> str:
        """Let the child go on; return the rest of what it printed."""
        self.go.touch()
        return self.finish()

    def finish(self) -> str:
        out, errors = self.process.communicate(timeout=60)
        assert self.process.returncode == 0, errors
        return out


class Schema:
    """A fresh schema for one check, dropped after it, whatever happens."""

    def __init__(self, name: str) -> None:
        self.name = f"{PREFIX}{name}_{os.getpid()}"

    def __enter__(self) -> str:
        self.drop()
        return self.name

    def __exit__(self, *exception) -> None:
        self.drop()

    def drop(self) -> None:
        with psycopg.connect(conninfo(), autocommit=True) as connection:
            connection.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(self.name))
            )


def index_drift(schema: str) -> list:
    """Return the differences between the postings and the stored items' terms (SH1)."""
    store = PostgresStore(conninfo(), schema)
    rows = store._run("SELECT user_id, level, content, number FROM items")
    expected = {
        (user_id, level, term, number, frequency)
        for user_id, level, content, number in rows
        for term, frequency in term_counts(unescape(content)).items()
    }
    postings = store._run(
        "SELECT scopes.user_id, scopes.level, term, item, frequency FROM postings "
        "JOIN scopes ON scopes.id = postings.scope"
    )
    totals = store._run(
        "SELECT scopes.user_id, scopes.level, scopes.documents, count(items.number) "
        "FROM scopes LEFT JOIN items ON (items.user_id, items.level) = (scopes.user_id, "
        "scopes.level) GROUP BY 1, 2, 3 HAVING scopes.documents <> count(items.number)"
    )
    store.close()
    return sorted(expected.symmetric_difference(postings)) + totals


def writers(folder: Path) -> str:
    """PC1: several writers at once, nothing acknowledged lost, no id twice, the index exact."""
    script = """
store = PostgresStore(url, schema)
wait_for_go()
mine = sys.argv[4]
for n in range(int(sys.argv[5])):
    user = "ana" if n % 2 else mine
    item = MemoryItem(id=store.new_id("item"), user_id=user, level="episodic",
                      content=f"deploy {mine} step {n} of the release")
    store.put([item])
    print(item.id, user, flush=True)
"""
    with Schema("writers") as schema:
        PostgresStore(conninfo(), schema).close()  # made once, before the writers race
        children = [
            Child(folder, schema, script, f"writer{number}", str(WRITES))
            for number in range(WRITERS)
        ]
        for child in children:
            child.paused()
        started = time.monotonic()
        for child in children:
            child.go.touch()
        acknowledged = [line.split() for child in children for line in child.finish().split("\n")]
        acknowledged = [line for line in acknowledged if line]
        seconds = time.monotonic() - started
        store = PostgresStore(conninfo(), schema)
        stored = {
            (item.id, user)
            for user in ["ana"] + [f"writer{n}" for n in range(WRITERS)]
            for item in store.list(user)
        }
        store.close()
        ids = [line[0] for line in acknowledged]
        assert len(ids) == len(set(ids)) == WRITERS * WRITES, "S3: an id was handed out twice"
        lost = {tuple(line) for line in acknowledged} - stored
        assert not lost, f"acknowledged writes lost: {sorted(lost)[:5]}"
        drift = index_drift(schema)
        assert drift == [], f"SH1: the term index drifted: {drift[:5]}"
    return (
        f"{WRITERS} processes x {WRITES} puts ({WRITES // 2} each to one shared user) in "
        f"{seconds:.2f} s: {len(stored)} stored of {len(acknowledged)} acknowledged, "
        "ids distinct, term index exact"
    )


def leftovers(schema: str, marker: str) -> list:
    """Return ana's items and every audit reason holding the marker, as a new connection sees."""
    store = PostgresStore(conninfo(), schema, create=False)
    found = store.list("ana") + [r.reason for r in store.audit() if marker in r.reason]
    store.close()
    return found


def forget_ana(schema: str) -> int:
    """Forget user ana from this process, through its own manager and connection."""
    manager = MemoryManager(PostgresStore(conninfo(), schema))
    forgotten = manager.forget_user("ana")
    manager.store.close()
    return forgotten


def forget_during_writes(folder: Path) -> str:
    """PC2: a write prepared before the forget is refused; one in progress makes it wait."""
    prepared = """
manager = MemoryManager(WaitingStore(url, schema), clock=ManualClock(1_000))
manager.write("vault code: 1111 MARKER", "ana", level="semantic")
manager.store.inner.armed = True
try:
    manager.write("vault code: 2222 MARKER", "ana", level="semantic")
    print("landed")
except ValueError as error:
    print(error)
"""
    held = """
store = HoldingStore(url, schema)
store.put([MemoryItem(id="a1", user_id="ana", level="episodic", content="first MARKER")])
store.armed = True
store.put([MemoryItem(id="a2", user_id="ana", level="episodic", content="second MARKER")])
print("committed", flush=True)
"""
    with Schema("forget") as schema:
        child = Child(folder, schema, prepared)
        child.paused()
        forget_ana(schema)
        refused = child.release()
        assert refused.startswith("S6: user 'ana' was forgotten"), refused
        assert leftovers(schema, "MARKER") == []
    with Schema("forget_held") as schema:
        child = Child(folder, schema, held)
        child.paused()  # its put holds ana's generation row, inside its transaction
        forgotten = []
        forgetting = threading.Thread(target=lambda: forgotten.append(forget_ana(schema)))
        started = time.monotonic()
        forgetting.start()
        time.sleep(0.5)
        waited = forgetting.is_alive()
        out = child.release()
        forgetting.join(30)
        seconds = time.monotonic() - started
        assert waited and out == "committed\n", (waited, out)
        assert forgotten == [2], forgotten  # the write in progress, committed, then forgotten
        assert leftovers(schema, "MARKER") == []
    with Schema("forget_delete") as schema:
        writer = PostgresStore(conninfo(), schema)
        writer.put([MemoryItem(id="d1", user_id="ana", level="episodic", content="x")])
        forget_ana(schema)
        deleted = writer.delete("ana", ["d1"])  # a delete writes nothing new: never refused
        writer.close()
        assert deleted == 0, deleted
    return (
        "a write prepared before the forget: refused (S6); a delete after it: 0 items, no "
        "refusal; a write holding the user when "
        f"the forget began: the forget waited for its commit ({seconds:.2f} s), then erased "
        "both items"
    )


def loaded_user_forgotten(folder: Path) -> str:
    """PC3: a manager with the user loaded finds nothing after a forget elsewhere (UL1)."""
    script = """
manager = MemoryManager(PostgresStore(url, schema), clock=ManualClock(1_000))
steps = {"steps": ["open the vault MARKER"], "task_types": ["release"]}
manager.write("vault", "ana", level="procedural", metadata=steps)
manager.write("vault code: 1111 MARKER", "ana", level="semantic")
manager.start_task("ana", "open the vault MARKER", "release")
wait_for_go()
print(manager.recall("vault code", "ana", task_type="release").results, sorted(manager.tasks))
manager.write("vault code: 2222", "ana", level="semantic")
"""
    with Schema("loaded") as schema:
        child = Child(folder, schema, script)
        child.paused()
        forget_ana(schema)
        out = child.release()
        assert out == "() []\n", out
        store = PostgresStore(conninfo(), schema)
        contents = [item.content for item in store.list("ana")]
        store.close()
        assert contents == ["vault code: 2222"], contents
    return "recall after the forget: nothing, task dropped; the next write stored once"


def reader_during_erasure(folder: Path, data: Path | None) -> str:
    """PC4: what a long reading transaction sees and keeps during an erasure."""
    script = """
import psycopg
with psycopg.connect(url) as connection:
    connection.execute(f"SET search_path TO {schema}")
    connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    count = "SELECT count(*) FROM items WHERE user_id = 'ana'"
    before = connection.execute(count).fetchone()[0]
    wait_for_go()
    during = connection.execute(count).fetchone()[0]
    connection.commit()
    after = connection.execute(count).fetchone()[0]
    print(before, during, after)
"""
    with Schema("reader") as schema:
        store = PostgresStore(conninfo(), schema)
        marker = "ZEBRACODE4471"
        # Ana's rows share their pages with bob's, as users' rows do in a busy table.
        store.put(
            [
                MemoryItem(
                    id=f"r{n}",
                    user_id=("ana", "bob")[n % 2],
                    level="episodic",
                    content=f"{marker if n % 2 == 0 else 'kept text'} {n}",
                )
                for n in range(400)
            ]
        )
        child = Child(folder, schema, script)
        child.paused()
        started = time.monotonic()
        forgotten = store.delete_user("ana")
        forget_seconds = time.monotonic() - started
        seen_now = len(store.list("ana"))
        held = dead_rows(store)
        counts = child.release().split()
        released = dead_rows(store)
        assert forgotten == 200 and seen_now == 0, (forgotten, seen_now)
        assert counts == ["200", "200", "0"], counts
        assert held[0] == 200 and released == (0, 200), (held, released)
        on_disk = bytes_on_disk(store, data, marker) if data else "not measured (no PGDATA)"
        store.close()
    return (
        f"forget of 200 items returned in {forget_seconds:.3f} s without waiting for the "
        "reader; a new read saw 0 at once; the reader's snapshot still counted 200 until it "
        f"ended, then 0; VACUUM while it read: {held[0]} dead rows not removable; after: "
        f"{released[1]} removed. On disk: {on_disk}"
    )


def dead_rows(store: PostgresStore) -> tuple[int, int]:
    """Run VACUUM on the items; return (dead rows it could not remove, rows it removed)."""
    said = []
    with psycopg.connect(conninfo(), autocommit=True) as connection:
        connection.add_notice_handler(lambda notice: said.append(notice.message_primary))
        connection.execute(
            sql.SQL("VACUUM (VERBOSE) {}.items").format(sql.Identifier(store.schema))
        )
    text = " ".join(said)
    # "tuples: 200 removed, 0 remain, 0 are dead but not yet removable"
    found = text.partition("tuples: ")[2].split()
    removed = int(found[0])
    not_removable = int(found[found.index("are") - 1])
    return not_removable, removed


def bytes_on_disk(store: PostgresStore, data: Path, marker: str) -> str:
    """Say where the marker's bytes still are after VACUUM, after VACUUM FULL, in the WAL."""
    with psycopg.connect(conninfo(), autocommit=True) as connection:
        connection.execute("CHECKPOINT")
        table = f"{store.schema}.items"
        path = connection.execute("SELECT pg_relation_filepath(%s)", (table,)).fetchone()[0]
        in_heap = marker.encode() in (data / path).read_bytes()
        connection.execute(sql.SQL("VACUUM FULL {}.items").format(sql.Identifier(store.schema)))
        connection.execute("CHECKPOINT")
        rewritten = connection.execute("SELECT pg_relation_filepath(%s)", (table,)).fetchone()[0]
        in_rewritten = marker.encode() in (data / rewritten).read_bytes()
    segments = sorted((data / "pg_wal").glob("0*"))
    in_log = sum(marker.encode() in segment.read_bytes() for segment in segments)
    return (
        f"the heap file after VACUUM {'still holds' if in_heap else 'no longer holds'} the "
        f"text; after VACUUM FULL the new file {'holds' if in_rewritten else 'does not hold'} "
        f"it; {in_log} of {len(segments)} WAL segments hold it"
    )


def migration_and_text(folder: Path) -> str:
    """PC5: version 1 migrated on open, an unknown version refused; any text round-trips."""
    originals = [
        MemoryItem(id="m1", user_id="ana", level="episodic", content="deploy C:\\temp\\new"),
        MemoryItem(
            id="m2",
            user_id="ana",
            level="semantic",
            content="db: PostgreSQL",
            metadata={"kind": "fact", "note": "ü"},
        ),
        MemoryItem(id="m3", user_id="ana", level="episodic", content="deploy again"),
    ]
    with Schema("migrate") as schema:
        store = PostgresStore(conninfo(), schema)
        store.put(originals)
        before = store.search("ana", "episodic", ["deploy"], 5)
        store.close()
        with psycopg.connect(conninfo(), autocommit=True) as connection:
            connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            connection.execute(VERSION_1)
        migrated = PostgresStore(conninfo(), schema)
        assert migrated.list("ana") == originals, migrated.list("ana")
        assert migrated.search("ana", "episodic", ["deploy"], 5) == before
        assert migrated._run("SELECT version FROM schema_version") == [(2,)]
        migrated._transaction(lambda cursor: cursor.execute(VERSION_99))
        migrated.close()
        try:
            PostgresStore(conninfo(), schema)
            raise AssertionError("PS4: version 99 was opened")
        except StoreError as error:
            assert "version 99" in str(error), error
    with Schema("text") as schema:
        store = PostgresStore(conninfo(), schema)
        odd = "a\x00b \\0 \\\\ ' ; DROP TABLE items;-- 数据库"
        item = MemoryItem(
            id="t1", user_id="ana", level="episodic", content=odd, metadata={"odd": odd}
        )
        store.put([item])
        store.append_audit([AuditEntry("t1", "write", odd, 1.0, None, "ana")])
        reopened = PostgresStore(conninfo(), schema)
        assert reopened.get("ana", "t1") == item
        assert reopened.audit("ana")[0].reason == odd
        assert [i.id for i in reopened.matching("ana", "episodic", ["数据"])] == ["t1"]
        try:
            store.put([MemoryItem(id="t\x002", user_id="ana", level="episodic", content="x")])
            raise AssertionError("PS2: a NUL in an id was written")
        except ValueError as error:
            assert "SQ2" in str(error)
        store.close()
        reopened.close()
    return (
        "version 1 migrated on open: items, order and search equal; version 99 refused; "
        "NUL, backslashes, quotes and CJK round-trip; NUL in an id refused (SQ2)"
    )


# The chapter's first tables, made from a version 2 schema: what PS4 migrates from.
VERSION_99 = "UPDATE schema_version SET version = 99"
VERSION_1 = r"""
ALTER TABLE items RENAME COLUMN number TO seq;
ALTER TABLE items ALTER COLUMN metadata TYPE jsonb USING metadata::jsonb;
UPDATE items SET content = replace(content, '\\', '\');
UPDATE audit SET reason = replace(reason, '\\', '\');
DROP INDEX items_user;
DROP TABLE counters;
UPDATE schema_version SET version = 1;
"""


def held_user(folder: Path) -> str:
    """PC6: a write blocked by another connection's lock fails after `timeout`, queued (G1)."""
    script = """
manager = MemoryManager(PostgresStore(url, schema, timeout=0.3), clock=ManualClock(1_000))
manager.write("first note", "ana")
wait_for_go()
started = time.monotonic()
manager.write("second note", "ana")
print(f"{time.monotonic() - started:.2f}", manager.store.pending, flush=True)
while not Path(sys.argv[4]).exists():
    time.sleep(0.01)
manager.write("third note", "ana")
print(manager.store.pending)
"""
    with Schema("held") as schema:
        free = folder / f"free-{time.monotonic_ns()}"
        child = Child(folder, schema, script, str(free))
        child.paused()
        with psycopg.connect(conninfo()) as holder:  # a transaction, open until commit
            holder.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            holder.execute("SELECT * FROM generations WHERE user_id = 'ana' FOR UPDATE")
            child.go.touch()
            waited = child.process.stdout.readline().split()
        free.touch()  # the holder's transaction ended with the block above
        queued = child.finish().split()
        assert waited[1:] == ["1"] and queued == ["0"], (waited, queued)
        store = PostgresStore(conninfo(), schema)
        contents = [item.content for item in store.list("ana")]
        store.close()
        assert contents == ["first note", "second note", "third note"], contents
    return (
        f"a write for a user another connection held failed after {waited[0]} s "
        "(timeout 0.3 s) and was queued; the next write, the user free, flushed it: all three "
        "stored in order"
    )


def main() -> int:
    """Run every check; print one line each; return 1 if one failed."""
    data = Path(os.environ["PGDATA"]) if os.environ.get("PGDATA") else None
    folder = Path(os.environ.get("TMPDIR", "/tmp"))
    checks = {
        "PC1 several writers": lambda: writers(folder),
        "PC2 forget during writes": lambda: forget_during_writes(folder),
        "PC3 loaded user forgotten elsewhere": lambda: loaded_user_forgotten(folder),
        "PC4 reader during an erasure": lambda: reader_during_erasure(folder, data),
        "PC5 migration and text": lambda: migration_and_text(folder),
        "PC6 a user held by another connection": lambda: held_user(folder),
    }
    failed = 0
    for name, check in checks.items():
        try:
            print(f"ok   {name}: {check()}", flush=True)
        except Exception as error:  # each check reports, and the next still runs
            failed += 1
            print(f"FAIL {name}: {type(error).__name__}: {error}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
