"""A user's layers in the manager: loaded on first use, kept for the most recent users, dropped on a forget.

Document 003 §7.2 asks that deleting a user reach every copy, and §7.3 that memory degrade
instead of failing. The manager caches each user's layers (semantic facts, procedures, the
consolidator's sightings, the episodic layer when the agent asks for it); another manager,
in this process or another, may forget the user meanwhile. So every call first asks the
store for the user's forget generation, and a cache loaded before a forget is dropped, with
the task in progress, before anything of it is used. `UserLayers` keeps that cache; the
manager holds one and tells it, through `on_forget`, what else to drop of a forgotten user.

Invariants:
    UL1 a manager notices a forget made elsewhere (another manager or process) on its next
        call for the user that can read the store: it drops every cache it keeps of the
        user (layers, facts, episodes, task in progress) before using any of them.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..core.clock import DAY
from ..core.episodic import EpisodicMemory
from ..core.records import AuditRecord
from ..core.similarity import Scorer
from ..core.validation import require_text
from ..evolution.consolidation import Consolidator
from ..evolution.procedural import ProceduralMemory
from ..evolution.semantic import SemanticMemory
from ..evolution.stored_facts import StoredFacts
from ..storage.archives import StoredEpisodes
from ..storage.buffered_store import BufferedStore, QueuedView
from ..storage.item import MemoryItem
from ..storage.sqlite_erasure import ErasureIncompleteError
from ..storage.store import ForgottenUserError, IdTakenError, Store, StoreError, id_prefix
from .bounds import MAX_LOADED_USERS, LayerCache

__all__ = ["Layers", "UserLayers"]


@dataclass
class Layers:
    """One user's layers: facts, procedures, the consolidator, and episodes once asked for."""

    semantic: SemanticMemory
    procedural: ProceduralMemory
    consolidator: Consolidator
    generation: int | None  # the user's forget generation when these were loaded (UL1)
    store: Store
    user_id: str
    episodic_scorer: Callable[[], Scorer] | None = None
    loaded_episodic: EpisodicMemory | None = None

    @property
    def episodic(self) -> EpisodicMemory:
        # Loaded on first use: recall searches the store, so it never indexes every episode.
        if self.loaded_episodic is None:
            archive = StoredEpisodes(self.store, self.user_id)
            if self.episodic_scorer is None:
                self.loaded_episodic = EpisodicMemory(archive=archive)
            else:
                self.loaded_episodic = EpisodicMemory(self.episodic_scorer, archive)
        return self.loaded_episodic


