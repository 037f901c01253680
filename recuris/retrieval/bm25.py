"""BM25 index: the BM25 weights' one definition and settings, and an index that ranks by them.

Document 000 §3.2 retrieves by similarity; docs/retrieval/scoring.md's `BM25Scorer` ranks by
Okapi BM25 (Robertson and Zaragoza, 2009). `BM25Settings` holds the formula's two settings
with the product's defaults and computes its weights: every BM25 score of recuris (the
scorers, the in-memory store's index, and the SQL of sqlite_search.py, tested equal) is a
sum of these weights. At a million documents a query of common words touches most of them,
so this index keeps each term's postings as one array of integer pairs (document number,
term frequency) in insertion order, computes a term's weights once per state of the
collection, and answers `top(query, k)` term at a time, strongest term first: once the
terms left could not lift a new document past the k-th score so far (MaxScore, Turtle and
Flood, 1995), they only add to the documents in play. The final candidates are rescored
exactly, so pruning never changes the answer.

Invariants:
    B1 every score is exact and path-independent: `math.fsum` over the distinct query terms
        of idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · length / average length)), whether
        read by `raw`, `accumulate` or `top`.
    B2 `top(query, k)` equals sorting every document that shares a term with the query by
        raw score, highest first, the later insertion first among equals, and keeping k,
        whatever adds and removes came before.
    B3 k1 is a finite number above 0 and b a finite number in [0, 1]; anything else is
        refused with a ValueError naming B3.
"""

import math
import struct
import sys
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from heapq import nlargest

from ..core.validation import require_number

__all__ = ["BM25Index", "BM25Settings", "bm25_idf"]

SLACK = 1e-9  # relative: approximate sums are within far less of the exact ones
# Terms with at least this many documents keep their weights between queries: at 100,000
# documents a common-word query takes 6.9 ms with them kept, 25 ms when it computes them.
CACHED = 256
POSTING = struct.Struct("=ii")  # (document number, term frequency): one posting, 8 bytes


def bm25_idf(documents: int, frequency: int) -> float:
    """Return BM25's inverse document frequency of a term held by `frequency` of `documents`.

    Never negative, unlike the textbook form, so that a term in most documents adds a little.
    """
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


@dataclass(frozen=True)
class BM25Settings:
    """The two settings of Okapi BM25, and its weights: the one definition in recuris (B1, B3).

    Raises ValueError naming B3 for a k1 that is not above 0 or a b outside [0, 1].
    """

    # Term-frequency saturation: a term's weight grows with its count in a document, at most
    # to idf · (k1 + 1). Lower than the textbook 1.2, since a memory is a sentence or two,
    # where a second occurrence says less than in a long page.
    k1: float = 0.9
    # Length normalisation, 0 (none) to 1 (full): weaker than the textbook 0.75, since a
    # short memory is not short for lack of relevance. Chosen on LoCoMo's dev set, where the
    # default recall reaches R@5 0.582 with these two (docs/bench/locomo.md).
    b: float = 0.5

    def __post_init__(self) -> None:
        require_number("B3: k1", self.k1, 0, above_minimum=True)
        require_number("B3: b", self.b, 0, 1)

    def weights(
        self, idf: float, frequencies: Iterable[int], lengths: Iterable[int], average: float
    ) -> list[float]:
        """Return a term's weight in each document, from its frequency there and the length.

        `lengths` runs beside `frequencies`, one per document; `average` is the collection's
        average document length, above 0.
        """
        k1 = self.k1
        b = self.b
        return [
            idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))
            for tf, length in zip(frequencies, lengths)
        ]

    def ceiling(self, idf: float) -> float:
        """Return the most a term of this idf can weigh in a document: idf · (k1 + 1).

        Given the sum of several terms' idfs, the most those terms can weigh together.
        """
        return idf * (self.k1 + 1)


def _columns(postings: bytearray) -> tuple[memoryview, memoryview]:
    """View a term's postings as document numbers and their frequencies; release before resizing."""
    pairs = memoryview(postings).cast("i")
    return pairs[0::2], pairs[1::2]


