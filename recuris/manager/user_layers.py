"""A user's layers in the manager: loaded on first use, kept for the most recent users.

Document 003 §7.2 asks that deleting a user reach every copy, and §7.3 that memory degrade
instead of failing. The manager caches each user's layers (semantic facts, procedures, the
consolidator's sightings, the episodic layer when the agent asks for it); another manager,
in this process or another, may forget the user meanwhile. So every call first asks the
store for the user's forget generation, and a cache loaded before a forget is dropped before
anything of it is used; counting a recall's uses, which follows the recall's own call, does
not ask again (the store refuses the accesses of a user forgotten since, S6). `UserLayers`
keeps that cache and notes each user it found forgotten elsewhere; the manager takes that
note (`found_forgotten`) and drops the user's task in progress. It also counts the uses of
recalled items, keeping a loaded episodic layer in step.

Invariants:
    UL1 a manager notices a forget made elsewhere (another manager or process) on its next
        call for the user that can read the store: it drops every cache it keeps of the
        user (layers, facts, episodes, task in progress) before using any of them.
    UL2 every public method runs whole under the lock the manager gives (TS1).
    UL3 after `refresh(U, forgotten)` no loaded layer of U holds a forgotten memory: the
        layers are read again from the store, and the consolidator keeps no sighting (nor
        conflict) of a forgotten source, so an erased memory never counts toward a fact.
    UL4 `put_written` of a user whose layers are not loaded loads none: it asks the store
        for the user's generation (S6), and checks loaded layers (UL1) only for a loaded
        user, so a write queued in an outage reads no more of the queue than G13 allows.
"""

import threading
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace

from ..core.similarity import JaccardScorer, Scorer
from ..core.validation import require_text
from ..core.consolidation import ConsolidationSettings, Consolidator
from ..evolution.procedural import ProceduralMemory
from ..core.semantic import SemanticMemory
from ..evolution.stored_facts import StoredFacts
from ..storage.archives import StoredEpisodes
from ..storage.audit import AuditEntry
from ..storage.buffered_store import BufferedStore, QueuedView
from ..storage.item import MemoryItem
from ..storage.sqlite_erasure import ErasureIncompleteError
from ..storage.store import ForgottenUserError, IdTakenError, Store, StoreError, id_prefix
from .bounds import MAX_LOADED_USERS, LayerCache
from .recall import Recalled, reinforce

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
    scorer: Callable[[], Scorer] | None = None  # a factory of the episodic layer's scorer
    loaded_episodic: StoredEpisodes | None = None

    @property
    def skipped(self) -> tuple[str, ...]:
        """The ids of the user's stored items left out as no fact (FA4) or no procedure (H5)."""
        facts = self.semantic.archive
        left_out = facts.skipped if isinstance(facts, StoredFacts) else ()
        return (*left_out, *self.procedural.skipped)

    @property
    def episodic(self) -> StoredEpisodes:
        # Loaded on first use: recall searches the store, so it never indexes every episode.
        if self.loaded_episodic is None:
            scorer = self.scorer or JaccardScorer
            self.loaded_episodic = StoredEpisodes(self.store, self.user_id, scorer)
        return self.loaded_episodic


