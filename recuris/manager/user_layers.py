"""A user's layers in the manager: loaded on first use, kept for the most recent users, dropped on a forget.

Document 003 §7.2 asks that deleting a user reach every copy, and §7.3 that memory degrade
instead of failing. The manager caches each user's layers (semantic facts, procedures, the
consolidator's sightings, the episodic layer when the agent asks for it); another manager,
in this process or another, may forget the user meanwhile. So every call first asks the
store for the user's forget generation, and a cache loaded before a forget is dropped, with
the task in progress, before anything of it is used.

Invariants:
    UL1 a manager notices a forget made elsewhere (another manager or process) on its next
        call for the user that can read the store: it drops every cache it keeps of the
        user (layers, facts, episodes, task in progress) before using any of them.
"""

from ..storage.buffered_store import QueuedView
from ..storage.sqlite_erasure import ErasureIncompleteError
from ..storage.store import StoreError
from ..core.validation import require_text

__all__ = ["UserLayers"]


class UserLayers:
    """The per-user methods of MemoryManager: load, refresh and forget a user's layers (UL1)."""

    def forget_user(self, user_id: str) -> int:
        """Delete every item of the user, superseded ones included, and scrub their audit text (MG3).

        Every other manager on the store drops its caches of the user on its next call (UL1),
        and no write it prepared before this one lands (S6). Raises ErasureIncompleteError,
        a StoreError, when a reader in another connection kept old copies of the text in
        SQLite's write-ahead log past the store's timeout (SE1).
        """
        require_text("user_id", user_id)
        self._layers.pop(user_id, None)
        self.tasks.pop(user_id, None)
        try:
            deleted = self.store.delete_user(user_id)
        except ErasureIncompleteError as error:  # deleted, but copies may remain: audit it, then say so
            self.audit(user_id, "*", "forget-user", f"{error.deleted} items deleted; erasure incomplete")
            raise
        self.audit(user_id, "*", "forget-user", f"{deleted} items deleted")
        return deleted

    def layers(self, user_id: str):
        """Return the user's layers, loading them on first use or after a forget (UL1).

        The most recent users' layers stay loaded (BD3). While the store cannot be read, the
        layers of a user not loaded hold only their queued writes and are not kept, so that a
        write is still kept (G1) and the next call loads them whole.
        """
        require_text("user_id", user_id)
        cached = self._layers[user_id] if user_id in self._layers else None  # marks it most recent
        try:
            generation = self.generation_of(user_id)
        except StoreError:  # not loaded, and the store cannot say
            return self._load(user_id, QueuedView(self.store), None)
        if cached is not None and generation in (None, cached.generation):
            return cached
        if cached is not None:  # forgotten elsewhere: nothing cached of the user may be used again
            self.tasks.pop(user_id, None)
        try:
            self._layers[user_id] = layers = self._load(user_id, self.store, generation)
        except StoreError:
            self._layers.pop(user_id, None)
            return self._load(user_id, QueuedView(self.store), generation)
        return layers

    def generation_of(self, user_id: str) -> int | None:
        """Return the user's forget generation; None if the store cannot say and their layers are cached."""
        try:
            return self.store.generation(user_id)
        except StoreError:
            if user_id not in self._layers:
                raise
            return None  # cannot look during an outage; the store refuses a stale write anyway (S6)

    def refresh(self, user_id: str) -> None:
        """Reload the user's layers from the store, keeping the consolidator's sightings."""
        old = self._layers.pop(user_id, None)
        if old is not None:
            fresh = self.layers(user_id)
            if fresh.generation != old.generation:
                return  # forgotten meanwhile: its sightings go with it (UL1)
            old.consolidator.semantic = fresh.semantic
            fresh.consolidator = old.consolidator