class BM25Index:
    """Documents as term counts, with array postings; raw Okapi BM25 scores and the top k."""

    def __init__(self, settings: BM25Settings = BM25Settings()) -> None:  # noqa: B008 (frozen)
        self.settings = settings
        # Term -> POSTING pairs in a bytearray, which the garbage collector never walks, unlike
        # an object holding two arrays: with the semantic layer's flat records, this took the
        # collector's seconds in a million semantic writes from 8.5 to about 2.
        self.postings: dict[str, bytearray] = {}
        self.cache: dict[str, tuple[int, array, float]] = {}  # term -> (generation, weights, peak)
        self.total_length = 0
        self._number: dict[str, int] = {}  # key -> insertion number (a re-added key gets a new one)
        self._keys: list[str | None] = []  # insertion number -> key, None once removed
        self._terms: list[tuple[str, ...] | None] = []  # insertion number -> distinct terms
        self._lengths = array("i")
        self._generation = 0  # changes with every add and remove: cached weights expire

    @property
    def terms(self) -> dict[str, int]:
        """The indexed keys (mapped to their insertion numbers)."""
        return self._number

    def __len__(self) -> int:
        return len(self._number)

    def add(self, key: str, terms: Iterable[str]) -> None:
        counts = Counter(terms)
        self.remove(key)
        number = len(self._keys)
        self._number[key] = number
        # Interned terms: one string per term, not one per document that holds it. An index of
        # 100,000 documents of freshly analysed text holds 58 MB so, 149 MB without.
        distinct = tuple(sys.intern(term) for term in counts)
        self._keys.append(key)
        self._terms.append(distinct)
        self._lengths.append(sum(counts.values()))
        self.total_length += self._lengths[number]
        for term in distinct:
            postings = self.postings.setdefault(term, bytearray())
            try:
                postings += POSTING.pack(number, counts[term])
            except BufferError:
                # A reader still holds a view (another thread, a kept traceback): write a copy.
                self.postings[term] = postings + POSTING.pack(number, counts[term])
        self._generation += 1

    def remove(self, key: str) -> None:
        number = self._number.pop(key, None)
        if number is None:
            return
        for term in self._terms[number]:
            postings = self.postings[term]
            start = _position(postings, number) * POSTING.size
            try:
                del postings[start : start + POSTING.size]
            except BufferError:  # as in `add`: a reader's view never makes a write fail halfway
                postings = postings[:start] + postings[start + POSTING.size :]
                self.postings[term] = postings
            if not postings:
                del self.postings[term]
                self.cache.pop(term, None)
        self.total_length -= self._lengths[number]
        self._keys[number] = None
        self._terms[number] = None
        self._generation += 1

    def candidates(self, query: Iterable[str]) -> set[str]:
        """Return the documents that share at least one term with the query."""
        return {key for term in set(query) for key in self.holding(term)}

    def holding(self, term: str) -> list[str]:
        """Return the documents that hold the term, in insertion order."""
        keys = self._keys
        return [keys[number] for number in _columns(self.postings.get(term, bytearray()))[0]]

    def idf(self, term: str) -> float:
        """The BM25 inverse document frequency, never negative."""
        return bm25_idf(len(self._number), len(self.postings.get(term, ())) // POSTING.size)

    def _average(self) -> float:
        return max(self.total_length / max(1, len(self._number)), 1e-9)

    def _weights(self, term: str) -> tuple[array, float]:
        """Return the term's weight per posting (B1) and the largest, computed once per state."""
        cached = self.cache.get(term)
        if cached is not None and cached[0] == self._generation:
            return cached[1], cached[2]
        numbers, frequencies = _columns(self.postings[term])
        lengths = map(self._lengths.__getitem__, numbers)
        weights = array(
            "d", self.settings.weights(self.idf(term), frequencies, lengths, self._average())
        )
        peak = max(weights)
        if len(weights) >= CACHED:
            self.cache[term] = (self._generation, weights, peak)
        return weights, peak

    def _weight_of(self, term: str, number: int) -> float:
        if term not in self.postings:
            return 0.0
        numbers, frequencies = _columns(self.postings[term])
        position = bisect_left(numbers, number)
        if position == len(numbers) or numbers[position] != number:
            return 0.0
        frequency = frequencies[position]
        length = self._lengths[number]
        # The same definition as `_weights`, so that both give the same floats (B1).
        return self.settings.weights(self.idf(term), [frequency], [length], self._average())[0]

    def raw(self, query: Iterable[str], key: str) -> float:
        """The unnormalised BM25 score of one document (B1). Raises KeyError for an unknown key."""
        number = self._number[key]
        return math.fsum(self._weight_of(term, number) for term in set(query))

    def accumulate(self, query: Iterable[str]) -> dict[str, float]:
        """Return the raw score of every document that shares a term with the query (B1)."""
        parts: dict[int, list[float]] = {}
        for term in set(query):
            if term in self.postings:
                for number, weight in zip(_columns(self.postings[term])[0], self._weights(term)[0]):
                    parts.setdefault(number, []).append(weight)
        return {self._keys[number]: math.fsum(weights) for number, weights in parts.items()}

    def top(self, query_terms: Iterable[str], k: int) -> list[tuple[str, float]]:
        """Return the k best documents by raw score, best first, the later first on ties (B2)."""
        # MaxScore: at 100,000 documents, a top-10 query of three common words takes 5.2 ms
        # this way, 27 ms scoring every document (`accumulate`) and keeping the best.
        terms = [term for term in dict.fromkeys(query_terms) if term in self.postings]
        if k < 1 or not terms:
            return []
        lists = sorted(
            ((*self._weights(term), term) for term in terms), key=lambda entry: -entry[1]
        )
        scores: dict[int, float] = {}
        for position, (weights, _, term) in enumerate(lists):
            numbers = _columns(self.postings[term])[0]
            left = sum(entry[1] for entry in lists[position:])  # the most the terms left can add
            floor = nlargest(k, scores.values())[-1] if len(scores) >= k else 0.0
            if floor and left * (1 + SLACK) < floor * (1 - SLACK):
                # No document outside `scores` can reach the k-th score: the terms left only
                # add to those that still can.
                scores = {
                    n: s
                    for n, s in scores.items()
                    if (s + left) * (1 + SLACK) >= floor * (1 - SLACK)
                }
                for weights, _, term in lists[position:]:
                    self._add_to_known(scores, _columns(self.postings[term])[0], weights)
                break
            new = dict(zip(numbers, weights))
            for number in new.keys() & scores.keys():
                new[number] += scores[number]
            scores.update(new)
        floor = nlargest(k, scores.values())[-1] if len(scores) >= k else 0.0
        close = [n for n, s in scores.items() if s >= floor * (1 - 4 * SLACK)]
        found = [(_columns(self.postings[term])[0], weights) for weights, _, term in lists]
        exact = [
            (math.fsum(_lookup(numbers, weights, n) for numbers, weights in found), n)
            for n in close
        ]
        best = nlargest(k, exact)  # by score, then by insertion number: the later first
        return [(self._keys[number], score) for score, number in best]

    @staticmethod
    def _add_to_known(scores: dict[int, float], numbers: memoryview, weights: array) -> None:
        # Few known documents against a long list: look each one up; otherwise walk the list.
        # At 100,000 documents, a top-10 query of two common words and a rarer one takes 1.6 to
        # 1.8 ms so, and 2.5 to 6.2 ms always walking (two runs on a shared machine).
        if len(scores) * max(1, len(numbers).bit_length()) < len(numbers):
            for number in scores:
                position = bisect_left(numbers, number)
                if position < len(numbers) and numbers[position] == number:
                    scores[number] += weights[position]
        else:
            for number, weight in zip(numbers, weights):
                if number in scores:
                    scores[number] += weight


def _position(postings: bytearray, number: int) -> int:
    # The view of the postings is gone on return: they can be resized again.
    return bisect_left(_columns(postings)[0], number)


def _lookup(numbers: memoryview, weights: array, number: int) -> float:
    position = bisect_left(numbers, number)
    return weights[position] if position < len(numbers) and numbers[position] == number else 0.0
