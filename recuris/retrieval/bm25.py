"""BM25 index: the BM25 weights' one definition and settings, and an index that ranks by them.

Document 000 §3.2 retrieves by similarity; docs/retrieval/scoring.md's `BM25Scorer` ranks by
Okapi BM25 (Robertson and Zaragoza, 2009). `BM25Settings` holds the formula's two settings
with the product's defaults and computes its weights: every BM25 score of recuris (the
scorers, the in-memory store's index, and the SQL of sqlite_search.py, tested equal) is a
sum of these weights. Each term keeps its postings as one array of integer pairs (document
number, term frequency) in insertion order, for lookups and for reading every posting; a
term of many documents also keeps them in impact order (`ImpactOrder`): grouped by term
frequency, then by length, so that a top k reads its documents from the heaviest down and
stops as soon as no document left unread could enter (a threshold algorithm, Fagin, Lotem
and Naor, 2003, with MaxScore's essential lists, Turtle and Flood, 1995). Every document it
reads is scored exactly, so pruning never changes the answer. A removed document is marked
dead and skipped by readers; a term's postings are compacted once its dead outnumber its
live, and the documents renumbered once the dead documents pass DEAD times the live.

Invariants:
    B1 every score is exact and path-independent: `math.fsum` over the distinct query terms
        of idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · length / average length)), idf from
        the live documents only, whether read by `raw`, `accumulate` or `top`.
    B2 `top(query, k, digits)` equals sorting every live document that shares a term with the
        query by raw score (rounded to `digits` decimals, if given), highest first, the higher
        order first among equals, and keeping k, whatever adds and removes came before. A
        document's order is the one given to `add`, or else how many adds came before it.
    B3 k1 is a finite number above 0 and b a finite number in [0, 1]; anything else is
        refused with a ValueError naming B3.
    B4 memory follows the live documents: a term's dead postings never outnumber its live
        ones by more than LITTER, nor dead document numbers DEAD times the live by more than
        SPARE, and the vocabulary holds only terms of documents still numbered; each removal
        costs what its own terms cost (amortised), never the length of their lists.
"""

import math
import operator
import struct
from array import array
from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from heapq import heapify, heappop, heappush, heapreplace, nlargest
from itertools import chain, compress, groupby, repeat

from .chunks import Chunks
from ..core.validation import require_number

__all__ = ["BM25Index", "BM25Settings", "ImpactOrder", "bm25_idf"]

SLACK = 1e-9  # relative: a float sum of a few weights is within far less of the exact one
# Terms with at least this many documents keep their weights between `accumulate` calls: at
# 100,000 documents a common-word query took 6.9 ms with them kept, 25 ms computing them.
CACHED = 256
# Terms with at least this many postings keep an impact order once a top k has read them;
# shorter ones are weighed and sorted at each query: a one-word top 10 over 256, 512 and 1,024
# postings took 0.13, 0.26 and 0.49 ms so, 0.02 ms with an impact order.
IMPACT = 512
# A top k of several terms reads at most k + (their postings) / BUDGET documents one at a time
# before it scores the rest in bulk: at 100,000 documents, three common words took 7.7 ms
# (median of 20, processor time) with 256, 8.0 with 64; mixed words 0.42 ms with 256, 0.90
# with 1,024.
BUDGET = 256
# A top k over at most this many postings scores them all: three rare words at 100,000
# documents took 0.04 ms so, 0.20 ms ordering them.
FEW = 128
LITTER = 8  # dead postings a term may hold beyond its live ones before it is compacted (B4)
# The index renumbers once its dead document numbers (each keeps its key, some 30 bytes more
# and 4 a term until then) pass DEAD per live document plus SPARE (B4). Renumbering rewrites
# every posting: a million documents, half of them dead, took 5 to 6 s; at 4 per live one, a
# forgetting cycle that forgets four in five renumbers about once.
DEAD = 4
SPARE = 4096
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
    # default recall reaches R@5 0.687 with these two (docs/bench/locomo.md).
    b: float = 0.5

    def __post_init__(self) -> None:
        require_number("B3: k1", self.k1, 0, above_minimum=True)
        require_number("B3: b", self.b, 0, 1)

    def weights(
        self, idf: float, frequencies: Iterable[int], lengths: Iterable[int], average: float
    ) -> list[float]:
        """Return a term's weight in each document, from its frequency there and the length.

        `lengths` runs beside `frequencies`, one per document; `average` is the collection's
        average document length, above 0. Non-increasing in the length for a given frequency.
        """
        k1 = self.k1
        b = self.b
        return [
            idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))
            for tf, length in zip(frequencies, lengths)
        ]

    def normaliser(self, length: float, average: float) -> float:
        """Return what `weights` divides a frequency by for a document of this length."""
        return 1 - self.b + self.b * length / average

    def ceiling(self, idf: float) -> float:
        """Return the most a term of this idf can weigh in a document: idf · (k1 + 1).

        Given the sum of several terms' idfs, the most those terms can weigh together.
        """
        return idf * (self.k1 + 1)


