"""Forgetting cycles: run decay over a user's stored memory, forgetting and merging, with audit.

Document 004 §2 runs a periodic cycle (daily, not per query): memories whose weight fell
below the retention threshold are forgotten; those only moderately decayed (between the
threshold and a merge ceiling, 0.4) are merged with similar ones into a denser memory.
Document 003 §4.3 and 002 §3.3 ask that every forgetting be logged with its reason. MemoryBank
reports why this matters: past a few hundred items, recall falls as memory density drops.
A `ForgettingCycle` runs on one store, with one clock and one decay rule, given once; the
manager holds one, and reloads the user's layers after each cycle.

Invariants:
    O1  after a cycle, no remaining episodic or semantic item of the user weighs less than
        the retention threshold.
    O2  every removal (forgotten or merged away) is audited with its weight and reason.
    O3  a merge keeps every source id of every item merged, the highest importance, and
        never joins items of two users, two levels, or invalid ones.
    O4  the cycle decides exactly as the naive one (list every item, compare every pair of the
        band): it streams the items in batches, joins the band with `join.similar_pairs`, and
        compares only pairs with an item new to the band since the last cycle (J2).
    O5  without `itemized`, a report holds counts only (forgotten, merged, size before and
        after) and no item, so its memory stays flat however large the store.
    O6  a cycle runs whole under the lock it is given (the manager's, TS1).
    O7  an item's `source_ids` and `merged_ids`, where present, are lists of text (for a
        semantic item's `source_ids`, FA4), each text one id, never read letter by letter;
        `merge_sources` raises ValueError naming O7 (and the item's id) for one that is not.
        A cycle leaves such an item out of the merge band, unchanged, logging a warning that
        names its id and O7; it is weighed, and forgotten below the threshold, as any other.
    O8  an episode is merged only with episodes that say the same: the same status and the
        same actions, in order, each failed or not (normalised); one whose structure cannot
        be read (AR4) is merged with none.
"""

import logging
import sys
import threading
from array import array
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace

from ..core.decay import DecayManager
from ..storage.archives import EPISODE_KIND, item_to_episode
from ..storage.audit import AuditEntry
from ..core.text import normalize, tokenize
from ..core.validation import require_number
from ..storage.item import MemoryItem, require_texts
from ..storage.store import Store
from .join import rank_tokens, similar_pairs

__all__ = ["CYCLED_LEVELS", "ForgettingCycle", "ForgettingReport", "merge_sources"]

log = logging.getLogger("recuris.evolution.forgetting")

CYCLED_LEVELS = ("episodic", "semantic")
# Forgotten items deleted per transaction (ids and audit tuples held until then).
DELETE_BATCH = 50_000


@dataclass(frozen=True)
class ForgettingReport:
    """What one cycle did to one user's memory (the items themselves only if `itemized`)."""

    forgotten: tuple[MemoryItem, ...]
    # (survivor, items merged into it)
    merged: tuple[tuple[MemoryItem, tuple[MemoryItem, ...]], ...]
    audit: tuple[AuditEntry, ...]
    size_before: int
    size_after: int
    forgotten_count: int = 0
    merged_count: int = 0  # items merged away into a survivor


def _ids(item: MemoryItem, field: str) -> list[str]:
    """Return the ids an item's metadata lists under `field`, none if absent (O7)."""
    ids = item.metadata.get(field, [])
    # A JSON object would pass as its keys, and a text as its characters.
    if not isinstance(ids, list | tuple):
        raise TypeError(f"{field} must be a list of text, got {type(ids).__name__}")
    return require_texts(field, ids)


def merge_sources(item: MemoryItem) -> tuple[list[str], list[str]]:
    """Return the ids an item lists as its sources and as merged into it (O3).

    Raises ValueError naming O7 (and the item's id) for a field that is not a list of text.
    """
    try:
        return _ids(item, "source_ids"), _ids(item, "merged_ids")
    except (TypeError, ValueError) as error:
        raise ValueError(f"O7: item {item.id!r} cannot be merged: {error}") from None


def merge(group: list[MemoryItem]) -> MemoryItem:
    """Fold near-duplicates into the first: every source id kept, the highest importance (O3).

    Raises ValueError naming O7 for an item whose sources cannot be read.
    """
    survivor = group[0]
    others = group[1:]
    _, merged_ids = merge_sources(survivor)
    for other in others:
        sources, merged = merge_sources(other)
        merged_ids += [other.id, *sources, *merged]
    metadata = {**survivor.metadata, "merged_ids": list(dict.fromkeys(merged_ids))}
    return replace(
        survivor,
        importance=max(item.importance for item in group),
        access_count=sum(item.access_count for item in group),
        last_access_at=max(item.last_access_at for item in group),
        metadata=metadata,
    )