class UserLayers:
    """Load, refresh and forget each user's layers, keeping the most recent users' (BD3, UL1).

    Each user found forgotten by another manager is noted until the manager takes the note
    (`found_forgotten`), so that it drops what else it keeps of them (the task in progress).
    `lock` is the manager's re-entrant lock (UL2); standing alone, the part makes its own.
    """

    def __init__(
        self,
        store: BufferedStore,
        clock: Callable[[], float],
        *,
        consolidation: ConsolidationSettings | None = None,
        max_loaded_users: int = MAX_LOADED_USERS,
        scorer: Callable[[], Scorer] | None = None,
        lock: AbstractContextManager | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.consolidation = consolidation if consolidation is not None else ConsolidationSettings()
        self.scorer = scorer
        self.lock = lock or threading.RLock()
        self.loaded = LayerCache(max_loaded_users)  # user id -> Layers, most recent last
        self._forgotten_elsewhere: set[str] = set()  # until the manager takes them (UL1)

    def forget(self, user_id: str) -> int:
        """Delete every item of the user, superseded ones too, and scrub their audit text (MG3).

        Every other manager on the store drops its caches of the user on its next call (UL1),
        and no write it prepared before this one lands (S6). Raises ErasureIncompleteError,
        a StoreError, when a reader in another connection kept old copies of the text in
        SQLite's write-ahead log past the store's timeout (SE1).
        """
        require_text("user_id", user_id)
        with self.lock:
            self.loaded.pop(user_id, None)
            self._forgotten_elsewhere.discard(user_id)  # forgotten here: the manager knows
            try:
                deleted = self.store.delete_user(user_id)
            except ErasureIncompleteError as error:
                # Deleted, but copies may remain: audit it, then say so.
                self._audit(user_id, f"{error.deleted} items deleted; erasure incomplete")
                raise
            self._audit(user_id, f"{deleted} items deleted")
            return deleted

    def _audit(self, user_id: str, reason: str) -> None:
        record = AuditEntry("*", "forget-user", reason, self.clock(), None, user_id)
        self.store.append_audit([record])

    def found_forgotten(self) -> list[str]:
        """Return the users found forgotten elsewhere since the last call; clear the note (UL1)."""
        with self.lock:
            users = sorted(self._forgotten_elsewhere)
            self._forgotten_elsewhere.clear()
            return users

    def get(self, user_id: str) -> Layers:
        """Return the user's layers, loading them on first use or after a forget (UL1).

        The most recent users' layers stay loaded (BD3). While the store cannot be read, the
        layers of a user not loaded hold only their queued writes and are not kept, so that a
        write is still kept (G1) and the next call loads them whole.
        """
        require_text("user_id", user_id)
        with self.lock:
            # Reading the cache marks the user most recent.
            cached = self.loaded[user_id] if user_id in self.loaded else None
            try:
                generation = self._generation_of(user_id)
            except StoreError:  # not loaded, and the store cannot say
                return self._load(user_id, QueuedView(self.store), None)
            if cached is not None and generation in (None, cached.generation):
                return cached
            if cached is not None:
                # Forgotten elsewhere: nothing cached of the user may be used again.
                self._forgotten_elsewhere.add(user_id)
            try:
                layers = self._load(user_id, self.store, generation)
            except StoreError:
                self.loaded.pop(user_id, None)
                return self._load(user_id, QueuedView(self.store), generation)
            self.loaded[user_id] = layers
            return layers

    def count_access(self, user_id: str, results: Iterable[Recalled]) -> None:
        """Count a use of each result: reset its decay clock, reinforce it, audit it.

        Document 004 §2: memories in use survive. A loaded episodic layer is kept in step.
        """
        with self.lock:
            now = self.clock()
            # The layers as loaded, never loaded nor checked again here: the store refuses
            # the accesses of a user forgotten since (S6), and then nothing is kept in step;
            # deferred accesses (G10) may touch a stale layer, which the next `get` drops.
            cached = self.loaded[user_id] if user_id in self.loaded else None
            episodic = cached.loaded_episodic if cached is not None else None
            try:
                touched = reinforce(self.store, user_id, results, now)
            except ForgottenUserError:
                return  # forgotten while recalling: there is no memory left to count a use of (S6)
            if episodic is None:
                return
            for item in touched:
                episode = episodic.get(item.id)
                if episode is not None:
                    episode.access_count = item.access_count
                    episode.last_access_at = now

    def put_written(self, item: MemoryItem, why: str, loaded: bool) -> MemoryItem:
        """Put a manager's new item with the audit record of its write (S5); return the item as put.

        If another process took its new id since it was reserved, the put is refused (S3) and
        the item is put once more under a fresh id. A write whose call `loaded` the user's
        layers is refused if the user was forgotten since (S6); one that did not is written
        after the forget.
        """
        with self.lock:
            try:
                self._put(item, why, loaded)
            except IdTakenError:
                item = replace(item, id=self.store.new_id(id_prefix(item.id)))
                self._put(item, why, loaded)
            return item

    def _put(self, item: MemoryItem, why: str, loaded: bool) -> None:
        audit = [AuditEntry(item.id, "write", why, item.created_at, None, item.user_id)]
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
        try:
            # A forget the store reports drops the user's queued writes (S6) ...
            self.store.generation(item.user_id)
        except StoreError:
            pass  # the store cannot say: the write stays queued (G1)
        else:
            # ... and their cached layers (UL1). Layers not loaded are not loaded here: built
            # from a queue, they would cost a write in proportion to it (UL4, G13).
            if item.user_id in self.loaded:
                self.get(item.user_id)
        if not self.store.holds(item):
            self.store.put([item], audit)

    def _load(self, user_id: str, store: Store, generation: int | None) -> Layers:
        semantic = SemanticMemory(StoredFacts(store, user_id), self.clock)
        consolidator = Consolidator(semantic, self.consolidation, clock=self.clock)
        procedural = ProceduralMemory(store, user_id, self.clock)
        return Layers(semantic, procedural, consolidator, generation, store, user_id, self.scorer)

    def _generation_of(self, user_id: str) -> int | None:
        # None if the store cannot say and the user's layers are cached: during an outage the
        # cache is used, and the store refuses a stale write anyway (S6).
        try:
            return self.store.generation(user_id)
        except StoreError:
            if user_id not in self.loaded:
                raise
            return None

    def refresh(self, user_id: str, forgotten: Iterable[str] = ()) -> None:
        """Reload the user's layers from the store, keeping the consolidator's sightings but
        those of the `forgotten` sources (UL3)."""
        with self.lock:
            old = self.loaded.pop(user_id, None)
            if old is None:
                return
            fresh = self.get(user_id)
            if fresh.generation != old.generation:
                return  # forgotten meanwhile: its sightings go with it (UL1)
            old.consolidator.semantic = fresh.semantic
            old.consolidator.forget_sources(forgotten)
            fresh.consolidator = old.consolidator
