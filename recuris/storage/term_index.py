"""The in-memory store's term index: BM25 per user and level, and each task's items in order.

Document 001 §2 indexes every tier by task and type so that a read touches only what it
needs; document 002 §4 ranks by relevance among other parts. `InMemoryStore` keeps its items
in write order and this index beside it: one `BM25Index` per (user, level), so a query reads only
the items that share a term with it (never the whole store), and per (user, level, task) the
write positions of its items, so an item's neighbours are found by bisection. SQLiteStore
keeps the same two structures as tables (sqlite_schema.py).

Invariants:
    TI1 after any sequence of `add` and `remove`, the index equals one built from scratch on
        the items present: the same terms per scope and the same order per task.
    TI2 `search` answers as scoring every item that shares a term with the query would: the
        raw score rounded to SCORE_DIGITS decimals, highest first, the later write position
        first among equals (S8), whatever rewrites moved the items.
    TI3 adding or removing an item costs what its own terms cost and a bisection in its
        thread, never the length of a common term's postings or of the thread (B4).
"""

import bisect
import heapq
import itertools
from array import array
from collections.abc import Iterable, Iterator, Sequence

from ..retrieval.bm25 import BM25Index, BM25Settings
from ..retrieval.scoring import analyze
from .item import MemoryItem
from .store import SCORE_DIGITS, TermCounts, TermStatistics, padded_neighbours

__all__ = ["TermIndex", "Thread"]

BLOCK = 512  # a thread's blocks hold BLOCK / 4 to 2 · BLOCK positions


class Thread:
    """A task's write positions, ascending, in blocks: a change moves one block, not the thread.

    A Python list of a million positions moves 4 MB on average to delete one; here at most
    2 · BLOCK pointers move, and the list of blocks changes only when a block splits or joins.
    """

    def __init__(self) -> None:
        # Each ascending, together ascending. Arrays, not lists: the cyclic garbage collector
        # walks every list on each full collection, and a thread can be as long as the store.
        self.blocks: list[array] = []
        self.lasts: list[int] = []  # the last position of each block

    def __bool__(self) -> bool:
        return bool(self.blocks)

    def __iter__(self) -> Iterator[int]:
        return itertools.chain.from_iterable(self.blocks)

    def add(self, position: int) -> None:
        if not self.blocks:
            self.blocks.append(array("q", [position]))
            self.lasts.append(position)
            return
        at = min(bisect.bisect_left(self.lasts, position), len(self.blocks) - 1)
        block = self.blocks[at]
        bisect.insort(block, position)
        self.lasts[at] = block[-1]
        if len(block) > 2 * BLOCK:
            self.blocks[at : at + 1] = [block[:BLOCK], block[BLOCK:]]
            self.lasts[at : at + 1] = [block[BLOCK - 1], block[-1]]

    def remove(self, position: int) -> None:
        """Remove a position held. Raises IndexError or ValueError for one not held."""
        at = bisect.bisect_left(self.lasts, position)
        block = self.blocks[at]
        del block[block.index(position, bisect.bisect_left(block, position))]
        if not block:
            del self.blocks[at]
            del self.lasts[at]
            return
        self.lasts[at] = block[-1]
        if 4 * len(block) < BLOCK and len(self.blocks) > 1:
            # Join a small block to a neighbour, so blocks stay few as positions come and go.
            low = at if at + 1 < len(self.blocks) else at - 1
            joined = self.blocks[low] + self.blocks[low + 1]
            self.blocks[low : low + 2] = [joined]
            self.lasts[low : low + 2] = [joined[-1]]
            if len(joined) > 2 * BLOCK:
                self.blocks[low : low + 1] = [joined[:BLOCK], joined[BLOCK:]]
                self.lasts[low : low + 1] = [joined[BLOCK - 1], joined[-1]]

    def around(self, position: int, width: int = 1) -> tuple[int | None, ...]:
        """Return the `width` positions before and after a position held, in order.

        None stands for each place beyond either end of the thread.
        """
        at = bisect.bisect_left(self.lasts, position)
        index = bisect.bisect_left(self.blocks[at], position)
        before = list(itertools.islice(self._walk(at, index, -1), width))
        after = list(itertools.islice(self._walk(at, index, 1), width))
        return padded_neighbours(before, after, width)

    def _walk(self, at: int, index: int, step: int) -> Iterator[int]:
        """Yield the positions after (step 1) or before (step -1) block `at`'s place `index`."""
        while True:
            index += step
            if not 0 <= index < len(self.blocks[at]):
                at += step
                if not 0 <= at < len(self.blocks):
                    return
                index = 0 if step > 0 else len(self.blocks[at]) - 1
            yield self.blocks[at][index]


