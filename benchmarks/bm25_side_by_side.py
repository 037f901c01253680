"""Run recuris's BM25 beside rank_bm25, bm25s and a naive pure-Python BM25, in one process.

Not part of recuris: rank_bm25 and bm25s (and numpy) live in a separate virtual environment;
docs/benchmarks.md gives the command. The corpus is generated from a seed: documents of
10-30 words drawn from a Zipf vocabulary of 50,000 words. Common-word queries take three
words among the 50 most frequent; rare-word queries three among ranks 10,000-50,000.
Printed: median query time for a top-10 (and recuris's first, which computes the
weights of the terms it reads), index memory (tracemalloc, after building), and
whether each library's top 10 equals recuris's (the naive BM25 must match it exactly).
"""

import argparse
import math
import random
import statistics
import sys
import time
import tracemalloc
from collections import Counter

import bm25s
import numpy
import rank_bm25

from recuris.retrieval.bm25 import BM25Index, BM25Settings

VOCABULARY, K1, B, TOP = 50_000, 1.2, 0.75, 10


def corpus(size: int, seed: int) -> tuple[list[str], list[list[str]]]:
    """Return the vocabulary, most frequent first, and `size` documents drawn from it (Zipf s=1)."""
    rng = random.Random(seed)
    letters = "bcdfghjklmnpqrstvwz"
    words = list(
        dict.fromkeys(
            "".join(rng.choice(letters) + rng.choice("aeiou") for _ in range(4))
            for _ in range(VOCABULARY * 2)
        )
    )[:VOCABULARY]
    weights = [1 / rank for rank in range(1, VOCABULARY + 1)]
    cumulative = [0.0]
    for weight in weights:
        cumulative.append(cumulative[-1] + weight)
    draws = rng.choices(words, cum_weights=cumulative[1:], k=size * 20)
    lengths = [rng.randint(10, 30) for _ in range(size)]
    documents, offset = [], 0
    for length in lengths:
        if offset + length > len(draws):
            draws += rng.choices(words, cum_weights=cumulative[1:], k=size * 20)
        documents.append(draws[offset : offset + length])
        offset += length
    return words, documents


class NaiveBM25:
    """BM25 by the book: a Counter per document, every document scored for every query."""

    def __init__(self, documents: list[list[str]]) -> None:
        self.counts = [Counter(document) for document in documents]
        self.lengths = [len(document) for document in documents]
        self.df = Counter(term for counts in self.counts for term in counts)
        self.average = max(sum(self.lengths) / max(1, len(documents)), 1e-9)

    def top(self, query: list[str], k: int) -> list[tuple[int, float]]:
        n, scored = len(self.counts), []
        idf = {t: math.log(1 + (n - self.df[t] + 0.5) / (self.df[t] + 0.5)) for t in set(query)}
        for number, counts in enumerate(self.counts):
            norm = K1 * (1 - B + B * self.lengths[number] / self.average)
            parts = [idf[t] * counts[t] * (K1 + 1) / (counts[t] + norm) for t in idf if counts[t]]
            if parts:
                scored.append((math.fsum(parts), number))
        return [(number, score) for score, number in sorted(scored, reverse=True)[:k]]


def measured(build):
    """Build an index under tracemalloc; return it and the bytes it holds."""
    tracemalloc.start()
    index = build()
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return index, held


def _positive(scores) -> list[int]:
    """rank_bm25's top 10 document numbers with a positive score (it ranks every document)."""
    return [int(n) for n in numpy.argsort(scores)[::-1][:TOP] if scores[n] > 0]


def _found(results) -> list[int]:
    """bm25s's top 10 document numbers with a positive score (it pads with zeros)."""
    documents, scores = results[0][0], results[1][0]
    return [int(n) for n, score in zip(documents, scores) if score > 0]


def timed(search, queries) -> tuple[float, list, float]:
    """Return the median milliseconds per query, the answers, and the first query's milliseconds."""
    seconds, answers = [], []
    for query in queries:
        started = time.perf_counter()
        answers.append(search(query))
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds) * 1000, answers, seconds[0] * 1000


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument(
        "--naive-queries", type=int, default=5, help="the naive BM25 scans everything"
    )
    arguments = parser.parse_args(argv)
    words, documents = corpus(arguments.size, arguments.seed)
    rng = random.Random(arguments.seed + 1)
    kinds = {
        "common": [rng.sample(words[:50], 3) for _ in range(arguments.queries)],
        "rare": [rng.sample(words[10_000:], 3) for _ in range(arguments.queries)],
    }

    keys = [str(number) for number in range(len(documents))]  # rank_bm25 and bm25s number documents

    def build_recuris():
        index = BM25Index(BM25Settings(k1=K1, b=B))
        for key, document in zip(keys, documents):
            index.add(key, document)
        return index

    def build_bm25s():
        # Lucene's idf is recuris's: log(1 + (N - df + 0.5) / (df + 0.5)).
        index = bm25s.BM25(k1=K1, b=B, method="lucene")
        index.index(documents, show_progress=False)
        return index

    ours, ours_bytes = measured(build_recuris)
    okapi, okapi_bytes = measured(lambda: rank_bm25.BM25Okapi(documents, k1=K1, b=B))
    fast, fast_bytes = measured(build_bm25s)
    naive = NaiveBM25(documents)

    print(
        f"BM25 side by side: {arguments.size:,} documents, seed {arguments.seed}, top {TOP}; "
        f"Python {sys.version.split()[0]}, rank_bm25 0.2.2, bm25s {bm25s.__version__}, "
        f"numpy {numpy.__version__}\n"
    )
    print(
        "| queries | recuris (ms; first query) | rank_bm25 (ms) | bm25s (ms) | naive (ms) "
        "| recuris / rank_bm25 time | same top 10: naive, bm25s, rank_bm25 |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for kind, queries in kinds.items():
        mine_ms, mine, first_ms = timed(
            lambda q: [int(key) for key, _ in ours.top(q, TOP)], queries
        )
        okapi_ms, theirs, _ = timed(lambda q: _positive(okapi.get_scores(q)), queries)
        fast_ms, fastest, _ = timed(
            lambda q: _found(fast.retrieve([q], k=TOP, show_progress=False)), queries
        )
        few = queries[: arguments.naive_queries]
        naive_ms, naive_top, _ = timed(lambda q: [number for number, _ in naive.top(q, TOP)], few)
        same_naive = sum(a == b for a, b in zip(mine, naive_top))
        same_fast = sum(set(a) == set(b) for a, b in zip(mine, fastest))
        same_okapi = sum(set(a) == set(b) for a, b in zip(mine, theirs))
        print(
            f"| {kind} words | {mine_ms:.1f}; {first_ms:.1f} | {okapi_ms:.1f} | {fast_ms:.1f} "
            f"| {naive_ms:.0f} | "
            f"{mine_ms / okapi_ms:.2f} | {same_naive}/{len(few)}, {same_fast}/{len(queries)}, "
            f"{same_okapi}/{len(queries)} |"
        )
    kept = sum(len(weights) * 8 for _, weights, _ in ours.cache.values())
    print(
        f"\nIndex memory (MB, tracemalloc after building): recuris {ours_bytes / 1e6:.1f}, "
        f"rank_bm25 {okapi_bytes / 1e6:.1f}, bm25s {fast_bytes / 1e6:.1f}; recuris / rank_bm25 "
        f"{ours_bytes / okapi_bytes:.2f}. Weights recuris kept for the common terms after the "
        f"queries: {kept / 1e6:.1f} MB."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
