"""Example tests for recuris.manager.manager: routing, recall, isolation, privacy (MG1-MG9, TS1)."""

import ast
import inspect
import json
import logging
import sqlite3
import threading
from dataclasses import fields, replace

import pytest
from outages import Outage, ReadCountingQueue
from watched_lock import WatchedLock, waits_or_ends

from recuris import (
    ConsolidationSettings,
    ErasureIncompleteError,
    InMemoryStore,
    ManagerSettings,
    ManualClock,
    MemoryItem,
    MemoryManager,
    SQLiteStore,
    StoreError,
    WorkingSettings,
)
from recuris.manager import manager as manager_module
from recuris.manager.active_recall import ActiveRecall
from recuris.manager.recall import RecallPolicy, Weights
from recuris.storage.buffered_store import QueuedErasureError

DAY = 86_400.0


@pytest.fixture
def clock():
    return ManualClock(1_000_000)


@pytest.fixture
def manager(clock):
    return MemoryManager(clock=clock)


def test_trivial_writes_are_skipped_and_audited(manager):
    """U1, MG4: empty or trivial content is not stored; the skip is audited."""
    assert manager.write("ok", "ana") is None
    assert manager.list("ana") == [] and manager.history("ana")[0].operation == "skip"


def test_statement_seen_twice_is_promoted_to_a_fact(manager, clock):
    """C1, C2 in the manager: a routed statement is an event; a second promotes a fact."""
    first = manager.write("team language: Python", "ana")
    clock.advance(60)
    second = manager.write("Team language: python", "ana")
    [fact] = manager.users.get("ana").semantic.current()
    assert fact.source_ids == (first.id, second.id)
    assert any(r.reason.startswith("consolidated") for r in manager.history("ana", fact.id))


def test_explicit_semantic_write_supersedes_and_keeps_the_old_fact(manager):
    """MG2: a contradicting fact supersedes the old one, which is kept and marked invalid."""
    old = manager.write("database: MySQL", "ana", level="semantic")
    new = manager.write("database: PostgreSQL", "ana", level="semantic")
    old_now = manager.get(old.id, "ana")
    assert (old_now.content, old_now.is_valid, old_now.superseded_by) == (
        "database: MySQL",
        False,
        new.id,
    )


def test_recall_excludes_superseded_facts_unless_asked(manager):
    """CA1: superseded facts stay out of recall unless include_invalid is set."""
    manager.write("database: MySQL", "ana", level="semantic")
    manager.write("database: PostgreSQL", "ana", level="semantic")
    contents = lambda result: [r.item.content for r in result.results]  # noqa: E731
    assert contents(manager.recall("database", "ana")) == ["database: PostgreSQL"]
    assert "database: MySQL" in contents(manager.recall("database", "ana", include_invalid=True))


def test_facts_left_out_are_recalled_as_if_they_were_not_stored(clock):
    """MG9: two facts about the database keep the episode out (CA1: semantic memory is not
    thin); left out, the recall is that of a manager that never held them, the episode in."""
    episode = "we migrated the orders database to PostgreSQL last spring"
    with_facts = MemoryManager(clock=clock)
    without = MemoryManager(clock=clock)
    left = [
        with_facts.write("orders database: PostgreSQL", "ana", level="semantic").id,
        with_facts.write("orders database host: db-02", "ana", level="semantic").id,
    ]
    for manager in (with_facts, without):
        manager.write(episode, "ana", level="episodic")
    contents = lambda result: [r.item.content for r in result.results]  # noqa: E731
    assert episode not in contents(with_facts.recall("orders database", "ana"))
    kept = with_facts.recall("orders database", "ana", leave_out=left, count_access=False)
    alone = without.recall("orders database", "ana", count_access=False)
    assert contents(kept) == contents(alone) == [episode]
    assert kept.skipped == 0


def test_facts_left_out_take_no_place_in_the_pool(clock):
    """MG9, CA4: with a pool of two facts, two facts left out that match the query better
    leave the pool to the fact kept."""
    settings = ManagerSettings(recall=RecallPolicy(candidate_pool=2))
    manager = MemoryManager(clock=clock, settings=settings)
    left = []
    for number in range(2):
        fact = f"orders database replica {number}: orders database"
        left.append(manager.write(fact, "ana", level="semantic").id)
    manager.write("orders host: db-02", "ana", level="semantic")
    kept = manager.recall("orders database", "ana", leave_out=left, count_access=False)
    assert [result.item.content for result in kept.results] == ["orders host: db-02"]


def test_a_leave_out_that_is_one_id_is_refused_naming_the_rule(manager):
    """MG9: `leave_out` is a collection of ids; one str is refused, not read letter by letter."""
    with pytest.raises(TypeError, match="MG9"):
        manager.recall("orders", "ana", leave_out="fact-1")


def test_every_result_carries_its_breakdown_and_reason(manager):
    """Q4: each recalled item has relevance, recency, importance, total and a reason."""
    manager.write("database: PostgreSQL", "ana", level="semantic")
    [result] = manager.recall("which database", "ana").results
    assert set(result.breakdown()) == {*(weight.name for weight in fields(Weights)), "total"}
    assert result.reason == "semantic fact"


def test_procedure_is_recalled_when_its_trigger_matches(manager):
    """H1, Q4: a procedure comes back when the task type triggers it, and says why."""
    manager.write(
        "deploy",
        "ana",
        level="procedural",
        metadata={"steps": ["test", "ship"], "task_types": ["release"]},
    )
    [result] = manager.recall("anything at all", "ana", task_type="release").results
    assert (
        result.item.level == "procedural"
        and result.reason == "procedure triggered by task type 'release'"
    )


