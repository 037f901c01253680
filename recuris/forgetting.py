"""Forgetting cycles: run decay over a user's stored memory, forgetting and merging, with audit.

Document 004 §2 runs a periodic cycle (daily, not per query): memories whose weight fell
below the retention threshold are forgotten; those only moderately decayed (between the
threshold and a merge ceiling, 0.4) are merged with similar ones into a denser memory.
Document 003 §4.3 and 002 §3.3 ask that every forgetting be logged with its reason. MemoryBank
reports why this matters: past a few hundred items, recall falls as memory density drops.

Invariants:
    O1  after a cycle, no remaining episodic or semantic item of the user weighs less than
        the retention threshold.
    O2  every removal (forgotten or merged away) is audited with its weight and reason.
    O3  a merge keeps every source id of every item merged, the highest importance, and
        never joins items of two users, two levels, or invalid ones.
"""

from dataclasses import dataclass, replace

from .buffered_store import QueuedView
from .decay import DecayManager
from .item import MemoryItem
from .records import AuditRecord
from .sqlite_erasure import ErasureIncompleteError
from .store import StoreError
from .text import jaccard, jaccard_candidates, require_text, tokenize

__all__ = ["Forgetting", "ForgettingReport"]

CYCLED_LEVELS = ("episodic", "semantic")


@dataclass(frozen=True)
class ForgettingReport:
    """What one cycle did to one user's memory."""

    forgotten: tuple[MemoryItem, ...]
    merged: tuple[tuple[MemoryItem, tuple[MemoryItem, ...]], ...]  # (survivor, items merged into it)
    audit: tuple[AuditRecord, ...]
    size_before: int
    size_after: int


def _sources(item: MemoryItem) -> list[str]:
    return list(item.metadata.get("source_ids", [])) + list(item.metadata.get("merged_ids", []))


def merge(group: list[MemoryItem]) -> MemoryItem:
    """Fold near-duplicates into the first: every source id kept, the highest importance (O3)."""
    survivor, others = group[0], group[1:]
    merged_ids = list(survivor.metadata.get("merged_ids", []))
    for other in others:
        merged_ids += [other.id, *_sources(other)]
    metadata = {**survivor.metadata, "merged_ids": list(dict.fromkeys(merged_ids))}
    return replace(
        survivor,
        importance=max(item.importance for item in group),
        access_count=sum(item.access_count for item in group),
        last_access_at=max(item.last_access_at for item in group),
        metadata=metadata,
    )


class Forgetting:
    """The manager's forgetting: decay cycles, forgetting a user, and noticing a forget made elsewhere.

    Mixed into MemoryManager, whose layer cache `layers` reloads after a forget (S18).
    """

    def run_decay(
        self, decay: DecayManager, user_id: str, merge_ceiling: float = 0.4, merge_similarity: float = 0.7
    ) -> ForgettingReport:
        """Forget what fell below the threshold; merge similar items in the band below the ceiling."""
        now = self.clock()
        items = [item for item in self.store.list(user_id) if item.level in CYCLED_LEVELS]
        decided = decay.run_cycle(items)
        audit = [replace(record, user_id=user_id) for record in decided.audit]
        self.store.delete(user_id, [item.id for item in decided.forgotten])
        # Merge only valid items of one level, strongest first, each into one group at most.
        weights = decided.weights  # computed once, by the cycle
        band = sorted((i for i in decided.kept if i.is_valid and weights[i.id] < merge_ceiling),
                      key=lambda item: (-weights[item.id], item.created_at, item.id))
        tokens = {item.id: frozenset(tokenize(item.content)) for item in band}
        by_id, position = {item.id: item for item in band}, {item.id: n for n, item in enumerate(band)}
        candidates = jaccard_candidates(tokens, merge_similarity)
        grouped, merged = set(), []
        for lead in band:
            if lead.id in grouped:
                continue
            similar = {
                i
                for i in candidates[lead.id] - grouped
                if jaccard(tokens[lead.id], tokens[i]) >= merge_similarity
            }
            # Keep the band's order (strongest first) without scanning the band for every lead.
            others = sorted(
                (by_id[i] for i in similar if by_id[i].level == lead.level), key=lambda i: position[i.id]
            )
            group = [lead, *others]
            if len(group) < 2:
                continue
            grouped.update(item.id for item in group)
            survivor = merge(group)
            self.store.put([survivor])
            self.store.delete(user_id, [item.id for item in group[1:]])
            merged.append((survivor, tuple(group[1:])))
            for item in group[1:]:
                why = f"merged into {survivor.id}: similar, weight below the merge ceiling {merge_ceiling}"
                audit.append(AuditRecord(item.id, "merge", why, now, weights[item.id], user_id))
        self.store.append_audit(audit)
        self.refresh(user_id)
        size_after = len(items) - len(decided.forgotten) - sum(len(others) for _, others in merged)
        return ForgettingReport(decided.forgotten, tuple(merged), tuple(audit), len(items), size_after)

    def forget_user(self, user_id: str) -> int:
        """Delete every item of the user, superseded ones included, and scrub their audit text (S5).

        Every other manager on the store drops its caches of the user on its next call (S18),
        and no write it prepared before this one lands (S17). Raises ErasureIncompleteError,
        a StoreError, when a reader in another connection kept old copies of the text in
        SQLite's write-ahead log past the store's timeout (S19).
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
        """Return the user's layers, loading them on first use or after a forget (S18).

        The most recent users' layers stay loaded (B11). While the store cannot be read, the
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
            return None  # cannot look during an outage; the store refuses a stale write anyway (S17)

    def refresh(self, user_id: str) -> None:
        """Reload the user's layers from the store, keeping the consolidator's sightings."""
        old = self._layers.pop(user_id, None)
        if old is not None:
            fresh = self.layers(user_id)
            if fresh.generation != old.generation:
                return  # forgotten meanwhile: its sightings go with it (S18)
            old.consolidator.semantic = fresh.semantic
            fresh.consolidator = old.consolidator
