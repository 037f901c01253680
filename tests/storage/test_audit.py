"""Example tests for recuris.storage.audit: one user's audit entries (AU1)."""

from dataclasses import fields

from recuris import AuditEntry, AuditRecord, InMemoryStore
from recuris.storage.audit import entry_of


def test_an_entry_keeps_every_field_of_the_record_and_adds_its_user():
    """AU1: entry_of keeps the record's fields, in order, and names the user."""
    record = AuditRecord("episode-3", "forget", "too old", 864000.0, 0.11)
    entry = entry_of(record, "ana")
    kept = [getattr(entry, field.name) for field in fields(AuditRecord)]
    assert kept == [getattr(record, field.name) for field in fields(AuditRecord)]
    assert entry.user_id == "ana"


def test_an_entry_renders_as_its_record():
    """AU1: the user is not part of the log line; the line is the record's."""
    record = AuditRecord("item-1", "write", "routed to episodic", 60.0)
    assert entry_of(record, "bob").render() == record.render()


def test_the_core_record_has_no_user():
    """AU1: users belong above the core: only the entry names one."""
    assert "user_id" not in {field.name for field in fields(AuditRecord)}
    assert isinstance(entry_of(AuditRecord("i", "write", "", 0.0), "ana"), AuditRecord)


def test_a_store_keeps_entries_per_user():
    """AU1: entries written for two users are read back each under its own user."""
    store = InMemoryStore()
    store.append_audit([AuditEntry("a", "write", "x", 1.0, None, "ana")])
    store.append_audit([AuditEntry("b", "write", "y", 2.0, None, "bob")])
    assert [entry.item_id for entry in store.audit("ana")] == ["a"]
    assert [entry.user_id for entry in store.audit("bob")] == ["bob"]
