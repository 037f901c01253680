"""BM25 index: postings in arrays, each term's weights computed once, the top k by MaxScore pruning.

Document 000 §3.2 retrieves by similarity; docs/retrieval/scoring.md's `BM25Scorer` ranks by Okapi BM25
(Robertson and Zaragoza, 2009). At a million documents a query of common words touches most
of them, so this index keeps each term's postings as one array of integer pairs (document
number, term frequency) in insertion order, computes a term's BM25 weights once per state of
the collection, and answers `top(query, k)` term at a time, strongest term first: once the
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
"""

import math
import struct
import sys
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from heapq import nlargest

__all__ = ["BM25Index", "bm25_idf"]

SLACK = 1e-9  # relative: approximate sums are within far less of the exact ones
CACHED = 256  # terms with at least this many documents keep their weights between queries
POSTING = struct.Struct("=ii")  # (document number, term frequency): one posting, 8 bytes


def bm25_idf(documents: int, frequency: int) -> float:
    """Return BM25's inverse document frequency of a term held by `frequency` of `documents`; never negative."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def _columns(postings: bytearray) -> tuple[memoryview, memoryview]:
    """View a term's postings as its document numbers and their frequencies; release before resizing."""
    pairs = memoryview(postings).cast("i")
    return pairs[0::2], pairs[1::2]


class BM25Index:
    """Documents as term counts, with array postings; raw Okapi BM25 scores and the top k."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        # Term -> POSTING pairs in a bytearray: unlike an array, an object the collector never walks.
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
        number = self._number[key] = len(self._keys)
        # Interned terms: one string per term, not one per document that holds it.
        distinct = tuple(sys.intern(term) for term in counts)
        self._keys.append(key)
        self._terms.append(distinct)
        self._lengths.append(sum(counts.values()))
        self.total_length += self._lengths[number]
        for term in distinct:
            postings = self.postings.setdefault(term, bytearray())
            try:
                postings += POSTING.pack(number, counts[term])
            except (
                BufferError
            ):  # a reader still holds a view (another thread, a kept traceback): a copy
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
                self.postings[term] = postings = postings[:start] + postings[start + POSTING.size :]
            if not postings:
                del self.postings[term]
                self.cache.pop(term, None)
        self.total_length -= self._lengths[number]
        self._keys[number] = self._terms[number] = None
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
        """Return the term's BM25 weight per posting (B1) and the largest, computed once per state."""
        cached = self.cache.get(term)
        if cached is not None and cached[0] == self._generation:
            return cached[1], cached[2]
        idf, k1, b, lengths, average = (
            self.idf(term),
            self.k1,
            self.b,
            self._lengths,
            self._average(),
        )
        # The same expression as `_weight_of`, so that both give the same floats (B1).
        weights = array(
            "d",
            [
                idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[n] / average))
                for n, tf in zip(*_columns(self.postings[term]))
            ],
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
        idf, k1, b, tf = self.idf(term), self.k1, self.b, frequencies[position]
        return (
            idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * self._lengths[number] / self._average()))
        )

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
        """Return the k best documents by raw score, best first, later insertion first among equals (B2)."""
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
    return bisect_left(
        _columns(postings)[0], number
    )  # its views are gone on return: resizable again


def _lookup(numbers: memoryview, weights: array, number: int) -> float:
    position = bisect_left(numbers, number)
    return weights[position] if position < len(numbers) and numbers[position] == number else 0.0
