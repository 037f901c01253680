"""Degradation: a store wrapper that keeps failed writes and retries them, never dropping one.

Document 003 §7.3: memory is an enhancement, not a single point of failure. When the store
is locked or gone, the agent must go on without memory, and what it meant to remember
must not be lost. `BufferedStore` wraps any Store: a write that fails is queued and
retried, in order, before the next write (or on `flush`); ids are still handed out; reads
see the queue (queued_reads.py), and raise StoreError when the store cannot answer, so
that the caller (the manager) can degrade to "no memory". docs/storage/concurrency.md says
what degrades how.

Invariants:
    G1  a write is either in the store or in the queue; nothing is dropped on an outage.
    G2  queued writes reach the store in the order they were made.
    G3  deleting a user's items also drops that user's queued writes, and scrubbing their audit
        (or erasing items, S13) blanks their queued records, and an erase takes the erased ids
        out of the queued copies' `source_ids` and `merged_ids` (S13), so a retry can never
        bring deleted memory back.
    G4  offline ids are unique across stores and processes: each holds a random token drawn
        once per BufferedStore (or injected), beside the time and a counter.
    G5  `close` flushes; if writes are still queued it raises StoreError naming them, keeps
        them queued and leaves the inner store open, so that a later `close` may write them.
    G6  the queue holds at most `max_pending` batches; a write past it raises StoreError:
        no write is ever dropped silently.
    G7  every operation of the Store protocol is a method of the class, written out: none
        reaches the inner store unseen (`users` is forwarded as it is; the rest change something).
    G8  a read is never queued: one the store cannot answer raises StoreError; a write refused by a
        rule (S2, S6), not by an outage, raises at once when nothing is queued, and is not queued.
    G9  several threads may share one store: every operation of the Store protocol but `iterate`
        (a generator, which holds nothing between batches) runs whole under the store's
        re-entrant `_lock`, taken in the method itself (here and in queued_reads.py).
    G10 with `access_batch` N above 1, counted accesses (and the audit records given with them)
        wait in the queue, one batch for up to N calls in a row, and reach the store in one
        transaction: at the next write, at `flush` or `close`, or at the Nth call. Each is
        written once; a process that dies loses the waiting batch, never anything else.
    G11 an outage is logged once as a warning when its first write fails, and once as a note
        when the queue is written out; the writes queued in between log nothing each.
    G12 `erase` drops the named items' queued copies before it asks the store anything, and
        counts an item whose only copy was queued as erased, whether the store is up, down
        for writes (it is not asked to erase what it does not hold) or down (QueuedErasureError).
    G13 a write queued while the store fails reads no batch of the queue but its first (the
        retry) and its own: its work, and that of `holds` after it, is the same with ten
        batches queued or ten thousand. Each queued batch is replayed onto its users' replays
        as it is queued, and `holds` and every read answer from them (QR3).
    G14 `unwritten` returns what the queue holds as the store would once written: the newest
        queued copy of each item not deleted since (user by user, each user's in queue order)
        and every queued audit record in queue order; the queue is left as it is.
    G15 once `close` has written the queue and closed the store, every write raises
        StoreError naming G15: nothing is queued that no later close would write.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import replace

from ..core.validation import require_count
from .audit import AuditEntry
from .item import MemoryItem
from .queued_reads import Counted, QueuedReads, QueuedView, Replay, replay, replay_batch
from .store import Access, Store, StoreError, erased_forms, mentions_erased, without_erased

__all__ = ["BufferedStore", "QueuedView", "QueuedErasureError", "ACCESS_BATCH"]

# Calls of `record_access` whose accesses are written together: 1 writes each one at once.
ACCESS_BATCH = 1

log = logging.getLogger("recuris.storage.store")


class QueuedErasureError(StoreError):
    """Queued copies of items were erased, but the store failed: a stored copy may remain (G12).

    `erased` counts the items whose queued copies were dropped.
    """

    def __init__(self, message: str, erased: int) -> None:
        super().__init__(message)
        self.erased = erased


class BufferedStore(QueuedReads):
    """Wrap a store so that a failed write is kept and retried, never dropped.

    Reads go to the inner store, overlaid with the queue (QR1, queued_reads.py), and raise
    StoreError when it fails; the caller decides how to degrade. `pending` counts the batches
    waiting to be written. Every Store operation is written out here or in QueuedReads (G7).
    """

    def __init__(
        self,
        inner: Store,
        clock: Callable[[], float] = time.time,
        *,
        max_pending: int = 10_000,
        token: str | None = None,
        access_batch: int = ACCESS_BATCH,
    ) -> None:
        self.inner = inner
        self.clock = clock
        self.max_pending = max_pending
        self.access_batch = require_count("G10: access_batch", access_batch, 1)
        self._deferred: Counted | None = None  # the batch of accesses later ones join (G10)
        self._deferred_calls = 0
        # A queued put keeps the arguments of `put`: items, audit, delete; accesses are a Counted.
        self._pending: list[tuple[list, list, list] | Counted] = []
        # User id -> their replay of the queue: kept as batches are appended, so that `holds`
        # and reads replay no queue (G13, QR3); None once batches were written out and some
        # are left, made again by the next read.
        self._replays: dict[str, Replay] | None = {}
        self._offline = 0
        self._failing = False  # an outage is under way and was warned of (G11)
        self._closed = False  # set by a close that wrote the queue and closed the store (G15)
        self._generations: dict[str, int] = {}  # per user: the forget generation last read (S6)
        # Two managers offline at the same millisecond (two processes, say) must not hand
        # out the same id, or one user's queued write is refused as another's (S2, G4).
        self.token = token or uuid.uuid4().hex[:12]
        self._lock = threading.RLock()  # the queue is shared by every thread using the store (G9)

    def new_id(self, prefix: str) -> str:
        """Return a fresh id from the store; while it is down, a time-stamped offline id (G4)."""
        with self._lock:
            try:
                return self.inner.new_id(prefix)
            except StoreError:
                self._offline += 1
                return f"{prefix}-offline-{int(self.clock() * 1000)}-{self.token}-{self._offline}"

    @property
    def pending(self) -> int:
        return len(self._pending)

    def _send(self, entry) -> None:
        if isinstance(entry, Counted):
            self.inner.record_access(entry, entry.audit)
        else:
            self.inner.put(*entry)

    def _failed(self, error: StoreError) -> None:
        # One warning per outage (G11): a queue of a thousand writes is one event, not a
        # thousand lines in the log.
        if not self._failing:
            self._failing = True
            log.warning("store failing, writes are queued for retry: %s", error)

    def flush(self) -> bool:
        """Write pending batches in order; return True when none is left."""
        with self._lock:
            written = 0
            while self._pending:
                try:
                    self._send(self._pending[0])
                except StoreError as error:
                    self._failed(error)
                    return False
                except ValueError as error:
                    # Refused by a rule (S2, S6), not by an outage: retrying cannot help.
                    log.error("store refused a queued batch, which is dropped: %s", error)
                self._pending.pop(0)
                # An empty queue replays to nothing; a shorter one is replayed again when read.
                self._replays = None if self._pending else {}
                written += 1
            if self._failing and written:
                log.info("store back: %d batch(es) queued during the outage written", written)
                self._failing = False
            return True

    def _write(self, entry) -> None:
        self._refuse_if_closed()
        if self.flush():
            try:
                self._send(entry)
                self._failing = False
                return
            except StoreError as error:
                self._failed(error)
        if len(self._pending) >= self.max_pending:
            queued = sum(len(_entries(batch)) for batch in self._pending)
            raise StoreError(
                f"G6: the retry queue is full: {len(self._pending):,} batches ({queued:,} "
                f"entries) queued, at most {self.max_pending:,}, and the store still fails: "
                f"this write of {len(_entries(entry))} entries was not kept"
            )
        if not isinstance(
            entry, Counted
        ):  # a put: queued as copies, which the caller cannot change
            items, audit, delete = entry
            entry = [item.copy() for item in items], audit, delete
        self._queue(entry)

    def _queue(self, entry) -> None:
        # Appended, and replayed onto its users' replays at once (G13, QR3).
        self._pending.append(entry)
        if self._replays is not None:
            replay_batch(self._replays, entry)

    def put(
        self,
        items: Iterable[MemoryItem],
        audit: Iterable[AuditEntry] = (),
        delete: Iterable[MemoryItem] = (),
    ) -> None:
        with self._lock:
            # One put stays one batch in the queue, so it still lands whole (S5).
            self._write((list(items), list(audit), list(delete)))

    def holds(self, item: MemoryItem) -> bool:
        """Return whether the queue still holds a put of this item (not deleted since, QR1)."""
        with self._lock:
            if not self._pending:
                return False
            return item.id in self._view(item.user_id).fresh

    def append_audit(self, records: Iterable[AuditEntry]) -> None:
        with self._lock:
            self.put((), records)

    def record_access(self, accesses: Iterable[Access], audit: Iterable[AuditEntry] = ()) -> None:
        """Count the accesses with their audit records: now, or with later ones (G10)."""
        with self._lock:
            self._refuse_if_closed()
            counted = Counted(accesses, audit)
            if self.access_batch == 1:
                self._write(counted)
                return
            # Deferred: joined to the batch at the end of the queue, sent with the next write,
            # at close, or once `access_batch` calls have joined it; reads see it meanwhile (QR1).
            if self._pending and self._pending[-1] is self._deferred:
                self._deferred.extend(counted)
                self._deferred.audit.extend(counted.audit)
                if self._replays is not None:
                    # The last batch grew: its new accesses are replayed after the rest (QR3).
                    replay_batch(self._replays, counted)
            else:
                self._deferred = counted
                self._deferred_calls = 0
                self._queue(counted)
            self._deferred_calls += 1
            if self._deferred_calls >= self.access_batch:
                self.flush()

    def unwritten(self) -> tuple[list[MemoryItem], list[AuditEntry]]:
        """Return copies of the queued items (each one's newest copy) and audit records (G14)."""
        with self._lock:
            users = {entry.user_id: None for queued in self._pending for entry in _entries(queued)}
            items = [item for user in users for item in self.queued(user)]
            records = [
                record
                for queued in self._pending
                for record in (queued.audit if isinstance(queued, Counted) else queued[1])
            ]
            return items, records

    def close(self) -> None:
        """Flush, then close the inner store; raise StoreError naming what is still queued (G5)."""
        with self._lock:
            if not self.flush():
                ids = [
                    getattr(entry, "id", None) or entry.item_id
                    for queued in self._pending
                    for entry in _entries(queued)
                ]
                more = f" and {len(ids) - 20} more" if len(ids) > 20 else ""
                shown = ", ".join(ids[:20]) + more
                raise StoreError(
                    f"G5: {len(self._pending)} queued batch(es) not written, the store still "
                    f"fails ({shown}); they stay queued (see `queued`) and the store stays open: "
                    "close again once it is back"
                )
            self.inner.close()
            self._closed = True

    def _refuse_if_closed(self) -> None:
        # A write after a close would wait in a queue no one writes: the caller must hear it.
        if self._closed:
            raise StoreError("G15: the store is closed; this write was not kept")

    def _drop_pending(self, user_id: str, item_ids: set[str] | None) -> None:
        # A queued write must not bring back what was deleted after it was queued.
        def doomed(entry) -> bool:
            return entry.user_id == user_id and (
                item_ids is None or getattr(entry, "id", None) in item_ids
            )

        keep = lambda part: [entry for entry in part if not doomed(entry)]  # noqa: E731
        self._pending = [
            Counted(keep(queued), keep(queued.audit))
            if isinstance(queued, Counted)
            else tuple(map(keep, queued))
            for queued in self._pending
        ]
        # Replayed again: dropping them has read the whole queue already (QR3).
        self._replays = replay(self._pending)

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        with self._lock:
            item_ids = set(item_ids)
            self._drop_pending(user_id, item_ids)
            return self.inner.delete(user_id, item_ids)

    def erase(self, user_id: str, item_ids: Iterable[str]) -> int:
        """Erase the user's named items, queued copies first, then in the store; return how many
        were found, in the queue or the store (G3, G12, S13).

        Queued audit records about them are blanked as the store blanks its own. While the
        store cannot be written, an item it does not hold is erased all the same (its only
        copy was queued); otherwise the store's failure is raised: QueuedErasureError when
        queued copies were dropped, StoreError when none was. An erasure is never queued,
        so it is never reported done before it is.
        """
        with self._lock:
            item_ids = set(item_ids)
            queued = self._view(user_id).fresh
            dropped = {key for key in item_ids if key in queued}
            # The queue is emptied of them before the store is asked anything: a store that
            # cannot answer must not keep a queued copy alive (G12).
            self._forget_queued(user_id, item_ids, [queued[key] for key in dropped])
            held: set[str] = set()
            try:
                stored = {key: self.inner.get(user_id, key) for key in item_ids}
                held = {key for key, item in stored.items() if item is not None}
                self._forget_queued(user_id, item_ids, [stored[key] for key in held])
                # A row reads could not read is stored all the same, and erased (SH5).
                held |= item_ids.intersection(self.unreadable(user_id))
                erased = self.inner.erase(user_id, item_ids) if held else 0
            except StoreError as error:
                self._unquote_queued(user_id, dropped)
                if not dropped:
                    raise
                raise QueuedErasureError(
                    f"G12: {len(dropped)} queued item(s) erased, but the store fails, so a "
                    f"stored copy may remain: erase again once it is back ({error})",
                    len(dropped),
                ) from error
            self._unquote_queued(user_id, dropped | held)
            return max(erased, len(dropped | held))

    def _unquote_queued(self, user_id: str, erased: set[str]) -> None:
        # Queued copies of the user's items lose the erased ids from their lists of ids, as
        # the stored ones do (S13): a retry must not write an erased id back.
        changed = False

        def unquote(items) -> list[MemoryItem]:
            nonlocal changed
            kept = []
            for item in items:
                mine = item.user_id == user_id
                metadata = without_erased(item.metadata, erased) if mine else None
                changed = changed or metadata is not None
                kept.append(item if metadata is None else replace(item, metadata=metadata))
            return kept

        if not erased:
            return
        pending = [
            queued if isinstance(queued, Counted) else (unquote(queued[0]), *queued[1:])
            for queued in self._pending
        ]
        if changed:
            self._pending = pending
            # Replayed again, as after dropping writes (QR3).
            self._replays = replay(self._pending)

    def _forget_queued(self, user_id: str, item_ids: set[str], found: list[MemoryItem]) -> None:
        # Drop the queued copies and blank the queued records that name or quote them (G3).
        # Reasons are searched for the ids found, as a store searches for those it holds
        # (S13): an id of another user's, or of none, names nothing of this user's.
        forms = erased_forms(item.content for item in found)
        named = {item.id for item in found}
        self._drop_pending(user_id, item_ids)
        self._blank_queued(
            user_id,
            lambda record: record.item_id in item_ids or mentions_erased(record, named, forms),
        )

    def unreadable(self, user_id: str) -> tuple[str, ...]:
        """Return the ids of the user's stored rows that reads left out, unreadable (SH5).

        Empty for a store whose every row reads as an item (one without `unreadable`).
        """
        method = getattr(self.inner, "unreadable", None)
        return method(user_id) if method is not None else ()

    def delete_user(self, user_id: str) -> int:
        with self._lock:
            self._drop_pending(user_id, None)
            self._generations.pop(user_id, None)
            return self.inner.delete_user(user_id)

    def generation(self, user_id: str) -> int:
        """Return the user's forget generation; if it rose, drop their queued writes (S6)."""
        with self._lock:
            current = self.inner.generation(user_id)
            if self._generations.setdefault(user_id, current) != current:
                # Another process forgot the user: these were prepared before
                self._drop_pending(user_id, None)
                self._generations[user_id] = current
            return current

    def scrub_audit(self, user_id: str) -> int:
        """Blank the user's audit reasons and weights, queued ones first: none lands with text."""
        with self._lock:
            self._blank_queued(user_id, lambda record: True)
            return self.inner.scrub_audit(user_id)

    def _blank_queued(self, user_id: str, chosen: Callable[[AuditEntry], bool]) -> None:
        # The queued audit records of the user that `chosen` picks lose their reason and weight.
        def blank(records: list[AuditEntry]) -> list[AuditEntry]:
            return [
                replace(r, reason="", weight=None) if r.user_id == user_id and chosen(r) else r
                for r in records
            ]

        self._pending = [
            Counted(queued, blank(queued.audit))
            if isinstance(queued, Counted)
            else (queued[0], blank(queued[1]), queued[2])
            for queued in self._pending
        ]

    def users(self) -> list[str]:
        """Return the store's users: one whose every item is still queued is listed once written."""
        with self._lock:
            return self.inner.users()


def _entries(queued) -> list:
    return (
        [*queued, *queued.audit]
        if isinstance(queued, Counted)
        else [entry for part in queued for entry in part]
    )
