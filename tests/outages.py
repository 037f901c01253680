"""Stores that fail like a locked or gone database, for the tests of what an outage must not lose.

`FlakyStore` fails every call it names while `down`; `Outage` fails the writes only
(`down = "writes"`) or everything (`down = "all"`). `protocol_operations` names what a store
that wraps another must write out itself (G7, QR2). `ReadCountingQueue` counts the work of a
write queued in an outage, never its time (G13).
"""

from recuris import InMemoryStore, StoreError
from recuris.storage.store import Store


class FlakyStore(InMemoryStore):
    """An in-memory store that can be switched off, failing every call like a gone database."""

    def __init__(self):
        super().__init__()
        self.down = False

    def __getattribute__(self, name):
        if name in {
            "put",
            "get",
            "get_many",
            "list",
            "new_id",
            "append_audit",
            "audit",
            "delete",
            "record_access",
        } and object.__getattribute__(self, "down"):
            raise StoreError("database is locked")
        return object.__getattribute__(self, name)


class Outage(InMemoryStore):
    """An in-memory store that fails like a locked or gone database: writes only, or everything."""

    down: str | None = None  # None, "writes" or "all"
    WRITES = {"put", "append_audit", "record_access", "new_id", "delete", "erase"}

    def __getattribute__(self, name):
        down = object.__getattribute__(self, "down")
        if (down == "all" and not name.startswith("_") and name != "down") or (
            down == "writes" and name in Outage.WRITES
        ):
            raise StoreError("database is locked")
        return object.__getattribute__(self, name)


def protocol_operations() -> set[str]:
    """Return the public operations of the Store protocol."""
    return {
        name for name, value in vars(Store).items() if callable(value) and not name.startswith("_")
    }


class ReadCountingQueue(list):
    """A retry queue (`BufferedStore._pending`) that counts the batches read from it (G13)."""

    reads = 0

    def __iter__(self):
        for batch in super().__iter__():
            self.reads += 1
            yield batch

    def __getitem__(self, index):
        self.reads += 1
        return super().__getitem__(index)
