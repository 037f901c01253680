"""Audit entries: each user's log of what happened to their memory, kept beside the items.

Document 003 §6.3 asks that every operation on memory leave a reason that can be read back,
and §7 that a user's data be isolated and deletable. The core's `AuditRecord` says what
happened to which item, when and why; a store keeps it for one user, as an `AuditEntry`,
in the same transaction as the items it speaks of (S5), read back by user (S12) and blanked
when the user is forgotten (S6).

Invariants:
    AU1 an `AuditEntry` is an `AuditRecord` with the user whose log it belongs to: it renders
        as the record does, and `entry_of(record, user_id)` keeps every field of the record.
"""

from dataclasses import dataclass

from ..core.records import AuditRecord

__all__ = ["AuditEntry", "entry_of"]


@dataclass(frozen=True)
class AuditEntry(AuditRecord):
    """One line of a user's audit log, as a store keeps it."""

    user_id: str = ""


def entry_of(record: AuditRecord, user_id: str) -> AuditEntry:
    """Return the record as an entry of this user's log (AU1)."""
    return AuditEntry(
        record.item_id, record.operation, record.reason, record.at, record.weight, user_id
    )