def test_recall_counts_an_access_and_audits_it(manager, clock):
    """MG4: recall is use: the access count grows, the clock resets, the recall is audited."""
    fact = manager.write("database: PostgreSQL", "ana", level="semantic")
    clock.advance(DAY)
    manager.recall("database", "ana")
    after = manager.get(fact.id, "ana")
    assert (after.access_count, after.last_access_at) == (1, clock())
    last = manager.history("ana")[-1]
    assert last.operation == "recall" and last.reason.startswith(f"{fact.id}: semantic fact")


def test_a_recall_adds_one_audit_record_however_many_results(manager):
    """MG4: one audit record per recall names every result, so the log grows by one per recall."""
    for n in range(5):
        manager.write(f"deploy region {n}: eu-west-{n}", "ana", level="semantic")
    before = len(manager.history("ana"))
    assert len(manager.recall("deploy region", "ana", top_k=5).results) == 5
    assert len(manager.history("ana")) == before + 1


def test_recall_stays_within_the_token_budget(manager):
    """Q1: the assembled text never exceeds the budget."""
    for n in range(20):
        manager.write(
            f"fact number {n}: the deployment target is region {n}", "ana", level="semantic"
        )
    result = manager.recall("deployment target region", "ana", top_k=20, token_budget=40)
    from recuris.core.text import estimate_tokens

    assert 0 < estimate_tokens(result.text) <= 40


def test_no_read_returns_another_users_item(manager):
    """MG1: get, list, export, recall and procedures are scoped to one user."""
    secret = manager.write("password hint: blue", "ana", level="semantic")
    manager.write(
        "deploy", "ana", level="procedural", metadata={"steps": ["x"], "task_types": ["release"]}
    )
    assert manager.get(secret.id, "bob") is None
    assert manager.list("bob") == [] and manager.export("bob") == []
    assert manager.recall("password hint blue", "bob", task_type="release").results == ()


def test_forget_user_leaves_no_text_anywhere_in_the_database(tmp_path, clock):
    """MG3: after forget_user, neither items nor audit log hold the user's text, even on disk."""
    path = tmp_path / "m.db"
    manager = MemoryManager(SQLiteStore(path), clock=clock)
    manager.write("secret-token-XYZZY: 42", "ana", level="semantic")
    manager.write("secret-token-XYZZY: 43", "ana", level="semantic")  # supersedes: an archived copy
    manager.write("something else entirely", "bob")
    manager.recall("secret-token-XYZZY", "ana")
    manager.forget_user("ana")
    assert manager.list("ana") == [] and manager.export("ana") == []
    *scrubbed, last = manager.history("ana")
    assert {record.reason for record in scrubbed} == {""} and last.reason == "2 items deleted"
    manager.store.close()
    on_disk = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"XYZZY" not in on_disk and b"something else entirely" in on_disk
    assert b"xyzzy".hex().encode() not in on_disk  # nor in the term index's hex tokens


def test_a_failing_store_makes_recall_return_nothing_with_a_warning(caplog):
    """MG5: recall on a broken store degrades to no memory, with a logged warning."""

    class Broken(InMemoryStore):
        def list(self, *args, **kwargs):
            raise StoreError("database is locked")

    manager = MemoryManager(Broken())
    with caplog.at_level(logging.WARNING, logger="recuris.manager.manager"):
        result = manager.recall("anything", "ana")
    assert result.results == () and result.degraded and "memory unavailable" in caplog.text


def test_bad_arguments_are_refused_before_anything_is_stored(manager):
    """MG6, Q1: bad content, level, user or top_k raise; nothing is stored."""
    with pytest.raises(TypeError, match="content"):
        manager.write(None, "ana")
    with pytest.raises(ValueError, match="level"):
        manager.write("something", "ana", level="cache")
    with pytest.raises(ValueError, match="user_id"):
        manager.write("something", " ")
    with pytest.raises(ValueError, match="top_k"):
        manager.recall("x", "ana", top_k=0)
    assert manager.list("ana") == []


@pytest.mark.parametrize("budget", [float("nan"), -1, 2.5, True, "40"])
def test_a_token_budget_that_is_not_a_count_is_refused(manager, budget):
    """Q1: token_budget is an int >= 0 or None; NaN would silently disable the budget."""
    with pytest.raises(ValueError, match="Q1: token_budget"):
        manager.recall("anything", "ana", token_budget=budget)


def test_tags_given_as_one_string_are_refused_and_nothing_is_stored(manager):
    """MG6: tags are a collection of texts: "abc" is refused, not stored as three tags."""
    with pytest.raises(TypeError, match="tags must be a collection of str"):
        manager.write("deploy failed on step 3", "ana", tags="abc")
    assert manager.list("ana") == [] and manager.history("ana") == []


@pytest.mark.parametrize("store", [InMemoryStore, lambda: SQLiteStore(":memory:")])
def test_a_clock_reading_of_10_to_the_20_is_refused_naming_the_rule(store):
    """I4: a clock returning 10**20 gives a ValueError naming the rule, and nothing is stored."""
    manager = MemoryManager(store(), clock=lambda: 10**20)
    for write in (
        lambda: manager.write("deploy failed on step 3", "ana"),
        lambda: manager.write("ok", "ana"),
        lambda: manager.start_task("ana", "ship it"),
    ):
        with pytest.raises(ValueError, match="I4"):
            write()
    assert (
        manager.store.inner.list("ana") == []
        and manager.store.inner.audit() == []
        and not manager.tasks
    )


