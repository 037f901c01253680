"""Context: an episode scored together with the items around it in its thread.

Document 003 §4.4 recalls episodes and document 002 §4 ranks them by relevance; but an
answer often sits next to the words of the question ("What did you adopt?" / "A puppy!"), and
a question that needs two memories often finds them a turn or two apart. So an episode of a
task or session is scored as a small window of text: its own words, and the words of the
`width` items on either side in its thread counting `weight` each, in one BM25 sum (BM25F,
Robertson, Zaragoza and Taylor, 2004: one document of several fields, the neighbours
weighted less, each field's counts normalised by its own length). A turn that answers
without the question's words then scores through its neighbours, and one holding half of a
question's words gains from a neighbour holding the other half, within BM25's saturation,
where adding the neighbours' scores would count a shared word twice.

The window is read at recall time, from the store's index (S9, S14, S15, S16): nothing
of a neighbour is stored with an item, so an item deleted or erased is in no window after,
and every store, given the same items, scores the same windows.

Invariants:
    CX1 an item's window is the item and the `width` items before and after it among the
        user's items of its level and task (`Store.adjacent`); an item outside a task is
        alone in its window.
    CX2 a window's score is the sum, over the distinct query terms the level holds, of
        `BM25Settings.weights` with the level's idf (S14) and the item's length, for the
        frequency f + n · `weight` · Σ g / m: f and n the item's count of the term and its
        normaliser (`BM25Settings.normaliser` of its length; an item holding no query term
        weighs as if of the average length, which cancels out), g and m each neighbour's;
        rounded as S8 rounds. A window whose neighbours hold no query term, or of `weight`
        0, scores what the store's search does.
    CX3 a window's score splits into its own part (the same sum without the neighbours'
        counts) and its context part, the rest: both at least 0, adding up to the score.
    CX4 the windows scored are those of the first `hits` of the store's hits in a task and
        of every item within `width` of one, each once; the store's other hits in a task are
        left out, its hits outside a task keep their scores, and a window scoring 0 is left
        out.
    CX5 of the windows scored and the hits outside a task, the `limit` best are returned,
        best first, ties to the smaller id, each item once; only the neighbours' items among
        them are read (`Store.get_many`, S16), and a neighbour deleted, or moved to another
        level, since the windows were found is left out.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..core.validation import require_count, require_number
from ..retrieval.bm25 import bm25_idf
from ..storage.item import MemoryItem
from ..storage.store import SCORE_DIGITS, Store

__all__ = ["Context", "Scored", "in_context"]

@dataclass(frozen=True)
class Context:
    """How far a window reaches, how much its neighbours' words count, how many are read.

    Raises ValueError naming CX1, CX2 or CX4 for a width below 0, a weight outside [0, 1] or
    fewer than one hit.
    """

    # Items on either side of an episode that are part of its window. Two: an answer is
    # often a turn after the question, and the fact it builds on a turn before that.
    width: int = 2
    # What a neighbour's word counts for against the episode's own. The width, this weight
    # and `hits` were chosen together on LoCoMo's dev set (docs/manager/context.md).
    weight: float = 0.3
    # Windows are read around this many of the best episodes in tasks that the store finds;
    # its other episodes in tasks are left out. On LoCoMo's dev set, 20 ranked almost as 50
    # did, in about half the time; 10 lost multi-hop questions.
    hits: int = 20

    def __post_init__(self) -> None:
        require_count("CX1: width", self.width, 0)
        require_number("CX2: weight", self.weight, 0, 1)
        require_count("CX4: hits", self.hits, 1)

    @property
    def active(self) -> bool:
        """Whether neighbours count at all."""
        return bool(self.width and self.weight)


@dataclass(frozen=True)
class Scored:
    """An item's window score, and the part of it its neighbours' words gave (CX3)."""

    item: MemoryItem
    raw: float  # the window's score
    context: float  # the neighbours' part; the item's own words gave the rest


def _windows(
    store: Store, user_id: str, hits: Sequence[MemoryItem], width: int
) -> dict[str, list[str]]:
    """Return the id of each item within `width` of a hit in a thread, with its window's others.

    CX1, CX4: the ids alone; no item of a window is read here.
    """
    # Twice the width around each hit: an item `width` away needs `width` more beyond it.
    around = store.adjacent(user_id, [item.id for item in hits], 2 * width)
    windows: dict[str, list[str]] = {}
    for hit in hits:
        found = around.get(hit.id)
        if found is None:
            continue  # deleted since the search found it
        line = (*found[: 2 * width], hit.id, *found[2 * width :])
        for place in range(width, 3 * width + 1):
            key = line[place]
            if key is None or key in windows:
                continue
            reach = line[place - width : place] + line[place + 1 : place + width + 1]
            windows[key] = [other for other in reach if other is not None]
    return windows


def _best(scored: list[tuple[float, float, str]], limit: int | None) -> list[tuple]:
    """Return the `limit` best (score, context part, id), best first, ties to the smaller id."""
    return sorted(scored, key=lambda entry: (-entry[0], entry[2]))[:limit]


def _scored_windows(
    store: Store,
    user_id: str,
    level: str,
    terms: Iterable[str],
    windowed: Sequence[MemoryItem],
    context: Context,
) -> list[tuple[float, float, str]]:
    """Return (score, context part, id) of each window around the hits scoring above 0 (CX2-CX4)."""
    statistics = store.statistics(user_id, level, sorted(set(terms)))
    if not statistics.documents or not statistics.frequencies:
        return []  # every hit in a task was deleted since the search
    idf = {
        term: bm25_idf(statistics.documents, count)
        for term, count in statistics.frequencies.items()
    }
    average = max(statistics.length / statistics.documents, 1e-9)
    settings = statistics.bm25
    windows = _windows(store, user_id, windowed, context.width)
    # What every item of every window holds of the query, from the store's index (S15): an
    # item holding none of it adds nothing to any window, and nothing of it is read.
    named = {key for item_id, others in windows.items() for key in (item_id, *others)}
    held = store.held_terms(user_id, level, named, idf)
    lengths = []
    own: dict[str, list[int]] = {term: [] for term in idf}
    together: dict[str, list[float]] = {term: [] for term in idf}
    for item_id, neighbours in windows.items():
        mine = held.get(item_id)
        # An item holding no query term has no own frequency to normalise: any length does.
        length = mine.length if mine else average
        normaliser = settings.normaliser(length, average)
        beside = dict.fromkeys(idf, 0.0)
        for other in neighbours:
            theirs = held.get(other)
            if theirs is not None:
                # Each neighbour's words by its own length, as BM25F normalises each field.
                divisor = settings.normaliser(theirs.length, average)
                for term, count in theirs.counts.items():
                    beside[term] += count / divisor
        lengths.append(length)
        for term in idf:
            count = mine.counts.get(term, 0) if mine else 0
            own[term].append(count)
            # weights() divides by the item's normaliser: the neighbours' share is multiplied
            # by it first, so that it counts as their own normalised frequencies (CX2).
            together[term].append(count + normaliser * context.weight * beside[term])
    # One column of weights per term over every window: a frequency of 0 weighs 0.
    own_columns = [settings.weights(idf[term], own[term], lengths, average) for term in idf]
    together_columns = [
        settings.weights(idf[term], together[term], lengths, average) for term in idf
    ]
    scored = []
    for item_id, by_itself, whole in zip(
        windows, zip(*own_columns), zip(*together_columns), strict=True
    ):
        total = round(math.fsum(whole), SCORE_DIGITS)
        if total > 0:
            own_part = min(total, round(math.fsum(by_itself), SCORE_DIGITS))
            scored.append((total, round(total - own_part, SCORE_DIGITS), item_id))
    return scored


def in_context(
    store: Store,
    user_id: str,
    level: str,
    terms: Iterable[str],
    hits: Sequence[tuple[MemoryItem, float]],
    context: Context,
    limit: int | None = None,
) -> list[Scored]:
    """Score the windows of the best hits in a task and of their neighbours (CX1-CX5).

    `hits` are the store's, best first, with its scores (S8). Returns at most `limit` (None:
    all) of the scored windows and the hits outside a task, best first, ties to the smaller
    id (CX5). Raises ValueError naming CX5 for a limit that is not an int >= 1.
    """
    if limit is not None:
        require_count("CX5: limit", limit, 1)
    windowed = [item for item, _ in hits if item.task_id is not None][: context.hits]
    scored = _scored_windows(store, user_id, level, terms, windowed, context) if windowed else []
    # Hits outside a task keep the store's score (CX2); the rest in a task, and a windowed
    # hit deleted since the search, stay out (CX4). A hit moved into a task since the search
    # may be in a window too: it is counted once.
    in_windows = {key for _, _, key in scored}
    outside = [
        (raw, 0.0, item.id)
        for item, raw in hits
        if item.task_id is None and item.id not in in_windows
    ]
    best = _best(scored + outside, limit)
    # Only the neighbours returned are read (CX5); one deleted or moved since is left out.
    found = {item.id: item for item, _ in hits}  # the search's copies, as recall reads them
    unread = [key for _, _, key in best if key not in found]
    if unread:
        read = store.get_many(user_id, unread)
        found.update((key, item) for key, item in read.items() if item.level == level)
    return [Scored(found[key], raw, part) for raw, part, key in best if key in found]
