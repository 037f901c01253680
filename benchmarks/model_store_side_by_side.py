"""Run the model store beside InMemoryStore on the reads of a recall, interleaved, in one process.

Standard library only; run from a clone (docs/benchmarks.md gives the command). Why
InMemoryStore, and not the plain scan every store is tested against (ModelStore), is the
default of `MemoryManager()` and the retry queue's replica: this measures both on the same
items. The items are generated from a seed: one user's episodes of 6-12 words drawn from a
Zipf vocabulary of 20,000 words, in tasks of 20 (a chat's sessions).

Measured, per store, at each size: the fill (one `put` of every item), and for each query the
reads of one recall (chapter manager/recall): `search` for the 10 best, `adjacent` of width 2
around them, `statistics` and `held_terms` over that window, and `get_many` of the hits. Two
classes of query, each reported alone: three common words (of the 50 most frequent) and
mixed (ranks 1-10, 100-1,000 and 10,000-20,000). The stores take turns on each query, the
first store alternating between rounds; each query's time is processor time (the machine
may be shared), and the median and range are over every query of every round. Both stores'
answers are compared, and the run stops if they differ (S8's tie order included).
"""

import random
import time

from benchmarks.side_by_side import by_size, shown, spread
from recuris import InMemoryStore, MemoryItem
from recuris.retrieval.scoring import analyze
from recuris.storage.model_store import ModelStore

VOCABULARY = 20_000
SESSION = 20  # items per task: a recall's window stays inside one
TOP = 10
WIDTH = 2


def corpus(size: int, seed: int) -> tuple[list[str], list[MemoryItem]]:
    """Return the vocabulary, most frequent first, and `size` episodes of one user drawn from it."""
    rng = random.Random(seed)
    letters = "bcdfghjklmnpqrstvwz"
    words = list(
        dict.fromkeys(
            "".join(rng.choice(letters) + rng.choice("aeiou") for _ in range(4))
            for _ in range(VOCABULARY * 2)
        )
    )[:VOCABULARY]
    weights = [1 / rank for rank in range(1, VOCABULARY + 1)]
    items = [
        MemoryItem(
            id=f"episode-{number}",
            user_id="ana",
            level="episodic",
            content=" ".join(rng.choices(words, weights=weights, k=rng.randint(6, 12))),
            task_id=f"session-{number // SESSION}",
            created_at=float(number),
        )
        for number in range(size)
    ]
    return words, items


def query_classes(words: list[str], count: int, seed: int) -> dict[str, list[list[str]]]:
    """Return `count` queries of each class, as analysed terms, from the frequency ranks."""
    rng = random.Random(seed)
    drawn = {
        "three common words": [rng.sample(words[:50], 3) for _ in range(count)],
        "mixed": [
            [rng.choice(words[:10]), rng.choice(words[100:1000]), rng.choice(words[10_000:])]
            for _ in range(count)
        ],
    }
    return {
        name: [analyze(" ".join(query)) for query in queries] for name, queries in drawn.items()
    }


def recall_reads(store, terms: list[str]) -> tuple:
    """Make the reads of one recall for `terms`; return what they answered, to compare."""
    found = store.search("ana", "episodic", terms, TOP)
    hits = [item.id for item, _ in found]
    around = store.adjacent("ana", hits, WIDTH)
    window = list(dict.fromkeys([*hits, *(key for keys in around.values() for key in keys if key)]))
    held = store.held_terms("ana", "episodic", window, terms)
    counted = store.statistics("ana", "episodic", terms)
    kept = store.get_many("ana", hits)
    return [(item.id, score) for item, score in found], around, held, counted, list(kept)


def processor_milliseconds(call) -> tuple[float, object]:
    """Return the processor milliseconds one call took, and its answer."""
    started = time.process_time()
    answer = call()
    return (time.process_time() - started) * 1000, answer


def measure(size: int, rounds: int, queries: int, seed: int) -> None:
    """Print one size's rows: the fill and each class of query, per store, with the ratio."""
    words, items = corpus(size, seed)
    classes = query_classes(words, queries, seed + 1)
    makers = {"ModelStore": ModelStore, "InMemoryStore": InMemoryStore}
    stores = {}
    fills: dict[str, list[float]] = {name: [] for name in makers}
    times = {(name, kind): [] for name in makers for kind in classes}
    ratios: dict[str, list[float]] = {kind: [] for kind in classes}
    for round_number in range(rounds):
        order = list(makers) if round_number % 2 == 0 else list(reversed(makers))
        for name in order:
            store = makers[name]()
            fills[name].append(processor_milliseconds(lambda: store.put(items))[0] / 1000)
            stores[name] = store
        for kind, asked in classes.items():
            for terms in asked:
                answers = {}
                taken = {}
                for name in order:
                    milliseconds, answer = processor_milliseconds(
                        lambda: recall_reads(stores[name], terms)
                    )
                    taken[name] = milliseconds
                    answers[name] = answer
                    times[(name, kind)].append(taken[name])
                if answers["ModelStore"] != answers["InMemoryStore"]:
                    raise SystemExit(f"the stores answer {terms} differently: {answers}")
                ratios[kind].append(taken["ModelStore"] / max(taken["InMemoryStore"], 1e-3))
    fill = " | ".join(shown(spread(fills[name])) for name in ("ModelStore", "InMemoryStore"))
    print(f"| fill, s | {size:,} | {fill} | |", flush=True)
    for kind in classes:
        print(
            f"| a recall's reads, {kind}, ms | {size:,} | "
            f"{shown(spread(times[('ModelStore', kind)]), 1)} | "
            f"{shown(spread(times[('InMemoryStore', kind)]), 1)} | "
            f"{shown(spread(ratios[kind]), 0)} |",
            flush=True,
        )


def main(argv=None) -> int:
    header = "| measure | items | ModelStore | InMemoryStore | ModelStore / InMemoryStore |"
    return by_size(argv, __doc__.splitlines()[0], header, measure, [10_000, 100_000])


if __name__ == "__main__":
    raise SystemExit(main())
