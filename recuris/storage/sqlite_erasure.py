"""Erasure in SQLite: forget a user so that no row, page or log frame keeps their text.

Document 003 §7.2 asks that deleting a user's data reach every copy. In one SQLite file the
copies are the rows (items, postings, audit), freed pages, and the page images in
the write-ahead log, which a reader in another process may still be using: the log can be
folded into the file and emptied only once no reader needs its frames. Forgetting is one
transaction (items, postings, audit reasons and the user's generation, S6), then a
checkpoint that must complete, or say that it did not.

Invariants:
    SE1 `delete_user` and `erase` (S13) return only once the write-ahead log is folded into
        the file and emptied; while another connection keeps it busy, the checkpoint waits (SQLite's
        busy handler) up to the store's `timeout`, then raises ErasureIncompleteError,
        never reports success while old copies of the text may remain.
    SE2 an incomplete erasure is recorded in the file, in the forget's own transaction, and
        completes by itself: the next write, open or close of any store on the file, once
        no reader holds old pages, folds the log in and empties it, then drops the record;
        `pending_erasures` counts the records left. A file no process opens again keeps its
        record, and the old copies with it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from . import sqlite_schema as schema
from .store import StoreError, erased_forms, names_item, without_erased

__all__ = ["SQLiteErasure", "ErasureIncompleteError"]

# S13: the user's audit records naming an erased item, or quoting one's content in a form of
# `erased_forms` (the ids and the forms each as one JSON array).
SCRUB_ERASED = (
    "UPDATE audit SET reason = '', weight = NULL WHERE user_id = ? AND ("
    "item_id IN (SELECT value FROM json_each(?)) "
    "OR EXISTS (SELECT 1 FROM json_each(?) AS form WHERE instr(reason, form.value) > 0))"
)
# S13: the user's other audit records whose reason holds an erased id with no ASCII letter,
# digit, `-` or `_` after it somewhere (`_id_patterns`); `names_item` then keeps those that
# hold it whole. The patterns leave out most reasons holding it only inside a longer id
# (`item-1` in `item-19`), which would otherwise all be read back to be refused. The ids are
# bound one by one, not as a JSON array: `json_each` in the condition is parsed again at each
# record, which would cost more than the scan itself.
HOLDING_ERASED_ID = "(instr(reason, ?) > 0 AND (reason GLOB ? OR reason GLOB ?))"
HOLDING_ERASED_IDS = "SELECT seq, reason FROM audit WHERE user_id = ? AND reason != '' AND ({})"
# Erased ids sought per statement: 3 bound values each, far below SQLite's limit of 32,766.
IDS_PER_SEARCH = 100
# S13: the user's items whose metadata holds an erased id as a JSON string somewhere; those
# whose QUOTING_FIELDS lists name it are rewritten without it (`without_erased`).
QUOTING_ERASED_ID = "instr(metadata, ?) > 0"
QUOTING_ERASED_IDS = "SELECT id, metadata FROM items WHERE user_id = ? AND ({})"
METADATA_UPDATE = "UPDATE items SET metadata = ? WHERE id = ? AND user_id = ?"
BLANK_RECORDS = (
    "UPDATE audit SET reason = '', weight = NULL WHERE seq IN (SELECT value FROM json_each(?))"
)


def _unquote(db: sqlite3.Connection, user_id: str, erased: list[str]) -> None:
    """Take the erased ids out of the lists of ids the user's items quote (S13)."""
    gone = set(erased)
    for start in range(0, len(erased), IDS_PER_SEARCH):
        batch = erased[start : start + IDS_PER_SEARCH]
        either = " OR ".join([QUOTING_ERASED_ID] * len(batch))
        quoted = [json.dumps(item_id, ensure_ascii=False) for item_id in batch]
        found = db.execute(QUOTING_ERASED_IDS.format(either), (user_id, *quoted)).fetchall()
        for item_id, text in found:
            try:
                metadata = json.loads(text)
            except ValueError:
                continue  # a row no read makes an item is left as it is (SH5)
            if isinstance(metadata, dict):
                rewritten = without_erased(metadata, gone)
                if rewritten is not None:
                    db.execute(METADATA_UPDATE, (schema.metadata_text(rewritten), item_id, user_id))


