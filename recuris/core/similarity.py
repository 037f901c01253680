"""Similarity: how a query is compared with remembered episodes, and the Scorer every memory takes.

Document 000 §4.2 compares two texts by the Jaccard similarity of their token sets, and §3.2
keeps only hits above a threshold. The prototype scanned every episode; here a scorer keeps
an inverted index (term -> keys), so a query touches only the episodes sharing a term.
Any object with the `Scorer` shape plugs in: BM25 and embeddings live in recuris/retrieval.

Invariants:
    SM1 `jaccard` is symmetric, lies in [0, 1], is 1 for equal non-empty sets and 0 for
        disjoint ones, and for two empty sets (no evidence is not similarity).
    SM2 a scorer's `score_candidates` returns every key that can score above 0 (for Jaccard,
        exactly the keys sharing a term), each with the very float `score` gives it.
    SM3 adding then removing a key leaves a scorer as it was.
"""

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from .text import tokenize

__all__ = ["Scorer", "JaccardScorer", "jaccard", "jaccard_from_sizes"]


class Scorer(Protocol):
    """What episodic memory needs of a similarity: index a text's terms, score a query.

    `analyzer(text)` gives the terms the scorer indexes (tokens, or a vector); `add(key,
    terms)` indexes a document, replacing any under the key; `remove(key)` forgets it.
    `score(query, key)` is one document's similarity in [0, 1], 0 when nothing is shared;
    `score_candidates(query)` gives (key, score) for every document that may score above 0,
    with the floats `score` gives. `persist`: store the terms with the memory (embeddings).
    """

    persist: bool

    def analyzer(self, text: str) -> Sequence: ...
    def add(self, key: str, terms: Sequence) -> None: ...
    def remove(self, key: str) -> None: ...
    def score(self, query: Sequence, key: str) -> float: ...
    def score_candidates(self, query: Sequence) -> list[tuple[str, float]]: ...
    def __len__(self) -> int: ...


def jaccard_from_sizes(shared: int, size_a: int, size_b: int) -> float:
    """Return |A ∩ B| / |A ∪ B| from the two sizes and the overlap.

    This is the one place the formula is written.
    """
    return shared / (size_a + size_b - shared) if shared else 0.0


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """Return the Jaccard similarity of two token collections, taken as sets (SM1)."""
    set_a = set(a)
    set_b = set(b)
    return jaccard_from_sizes(len(set_a & set_b), len(set_a), len(set_b))


class JaccardScorer:
    """Jaccard similarity of term sets, through postings from each term to the keys holding it."""

    persist = False

    def __init__(self, analyzer: Callable[[str], Sequence[str]] = tokenize) -> None:
        self.analyzer = analyzer
        self.terms: dict[str, frozenset[str]] = {}
        self.postings: dict[str, set[str]] = {}

    def add(self, key: str, terms: Sequence[str]) -> None:
        self.remove(key)
        self.terms[key] = frozenset(terms)
        for term in self.terms[key]:
            self.postings.setdefault(term, set()).add(key)

    def remove(self, key: str) -> None:
        for term in self.terms.pop(key, ()):
            self.postings[term].discard(key)
            if not self.postings[term]:
                del self.postings[term]  # SM3: no empty posting outlives its last key

    def score(self, query: Sequence[str], key: str) -> float:
        query_terms = set(query)
        document = self.terms[key]
        return jaccard_from_sizes(len(query_terms & document), len(query_terms), len(document))

    def score_candidates(self, query: Sequence[str]) -> list[tuple[str, float]]:
        # Walk the query's postings once, counting shared terms per key: only keys that share
        # a term can score above 0 (SM2), and the formula is the one `score` uses.
        query_terms = set(query)
        shared = Counter()
        for term in query_terms:
            shared.update(self.postings.get(term, ()))
        size = len(query_terms)
        return [
            (key, jaccard_from_sizes(count, size, len(self.terms[key])))
            for key, count in shared.items()
        ]

    def __len__(self) -> int:
        return len(self.terms)

    def __repr__(self) -> str:
        return f"JaccardScorer(documents={len(self.terms)}, terms={len(self.postings)})"