def test_during_an_outage_every_write_is_kept_and_lands_when_the_store_is_back(clock):
    """G1: a write for a user not loaded, a superseding fact and start_task are kept, not raised."""
    inner = Outage()
    manager = MemoryManager(inner, clock=clock)
    old = manager.write("database: MySQL", "ana", level="semantic")
    inner.down = "all"
    event = manager.write("deploy failed on step 3", "bob")
    new = manager.write("database: PostgreSQL", "ana", level="semantic")
    task = manager.start_task("ana", "ship release 2")
    assert event is not None and new is not None and manager.store.pending > 0
    inner.down = None
    assert manager.store.flush()
    assert [item.content for item in inner.list("bob")] == ["deploy failed on step 3"]
    facts = {item.content: item.is_valid for item in inner.list("ana", "semantic")}
    assert facts == {"database: MySQL": False, "database: PostgreSQL": True} and old.id != new.id
    assert [item.content for item in inner.list("ana", "working", task)] == ["goal: ship release 2"]


@pytest.mark.parametrize("down", ["writes", "all"])
def test_a_write_queued_in_an_outage_reads_no_more_of_a_long_queue_than_of_a_short_one(
    clock, down
):
    """G13, UL4, N7: an event, a step or a task's note the manager queues while the store fails
    reads the queue's first batch only (its retry), with 10 batches queued or 2,000, its
    user's layers loaded or not."""
    reads = {}
    for queued in (10, 2_000):
        inner = Outage()
        manager = MemoryManager(inner, clock=clock)
        manager.write("deploy failed on step 0", "ana")
        manager.start_task("ana", "ship release 2")  # ana's layers loaded, bob's not
        inner.down = down
        for number in range(queued):
            manager.write(f"deploy failed on step {number}", "ana")
        manager.store._pending = queue = ReadCountingQueue(manager.store._pending)
        manager.write("deploy failed on step 3 again", "ana")
        manager.write("deploy failed on step 4 again", "bob")
        manager.record_step("ana", "roll back", "ok")
        manager.write("waiting for the database to come back", "ana", level="working")
        reads[queued] = queue.reads
    assert reads == {10: 4, 2_000: 4} and manager.store.pending == 2_000 + 4


# One more write the manager queues in an outage, by route: (user, call, text it stores).
QUEUED_ROUTES = {
    "a routed statement": ("ana", lambda m: m.write("database: Oracle", "ana"), "database: Oracle"),
    "a fact": (
        "ana",
        lambda m: m.write("database: PostgreSQL", "ana", level="semantic"),
        "database: PostgreSQL",
    ),
    "a procedure": (
        "ana",
        lambda m: m.write(
            "deploy checklist",
            "ana",
            level="procedural",
            tags=["deploy"],
            metadata={"steps": ["tag the build", "roll it out"]},
        ),
        "roll it out",
    ),
    "a task's start": ("cy", lambda m: m.start_task("cy", "ship release 3"), "ship release 3"),
    "a task's step": ("ana", lambda m: m.record_step("ana", "roll back", "ok"), "roll back"),
    "a task's note": (
        "ana",
        lambda m: m.write("waiting for the database", "ana", level="working"),
        "waiting for the database",
    ),
    "a user's first call": (
        "bob",
        lambda m: m.write("database: SQLite", "bob", level="semantic"),
        "database: SQLite",
    ),
    "a note of a user not loaded": (
        "bob",
        lambda m: m.write("waiting for the database", "bob", level="working"),
        "waiting for the database",
    ),
}


@pytest.mark.parametrize("route", QUEUED_ROUTES)
@pytest.mark.parametrize("down", ["writes", "all"])
def test_a_write_queued_in_an_outage_reads_no_batch_of_the_queue_but_its_retry(
    clock, down, route
):
    """QR3, G13: a fact, a procedure, a task's start, step or note, or the first call for a user
    not loaded, queued while the store fails, reads the queue's first batch only (its retry),
    with 10 writes queued or 2,000; it lands once the store is back."""
    user, call, text = QUEUED_ROUTES[route]
    reads = {}
    for queued in (10, 2_000):
        inner = Outage()
        manager = MemoryManager(inner, clock=clock)
        manager.write("database: MySQL", "ana", level="semantic")
        manager.write(
            "deploy checklist",
            "ana",
            level="procedural",
            tags=["deploy"],
            metadata={"steps": ["tag the build"]},
        )
        manager.start_task("ana", "ship release 2")
        manager.write("editor: vim", "cy", level="semantic")  # cy loaded, bob not
        inner.down = down
        for number in range(queued):
            manager.write(f"deploy failed on step {number}", ("ana", "bob", "cy")[number % 3])
        manager.store._pending = queue = ReadCountingQueue(manager.store._pending)
        call(manager)
        reads[queued] = queue.reads
    assert reads == {10: 1, 2_000: 1} and manager.store.pending == 2_000 + 1
    inner.down = None
    assert manager.store.flush()
    assert any(text in str(item.to_dict()) for item in inner.list(user))


def test_a_step_of_a_task_another_manager_started_reads_no_batch_of_the_queue_but_its_retry(
    clock,
):
    """QR3, G13, N5: a step of a task another manager started, the first this manager records
    while writes fail, reads the queue's first batch only, with 10 writes queued or 2,000."""
    reads = {}
    for queued in (10, 2_000):
        inner = Outage()
        MemoryManager(inner, clock=clock).start_task("ana", "ship release 2")
        manager = MemoryManager(inner, clock=clock)
        inner.down = "writes"
        for number in range(queued):
            manager.write(f"deploy failed on step {number}", ("ana", "bob")[number % 2])
        manager.store._pending = queue = ReadCountingQueue(manager.store._pending)
        manager.record_step("ana", "roll back", "ok")
        reads[queued] = queue.reads
    assert reads == {10: 1, 2_000: 1}
    inner.down = None
    assert manager.store.flush()
    steps = MemoryManager(inner, clock=clock).tasks.current("ana").steps
    assert [step.action for step in steps] == ["roll back"]