class UserLayers:
    """Load, refresh and forget each user's layers, keeping the most recent users' loaded (BD3, UL1).

    `on_forget(user_id)` is called whenever a user is found forgotten, here or elsewhere, so
    that the manager drops what else it keeps of them (the task in progress).
    """

    def __init__(
        self,
        store: BufferedStore,
        clock: Callable[[], float],
        *,
        on_forget: Callable[[str], None] = lambda user_id: None,
        min_occurrences: int = 2,
        window_seconds: float = 7 * DAY,
        max_loaded_users: int = MAX_LOADED_USERS,
        episodic_scorer: Callable[[], Scorer] | None = None,
    ) -> None:
        self.store, self.clock, self.on_forget = store, clock, on_forget
        self.consolidation, self.episodic_scorer = (
            (min_occurrences, window_seconds),
            episodic_scorer,
        )
        self.loaded: LayerCache = LayerCache(
            max_loaded_users
        )  # user id -> Layers, most recent last

    def forget(self, user_id: str) -> int:
        """Delete every item of the user, superseded ones included, and scrub their audit text (MG3).

        Every other manager on the store drops its caches of the user on its next call (UL1),
        and no write it prepared before this one lands (S6). Raises ErasureIncompleteError,
        a StoreError, when a reader in another connection kept old copies of the text in
        SQLite's write-ahead log past the store's timeout (SE1).
        """
        require_text("user_id", user_id)
        self.loaded.pop(user_id, None)
        self.on_forget(user_id)
        try:
            deleted = self.store.delete_user(user_id)
        except (
            ErasureIncompleteError
        ) as error:  # deleted, but copies may remain: audit it, then say so
            self._audit(user_id, f"{error.deleted} items deleted; erasure incomplete")
            raise
        self._audit(user_id, f"{deleted} items deleted")
        return deleted

    def _audit(self, user_id: str, reason: str) -> None:
        self.store.append_audit(
            [AuditRecord("*", "forget-user", reason, self.clock(), None, user_id)]
        )

    def get(self, user_id: str) -> Layers:
        """Return the user's layers, loading them on first use or after a forget (UL1).

        The most recent users' layers stay loaded (BD3). While the store cannot be read, the
        layers of a user not loaded hold only their queued writes and are not kept, so that a
        write is still kept (G1) and the next call loads them whole.
        """
        require_text("user_id", user_id)
        cached = self.loaded[user_id] if user_id in self.loaded else None  # marks it most recent
        try:
            generation = self.generation_of(user_id)
        except StoreError:  # not loaded, and the store cannot say
            return self._load(user_id, QueuedView(self.store), None)
        if cached is not None and generation in (None, cached.generation):
            return cached
        if cached is not None:  # forgotten elsewhere: nothing cached of the user may be used again
            self.on_forget(user_id)
        try:
            self.loaded[user_id] = layers = self._load(user_id, self.store, generation)
        except StoreError:
            self.loaded.pop(user_id, None)
            return self._load(user_id, QueuedView(self.store), generation)
        return layers

    def put_written(self, item: MemoryItem, why: str, loaded: bool) -> MemoryItem:
        """Put a manager's new item with the audit record of its write (S5); return the item as put.

        If another process took its new id since it was reserved, the put is refused (S3) and the
        item is put once more under a fresh id. A write whose call `loaded` the user's layers is
        refused if the user was forgotten since (S6); one that did not is written after the forget.
        """
        try:
            self._put(item, why, loaded)
        except IdTakenError:
            item = replace(item, id=self.store.new_id(id_prefix(item.id)))
            self._put(item, why, loaded)
        return item

    def _put(self, item: MemoryItem, why: str, loaded: bool) -> None:
        audit = [AuditRecord(item.id, "write", why, item.created_at, None, item.user_id)]
        if loaded:
            self.store.put([item], audit)
            return
        # Its put is refused if the user was forgotten since the store last looked, or queued
        # unchecked while the store fails. Either way the generation is taken now, as a loaded
        # write takes it first: a forget drops what is cached and queued of the user (UL1, G3),
        # this write among them, which is then put again, after the forget (G1).
        try:
            self.store.put([item], audit)
            if not self.store.holds(item):
                return  # written: the store checked the user's generation in its transaction (S6)
        except ForgottenUserError:
            pass
        self.get(item.user_id)
        if not self.store.holds(item):
            self.store.put([item], audit)

    def _load(self, user_id: str, store: Store, generation: int | None) -> Layers:
        semantic = SemanticMemory(StoredFacts(store, user_id), self.clock)
        consolidator = Consolidator(semantic, *self.consolidation, clock=self.clock)
        procedural = ProceduralMemory(store, user_id, self.clock)
        return Layers(
            semantic, procedural, consolidator, generation, store, user_id, self.episodic_scorer
        )

    def generation_of(self, user_id: str) -> int | None:
        """Return the user's forget generation; None if the store cannot say and their layers are cached."""
        try:
            return self.store.generation(user_id)
        except StoreError:
            if user_id not in self.loaded:
                raise
            return None  # cannot look during an outage; the store refuses a stale write anyway (S6)

    def refresh(self, user_id: str) -> None:
        """Reload the user's layers from the store, keeping the consolidator's sightings."""
        old = self.loaded.pop(user_id, None)
        if old is not None:
            fresh = self.get(user_id)
            if fresh.generation != old.generation:
                return  # forgotten meanwhile: its sightings go with it (UL1)
            old.consolidator.semantic = fresh.semantic
            fresh.consolidator = old.consolidator
