"""Example tests for recuris.evolution.stored_facts:
semantic memory's facts kept in a Store (FA1-FA4)."""

import logging

import pytest

from recuris import InMemoryStore, ManualClock, MemoryItem, SemanticMemory, SQLiteStore
from recuris.evolution.stored_facts import StoredFacts, check_semantic_item, item_to_fact


@pytest.fixture
def store():
    return InMemoryStore()


def facts(store, user="ana", now=10):
    return SemanticMemory(StoredFacts(store, user), ManualClock(now))


def test_supersession_is_audited(store):
    """FA2: every write and supersession leaves an audit record with its reason."""
    memory = facts(store)
    memory.add("database", "MySQL", ["e1"])
    memory.add("database", "PostgreSQL", ["e2"], reason="user changed their mind")
    log = [(r.item_id, r.operation, r.reason) for r in store.audit("ana")]
    assert log == [
        ("fact-1", "write", "added"),
        ("fact-2", "write", "user changed their mind"),
        ("fact-1", "supersede", "superseded by fact-2: 'database: PostgreSQL'"),
    ]


def test_facts_persist_in_the_store(tmp_path):
    """FA1: facts survive a reopen, superseded ones included."""
    store = SQLiteStore(tmp_path / "m.db")
    facts(store).add("database", "MySQL", ["e1"])
    facts(store).add("database", "PostgreSQL", ["e2"])
    store.close()
    reopened = facts(SQLiteStore(tmp_path / "m.db"))
    assert [(f.value, f.is_valid) for f in reopened.facts] == [
        ("MySQL", False),
        ("PostgreSQL", True),
    ]


def test_superseding_a_fact_deleted_since_it_was_cached_does_not_bring_it_back(store):
    """FA2: a superseded fact is closed in the store;
    one the store no longer holds stays deleted."""
    memory = facts(store)
    old = memory.add("vault code", "1111", ["e1"])
    store.delete("ana", [old.id])  # deleted elsewhere: a decay cycle, another manager
    new = memory.add("vault code", "2222", ["e2"])
    assert [item.id for item in store.list("ana")] == [new.id]


def test_two_valid_facts_found_on_load_are_closed_in_the_store_and_audited(store):
    """FA2: the fact F5 closes on load is closed in the store, with its audit record."""
    old = facts(store, now=10).add("database", "MySQL", ["e1"])
    # Written without knowing of `old`
    new = facts(store, now=20).add("Database", "PostgreSQL", ["e2"])
    assert [fact.value for fact in facts(store, now=30).current()] == ["PostgreSQL"]
    closed = store.get("ana", old.id)
    assert (closed.invalidated_at, closed.superseded_by) == (20, new.id)
    assert [(r.item_id, r.operation) for r in store.audit("ana")][-1] == (old.id, "supersede")


def test_an_archive_sees_only_its_own_user(store):
    """FA3: another user's facts never load into this user's semantic memory."""
    facts(store, "bob").add("database", "MySQL", ["e1"])
    assert len(facts(store, "ana")) == 0


def stored_fact(**metadata) -> MemoryItem:
    """Return a fact's item as the archive stores it, its metadata changed by `metadata`."""
    kept = {"subject": "database", "value": "PostgreSQL", "source_ids": ["e1"]}
    return MemoryItem(
        id="fact-9",
        user_id="ana",
        level="semantic",
        content="database: PostgreSQL",
        metadata={key: value for key, value in {**kept, **metadata}.items() if value is not None},
    )


@pytest.mark.parametrize(
    "metadata, said",
    [
        ({"source_ids": None}, "['source_ids']"),
        ({"source_ids": []}, "F3"),
        ({"source_ids": 5}, "source_ids must be a list of text"),
        ({"source_ids": "e1"}, "source_ids must be a list of text"),
        ({"value": None}, "['value']"),
        ({"subject": " "}, "subject must not be empty"),
    ],
    ids=["no-sources", "sources-empty", "sources-5", "sources-text", "no-value", "blank-subject"],
)
def test_an_item_whose_metadata_is_no_fact_is_refused_naming_fa4(metadata, said):
    """FA4: a fact has text subject and value and a non-empty list of text sources (F3)."""
    for check in (item_to_fact, check_semantic_item):
        with pytest.raises(ValueError, match="FA4") as refused:
            check(stored_fact(**metadata))
        assert said in str(refused.value) and "'fact-9'" in str(refused.value)


def test_any_semantic_items_sources_are_a_list_of_text():
    """FA4: an insight (no subject) may name no source, but not sources that are no list."""
    insight = stored_fact(subject=None, value=None, source_ids=None)
    check_semantic_item(insight)
    with pytest.raises(ValueError, match="FA4"):
        check_semantic_item(stored_fact(subject=None, value=None, source_ids=5))


def test_a_stored_item_that_is_no_fact_is_left_out_with_a_warning(store, caplog):
    """FA4: the archive loads the other facts, warns naming the item and FA4, lists it."""
    store.put([stored_fact(source_ids=[])])
    facts(store).add("editor", "vim", ["e2"])
    archive = StoredFacts(store, "ana")
    with caplog.at_level(logging.WARNING, "recuris.evolution.stored_facts"):
        memory = SemanticMemory(archive, ManualClock(20))
    assert [fact.subject for fact in memory.facts] == ["editor"]
    assert archive.skipped == ("fact-9",)
    assert "fact-9" in caplog.text and "FA4" in caplog.text
    memory.add("database", "SQLite", ["e3"])  # a write on the subject goes on (F3 not raised)
    assert store.get("ana", "fact-9") == stored_fact(source_ids=[])
