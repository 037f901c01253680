"""New ids in SQLite: reserved a block at a time, guarded until their item is written.

Document 001 §1 gives every memory item an id; the store's S3 (store.py) asks, on a file
that several processes write, that an id `new_id` hands out name no stored item and never
be written over. Asking the file about each id before
handing it out would cost a manager's write a read before its one transaction, so ids are
reserved a block at a time from a counter in the file, the block's stored ids skipped, and
each id handed out is remembered until its put commits: a put that finds it taken since
(an import choosing its own ids, in another process) is refused instead of writing over it.

Invariants:
    ID1 two store objects on one file, in any processes, never hand out the same id: each
        takes its block of ID_BLOCK numbers from the file's counter, in a transaction.
    ID2 an id is handed out only if no item was stored under it when its block was
        reserved, nor since through this object; until its put commits (or MINTED_LIMIT
        newer ids were handed out), a put that finds it stored by another write is refused
        whole with IdTakenError.
"""

import json
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterable

from .store import IdTakenError, id_prefix

__all__ = ["NewIds", "ID_BLOCK", "MINTED_LIMIT"]

ID_BLOCK = (
    1024  # ids reserved per transaction (each commits): a process wastes at most this many numbers
)
# An id handed out for a task is never put as an item; guarding ids without end would keep them all.
MINTED_LIMIT = 4 * ID_BLOCK
TAKEN = (
    "SELECT id FROM items WHERE id IN (SELECT value FROM json_each(?))"  # of a JSON array of ids
)


class NewIds:
    """Hand out one store object's new ids; the caller holds the store's lock around every call."""

    def __init__(self, transaction: Callable) -> None:
        self._transaction = (
            transaction  # runs a function of the connection in one write transaction
        )
        self._reserved: dict[
            str, dict[str, None]
        ] = {}  # per prefix: ids left to hand out, last first
        # Ids handed out, not yet written, oldest first
        self._minted: OrderedDict[str, None] = OrderedDict()

    def new(self, prefix: str) -> str:
        """Return a new id of the prefix, reserving a block when none is left (ID1)."""
        while not self._reserved.get(prefix):
            self._reserved[prefix] = self._transaction(lambda db: _reserve(db, prefix))
        item_id = self._reserved[prefix].popitem()[0]
        self._minted[item_id] = None
        if len(self._minted) > MINTED_LIMIT:
            self._minted.popitem(last=False)
        return item_id

    def guarded(self, ids: Iterable[str]) -> set[str]:
        """Return those of the ids handed out here and not yet written."""
        return {item_id for item_id in ids if item_id in self._minted}

    def refuse_taken(self, guarded: set[str], stored: Iterable[str]) -> None:
        """Raise IdTakenError if a guarded id is stored already: another write took it (ID2)."""
        taken = sorted(guarded.intersection(stored))
        if taken:
            for item_id in taken:
                del self._minted[item_id]
            # Another writer uses these blocks: reserve anew, stored ids skipped
            self._reserved.clear()
            raise IdTakenError(
                f"S3: new id(s) {', '.join(taken)} were taken by another write "
                "before this one; nothing was written: write again"
            )

    def written(self, ids: Iterable[str]) -> None:
        """Note ids this object wrote: no longer guarded, and never handed out (ID2)."""
        for item_id in ids:
            block = self._reserved.get(id_prefix(item_id))
            if item_id in self._minted:  # handed out here, so no longer among those to hand out
                del self._minted[item_id]
            elif block is not None:
                block.pop(item_id, None)


def _reserve(db: sqlite3.Connection, prefix: str) -> dict[str, None]:
    """Reserve the prefix's next ID_BLOCK ids in `counters`; return those not taken, last first."""
    last = (
        db.execute("SELECT value FROM counters WHERE prefix = ?", (prefix,)).fetchone() or (0,)
    )[0]
    db.execute(
        "INSERT OR REPLACE INTO counters (prefix, value) VALUES (?, ?)", (prefix, last + ID_BLOCK)
    )
    block = [f"{prefix}-{number}" for number in range(last + ID_BLOCK, last, -1)]
    taken = {item_id for (item_id,) in db.execute(TAKEN, (json.dumps(block),))}
    return dict.fromkeys(item_id for item_id in block if item_id not in taken)