class ErasureIncompleteError(StoreError):
    """A user's data is deleted, but old copies of it may remain in the write-ahead log (SE1).

    `deleted` counts the items the forget deleted. The erasure completes by itself (SE2):
    the next write, open or close of any store on the file finishes it once the readers are
    done; forgetting the user again does too.
    """

    def __init__(self, message: str, deleted: int) -> None:
        super().__init__(message)
        self.deleted = deleted


class SQLiteErasure:
    """Deleting and forgetting for SQLiteStore: delete, delete_user, erase, scrub_audit and
    generation."""

    def delete(self, user_id: str, item_ids: Iterable[str]) -> int:
        # One statement per batch, the ids as one JSON array; `+` keeps SQLite on the id index.
        item_ids = list(dict.fromkeys(item_ids))
        self.rows.forget(user_id, item_ids)  # SH5: a row deleted is unreadable no more
        ids = json.dumps(item_ids, ensure_ascii=False)
        return self._delete(
            "id IN (SELECT value FROM json_each(?)) AND +user_id = ?", [(ids, user_id)]
        )

    def _delete(self, where: str, parameters: list[tuple]) -> int:
        return self._transaction(lambda db: self._delete_rows(db, where, parameters))

    @staticmethod
    def _delete_rows(db: sqlite3.Connection, where: str, parameters: list[tuple]) -> int:
        doomed = [
            found
            for row in parameters
            for found in db.execute(
                f"SELECT user_id, level, content, number FROM items WHERE {where}", row
            )
        ]
        schema.reindex(db, doomed, [])  # SH1: their postings and their share of the totals go too
        return sum(
            db.execute(f"DELETE FROM items WHERE {where}", row).rowcount for row in parameters
        )

    def delete_user(self, user_id: str) -> int:
        """Forget the user in one transaction: delete items, blank audit, raise the generation.

        Raises ErasureIncompleteError when old copies may remain in the log (SE1).
        """

        def forget(db: sqlite3.Connection) -> tuple[int, int]:
            # The user's postings go by their scopes (a range of the key), then the items.
            for statement in schema.POSTINGS_DELETE_USER:
                db.execute(statement, (user_id,))
            db.execute("DELETE FROM scopes WHERE user_id = ?", (user_id,))
            deleted = db.execute("DELETE FROM items WHERE user_id = ?", (user_id,)).rowcount
            db.execute(schema.SCRUB_AUDIT, (user_id,))
            db.execute(schema.FORGET, (user_id,))
            _record_erasure(db, f"user {user_id!r}")
            return deleted, self._generation(db, user_id)

        self.rows.forget(user_id)
        deleted, self._seen[user_id] = self._transaction(forget)  # this object's own forget is seen
        self._checkpoint(f"user {user_id!r}", deleted)
        return deleted

    def erase(self, user_id: str, item_ids: Iterable[str]) -> int:
        """Delete the user's named items, blank the audit about them, then fold the log (S13).

        The deletion and the blanking are one transaction. Raises ErasureIncompleteError when
        old copies may remain in the log (SE1).
        """
        item_ids = list(dict.fromkeys(item_ids))
        self.rows.forget(user_id, item_ids)
        ids = json.dumps(item_ids, ensure_ascii=False)
        where = "id IN (SELECT value FROM json_each(?)) AND +user_id = ?"
        what = f"items of user {user_id!r}"

        def erase(db: sqlite3.Connection) -> int:
            found = db.execute(f"SELECT id, content FROM items WHERE {where}", (ids, user_id))
            rows = found.fetchall()
            found_ids = [row[0] for row in rows]
            erased = json.dumps(found_ids, ensure_ascii=False)
            forms = json.dumps(erased_forms(row[1] for row in rows), ensure_ascii=False)
            db.execute(SCRUB_ERASED, (user_id, erased, forms))
            naming = []
            for start in range(0, len(found_ids), IDS_PER_SEARCH):
                batch = found_ids[start : start + IDS_PER_SEARCH]
                either = " OR ".join([HOLDING_ERASED_ID] * len(batch))
                bound = [value for item_id in batch for value in _id_patterns(item_id)]
                holding = db.execute(HOLDING_ERASED_IDS.format(either), (user_id, *bound))
                naming += [
                    seq
                    for seq, reason in holding
                    if any(names_item(reason, item_id) for item_id in batch)
                ]
            db.execute(BLANK_RECORDS, (json.dumps(naming),))
            deleted = self._delete_rows(db, where, [(ids, user_id)])
            _unquote(db, user_id, found_ids)
            _record_erasure(db, what)
            return deleted

        deleted = self._transaction(erase)
        self._checkpoint(what, deleted)
        return deleted

    def scrub_audit(self, user_id: str) -> int:
        """Blank the reasons and weights of the user's audit records; return how many (SE1)."""

        def scrub(db: sqlite3.Connection) -> int:
            _record_erasure(db, f"the audit text of {user_id!r}")
            return db.execute(schema.SCRUB_AUDIT, (user_id,)).rowcount

        scrubbed = self._transaction(scrub)
        self._checkpoint(f"the audit text of {user_id!r}", 0)
        return scrubbed

    @staticmethod
    def _generation(db: sqlite3.Connection, user_id: str) -> int:
        row = db.execute(schema.GENERATION, (user_id,)).fetchone()
        return row[0] if row else 0

    def generation(self, user_id: str) -> int:
        """Return how many times the user was forgotten, and take it as seen by this object (S6)."""
        try:
            with self._lock:  # the connection serves one thread at a time
                self._seen[user_id] = self._generation(self._db, user_id)
        except sqlite3.Error as error:
            raise StoreError(f"{type(error).__name__}: {error}") from error
        return self._seen[user_id]

    def _checkpoint(self, what: str, deleted: int) -> None:
        # Old page images in the write-ahead log may still hold deleted text: fold them into
        # the file (whose freed pages secure_delete zeroed) and empty the log.
        if not self.finish_erasures():
            raise ErasureIncompleteError(
                f"SE1: erasure of {what} is incomplete: it is deleted, but another connection kept "
                f"the write-ahead log of {self.path} busy for {self.timeout} s, so old copies may "
                "remain in it; it completes by itself at the next write, open or close of any "
                "store on the file once readers are done (SE2), or forget again",
                deleted,
            )

    def finish_erasures(self, wait: bool = True) -> bool:
        """Fold the log into the file and empty it, then drop the erasures recorded (SE2).

        Returns False, changing nothing, while a reader holds old pages. With `wait` False the
        checkpoint does not wait for readers, so that a write is never held up by one.
        """
        with self._lock:
            if not wait:
                self._db.execute("PRAGMA busy_timeout = 0")
            try:
                busy, frames, folded = self._run("PRAGMA wal_checkpoint(TRUNCATE)")[0]
            finally:
                if not wait:
                    self._db.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            if busy or frames != folded:
                return False
            self._run("DROP TABLE IF EXISTS pending_erasures")
            return True

    def pending_erasures(self) -> int:
        """Return how many erasures recorded in the file wait for their checkpoint (SE2)."""
        if not self._run(schema.ERASURE_PENDING)[0][0]:
            return 0
        return self._run("SELECT COUNT(*) FROM pending_erasures")[0][0]

    def _finish_pending_erasures(self) -> None:
        # One read of the schema when none is pending; a write, an open or a close of any
        # store on the file then completes another process's erasure (SE2). What called it
        # has done its work: a failure here leaves the erasure pending for the next one.
        try:
            if self._run(schema.ERASURE_PENDING)[0][0]:
                self.finish_erasures(wait=False)
        except StoreError:
            pass


def _id_patterns(item_id: str) -> tuple[str, str, str]:
    """Return the id and the GLOB patterns of a text holding it not followed by an ASCII
    letter, digit, `-` or `_` (S13): with a character after it, and at the end."""
    # In GLOB `*`, `?` and `[` are special; each inside brackets is itself.
    literal = "".join(f"[{char}]" if char in "*?[" else char for char in item_id)
    return item_id, f"*{literal}[^A-Za-z0-9_-]*", f"*{literal}"


def _record_erasure(db: sqlite3.Connection, what: str) -> None:
    """Record an erasure in the forget's transaction; its checkpoint drops the record (SE2)."""
    db.execute(schema.PENDING_ERASURES)
    db.execute("INSERT INTO pending_erasures (what) VALUES (?)", (what,))