def _says(item: MemoryItem) -> tuple:
    """Return what an item says for merging: its level, and for a stored episode its status
    and its actions, each failed or not (O3, O8); for an episode that cannot be read (AR4),
    its level and its id, which no other item says."""
    if item.level != "episodic" or item.metadata.get("kind") != EPISODE_KIND:
        return (item.level,)
    try:
        episode = item_to_episode(item)
    except ValueError:
        # Unreadable, it says something of its own: merged, its lesson would be lost unread.
        return (item.level, item.id)
    steps = tuple((normalize(step.action), step.failed) for step in episode.trajectory)
    return item.level, episode.status, steps


def _mergeable(item: MemoryItem) -> bool:
    """Return whether the item's sources can be read; warn, naming O7, if they cannot."""
    try:
        merge_sources(item)
    except ValueError as error:
        # One item edited by hand or written by a fork must not take the cycle down, nor be
        # rewritten with its sources read letter by letter: it is left as it is (O7).
        log.warning("%s; left out of the merge", error)
        return False
    return True


class _Band:
    """The merge band, compactly: per item its id, order key, what it says, tokens, fingerprint.

    In arrays and in dicts of plain values, which the cyclic garbage collector skips: a list
    per field would be walked, element by element, by every full collection of the cycle.
    """

    def __init__(self) -> None:
        self.ids: dict[int, str] = {}
        self.weights = array("d")
        self.created = array("d")
        self.prints = array("q")
        # A hash of what each item says (`_says`): only items that say the same are merged.
        # A hash, not the tuple: an episode's steps are its own, one tuple per episode.
        self.says = array("q")
        self.tokens = array("i")
        self.ends = array("q")
        self.vocabulary: dict[str, int] = {}

    def add(self, item: MemoryItem, weight: float) -> None:
        vocabulary = self.vocabulary
        self.ids[len(self.ids)] = item.id
        self.weights.append(weight)
        self.created.append(item.created_at)
        says = hash(_says(item))
        self.says.append(says)
        # Interned: a word many items hold is one string in the band, not one per item.
        self.tokens.extend(
            {vocabulary.setdefault(sys.intern(t), len(vocabulary)) for t in tokenize(item.content)}
        )
        self.ends.append(len(self.tokens))
        # What it says is in the fingerprint: an episode whose steps were rewritten and its
        # text not is compared again (J2, O8).
        self.prints.append(hash((says, item.content)))

    def key(self, n: int) -> tuple:
        return -self.weights[n], self.created[n], self.ids[n]  # strongest first, as the naive cycle

    def records(self) -> list[array]:
        return [self.tokens[start:end] for start, end in zip([0, *self.ends], self.ends)]


