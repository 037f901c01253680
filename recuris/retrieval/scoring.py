"""Scoring: BM25 and embedding scorers, in the core's `Scorer` shape, and the BM25 analyzer.

Document 000 §3.2 retrieves by similarity with a threshold; document 002's troubleshooting
table names the wrong similarity function as a main cause of bad recall. The core's
`JaccardScorer` (recuris/core/similarity.py) is the documents' choice; here are two more that
any memory taking a `Scorer` accepts. BM25 scores are divided by the most the query could
score, so every scorer answers in [0, 1] and one threshold means the same.

Invariants:
    SR1  a score lies in [0, 1] and is 0 for a document that shares no term with the query,
        so the index's candidates are exactly the documents that can score above 0.
    SR2  adding then removing a document leaves the index as it was.
    SR3  `analyze` is deterministic: lower-cased words minus English stop words, lightly
        stemmed, and CJK bigrams, so "deployments" and "deploy" meet.
    SR4  `CosineScorer` scores max(0, cosine) of embedding vectors, in [0, 1], by a linear
        scan; its vectors are stored with the items (`persist`), so a reload embeds nothing.
    SR5  a query in which `analyze` keeps no term (punctuation, stop words) finds nothing;
        `query_problem` says so, in the words every reader of a query refuses it with (the
        command line's search, VA7; the search_memory tool, Z10).
"""

import functools
import math
from collections.abc import Callable, Iterable

from ..core.text import tokenize
from .bm25 import BM25Index, BM25Settings

__all__ = ["BM25Scorer", "CosineScorer", "analyze", "query_problem", "stem", "forget_words"]

STOP_WORDS = frozenset(
    (
        "a about after again all also am an and any are as at be because been before being both "
        "but by can could did do does doing during each few for from had has have having he her "
        "here hers him his how i if in into is it its itself just me more most my no nor not "
        "now of off on once only or other our out over own same she should so some such than "
        "that the their them then there these they this those through to too under until up "
        "very was we were what when where which while who whom why will with would you your "
        "yours"
    ).split()
)


SUFFIXES = (
    ("sses", "ss"),
    ("ies", "y"),
    ("ments", ""),
    ("ment", ""),
    ("ness", ""),
    ("ings", ""),
    ("ing", ""),
    ("edly", ""),
    ("ed", ""),
    ("ly", ""),
    ("s", ""),
)


LONGEST_REMEMBERED = 24  # letters: a longer word is stemmed afresh each time it comes


def stem(word: str) -> str:
    """Strip common English suffixes: deployments, deployed, deploying -> deploy (SR3)."""
    if not word.isascii() or not word.isalpha() or len(word) <= 3:
        return word
    return _remembered(word) if len(word) <= LONGEST_REMEMBERED else _stripped(word)


def forget_words() -> None:
    """Empty the memo of stemmed words (a manager's erasures call it)."""
    _remembered.cache_clear()


def _stripped(word: str) -> str:
    for suffix, replacement in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= (4 if "ment" in suffix else 3):
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                break  # class, status, analysis keep their s
            word = word[: -len(suffix)] + replacement
            break
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]  # running -> runn -> run
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]  # make, making -> mak
    return word


# A text's words repeat across texts: remembered, analysing a chat turn took 19 µs instead of
# 54 (`analyze` over LoCoMo's turns, timeit). The memo holds words, never texts: at most
# 65,536 of at most LONGEST_REMEMBERED letters, a few megabytes. A word stems the same
# whatever came before, so no result depends on what it holds.
_remembered = functools.lru_cache(maxsize=1 << 16)(_stripped)


def analyze(text: str) -> list[str]:
    """Return the terms BM25 indexes: tokens minus stop words, stemmed (SR3)."""
    return [stem(token) for token in tokenize(text) if token not in STOP_WORDS]


def query_problem(query: str) -> str | None:
    """Say why a query can find nothing, if `analyze` keeps no term of it (SR5)."""
    if analyze(query):
        return None
    return (
        f"the query {query!r} has no word to search for "
        "(punctuation and stop words such as 'the' find nothing)"
    )


class BM25Scorer(BM25Index):
    """Okapi BM25 over bm25.py's index, divided by the most the query could score (SR1)."""

    persist = False

    def __init__(
        self,
        settings: BM25Settings = BM25Settings(),  # noqa: B008 (frozen)
        analyzer: Callable[[str], list[str]] = analyze,
    ) -> None:
        super().__init__(settings)
        self.analyzer = analyzer

    def _best(self, query: set[str]) -> float:
        # Each term at its ceiling: summed first, so the floats are those of idf sum · (k1 + 1).
        return self.settings.ceiling(sum(self.idf(term) for term in query))

    def score(self, query: Iterable[str], key: str) -> float:
        query = set(query)
        best = self._best(query)
        return min(1.0, self.raw(query, key) / best) if best > 0 else 0.0

    def score_candidates(self, query: Iterable[str]) -> list[tuple[str, float]]:
        """Score exactly the documents that share a term with the query (SR1), each posting once."""
        query = set(query)
        best = self._best(query)
        scores = self.accumulate(query).items()
        return [(key, min(1.0, raw / best) if best > 0 else 0.0) for key, raw in scores]


class CosineScorer:
    """Cosine similarity of embeddings (document 000 §3.2's production choice), by linear scan.

    `embed(texts) -> vectors` is any embedder, e.g. `OpenAICompatibleEmbeddings.embed`. The
    "terms" of a document are its vector; `persist` tells a memory to store it with the item.
    """

    persist = True

    def __init__(self, embed: Callable[[list[str]], list[list[float]]]) -> None:
        self.embed = embed
        self.vectors: dict[str, list[float]] = {}  # no index: every document is a candidate

    def analyzer(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def add(self, key: str, vector: list[float]) -> None:
        self.vectors[key] = list(vector)

    def remove(self, key: str) -> None:
        self.vectors.pop(key, None)

    def score(self, query: list[float], key: str) -> float:
        vector = self.vectors[key]
        norm = math.sqrt(math.fsum(x * x for x in query)) * math.sqrt(
            math.fsum(x * x for x in vector)
        )
        cosine = (
            math.fsum(a * b for a, b in zip(query, vector, strict=True)) / norm if norm else 0.0
        )
        return min(1.0, max(0.0, cosine))

    def score_candidates(self, query: list[float]) -> list[tuple[str, float]]:
        return [(key, self.score(query, key)) for key in self.vectors]

    def __len__(self) -> int:
        return len(self.vectors)