def _columns(postings: bytearray) -> tuple[memoryview, memoryview]:
    """View a term's postings as document numbers and their frequencies; release before resizing."""
    pairs = memoryview(postings).cast("i")
    return pairs[0::2], pairs[1::2]


def _live(postings: bytearray, alive: bytearray, renumbered: array | None) -> bytearray:
    """Return a copy of the postings of live documents only, renumbered if `renumbered` is given."""
    pairs = (
        (number if renumbered is None else renumbered[number], frequency)
        for number, frequency in zip(*_columns(postings))
        if alive[number]
    )
    return bytearray(array("i", chain.from_iterable(pairs)))


class ImpactOrder:
    """A term's document numbers by term frequency, then length, then order: its weight order.

    For one term frequency a shorter document weighs at least as much as a longer one whatever
    the average length (the weights' formula is monotonic, and so are its floats), so reading
    each frequency's groups shortest first, merged across frequencies by their weight, reads
    the term's documents heaviest first while weighing only one document per group.
    """

    def __init__(self) -> None:
        self.lengths: dict[int, list[int]] = {}  # term frequency -> its lengths, ascending
        self.groups: dict[tuple[int, int], array] = {}  # (frequency, length) -> by order

    def add(self, number: int, frequency: int, length: int, orders: array) -> None:
        """File a document; `orders` maps document numbers to their orders (B2)."""
        group = self.groups.get((frequency, length))
        if group is None:
            group = array("i")
            self.groups[(frequency, length)] = group
            insort(self.lengths.setdefault(frequency, []), length)
        if group and orders[group[-1]] > orders[number]:
            group.insert(bisect_left(group, orders[number], key=orders.__getitem__), number)
        else:
            group.append(number)

    def by_weight(self, weigh: Callable[[int, int], float]) -> Iterator[tuple[float, array]]:
        """Yield (weight, numbers ascending by order) per group, heaviest first.

        `weigh(frequency, length)` is the term's weight in such a document.
        """
        heap = [(-weigh(tf, lengths[0]), tf, 0) for tf, lengths in self.lengths.items()]
        heapify(heap)
        while heap:
            negative, frequency, index = heap[0]
            lengths = self.lengths[frequency]
            yield -negative, self.groups[(frequency, lengths[index])]
            if index + 1 < len(lengths):
                following = -weigh(frequency, lengths[index + 1])
                heapreplace(heap, (following, frequency, index + 1))
            else:
                heappop(heap)