def test_a_recall_that_read_a_fact_before_another_manager_superseded_it_does_not_reopen_it(clock):
    """MG2, S10: counting a use of a stale copy never rewrites its validity."""

    class Paused(InMemoryStore):
        pause = None  # run once, between recall's read of the facts and its bookkeeping

        def search(self, user_id, level, terms, limit):
            found = super().search(user_id, level, terms, limit)
            if level == "semantic" and self.pause:
                self.pause, pause = None, self.pause
                pause()
            return found

    shared = Paused()
    reader, writer = MemoryManager(shared, clock=clock), MemoryManager(shared, clock=clock)
    reader.write("database: MySQL", "ana", level="semantic")
    shared.pause = lambda: writer.write("database: PostgreSQL", "ana", level="semantic")
    assert [r.item.content for r in reader.recall("database", "ana").results] == ["database: MySQL"]
    valid = [item.content for item in shared.list("ana", "semantic") if item.is_valid]
    assert valid == ["database: PostgreSQL"]


def test_two_managers_offline_on_one_clock_lose_neither_users_write(clock):
    """G1, G4: two managers' offline ids differ: no queued write is refused as the other's."""
    inner = Outage()
    first, second = MemoryManager(inner, clock=clock), MemoryManager(inner, clock=clock)
    inner.down = "all"
    first.write("deploy failed on step 3", "ana")
    second.write("deploy failed on step 4", "bob")
    inner.down = None
    assert first.store.flush() and second.store.flush()
    assert [len(inner.list(user)) for user in ("ana", "bob")] == [1, 1]


PUBLIC = {
    "write",
    "recall",
    "get",
    "list",
    "history",
    "export",
    "start_task",
    "record_step",
    "finish_task",
    "get_llm_context",
    "get_llm_messages",
    "forget_user",
    "forget_memory",
    "close",
    "run_decay",
    "agent",
}


def manager_class() -> ast.ClassDef:
    tree = ast.parse(inspect.getsource(manager_module))
    [found] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MemoryManager"]
    return found


def test_every_public_name_of_the_manager_is_a_def_in_its_class_body():
    """TS1: the public names are what a user calls, each written as a `def` in the class body."""
    defined = {node.name for node in manager_class().body if isinstance(node, ast.FunctionDef)}
    public = {name for name in vars(MemoryManager) if not name.startswith("_")}
    assert public == PUBLIC and public <= defined
    assert all(inspect.isfunction(vars(MemoryManager)[name]) for name in public)
    assigned = [node for node in manager_class().body if isinstance(node, ast.Assign)]
    assert assigned == []  # no method made by a call or a lambda


def test_every_public_method_of_the_manager_takes_its_lock_itself():
    """TS1: each public method's body holds `with self._lock:`, written at the point of use."""
    unlocked = [
        node.name
        for node in manager_class().body
        if isinstance(node, ast.FunctionDef)
        and node.name in PUBLIC
        and not any(
            isinstance(inner, ast.With) and ast.unparse(inner.items[0].context_expr) == "self._lock"
            for inner in ast.walk(node)
        )
    ]
    assert unlocked == []


def test_the_manager_gives_its_one_lock_to_each_part():
    """TS1: the parts take the manager's own re-entrant lock, so a call never waits on itself."""
    manager = MemoryManager()
    assert manager.users.lock is manager._lock and manager.forgetting.lock is manager._lock
    assert manager.tasks.lock is manager._lock


def test_a_public_method_waits_while_another_thread_holds_the_lock():
    """TS1: while one operation runs, another thread's call waits for it to finish."""
    manager = MemoryManager()
    # Watched, the manager's lock says when the other thread's call waits for it.
    manager._lock = lock = WatchedLock(manager._lock)
    finished = []
    worker = threading.Thread(target=lambda: finished.append(manager.list("ana")))
    with lock:
        assert waits_or_ends(lock, worker) and finished == []
    worker.join(timeout=60)
    assert finished == [[]]


