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
"""

import bisect
import heapq
import itertools
from collections.abc import Iterable, Sequence

from ..retrieval.bm25 import BM25Index, BM25Settings
from ..retrieval.scoring import analyze
from .item import MemoryItem

__all__ = ["TermIndex"]


class TermIndex:
    """Analysed terms per (user, level) and write order per (user, level, task)."""

    def __init__(self, bm25: BM25Settings) -> None:
        self.bm25 = bm25
        self._scopes: dict[tuple[str, str], BM25Index] = {}
        # user -> (level, task) -> the write positions of its items, ascending
        self._threads: dict[str, dict[tuple[str, str | None], list[int]]] = {}
        self.position: dict[str, int] = {}
        self._at_position: dict[int, str] = {}
        self._next_position = itertools.count()

    def add(self, item: MemoryItem) -> None:
        """Index the item's terms and its place in its task's thread; a known id keeps its place."""
        scope = self._scopes.get((item.user_id, item.level))
        if scope is None:
            scope = BM25Index(self.bm25)
            self._scopes[(item.user_id, item.level)] = scope
        scope.add(item.id, analyze(item.content))
        position = self.position.setdefault(item.id, next(self._next_position))
        self._at_position[position] = item.id
        threads = self._threads.setdefault(item.user_id, {})
        bisect.insort(threads.setdefault((item.level, item.task_id), []), position)

    def remove(self, item: MemoryItem, forget_position: bool = False) -> None:
        """Drop the item's terms and its place in its thread (and its position, when deleted)."""
        self._scopes[(item.user_id, item.level)].remove(item.id)
        threads = self._threads[item.user_id]
        thread = threads[(item.level, item.task_id)]
        del thread[bisect.bisect_left(thread, self.position[item.id])]
        if not thread:
            del threads[(item.level, item.task_id)]
            if not threads:
                del self._threads[item.user_id]
        if forget_position:
            del self._at_position[self.position.pop(item.id)]

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
        return sorted(scope.candidates(terms), key=self.position.__getitem__) if scope else []

    def search(
        self, user_id: str, level: str, terms: Sequence[str], limit: int
    ) -> list[tuple[str, float]]:
        """Return the `limit` best ids by raw BM25, best first, ties to the later-written."""
        scope = self._scopes.get((user_id, level))
        if scope is None:
            return []
        # Rounded before ordering and cutting, as SQLite's search rounds its sum (S8).
        scored = [(key, round(score, 9)) for key, score in scope.accumulate(terms).items()]
        scored.sort(key=lambda pair: (-pair[1], -self.position[pair[0]]))
        return scored[: max(0, limit)]

    def adjacent(self, item: MemoryItem) -> tuple[str | None, str | None]:
        """Return the ids written just before and just after the item in its thread."""
        thread = self._threads[item.user_id][(item.level, item.task_id)]
        at = bisect.bisect_left(thread, self.position[item.id])
        before = self._at_position[thread[at - 1]] if at > 0 else None
        after = self._at_position[thread[at + 1]] if at + 1 < len(thread) else None
        return before, after