class ForgettingCycle:
    """Decay cycles over one store: forget what fell below the threshold, merge the band (O1-O4).

    `decay` weighs every item and decides what falls below its threshold; whoever caches the
    user's memory reloads it after a cycle. The cycle remembers, per user and similarity,
    which band items it compared (J2). `lock` is the manager's re-entrant lock (O6).
    """

    def __init__(
        self,
        store: Store,
        clock: Callable[[], float],
        decay: DecayManager,
        *,
        lock: AbstractContextManager | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.decay = decay
        self.lock = lock or threading.RLock()
        # (user, similarity) -> band item id -> its fingerprint at the last cycle
        self.compared: dict[tuple[str, float], dict[str, int]] = {}

    def run(
        self,
        user_id: str,
        merge_ceiling: float = 0.4,
        merge_similarity: float = 0.7,
        *,
        itemized: bool = True,
        batch_size: int = 5000,
        delete_batch: int = DELETE_BATCH,
        on_batch: Callable[[int], None] | None = None,
    ) -> ForgettingReport:
        """Forget what fell below the threshold; merge similar items in the band below the ceiling.

        Decides as the naive cycle (O4). Items are read `batch_size` at a time; forgotten items
        are deleted, with their audit records, `delete_batch` at a time, all before the merge.
        `on_batch` hears how many items were read so far. Without `itemized`, the report carries
        counts only, so memory stays flat on a large store (O5). Raises ValueError, naming J1,
        unless 0 < merge_similarity <= 1 (before anything is changed).
        """
        require_number("J1: merge_similarity", merge_similarity, 0.0, 1.0, above_minimum=True)
        with self.lock:
            return self._run(
                user_id,
                merge_ceiling,
                merge_similarity,
                itemized,
                batch_size,
                delete_batch,
                on_batch,
            )

    def _run(
        self,
        user_id: str,
        merge_ceiling: float,
        merge_similarity: float,
        itemized: bool,
        batch_size: int,
        delete_batch: int,
        on_batch: Callable[[int], None] | None,
    ) -> ForgettingReport:
        now = self.clock()
        band = _Band()
        size = 0
        forgotten = []
        audit = []
        forgotten_count = 0
        doomed = []
        records = []
        for batch in self.store.iterate(user_id, None, batch_size):
            items = [item for item in batch if item.level in CYCLED_LEVELS]
            decided = self.decay.run_cycle(items, now)
            size += len(items)
            forgotten_count += len(decided.forgotten)
            doomed += [item.id for item in decided.forgotten]
            # Plain tuples until written: the garbage collector soon stops walking them. Reasons
            # interned: they repeat (one threshold, idle days to a tenth, few access counts),
            # and a cycle over a million items in memory peaked 17 MB lower so.
            records += [
                (r.item_id, r.operation, sys.intern(r.reason), r.at, r.weight, user_id)
                for r in decided.audit
            ]
            for item in decided.kept:
                if item.is_valid and decided.weights[item.id] < merge_ceiling and _mergeable(item):
                    band.add(item, decided.weights[item.id])
            if itemized:
                forgotten += decided.forgotten
                fresh = records[len(records) - len(decided.audit) :]
                audit += [AuditEntry(*record) for record in fresh]
            if len(doomed) >= delete_batch:
                self._forget(user_id, doomed, records)
                doomed = []
                records = []
            if on_batch:
                on_batch(size)
        self._forget(user_id, doomed, records)
        merged, merge_audit = self._merge_band(user_id, band, merge_ceiling, merge_similarity, now)
        self.store.append_audit(merge_audit)
        merged_count = sum(len(others) for _, others in merged)
        if itemized:
            audit += merge_audit
        return ForgettingReport(
            tuple(forgotten),
            tuple(merged) if itemized else (),
            tuple(audit),
            size,
            size - forgotten_count - merged_count,
            forgotten_count,
            merged_count,
        )

    def _forget(self, user_id: str, doomed: list[str], records: list[tuple]) -> None:
        # Many at a time: a deletion rewrites every postings page it touches, and a few thousand
        # items touch most pages of a large store (docs/evolution/forgetting.md).
        if doomed:
            self.store.delete(user_id, doomed)
            self.store.append_audit([AuditEntry(*record) for record in records])

    def _merge_band(self, user_id: str, band: _Band, ceiling: float, similarity: float, now: float):
        # The last cycle's band survivors are pairwise dissimilar or say different things
        # (each lead took every similar item left that says the same, O8), so pairs of two
        # unchanged survivors need no comparing (J2).
        known = self.compared.get((user_id, similarity), {})
        fresh = [known.get(band.ids[n]) != fingerprint for n, fingerprint in enumerate(band.prints)]
        neighbours: dict[int, list[int]] = {}
        for a, b in similar_pairs(rank_tokens(band.records()), similarity, fresh):
            # Never across levels (O3); an episode only into one that says the same (O8):
            # a failure folded into a success at the same task would lose its lesson.
            if band.says[a] == band.says[b]:
                neighbours.setdefault(a, []).append(b)
                neighbours.setdefault(b, []).append(a)
        order = sorted(range(len(band.ids)), key=band.key)
        position = {n: rank for rank, n in enumerate(order)}
        grouped = set()
        merged = []
        audit = []
        survivors = []
        doomed = []
        for lead in order:  # strongest first, each item into one group at most, as the naive cycle
            if lead in grouped or lead not in neighbours:
                continue
            others = sorted(
                (n for n in neighbours[lead] if n not in grouped), key=position.__getitem__
            )
            if not others:
                continue
            grouped.update([lead, *others])
            group = [self.store.get(user_id, band.ids[n]) for n in [lead, *others]]
            survivor = merge(group)
            survivors.append(survivor)
            doomed += [item.id for item in group[1:]]
            merged.append((survivor, tuple(group[1:])))
            why = f"merged into {survivor.id}: similar, weight below the merge ceiling {ceiling}"
            audit += [
                AuditEntry(band.ids[n], "merge", why, now, band.weights[n], user_id)
                for n in others
            ]
        for offset in range(0, len(survivors), 1000):
            self.store.put(survivors[offset : offset + 1000])
        for offset in range(0, len(doomed), DELETE_BATCH):
            self.store.delete(user_id, doomed[offset : offset + DELETE_BATCH])
        gone = set(doomed)
        self.compared[(user_id, similarity)] = {
            band.ids[n]: p for n, p in enumerate(band.prints) if band.ids[n] not in gone
        }
        return merged, audit