def test_several_threads_write_recall_and_forget_at_once_losing_and_resurrecting_nothing(
    tmp_path, clock
):
    """TS1: one manager on SQLite serves several threads; no call taken for an outage, none lost."""
    manager = MemoryManager(SQLiteStore(tmp_path / "memory.db"), clock=clock)
    for n in range(10):
        manager.write(f"secret deploy note {n}", "gone")
    degraded, failures = [], []

    def work(body):
        try:
            body()
        except Exception as error:  # noqa: BLE001 - reported by the assertion below
            failures.append(error)

    def writer(user):
        for n in range(15):
            manager.write(f"{user} deploy step {n} failed", user)
            degraded.append(manager.recall("deploy step", user).degraded)
            degraded.append(
                manager.recall("secret deploy note", "gone").degraded
            )  # counts accesses

    def forgetter():
        for _ in range(5):
            manager.forget_user("gone")

    threads = [threading.Thread(target=work, args=(lambda u=f"u{n}": writer(u),)) for n in range(3)]
    threads.append(threading.Thread(target=work, args=(forgetter,)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert failures == [] and not any(degraded) and manager.store.pending == 0
    assert [len(manager.store.inner.list(f"u{n}")) for n in range(3)] == [15, 15, 15]
    assert manager.store.inner.list("gone") == []


def test_a_query_past_the_cap_is_cut_and_the_result_says_so(manager):
    """BD2: recall reads at most MAX_QUERY_CHARS of a query, and flags the cut on its result."""
    manager.write("deploy region: eu-west", "ana", level="semantic")
    long = manager.recall("deploy region " + "padding " * 50_000, "ana")
    short = manager.recall("deploy region", "ana")
    assert long.query_truncated and not short.query_truncated
    assert [r.item.id for r in long.results] == [r.item.id for r in short.results]


def test_the_manager_keeps_the_layers_of_the_most_recently_used_users_only(clock):
    """BD3: past `max_loaded_users`, the least recently used user's layers go, and reload on use."""
    manager = MemoryManager(clock=clock, settings=ManagerSettings(max_loaded_users=2))
    for number, user in enumerate(("ana", "bob", "ana", "cy")):
        manager.write(f"fact {number}: {user}", user, level="semantic")
    assert list(manager.users.loaded) == ["ana", "cy"]
    assert [fact.value for fact in manager.users.get("bob").semantic.current()] == ["bob"]


def test_a_fact_written_offline_for_a_user_not_loaded_wins_once_the_store_is_back(clock):
    """G1, F5: a stored fact contradicted during an outage is closed when the user loads."""
    inner = Outage()
    MemoryManager(inner, clock=clock).write("database: MySQL", "ana", level="semantic")
    manager = MemoryManager(inner, clock=clock)
    inner.down = "all"
    clock.advance(60)
    assert manager.write("database: PostgreSQL", "ana", level="semantic") is not None
    inner.down = None
    assert manager.store.flush()
    assert [fact.value for fact in manager.users.get("ana").semantic.current()] == ["PostgreSQL"]
    valid = [item.content for item in inner.list("ana", "semantic") if item.is_valid]
    assert valid == ["database: PostgreSQL"]


def test_a_write_on_sqlite_commits_once_with_its_audit_record(tmp_path):
    """S5: a manager's write is one SQLite transaction: its item and its audit record."""
    store = SQLiteStore(tmp_path / "m.db")
    manager = MemoryManager(store, clock=ManualClock(0))
    manager.write("warm up the user's layers", "ana", level="episodic")
    statements = []
    store._db.set_trace_callback(statements.append)
    item = manager.write("deploy failed on step 3", "ana", level="episodic")
    store._db.set_trace_callback(None)
    assert [s for s in statements if s.startswith("COMMIT")] == ["COMMIT"]
    assert [r.operation for r in manager.history("ana", item.id)] == ["write"]


def test_the_settings_are_one_record_the_parts_are_given_and_cannot_be_set():
    """The manager's settings are one frozen record, composed of its parts' records."""
    consolidation = ConsolidationSettings(min_occurrences=3)
    settings = ManagerSettings(
        extraction_min_confidence=0.7,
        working=WorkingSettings(token_budget=500),
        consolidation=consolidation,
    )
    manager = MemoryManager(settings=settings)
    assert manager.settings is settings
    assert manager.tasks.min_confidence == 0.7
    assert manager.tasks.working_settings.token_budget == 500
    assert manager.users.get("ana").consolidator.settings is consolidation
    assert manager.policy is settings.recall
    with pytest.raises(AttributeError):
        manager.settings.extraction_min_confidence = 0.5


@pytest.mark.parametrize(
    "setting",
    [
        dict(min_content_chars=-1),
        dict(max_loaded_users=0),
        dict(extraction_min_confidence=float("nan")),
    ],
)
def test_a_setting_out_of_its_range_is_refused_naming_its_rule(setting):
    """BD3, N3, U1: a manager setting out of its range is a ValueError naming the rule."""
    with pytest.raises(ValueError, match="(U1|BD3|N3): "):
        ManagerSettings(**setting)


def test_an_episodic_write_after_another_manager_forgot_the_user_lands_once(tmp_path):
    """UL1, S6: a write after a forget made elsewhere takes the new generation, stored once."""
    here = MemoryManager(SQLiteStore(tmp_path / "m.db"), clock=ManualClock(0.0))
    elsewhere = MemoryManager(SQLiteStore(tmp_path / "m.db"), clock=ManualClock(0.0))
    here.write("booked the hotel by the station", "ana", level="episodic")
    elsewhere.forget_user("ana")
    item = here.write("booked the late train home", "ana", level="episodic")
    assert [stored.content for stored in here.list("ana")] == ["booked the late train home"]
    assert [record.operation for record in here.history("ana", item.id)] == ["write"]


def test_an_episodic_write_queued_after_a_forget_elsewhere_is_kept_and_lands(tmp_path):
    """G1: an event queued in an outage after a forget made elsewhere lands once the store is up."""
    here = MemoryManager(SQLiteStore(tmp_path / "m.db", timeout=0.05), clock=ManualClock(0.0))
    elsewhere = MemoryManager(SQLiteStore(tmp_path / "m.db"), clock=ManualClock(0.0))
    here.write("booked the hotel by the station", "ana", level="episodic")
    elsewhere.forget_user("ana")
    lock = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the outage: another connection holds the write lock
    here.write("booked the late train home", "ana", level="episodic")
    lock.execute("ROLLBACK")
    assert here.store.flush()
    assert [stored.content for stored in elsewhere.list("ana")] == ["booked the late train home"]


def test_an_episodic_write_queued_before_a_forget_elsewhere_never_lands(tmp_path):
    """S6: an event queued in an outage, then forgotten elsewhere, is never written."""
    here = MemoryManager(SQLiteStore(tmp_path / "m.db", timeout=0.05), clock=ManualClock(0.0))
    elsewhere = MemoryManager(SQLiteStore(tmp_path / "m.db"), clock=ManualClock(0.0))
    here.write("booked the hotel by the station", "ana", level="episodic")
    lock = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the outage: another connection holds the write lock
    here.write("vault code 2222", "ana", level="episodic")
    lock.execute("ROLLBACK")
    elsewhere.forget_user("ana")
    here.recall("vault code", "ana")  # reads the new generation, then counts its uses (a write)
    here.store.flush()
    assert elsewhere.list("ana") == []


def test_a_write_whose_new_id_another_process_took_meanwhile_is_written_under_a_fresh_id(tmp_path):
    """S3: a write whose reserved id another process took is written under a new id."""
    here = MemoryManager(SQLiteStore(tmp_path / "m.db"), clock=ManualClock(0.0))
    here.write(
        "booked the hotel by the station", "ana", level="episodic"
    )  # reserves item-1 .. item-1024
    imported = MemoryItem(id="item-2", user_id="bob", level="episodic", content="an imported item")
    SQLiteStore(tmp_path / "m.db").put([imported])  # an import in another process
    item = here.write("booked the late train home", "ana", level="episodic")
    assert item.id != "item-2" and here.get(item.id, "ana") == item
    assert [record.operation for record in here.history("ana", item.id)] == ["write"]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_forget_memory_erases_one_memory_everywhere_and_audits_it(tmp_path, clock, kind):
    """MG7: forget_memory leaves no copy of the memory's text, audits it, spares the rest."""
    store = SQLiteStore(tmp_path / "m.db") if kind == "sqlite" else InMemoryStore()
    manager = MemoryManager(store, clock=clock)
    secret = manager.write("vault code: ERASE-ME-4242", "ana", level="semantic")
    kept = manager.write("the deploy region is eu-west", "ana")
    manager.recall("vault code ERASE-ME-4242", "ana")
    assert manager.forget_memory(secret.id, "ana") is True
    assert [item.id for item in manager.list("ana")] == [kept.id]
    assert manager.recall("vault code", "ana").results == ()
    history = manager.history("ana", secret.id)
    assert history[-1].operation == "forget" and history[-1].reason == "erased on request"
    assert "ERASE-ME" not in repr(manager.history("ana"))
    manager.close()
    if kind == "sqlite":
        on_disk = b"".join(p.read_bytes() for p in tmp_path.iterdir())
        assert b"ERASE-ME" not in on_disk and b"eu-west" in on_disk
        assert b"erase".hex().encode() not in on_disk  # nor in the term index's hex tokens


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_forget_memory_takes_the_id_out_of_a_fact_that_stays(tmp_path, clock, kind):
    """MG7 (S13): a fact citing the forgotten item and another one stays, without the forgotten
    id in its sources: not in the store, not in `export`, not in the file's bytes."""
    store = SQLiteStore(tmp_path / "m.db") if kind == "sqlite" else InMemoryStore()
    manager = MemoryManager(store, clock=clock)
    first = manager.write("we moved the database to PostgreSQL", "ana")
    second = manager.write("the database runs PostgreSQL since May", "ana")
    fact = manager.users.get("ana").semantic.add("database", "PostgreSQL", [first.id, second.id])
    assert manager.forget_memory(first.id, "ana") is True
    assert manager.get(fact.id, "ana").metadata["source_ids"] == [second.id]
    exported = repr(manager.export("ana"))
    assert repr(first.id) not in exported and repr(second.id) in exported
    assert manager.recall("database", "ana").results[0].item.id == fact.id
    manager.close()
    if kind == "sqlite":
        on_disk = b"".join(p.read_bytes() for p in tmp_path.iterdir())
        assert f'"{first.id}"'.encode() not in on_disk
        assert f'"{second.id}"'.encode() in on_disk


def test_forget_memory_of_another_users_id_forgets_nothing_and_says_so(clock):
    """MG7: an id that is not the user's forgets nothing; the answer is an unknown id's."""
    manager = MemoryManager(clock=clock)
    bobs = manager.write("bob's vault code is 9999", "bob")
    assert manager.forget_memory(bobs.id, "ana") is manager.forget_memory("item-404", "ana")
    assert manager.get(bobs.id, "bob") is not None
    assert manager.history("ana") == []


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_a_question_naming_a_speaker_ranks_that_speakers_words_first(store, tmp_path):
    """Q7: each turn written with its speaker; "what did Caroline say about the camping trip?"
    ranks Caroline's turn above Mel's more relevant one, on either store, and says why; the
    same question without her name ranks Mel's first."""
    from recuris import InMemoryStore, ManualClock, MemoryManager, SQLiteStore

    backing = InMemoryStore() if store == "memory" else SQLiteStore(tmp_path / "m.db")
    manager = MemoryManager(backing, clock=ManualClock(0))
    manager.write("the camping trip, the best camping trip of the year", "u", speaker="Mel")
    manager.write(
        "I still think about that camping trip while I paint every evening", "u", speaker="Caroline"
    )
    results = manager.recall("what did Caroline say about the camping trip?", "u").results
    assert [result.item.metadata["speaker"] for result in results] == ["Caroline", "Mel"]
    assert "speaker 1.00" in results[0].explain()
    unnamed = manager.recall("the camping trip", "u").results
    assert [result.item.metadata["speaker"] for result in unnamed] == ["Mel", "Caroline"]


def test_a_speaker_that_is_not_text_is_refused_before_anything_is_stored():
    """MG6: `speaker` must be text; nothing is stored or audited for a bad one."""
    from recuris import ManualClock, MemoryManager

    manager = MemoryManager(clock=ManualClock(0))
    with pytest.raises((TypeError, ValueError), match="speaker"):
        manager.write("a turn of the conversation", "u", speaker=7)
    assert manager.list("u") == [] and manager.history("u") == []


def test_a_forgotten_memory_no_longer_counts_toward_consolidation(clock):
    """MG7, UL3: after forget_memory, the erased memory's sighting promotes no fact."""
    manager = MemoryManager(clock=clock)
    first = manager.write("database: PostgreSQL", "ana")
    assert manager.forget_memory(first.id, "ana") is True
    clock.advance(60)
    manager.write("database: PostgreSQL", "ana")
    assert manager.list("ana", "semantic") == []
    assert first.id not in repr(manager.users.get("ana").consolidator.__dict__)


def test_forgetting_every_source_of_a_fact_forgets_the_fact(clock):
    """MG7: a fact consolidated from memories goes when the last of them is forgotten."""
    manager = MemoryManager(clock=clock)
    first = manager.write("database: PostgreSQL", "ana")
    clock.advance(60)
    second = manager.write("database: PostgreSQL", "ana")
    [fact] = manager.list("ana", "semantic")
    assert manager.forget_memory(first.id, "ana") is True
    # Still made from a memory that is kept, which alone it now cites (S13).
    assert manager.list("ana", "semantic") == [
        replace(fact, metadata={**fact.metadata, "source_ids": [second.id]})
    ]
    assert manager.forget_memory(second.id, "ana") is True
    assert manager.list("ana") == [] and manager.users.get("ana").semantic.current() == ()
    assert [record.operation for record in manager.history("ana", fact.id)][-1] == "forget"
    assert "PostgreSQL" not in repr(manager.history("ana"))


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("cited", ["item-199", ["item-199"], ["item-10", "item-199"]])
def test_forgetting_a_memory_spares_a_fact_citing_an_id_that_only_contains_its_id(
    tmp_path, clock, kind, cited
):
    """MG7, FA4: forgetting item-1 spares a fact citing item-199 (as a text or a list)."""
    store = SQLiteStore(tmp_path / "m.db") if kind == "sqlite" else InMemoryStore()
    manager = MemoryManager(store, clock=clock)
    first = manager.write("we met at the harbour at dawn", "ana", level="episodic")
    assert first.id == "item-1"
    metadata = {"subject": "city", "value": "Lisbon", "source_ids": cited}
    fact = MemoryItem(
        id="fact-9", user_id="ana", level="semantic", content="city: Lisbon", metadata=metadata
    )
    store.put([fact])
    assert manager.forget_memory(first.id, "ana") is True
    assert manager.get("fact-9", "ana") == fact


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_forgetting_a_procedure_erases_the_trigger_word_its_recalls_audited(
    tmp_path, clock, kind
):
    """MG7, S13: a forgotten procedure's trigger word, which a recall's audit record quotes
    under no item, is neither in the history nor in the file; other recalls' records stay."""
    store = SQLiteStore(tmp_path / "m.db") if kind == "sqlite" else InMemoryStore()
    manager = MemoryManager(store, clock=clock)
    steps = {"steps": ["run the tests", "roll out"], "keywords": ["zanzibar"]}
    procedure = manager.write("deploy: run the tests", "ana", level="procedural", metadata=steps)
    kept = manager.write("the deploy region is eu-west", "ana")
    assert [result.item.id for result in manager.recall("zanzibar now", "ana").results] == [
        procedure.id
    ]
    manager.recall("deploy region", "ana")
    assert manager.forget_memory(procedure.id, "ana") is True
    assert "zanzibar" not in repr(manager.history("ana"))
    assert f"{kept.id}: episode" in repr(manager.history("ana"))
    manager.close()
    if kind == "sqlite":
        assert b"zanzibar" not in b"".join(p.read_bytes() for p in tmp_path.iterdir())


def test_an_incomplete_erasure_still_reloads_the_users_layers(tmp_path):
    """MG7: when forget_memory raises ErasureIncompleteError, no loaded layer keeps the memory."""
    manager = MemoryManager(SQLiteStore(tmp_path / "m.db", timeout=0.2))
    first = manager.write("database: PostgreSQL", "ana")
    episodic = manager.users.get("ana").episodic
    assert episodic is not None
    reader = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM items").fetchone()
    manager.write("an unrelated memory to move the log along", "ana")
    with pytest.raises(ErasureIncompleteError):
        manager.forget_memory(first.id, "ana")
    reader.execute("COMMIT")
    reader.close()
    layers = manager.users.get("ana")
    assert layers.loaded_episodic is None
    assert "PostgreSQL" not in repr(layers.consolidator.__dict__)


@pytest.mark.parametrize("down", [None, "writes", "all"])
def test_forgetting_a_queued_memory_is_reported_and_audited_as_it_happened(clock, down):
    """MG7, G12: a memory still queued is forgotten, said and audited, whatever the store does."""
    inner = Outage()
    manager = MemoryManager(inner, clock=clock)
    inner.down = "writes"
    queued = manager.write("my bank PIN reminder is in the blue notebook", "ana")
    inner.down = down
    if down == "all":
        with pytest.raises(QueuedErasureError):
            manager.forget_memory(queued.id, "ana")
    else:
        assert manager.forget_memory(queued.id, "ana") is True
    inner.down = None
    manager.store.flush()
    assert manager.list("ana") == []
    [*_, forget] = manager.history("ana", queued.id)
    assert forget.operation == "forget" and forget.reason.startswith("erased on request")
    assert "PIN" not in repr(manager.history("ana"))


def unreadable(level: str, item_id: str, metadata: dict) -> MemoryItem:
    """Return an item of a layer whose metadata that layer cannot read (H5, FA4)."""
    return MemoryItem(
        id=item_id, user_id="ana", level=level, content="deploy database notes", metadata=metadata
    )


UNREADABLE = {
    "procedure-without-keywords": unreadable(
        "procedural", "procedure-9", {"name": "deploy", "steps": ["build"], "task_types": []}
    ),
    "procedure-with-steps-as-text": unreadable(
        "procedural",
        "procedure-9",
        {"name": "deploy", "steps": "build", "task_types": [], "keywords": ["deploy"]},
    ),
    "fact-without-sources": unreadable(
        "semantic", "fact-9", {"subject": "database", "value": "PostgreSQL"}
    ),
    "fact-with-no-source": unreadable(
        "semantic", "fact-9", {"subject": "database", "value": "PostgreSQL", "source_ids": []}
    ),
    "fact-with-sources-5": unreadable(
        "semantic", "fact-9", {"subject": "database", "value": "PostgreSQL", "source_ids": 5}
    ),
}


@pytest.mark.parametrize("stored", UNREADABLE.values(), ids=UNREADABLE)
def test_a_stored_item_no_layer_can_read_takes_no_call_of_the_user_down(clock, caplog, stored):
    """MG8: recall, start_task, a fact write and forget_memory go on beside an unreadable fact
    or procedure; recall leaves it out, counts it, and a warning names its id and rule."""
    store = InMemoryStore()
    manager = MemoryManager(store, clock=clock)
    event = manager.write("we deploy the database on Fridays", "ana")
    store.put([stored])
    with caplog.at_level(logging.WARNING):
        found = manager.recall("deploy database", "ana")
    assert [result.item.id for result in found.results] == [event.id]
    assert found.skipped == 1 and not found.degraded
    assert stored.id in caplog.text and ("H5" in caplog.text or "FA4" in caplog.text)
    manager.start_task("ana", "plan the next deploy")
    assert manager.write("editor: vim", "ana", level="semantic") is not None
    assert manager.forget_memory(event.id, "ana") is True
    assert store.get("ana", stored.id) == stored  # left in the store as it was


def spoil_metadata(path, item_id: str) -> tuple:
    """Write metadata that is not JSON into an item's row, as a hand edit does; return the row."""
    with sqlite3.connect(path) as db:
        db.execute("UPDATE items SET metadata = '{not json' WHERE id = ?", (item_id,))
        row = db.execute("SELECT * FROM items WHERE id = ?", (item_id,)).fetchone()
    db.close()
    return row


@pytest.mark.parametrize("spoiled", ["event", "fact", "procedure"])
def test_a_row_whose_metadata_is_not_json_takes_no_call_of_the_user_down(
    tmp_path, clock, caplog, spoiled
):
    """MG8 (SH5): with a row's metadata made not JSON in the file, recall, list, start_task,
    a fact write and the context go on without it, recall counts it in `skipped`, a warning
    names its id, and the row stays as it was."""
    path = tmp_path / "memory.db"
    manager = MemoryManager(SQLiteStore(path), clock=clock)
    items = {
        "event": manager.write("we deploy the database on Fridays", "ana"),
        "fact": manager.write("database: PostgreSQL", "ana", level="semantic"),
        "procedure": manager.write(
            "deploy the database",
            "ana",
            level="procedural",
            metadata={"steps": ["test", "ship"], "task_types": ["release"]},
        ),
    }
    manager.close()
    row = spoil_metadata(path, items[spoiled].id)
    manager = MemoryManager(SQLiteStore(path), clock=clock)
    with caplog.at_level(logging.WARNING):
        found = manager.recall("deploy database", "ana", task_type="release")
        assert items[spoiled].id not in [result.item.id for result in found.results]
        assert found.skipped == 1 and not found.degraded
        assert items[spoiled].id not in [item.id for item in manager.list("ana")]
        manager.start_task("ana", "plan the next database deploy")
        assert manager.write("editor: vim", "ana", level="semantic") is not None
        assert manager.write("database: SQLite", "ana", level="semantic") is not None
        assert "plan the next database deploy" in manager.get_llm_context("ana")
    assert items[spoiled].id in caplog.text and "SH5" in caplog.text
    manager.close()
    with sqlite3.connect(path) as db:
        stored = db.execute("SELECT * FROM items WHERE id = ?", (items[spoiled].id,)).fetchone()
        assert stored == row
    db.close()


# Hand edits of a row's columns that break I1, each as the reviewer made it in a real file.
SPOILED_COLUMNS = [
    "level = 'bogus'",
    "importance = 'high'",
    "importance = 5",
    "created_at = 'yesterday'",
    "access_count = -5",
]


@pytest.mark.parametrize("edit", SPOILED_COLUMNS)
def test_a_row_whose_columns_break_i1_takes_no_recall_down_and_is_forgotten_on_request(
    tmp_path, clock, caplog, edit
):
    """MG8 (SH5): with a fact's level, importance, time or access count edited in the file
    into what I1 refuses, recall and search_memory go on without it and count it in
    `skipped`, a warning names its id and SH5, the row stays as it was, and forget_memory
    naming it erases it."""
    path = tmp_path / "memory.db"
    manager = MemoryManager(SQLiteStore(path), clock=clock)
    manager.write("we deploy the database on Fridays", "ana")
    spoiled = manager.write("database: PostgreSQL", "ana", level="semantic")
    manager.close()
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE items SET {edit} WHERE id = ?", (spoiled.id,))
        row = db.execute("SELECT * FROM items WHERE id = ?", (spoiled.id,)).fetchone()
    db.close()
    manager = MemoryManager(SQLiteStore(path), clock=clock)
    with caplog.at_level(logging.WARNING):
        found = manager.recall("deploy database PostgreSQL", "ana")
        recall = ActiveRecall(manager, "ana")
        answer = json.loads(recall.handle_search_memory({"query": "database"}))
    assert [result.item.content for result in found.results] == [
        "we deploy the database on Fridays"
    ]
    assert found.skipped == 1 and not found.degraded
    assert "error" not in answer and answer["skipped"] == 1
    assert f"SH5: item {spoiled.id!r} breaks I1" in caplog.text
    manager.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT * FROM items WHERE id = ?", (spoiled.id,)).fetchone() == row
    db.close()
    manager = MemoryManager(SQLiteStore(path), clock=clock)
    assert manager.forget_memory(spoiled.id, "ana") is True
    manager.close()
    assert b"PostgreSQL" not in path.read_bytes()


def test_forget_memory_erases_a_row_whose_metadata_is_not_json(tmp_path, clock):
    """MG8 (SH5): `forget_memory` naming a row no read can make an item erases it all the same."""
    path = tmp_path / "memory.db"
    manager = MemoryManager(SQLiteStore(path), clock=clock)
    event = manager.write("the door code is 4711", "ana")
    manager.close()
    spoil_metadata(path, event.id)
    manager = MemoryManager(SQLiteStore(path), clock=clock)
    assert manager.list("ana") == []
    assert manager.forget_memory(event.id, "ana") is True
    manager.close()
    assert b"4711" not in path.read_bytes()
