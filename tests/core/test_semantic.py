"""Example tests for recuris.core.semantic.SemanticMemory (F1-F4)."""

import pytest

from recuris import ManualClock, SemanticMemory
from recuris.storage.sqlite_store import SQLiteStore


@pytest.fixture
def memory():
    return SemanticMemory(clock=ManualClock(10))


def test_added_fact_keeps_its_sources_and_gets_an_id(memory):
    """F3: a fact keeps the ids of its sources, without repeats, in order."""
    fact = memory.add("team language", "Python", ["episode-1", "episode-2", "episode-1"])
    assert (fact.id, fact.source_ids, fact.created_at) == ("fact-1", ("episode-1", "episode-2"), 10)


def test_the_valid_statement_cannot_be_added_again(memory):
    """F2: the valid (subject, value) is refused again, whatever its case or spacing."""
    memory.add("team language", "Python", ["e1"])
    with pytest.raises(ValueError, match="F2"):
        memory.add("Team  Language", "python", ["e2"])
    assert len(memory) == 1


def test_fact_without_sources_is_refused(memory):
    """F3: no sources, no fact; nothing is stored."""
    with pytest.raises(ValueError, match="R4"):
        memory.add("team language", "Python", [])
    assert len(memory) == 0


def test_contradiction_supersedes_and_keeps_the_old_fact(memory):
    """F1, F2: a new value closes the old fact (time and successor recorded) and keeps it."""
    old = memory.add("database", "MySQL", ["e1"])
    memory.clock.advance(5)
    new = memory.add("database", "PostgreSQL", ["e2"])
    closed = memory.about("database", include_invalid=True)[1]
    assert (closed.id, closed.value, closed.invalidated_at, closed.superseded_by) == (
        old.id,
        "MySQL",
        15,
        new.id,
    )
    assert memory.about("database") == [new] and memory.current() == (new,)


def test_superseding_never_touches_another_subject(memory):
    """F4: facts about other subjects stay valid and unchanged."""
    other = memory.add("team language", "Python", ["e1"])
    memory.add("database", "MySQL", ["e2"])
    memory.add("database", "PostgreSQL", ["e3"])
    assert memory.about("team language") == [other]


def test_supersession_is_audited(memory):
    """Every write and supersession leaves an audit record with its reason."""
    memory.add("database", "MySQL", ["e1"])
    memory.add("database", "PostgreSQL", ["e2"], reason="user changed their mind")
    log = [(r.item_id, r.operation, r.reason) for r in memory.store.audit("default")]
    assert log == [
        ("fact-1", "write", "added"),
        ("fact-2", "write", "user changed their mind"),
        ("fact-1", "supersede", "superseded by fact-2: 'database: PostgreSQL'"),
    ]


def test_knows_only_the_valid_value(memory):
    """knows() answers for the valid fact, case- and space-insensitively."""
    memory.add("database", "MySQL", ["e1"])
    memory.add("database", "PostgreSQL", ["e2"])
    assert memory.knows(" DATABASE ", "postgresql") and not memory.knows("database", "MySQL")


def test_facts_persist_in_the_store(tmp_path):
    """Facts survive a reopen, superseded ones included."""
    store = SQLiteStore(tmp_path / "m.db")
    SemanticMemory(store, "ana").add("database", "MySQL", ["e1"])
    SemanticMemory(store, "ana").add("database", "PostgreSQL", ["e2"])
    store.close()
    reopened = SemanticMemory(SQLiteStore(tmp_path / "m.db"), "ana")
    assert [(f.value, f.is_valid) for f in reopened.facts] == [("MySQL", False), ("PostgreSQL", True)]


def test_prompt_section_lists_the_valid_facts(memory):
    """The prompt section renders each valid fact with its sources."""
    memory.add("database", "MySQL", ["e1"])
    memory.add("database", "PostgreSQL", ["e2"])
    section = memory.to_prompt_section()
    assert "database: PostgreSQL (from e2)" in section and "MySQL" not in section


def test_superseding_a_fact_deleted_since_it_was_cached_does_not_bring_it_back(memory):
    """F1: a superseded fact is closed in the store; one the store no longer holds stays deleted."""
    old = memory.add("vault code", "1111", ["e1"])
    memory.store.delete("default", [old.id])  # deleted elsewhere: a decay cycle, another manager
    new = memory.add("vault code", "2222", ["e2"])
    assert [item.id for item in memory.store.list("default")] == [new.id]


def test_two_valid_facts_about_one_subject_found_on_load_leave_only_the_newest_valid():
    """F5: loading closes every valid fact that a newer valid fact of the same subject contradicts."""
    from recuris import InMemoryStore

    store = InMemoryStore()
    first = SemanticMemory(store, "ana", ManualClock(10))
    second = SemanticMemory(store, "ana", ManualClock(20))
    old = first.add("database", "MySQL", ["e1"])
    new = second.add("Database", "PostgreSQL", ["e2"])  # written without knowing of `old`
    memory = SemanticMemory(store, "ana", ManualClock(30))
    assert [fact.value for fact in memory.current()] == ["PostgreSQL"]
    closed = store.get("ana", old.id)
    assert (closed.invalidated_at, closed.superseded_by) == (20, new.id)
    assert [(r.item_id, r.operation) for r in store.audit("ana")][-1] == (old.id, "supersede")