class TermIndex:
    """Analysed terms per (user, level) and write order per (user, level, task)."""

    def __init__(self, bm25: BM25Settings) -> None:
        self.bm25 = bm25
        self._scopes: dict[tuple[str, str], BM25Index] = {}
        # user -> (level, task) -> the write positions of its items
        self._threads: dict[str, dict[tuple[str, str | None], Thread]] = {}
        # position -> item id. An item's own position is its order in its scope's BM25 index,
        # not a second dict: a million items in memory are 38 MB lighter so.
        self._at_position: dict[int, str] = {}
        self._next_position = itertools.count()

    def add(self, item: MemoryItem, position: int | None = None) -> None:
        """Index the item's terms and its place in its task's thread.

        A new item is placed after every other; an item moved (removed, then added again with
        the position `remove` returned) keeps its place. Raises ValueError naming TI1 for a
        position another item holds.
        """
        if position is None:
            position = next(self._next_position)
        elif self._at_position.get(position, item.id) != item.id:
            raise ValueError(f"TI1: position {position} is another item's, not {item.id!r}'s")
        scope = self._scopes.get((item.user_id, item.level))
        if scope is None:
            scope = BM25Index(self.bm25)
            self._scopes[(item.user_id, item.level)] = scope
        # Ranked among equal scores by write position, which a rewrite keeps (TI2).
        scope.add(item.id, analyze(item.content), order=position)
        self._at_position[position] = item.id
        threads = self._threads.setdefault(item.user_id, {})
        thread = threads.get((item.level, item.task_id))
        if thread is None:
            thread = Thread()
            threads[(item.level, item.task_id)] = thread
        thread.add(position)

    def remove(
        self, item_id: str, thread: tuple[str, str, str | None], forget_position: bool = False
    ) -> int:
        """Drop the item's terms and its place in its thread, given as (user, level, task).

        Return its write position, for `add` to keep. With `forget_position` (the item is
        deleted) the position is forgotten too.
        """
        user_id, level, task_id = thread
        scope = self._scopes[(user_id, level)]
        position = scope.order(item_id)
        scope.remove(item_id)
        threads = self._threads[user_id]
        positions = threads[(level, task_id)]
        positions.remove(position)
        if not positions:
            del threads[(level, task_id)]
            if not threads:
                del self._threads[user_id]
        if forget_position:
            del self._at_position[position]
        return position

    def users(self) -> list[str]:
        """Return the users who have items, sorted."""
        return sorted(self._threads)

    def listed(
        self, user_id: str, level: str | None = None, task_id: str | None = None
    ) -> list[str]:
        """Return the ids of the user's items (of a level, of a task, if given), in write order."""
        threads = [
            positions
            for (thread_level, thread_task), positions in self._threads.get(user_id, {}).items()
            if level in (None, thread_level) and task_id in (None, thread_task)
        ]
        return [self._at_position[position] for position in heapq.merge(*threads)]

    def matching(self, user_id: str, level: str, terms: Iterable[str]) -> list[str]:
        """Return the ids sharing a term with `terms`, in write order."""
        scope = self._scopes.get((user_id, level))
        return sorted(scope.candidates(terms), key=scope.order) if scope else []

    def search(
        self, user_id: str, level: str, terms: Sequence[str], limit: int
    ) -> list[tuple[str, float]]:
        """Return the `limit` best ids by raw BM25, best first, ties to the later-written."""
        scope = self._scopes.get((user_id, level))
        if scope is None:
            return []
        # Rounded before ordering and cutting, as SQLite's search rounds its sum (S8); the
        # index ranks equals by write position, given as their order (TI2).
        found = scope.top(terms, limit, SCORE_DIGITS)
        return [(key, round(score, SCORE_DIGITS)) for key, score in found]

    def adjacent(
        self, item_id: str, thread: tuple[str, str, str | None], width: int = 1
    ) -> tuple[str | None, ...]:
        """Return the ids `width` before and after the item in its thread (user, level, task)."""
        user_id, level, task_id = thread
        positions = self._threads[user_id][(level, task_id)]
        position = self._scopes[(user_id, level)].order(item_id)
        return tuple(
            None if place is None else self._at_position[place]
            for place in positions.around(position, width)
        )

    def held_terms(
        self, user_id: str, level: str, item_ids: Iterable[str], terms: Iterable[str]
    ) -> dict[str, TermCounts]:
        """Return the length and asked terms' counts of each named item holding one (S15)."""
        scope = self._scopes.get((user_id, level))
        if scope is None:
            return {}
        terms = set(terms)
        found = {}
        for item_id in dict.fromkeys(item_ids):
            if item_id in scope.terms:
                length, counts = scope.held(item_id, terms)
                if counts:
                    found[item_id] = TermCounts(length, dict(sorted(counts.items())))
        return found

    def statistics(self, user_id: str, level: str, terms: Iterable[str]) -> TermStatistics:
        """Return the scope's document count, total length and the terms' document counts."""
        scope = self._scopes.get((user_id, level))
        if scope is None:
            return TermStatistics(0, 0, {}, self.bm25)
        held = {term: scope.frequency(term) for term in set(terms)}
        frequencies = {term: count for term, count in sorted(held.items()) if count}
        return TermStatistics(len(scope), scope.total_length, frequencies, self.bm25)