class BM25Index:
    """Documents as term counts, with array postings; raw Okapi BM25 scores and the top k."""

    def __init__(self, settings: BM25Settings = BM25Settings()) -> None:  # noqa: B008 (frozen)
        self.settings = settings
        # Term -> POSTING pairs in a bytearray, which the garbage collector never walks, unlike
        # an object holding two arrays: with the semantic layer's flat records, this took the
        # collector's seconds in a million semantic writes from 8.5 to about 2. Dead documents'
        # postings stay until the term is compacted (B4).
        self.postings: dict[str, bytearray] = {}
        self.cache: dict[str, tuple[int, array]] = {}  # term -> (generation, weights)
        self.total_length = 0
        self._number: dict[str, int] = {}  # key -> document number (a re-added key gets a new one)
        # Document number -> key, kept until the documents are renumbered; in chunks, which the
        # garbage collector does not walk at each full collection as it would a list.
        self._keys = Chunks()
        self._alive = bytearray()  # document number -> 1 while indexed, 0 once removed
        # Document number -> its distinct terms, as numbers in `_vocabulary`: those from
        # `_first_term[number]` to `_first_term[number + 1]` in `_term_numbers`: 4 bytes a term
        # and 8 a document, where a tuple of strings in a list took 8 a term and 48 more.
        self._vocabulary: list[str] = []  # term number -> term
        self._term_number: dict[str, int] = {}
        self._term_numbers = array("i")
        self._first_term = array("q", [0])
        self._lengths = array("i")
        self._orders = array("q")  # document number -> order among equal scores (B2)
        self._dead: dict[str, int] = {}  # term -> how many of its postings are of dead documents
        self._impact: dict[str, ImpactOrder] = {}
        self._adds = 0
        self._generation = 0  # changes with every add and remove: cached weights expire

    @property
    def terms(self) -> dict[str, int]:
        """The indexed keys (mapped to their document numbers)."""
        return self._number

    def __len__(self) -> int:
        return len(self._number)

    def add(self, key: str, terms: Iterable[str], order: int | None = None) -> None:
        """Index the document (a known key is replaced); `order` ranks it among equal scores.

        Give `order` for every document or for none: by default it is the count of adds
        before this one (B2).
        """
        counts = Counter(terms)
        self.remove(key)
        number = len(self._keys)
        length = sum(counts.values())
        self._number[key] = number
        self._keys.append(key)
        self._alive.append(1)
        self._lengths.append(length)
        self._orders.append(self._adds if order is None else order)
        self._adds += 1
        self.total_length += length
        for term in counts:
            self._term_numbers.append(self._numbered(term))
            postings = self.postings.setdefault(term, bytearray())
            try:
                postings += POSTING.pack(number, counts[term])
            except BufferError:
                # A reader still holds a view (another thread, a kept traceback): write a copy.
                self.postings[term] = postings + POSTING.pack(number, counts[term])
            impact = self._impact.get(term)
            if impact is not None:
                impact.add(number, counts[term], length, self._orders)
        self._first_term.append(len(self._term_numbers))
        self._generation += 1

    def _numbered(self, term: str) -> int:
        """Return the term's number in `_vocabulary`, adding it if new."""
        known = self._term_number.get(term)
        if known is None:
            known = len(self._vocabulary)
            self._term_number[term] = known
            self._vocabulary.append(term)
        return known

    def _terms_of(self, number: int) -> list[str]:
        """Return the distinct terms of the document numbered `number`."""
        held = self._term_numbers[self._first_term[number] : self._first_term[number + 1]]
        return list(map(self._vocabulary.__getitem__, held))

    def remove(self, key: str) -> None:
        """Forget the document, if indexed: it is marked dead, its terms' counts follow (B4)."""
        number = self._number.pop(key, None)
        if number is None:
            return
        self._alive[number] = 0
        postings = self.postings
        dead_postings = self._dead
        for term in self._terms_of(number):
            stored = len(postings[term]) // POSTING.size
            dead = dead_postings.get(term, 0) + 1
            if dead == stored:
                self._forget_term(term)
                del postings[term]
            elif dead > stored - dead + LITTER:
                self._forget_term(term)
                postings[term] = _live(postings[term], self._alive, None)
            else:
                dead_postings[term] = dead
        self.total_length -= self._lengths[number]
        self._generation += 1
        if len(self._keys) - len(self._number) > DEAD * len(self._number) + SPARE:
            self._renumber()

    def _forget_term(self, term: str) -> None:
        """Drop what is derived from the term's postings: dead count, impact order, weights."""
        self._dead.pop(term, None)
        self._impact.pop(term, None)
        self.cache.pop(term, None)

    def _renumber(self) -> None:
        """Number the live documents 0, 1, ... in the same order, and rewrite every posting (B4)."""
        keys = self._keys
        live = list(compress(range(len(self._alive)), self._alive))
        renumbered = array("i", [-1]) * len(keys)
        for new, number in enumerate(live):
            renumbered[number] = new
        for term, postings in self.postings.items():
            self.postings[term] = _live(postings, self._alive, renumbered)
        # Only the live documents' terms are numbered again, those with postings: the
        # vocabulary follows the live documents (B4).
        old_numbers = self._term_numbers
        old_first = self._first_term
        now_numbered = array("i", [-1]) * len(self._vocabulary)
        old_number = self._term_number
        self._vocabulary = []
        self._term_number = {}
        for term in self.postings:
            now_numbered[old_number[term]] = self._numbered(term)
        self._term_numbers = array("i")
        self._first_term = array("q", [0])
        for number in live:
            held = old_numbers[old_first[number] : old_first[number + 1]]
            self._term_numbers.extend(map(now_numbered.__getitem__, held))
            self._first_term.append(len(self._term_numbers))
        live_keys = keys.picked(live)
        self._keys = Chunks(live_keys)
        self._alive = bytearray(b"\x01") * len(live)
        self._lengths = array("i", [self._lengths[number] for number in live])
        self._orders = array("q", [self._orders[number] for number in live])
        self._number = {key: new for new, key in enumerate(live_keys)}
        self._dead.clear()
        self._impact.clear()
        self.cache.clear()

    def order(self, key: str) -> int:
        """Return the document's order among equal scores (B2). Raises KeyError if not indexed."""
        return self._orders[self._number[key]]

    def held(self, key: str, terms: Iterable[str]) -> tuple[int, dict[str, int]]:
        """Return the document's length and its count of each of `terms` it holds.

        Raises KeyError for a document not indexed.
        """
        number = self._number[key]
        counts = {}
        for term in set(terms).intersection(self._terms_of(number)):
            numbers, frequencies = _columns(self.postings[term])
            # A term's postings are in document-number order: adds append, removals keep it.
            counts[term] = frequencies[bisect_left(numbers, number)]
            numbers.release()
            frequencies.release()
        return self._lengths[number], counts

    def candidates(self, query: Iterable[str]) -> set[str]:
        """Return the documents that share at least one term with the query."""
        return {key for term in set(query) for key in self.holding(term)}

    def holding(self, term: str) -> list[str]:
        """Return the documents that hold the term, in insertion order."""
        alive = self._alive
        numbers = _columns(self.postings.get(term, bytearray()))[0]
        return self._keys.picked([number for number in numbers if alive[number]])

    def frequency(self, term: str) -> int:
        """Return how many live documents hold the term."""
        stored = len(self.postings.get(term, ())) // POSTING.size
        return stored - self._dead.get(term, 0)

    def idf(self, term: str) -> float:
        """The BM25 inverse document frequency, never negative, over the live documents."""
        return bm25_idf(len(self._number), self.frequency(term))

    def _average(self) -> float:
        return max(self.total_length / max(1, len(self._number)), 1e-9)

    def _weights(self, term: str) -> array:
        """Return the term's weight per posting (B1), computed once per state."""
        cached = self.cache.get(term)
        if cached is not None and cached[0] == self._generation:
            return cached[1]
        numbers, frequencies = _columns(self.postings[term])
        lengths = map(self._lengths.__getitem__, numbers)
        weights = array(
            "d", self.settings.weights(self.idf(term), frequencies, lengths, self._average())
        )
        if len(weights) >= CACHED:
            self.cache[term] = (self._generation, weights)
        return weights

    def _weigher(self, term: str, average: float) -> Callable[[int, int], float]:
        """Return the term's weight as a function of (frequency, length), remembered (B1)."""
        weights = self.settings.weights
        idf = self.idf(term)
        known: dict[tuple[int, int], float] = {}

        def weigh(frequency: int, length: int) -> float:
            weight = known.get((frequency, length))
            if weight is None:
                weight = weights(idf, (frequency,), (length,), average)[0]
                known[(frequency, length)] = weight
            return weight

        return weigh

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
        scored = self._scored(set(query))
        return dict(zip(self._keys.picked(scored), scored.values()))

    def _scored(self, terms: Iterable[str]) -> dict[int, float]:
        """Return the raw score of every live document holding one of the distinct `terms`."""
        alive = self._alive
        parts: dict[int, list[float]] = {}
        for term in terms:
            if term in self.postings:
                for number, weight in zip(_columns(self.postings[term])[0], self._weights(term)):
                    if alive[number]:
                        parts.setdefault(number, []).append(weight)
        return {number: math.fsum(weights) for number, weights in parts.items()}

    def _by_weight(self, term: str, average: float) -> Iterator[tuple[float, Sequence[int]]]:
        """Yield the term's (weight, live and dead numbers ascending by order), heaviest first."""
        impact = self._impact.get(term)
        if impact is None and len(self.postings[term]) >= IMPACT * POSTING.size:
            impact = self._impact_order(term)
            self._impact[term] = impact
        if impact is not None:
            return impact.by_weight(self._weigher(term, average))
        numbers = _columns(self.postings[term])[0]
        orders = map(self._orders.__getitem__, numbers)
        ranked = sorted(zip(self._weights(term), orders, numbers), reverse=True)
        alive = self._alive
        live = ((weight, number) for weight, _, number in ranked if alive[number])
        # Equal weights make one group, ascending by order as an impact order's groups.
        return (
            (weight, [number for _, number in members][::-1])
            for weight, members in groupby(live, key=operator.itemgetter(0))
        )

    def _impact_order(self, term: str) -> ImpactOrder:
        """Build the term's impact order from its live postings."""
        alive = self._alive
        lengths = self._lengths
        grouped: dict[tuple[int, int], list[int]] = {}
        for number, frequency in zip(*_columns(self.postings[term])):
            if alive[number]:
                grouped.setdefault((frequency, lengths[number]), []).append(number)
        impact = ImpactOrder()
        for (frequency, length), numbers in grouped.items():
            numbers.sort(key=self._orders.__getitem__)  # already sorted unless re-ordered
            impact.groups[(frequency, length)] = array("i", numbers)
            impact.lengths.setdefault(frequency, []).append(length)
        for lengths_of_frequency in impact.lengths.values():
            lengths_of_frequency.sort()
        return impact

    def top(
        self, query_terms: Iterable[str], k: int, digits: int | None = None
    ) -> list[tuple[str, float]]:
        """Return the k best documents by raw score, best first, the higher order first on ties.

        With `digits`, scores are compared rounded to that many decimals (B2); the scores
        returned are the raw ones.
        """
        terms = [term for term in dict.fromkeys(query_terms) if term in self.postings]
        if k < 1 or not terms:
            return []
        average = self._average()
        if sum(map(len, map(self.postings.__getitem__, terms))) <= FEW * POSTING.size:
            # Few postings in all: scoring each costs less than ordering them.
            orders = self._orders
            scored = self._scored(terms).items()
            ranked = ((_ranked(s, digits), orders[n], s, n) for n, s in scored)
            best = [(score, number) for _, _, score, number in nlargest(k, ranked)]
        elif len(terms) == 1:
            best = self._top_of_one(self._by_weight(terms[0], average), k, digits)
        else:
            streams = [self._by_weight(term, average) for term in terms]
            best = self._top_of_many(terms, streams, k, digits, average)
        keys = self._keys.picked([number for _, number in best])
        return [(key, score) for key, (score, _) in zip(keys, best)]

    def _top_of_one(
        self, stream: Iterator[tuple[float, Sequence[int]]], k: int, digits: int | None
    ) -> list[tuple[float, int]]:
        # One term: its documents in weight order are its ranking. From each group only the k
        # of highest order can count; the walk ends at the first group below the k-th found.
        # At 1,000,000 documents a common word's top 10 reads a few groups instead of every
        # posting (figures in docs/retrieval/bm25.md).
        alive = self._alive
        orders = self._orders
        found: list[tuple[float, int, float, int]] = []
        floor = None
        for weight, numbers in stream:
            rank = _ranked(weight, digits)
            if floor is not None and rank < floor:
                break
            taken = 0
            for number in reversed(numbers):
                if alive[number]:
                    found.append((rank, orders[number], weight, number))
                    taken += 1
                    if taken == k:
                        break
            if len(found) >= k:
                floor = nlargest(k, found)[-1][0]
        return [(weight, number) for _, _, weight, number in nlargest(k, found)]

    def _top_of_many(
        self,
        terms: list[str],
        streams: list[Iterator[tuple[float, Sequence[int]]]],
        k: int,
        digits: int | None,
        average: float,
    ) -> list[tuple[float, int]]:
        # A threshold algorithm over the terms' impact orders. Every document read is scored
        # exactly (its other terms looked up by bisection); a document not read yet weighs at
        # most the current group's weight in every term, so once the sum of those (the bound)
        # is below the k-th score found, nothing unread can enter. Only the terms whose peaks
        # could still lift an unread document to the k-th score are read (MaxScore's
        # essential terms), the heaviest group first. When the query's terms weigh alike in
        # most of their documents the bound falls slowly: past a budget of reads the rest is
        # left to `_top_by_sweep`, which scores the documents that can still enter in bulk.
        alive = self._alive
        orders = self._orders
        lengths = self._lengths
        count = len(terms)
        weighers = [self._weigher(term, average) for term in terms]
        columns = [_columns(self.postings[term]) for term in terms]
        sizes = [len(numbers) for numbers, _ in columns]
        budget = k + sum(sizes) // BUDGET
        heads = [0.0] * count
        groups: list[Sequence[int]] = [()] * count
        unread = [0] * count

        def advance(index: int) -> None:
            group = next(streams[index], None)
            if group is None:
                heads[index] = 0.0
                groups[index] = ()
                unread[index] = 0
            else:
                heads[index] = group[0]
                groups[index] = group[1]
                unread[index] = len(group[1])

        for index in range(count):
            advance(index)
        peaks = list(heads)
        by_peak = sorted(range(count), key=peaks.__getitem__, reverse=True)
        essential = by_peak
        best: list[tuple[float, int]] = []  # a heap of the k best (rank, order) so far
        found: list[tuple[float, int, float, int]] = []
        seen: set[int] = set()
        floor = None
        while floor is None or _ranked(sum(heads) * (1 + SLACK), digits) >= floor:
            chosen = -1
            for index in essential:
                if unread[index] and (chosen < 0 or heads[index] > heads[chosen]):
                    chosen = index
            if chosen < 0:
                break  # the essential terms are read: what is unread scores below the floor
            if len(seen) >= budget and floor is not None:
                return self._top_by_sweep(terms, peaks, k, digits, average, floor)
            weight = heads[chosen]
            unread[chosen] -= 1
            number = groups[chosen][unread[chosen]]
            if not unread[chosen]:
                advance(chosen)
            if not alive[number] or number in seen:
                continue
            seen.add(number)
            length = lengths[number]
            parts = [weight]
            for index, (numbers, frequencies) in enumerate(columns):
                if index != chosen:
                    position = bisect_left(numbers, number)
                    if position < sizes[index] and numbers[position] == number:
                        parts.append(weighers[index](frequencies[position], length))
            score = math.fsum(parts)
            entry = (_ranked(score, digits), orders[number])
            found.append((*entry, score, number))
            if len(best) < k:
                heappush(best, entry)
            elif entry > best[0]:
                heapreplace(best, entry)
            else:
                continue
            if len(best) == k and best[0][0] != floor:
                floor = best[0][0]
                essential = by_peak[: _essential(peaks, by_peak, floor, digits)]
        return [(score, number) for _, _, score, number in nlargest(k, found)]

    def _top_by_sweep(
        self,
        terms: list[str],
        peaks: list[float],
        k: int,
        digits: int | None,
        average: float,
        floor: float,
    ) -> list[tuple[float, int]]:
        # `floor` is a k-th score already found, so the answer's k-th is at least as high. A
        # document in the answer holds an essential term (MaxScore), and in each term it holds
        # it weighs enough that, with every other term at its peak, it reaches the floor:
        # those are the candidates, gathered a group at a time. Each term's weights are then
        # laid beside the candidates by dictionary lookups, and summed exactly (B1), all in
        # loops that run in C.
        by_peak = sorted(range(len(terms)), key=peaks.__getitem__, reverse=True)
        total = math.fsum(peaks)
        gathered: set[int] = set()
        for index in by_peak[: _essential(peaks, by_peak, floor, digits)]:
            others = total - peaks[index]
            for weight, numbers in self._by_weight(terms[index], average):
                if _ranked((weight + others) * (1 + SLACK), digits) < floor:
                    break
                gathered.update(numbers)
        alive = self._alive
        if len(alive) == len(self._number):
            candidates = list(gathered)  # no document is dead
        else:
            candidates = [number for number in gathered if alive[number]]
        columns = [self._weights_of(term, candidates, average) for term in terms]
        # Summed as floats first, which is within a hair of the exact sum: only candidates
        # that reach the floor so are summed exactly and ranked (B1, B2).
        approximate = columns[0]
        for column in columns[1:]:
            approximate = list(map(operator.add, approximate, column))
        lowest = floor - abs(floor) * 4 * SLACK - (0.0 if digits is None else 10.0**-digits)
        kept = compress(range(len(candidates)), map(operator.ge, approximate, repeat(lowest)))
        orders = self._orders
        ranked = []
        for at in kept:
            number = candidates[at]
            score = math.fsum(column[at] for column in columns)
            ranked.append((_ranked(score, digits), orders[number], score, number))
        best = nlargest(k, ranked)
        return [(score, number) for _, _, score, number in best]

    def _weights_of(self, term: str, numbers: list[int], average: float) -> list[float]:
        """Return the term's weight in each of the live documents `numbers` (0 if not held)."""
        postings = self.postings[term]
        size = len(postings) // POSTING.size
        if len(numbers) * size.bit_length() < size:
            # Few documents against a long list: look each one up by bisection. At 100,000
            # documents a top 10 of two common words and a rarer one took 1.6 to 1.8 ms
            # so, 2.5 to 6.2 ms always reading the whole list.
            weigh = self._weigher(term, average)
            lengths = self._lengths
            known, frequencies = _columns(postings)
            found = []
            for number in numbers:
                position = bisect_left(known, number)
                if position < size and known[position] == number:
                    found.append(weigh(frequencies[position], lengths[number]))
                else:
                    found.append(0.0)
            return found
        weights: dict[int, float] = {}
        for weight, held in self._by_weight(term, average):
            weights.update(dict.fromkeys(held, weight))
        return list(map(weights.get, numbers, repeat(0.0)))


def _essential(peaks: list[float], by_peak: list[int], floor: float, digits: int | None) -> int:
    """Return how many terms, by peak, a document must hold one of to reach the floor."""
    for cut in range(len(by_peak) + 1):
        rest = math.fsum(peaks[index] for index in by_peak[cut:])
        if _ranked(rest * (1 + SLACK), digits) < floor:
            return cut
    return len(by_peak)


def _ranked(score: float, digits: int | None) -> float:
    """Return the score as `top` compares it: rounded to `digits` decimals, if given (B2)."""
    return score if digits is None else round(score, digits)
