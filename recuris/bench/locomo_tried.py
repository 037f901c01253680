"""LoCoMo, what was tried beyond the context and did not pay: rankings built on the product.

Document 003 §6.1 asks that a retrieval change be measured before it is kept. Each ranking
here is written on the public API (`MemoryManager.recall` and the store's `statistics`),
as a fork would try it, and `python -m recuris.bench locomo --tried` prints its rows beside
the default's, so a figure in docs/benchmarks.md's "tried" table comes from a command.

Invariants:
    LT1 every ranking returns at most ten items, each once, all of them the user's, and
        recalls with the manager's default settings.
    LT2 fusion is reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009) with the
        constant `FUSION`: an item's fused score is the sum, over the lists holding it, of
        1 / (FUSION + its rank), ranks from 1; ties keep the first list's order.
"""

from collections import Counter
from collections.abc import Callable, Sequence

from ..manager.manager import MemoryManager
from ..retrieval.bm25 import bm25_idf
from ..retrieval.scoring import analyze
from ..storage.item import MemoryItem

__all__ = ["FUSION", "fuse", "sessions_fused", "second_hop", "feedback", "TRIED"]

FUSION = 60  # the constant of reciprocal rank fusion, as its authors set it
POOL = 50  # how many of the recall's results a ranking reads before it cuts to ten
FIRST = 3  # the first results a second hop or feedback reads its words from
WORDS = 3  # the words each adds to the question


def fuse(lists: Sequence[Sequence[MemoryItem]]) -> list[MemoryItem]:
    """Return the items of every list by reciprocal rank fusion, best first (LT2)."""
    scores: dict[str, float] = {}
    items: dict[str, MemoryItem] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, 1):
            scores[item.id] = scores.get(item.id, 0.0) + 1 / (FUSION + rank)
            items.setdefault(item.id, item)
    return [items[key] for key in sorted(scores, key=lambda key: -scores[key])]


def sessions_fused(manager: MemoryManager, user_id: str, question: str) -> list[MemoryItem]:
    """Fuse the turns' ranks with their sessions' ranks, a session scored by its turns' totals.

    Accesses are counted as the default counts them, on its ten best; the pool is read
    without counting.
    """
    results = manager.recall(question, user_id, top_k=POOL, count_access=False).results
    manager.recall(question, user_id, top_k=10)  # counted as the default counts
    sessions: Counter = Counter()
    for result in results:
        sessions[result.item.task_id] += result.total
    order = {task: rank for rank, (task, _) in enumerate(sessions.most_common())}
    by_session = sorted(results, key=lambda result: order[result.item.task_id])
    turns = [result.item for result in results]
    return fuse([turns, [result.item for result in by_session]])[:10]


def _rarest(manager: MemoryManager, user_id: str, question: str, found: Sequence[MemoryItem]):
    """Return the rarest words of the first results that the question lacks, rarest first."""
    asked = set(analyze(question))
    held = Counter(term for item in found[:FIRST] for term in set(analyze(item.content)))
    new = sorted(term for term in held if term not in asked)
    statistics = manager.store.statistics(user_id, "episodic", new)
    weight = {
        term: bm25_idf(statistics.documents, count)
        for term, count in statistics.frequencies.items()
    }
    return sorted(weight, key=lambda term: (-weight[term] * held[term], term))[:WORDS]


def _asked_again(
    manager: MemoryManager, user_id: str, question: str
) -> tuple[list[MemoryItem], list[MemoryItem]]:
    """Return the ten best, and the ten best once the first results' rarest words are added.

    Neither recall counts use; the default's ten are counted after, as the default counts
    them, so the second question's recency is the first's.
    """
    first = _inspected(manager, user_id, question)
    words = _rarest(manager, user_id, question, first)
    again = _inspected(manager, user_id, f"{question} {' '.join(words)}") if words else first
    manager.recall(question, user_id, top_k=10)
    return first, again


def _inspected(manager: MemoryManager, user_id: str, question: str) -> list[MemoryItem]:
    """Return the ten best without counting their use."""
    return [r.item for r in manager.recall(question, user_id, top_k=10, count_access=False).results]


def second_hop(manager: MemoryManager, user_id: str, question: str) -> list[MemoryItem]:
    """Ask again with the first results' rarest words added; fuse both lists (LT2)."""
    return fuse(_asked_again(manager, user_id, question))[:10]


def feedback(manager: MemoryManager, user_id: str, question: str) -> list[MemoryItem]:
    """Ask once more with the first results' rarest words added, and keep only that list."""
    return _asked_again(manager, user_id, question)[1]


TRIED: dict[str, Callable[[MemoryManager, str, str], list[MemoryItem]]] = {
    "sessions ranked by their turns' totals, fused with the turns": sessions_fused,
    "a second hop: the first three results' rarest words asked again, fused": second_hop,
    "pseudo-relevance feedback: the same words, the second list alone": feedback,
}
