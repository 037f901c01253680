"""Run recuris's BM25 beside rank_bm25, bm25s and a naive pure-Python BM25, in one process.

Not part of recuris: rank_bm25 and bm25s (and numpy) live in a separate virtual environment;
docs/retrieval/bm25.md gives the command. The corpus is generated from a seed: documents of
10-30 words drawn from a Zipf vocabulary of 50,000 words. Four classes of queries, each
reported alone: one common word (one of the 3 most frequent, each in more than 40 % of the
documents), three common words (three of the 50 most frequent), mixed (one of ranks 1-10,
one of 100-1,000, one of 10,000-50,000) and rare (three of ranks 10,000-50,000).

Each library is called as its documentation shows: `BM25Index.top(query, 10)`,
`BM25Okapi.get_scores(query)` then the 10 best, `bm25s.BM25.retrieve([query], k=10)` (numpy
backend, one thread). For each query the libraries run in turn (A, B, C, A, B, C...), after
one untimed pass of recuris over the class (its "first" queries, which order the terms they
read); printed are the median and range of each, the median and range of the per-query
ratios recuris / bm25s, index memory (tracemalloc after building, and recuris's after the
queries), whether each top 10 equals recuris's (the naive BM25 must match it exactly), and
the load average before and after.
"""

import argparse
import math
import os
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

VOCABULARY = 50_000
K1 = 1.2
B = 0.75
TOP = 10


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
    documents = []
    offset = 0
    for length in lengths:
        if offset + length > len(draws):
            draws += rng.choices(words, cum_weights=cumulative[1:], k=size * 20)
        documents.append(draws[offset : offset + length])
        offset += length
    return words, documents


def query_classes(words: list[str], count: int, seed: int) -> dict[str, list[list[str]]]:
    """Return `count` queries of each class, drawn from the vocabulary's frequency ranks."""
    rng = random.Random(seed)
    return {
        "one common word": [[rng.choice(words[:3])] for _ in range(count)],
        "three common words": [rng.sample(words[:50], 3) for _ in range(count)],
        "mixed": [
            [rng.choice(words[:10]), rng.choice(words[100:1000]), rng.choice(words[10_000:])]
            for _ in range(count)
        ],
        "rare words": [rng.sample(words[10_000:], 3) for _ in range(count)],
    }


class NaiveBM25:
    """BM25 by the book: a Counter per document, every document scored for every query."""

    def __init__(self, documents: list[list[str]]) -> None:
        self.counts = [Counter(document) for document in documents]
        self.lengths = [len(document) for document in documents]
        self.df = Counter(term for counts in self.counts for term in counts)
        self.average = max(sum(self.lengths) / max(1, len(documents)), 1e-9)

    def top(self, query: list[str], k: int) -> list[tuple[int, float]]:
        n = len(self.counts)
        scored = []
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
    return [int(n) for n, score in zip(documents, scores, strict=True) if score > 0]


def clocked(search, query) -> tuple[float, list]:
    """Return the milliseconds one search took, and its answer."""
    started = time.perf_counter()
    answer = search(query)
    return (time.perf_counter() - started) * 1000, answer


def spread(values: list[float], digits: int = 1) -> str:
    """Format a median and a range: `median (lowest-highest)`."""
    return (
        f"{statistics.median(values):.{digits}f} "
        f"({min(values):.{digits}f}-{max(values):.{digits}f})"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", type=int, default=20, help="per class")
    parser.add_argument(
        "--slow-queries",
        type=int,
        default=5,
        help="per class, for rank_bm25 and the naive BM25, which score every document",
    )
    arguments = parser.parse_args(argv)
    load_before = os.getloadavg()
    words, documents = corpus(arguments.size, arguments.seed)
    classes = query_classes(words, arguments.queries, arguments.seed + 1)
    keys = [str(number) for number in range(len(documents))]  # the others number documents

    def build_recuris():
        index = BM25Index(BM25Settings(k1=K1, b=B))
        for key, document in zip(keys, documents, strict=True):
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
    searches = {
        "recuris": lambda q: [int(key) for key, _ in ours.top(q, TOP)],
        "bm25s": lambda q: _found(fast.retrieve([q], k=TOP, show_progress=False)),
        "bm25s scoring": fast.get_scores,
        "rank_bm25": lambda q: _positive(okapi.get_scores(q)),
        "naive": lambda q: [number for number, _ in naive.top(q, TOP)],
    }

    print(
        f"BM25 side by side: {arguments.size:,} documents, seed {arguments.seed}, top {TOP}; "
        f"Python {sys.version.split()[0]}, rank_bm25 0.2.2, bm25s {bm25s.__version__}, "
        f"numpy {numpy.__version__}; {arguments.queries} queries per class "
        f"({arguments.slow_queries} for rank_bm25 and naive); load average before "
        f"{load_before[0]:.2f}\n"
    )
    print(
        "| queries | recuris first (ms) | recuris (ms) | bm25s retrieve (ms) "
        "| bm25s get_scores only (ms) | rank_bm25 (ms) | naive (ms) | recuris / bm25s "
        "| same top 10: naive, bm25s, rank_bm25 |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    first = {kind: [clocked(searches["recuris"], q)[0] for q in qs] for kind, qs in classes.items()}
    for kind, queries in classes.items():
        times = {name: [] for name in searches}
        answers = {name: [] for name in searches}
        for number, query in enumerate(queries):
            for name, search in searches.items():
                if name in ("rank_bm25", "naive") and number >= arguments.slow_queries:
                    continue
                milliseconds, answer = clocked(search, query)
                times[name].append(milliseconds)
                answers[name].append(answer)
        ratios = [a / b for a, b in zip(times["recuris"], times["bm25s"], strict=True)]
        mine = answers["recuris"]
        same_naive = sum(a == b for a, b in zip(mine, answers["naive"], strict=False))
        same_fast = sum(set(a) == set(b) for a, b in zip(mine, answers["bm25s"], strict=True))
        same_okapi = sum(set(a) == set(b) for a, b in zip(mine, answers["rank_bm25"], strict=False))
        slow = len(answers["naive"])
        print(
            f"| {kind} | {spread(first[kind], 2)} | {spread(times['recuris'], 2)} "
            f"| {spread(times['bm25s'])} | {spread(times['bm25s scoring'])} "
            f"| {spread(times['rank_bm25'], 0)} | {spread(times['naive'], 0)} "
            f"| {spread(ratios, 3)} | {same_naive}/{slow}, {same_fast}/{len(queries)}, "
            f"{same_okapi}/{slow} |"
        )
    # What the first queries added (the impact orders of the terms they read), measured by
    # building it again under tracemalloc, untimed.
    ours._impact.clear()
    tracemalloc.start()
    for queries in classes.values():
        for query in queries:
            ours.top(query, TOP)
    grown = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    print(
        f"\nIndex memory (MB, tracemalloc after building): recuris {ours_bytes / 1e6:.1f}, "
        f"rank_bm25 {okapi_bytes / 1e6:.1f}, bm25s {fast_bytes / 1e6:.1f}; recuris / rank_bm25 "
        f"{ours_bytes / okapi_bytes:.2f}. recuris after its first queries (the impact orders "
        f"of the terms they read): +{grown / 1e6:.1f} MB, "
        f"{(ours_bytes + grown) / okapi_bytes:.2f} of rank_bm25. Load average after: "
        f"{os.getloadavg()[0]:.2f}."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
