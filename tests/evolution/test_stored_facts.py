"""Example tests for recuris.evolution.stored_facts:
semantic memory's facts kept in a Store (FA1-FA4)."""

import pytest

from recuris import InMemoryStore, ManualClock, SemanticMemory, SQLiteStore
from recuris.evolution.stored_facts import StoredFacts


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


def test_a_source_id_written_as_text_is_one_whole_id(store):
    """FA4: a `source_ids` text is one id, not its characters; a list gives its texts."""
    from recuris import MemoryItem
    from recuris.evolution.stored_facts import cited_sources, item_to_fact

    def item(source_ids):
        return MemoryItem(
            id="fact-9",
            user_id="ana",
            level="semantic",
            content="city: Lisbon",
            metadata={"subject": "city", "value": "Lisbon", "source_ids": source_ids},
        )

    assert cited_sources(item("item-199")) == ("item-199",)
    assert item_to_fact(item("item-199")).source_ids == ("item-199",)
    assert cited_sources(item(["item-1", 7, "item-2"])) == ("item-1", "item-2")
    assert cited_sources(item({"item-1": True})) == ()
