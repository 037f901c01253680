"""Side by side: the same measures of recuris at two checkouts, interleaved (A, B, A, B, ...).

Standard library only. A change that claims to cost no speed is measured here against the
code before it, on the same machine in the same hour, so that the machine's mood cancels:

    git worktree add /tmp/before <commit>
    python benchmarks/two_checkouts.py /tmp/before . --runs 3

Each measure runs in a fresh process with the checkout first on the path, and prints, per
checkout, the median of the runs with the lowest and highest.
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

# What the terms of one class of query (recall_scale.class_queries) cost `held_terms` among
# the windows of their 20 best hits, in a chat of 20,000 items in sessions of 20: the median
# of 100 reads of each of five queries.
HELD_IN_WINDOWS = (
    "import statistics, tempfile, time\n"
    "from pathlib import Path\n"
    "from recuris.retrieval.scoring import analyze\n"
    "from recuris.storage.sqlite_store import SQLiteStore\n"
    "texts = recall_scale.corpus(20_000, SEED)\n"
    "asked = recall_scale.class_queries(texts, 5, SEED)['%s']\n"
    "with tempfile.TemporaryDirectory() as place:\n"
    "    store = SQLiteStore(Path(place) / 'chat.db')\n"
    "    recall_scale.fill(store, texts, session=20)\n"
    "    cases = []\n"
    "    for query in asked:\n"
    "        terms = analyze(query)\n"
    "        hits = [item.id for item, _ in store.search('u', 'episodic', terms, 50)][:20]\n"
    "        around = store.adjacent('u', hits, 4)\n"
    "        named = [key for line in around.values() for key in line if key]\n"
    "        cases.append(([*hits, *named], terms))\n"
    "    took = []\n"
    "    for _ in range(100):\n"
    "        for named, terms in cases:\n"
    "            started = time.perf_counter()\n"
    "            store.held_terms('u', 'episodic', named, terms)\n"
    "            took.append(time.perf_counter() - started)\n"
    "    store.close()\n"
    "print(json.dumps(statistics.median(took) * 1000))"
)

# Each measure: Python code printing one JSON number, its unit, and how many runs it takes.
MEASURES = {
    "one manager write / one row + FTS5 (ratio, 500 writes)": (
        # The write measure moved to write_speed, with a plainer baseline: a ratio is only
        # compared between checkouts that take it from the same module.
        "try:\n"
        "    from benchmarks.write_speed import single_writes\n"
        "except ImportError:\n"
        "    try:\n"
        "        from recuris.bench.write_speed import single_writes\n"
        "    except ImportError:\n"
        "        from recuris.bench.recall_scale import single_writes\n"
        "d = single_writes(500, SEED)\n"
        "print(json.dumps(d['write_ms'] / d['raw_ms']))"
    ),
    "rare-word recall above one FTS5 query at 100,000 items, warm (ms)": (
            "rows = recall_scale.query_classes(100_000, 9, SEED)['rows']\n"
        "row = next(r for r in rows if (r['class'], r['state']) == ('rare', 'warm'))\n"
        "print(json.dumps(row['above_ms']['median']))"
    ),
    "rare-word recall over a chat above one FTS5 query at 100,000 items, warm (ms)": (
            "rows = recall_scale.in_sessions(100_000, 9, seed=SEED)['rows']\n"
        "row = next(r for r in rows if r['class'] == 'rare')\n"
        "print(json.dumps(row['above_fts5_ms']['median']))"
    ),
    "a chat's windows: `adjacent` of 20 hits and `held_terms` of their 180 ids (ms)": (
        # What a chat's recall reads for its windows (CX1: twice the width of 2 on each side),
        # among 20,000 items in sessions of 20, for the word the first hit begins with; the
        # median of 200 reads.
        "import statistics, tempfile, time\n"
        "from pathlib import Path\n"
            "from recuris.storage.sqlite_store import SQLiteStore\n"
        "texts = recall_scale.corpus(20_000, SEED)\n"
        "hits = [f'i{n}' for n in range(7, 20_000, 1_000)]\n"
        "terms = texts[7].split()[:1]\n"
        "with tempfile.TemporaryDirectory() as place:\n"
        "    store = SQLiteStore(Path(place) / 'chat.db')\n"
        "    recall_scale.fill(store, texts, session=20)\n"
        "    took = []\n"
        "    for _ in range(200):\n"
        "        started = time.perf_counter()\n"
        "        around = store.adjacent('u', hits, 4)\n"
        "        named = [key for line in around.values() for key in line if key]\n"
        "        store.held_terms('u', 'episodic', [*hits, *named], terms)\n"
        "        took.append(time.perf_counter() - started)\n"
        "    store.close()\n"
        "print(json.dumps(statistics.median(took) * 1000))"
    ),
    "a chat's windows for a rare word: `held_terms` of its 20 hits' windows (ms)": (
        HELD_IN_WINDOWS % "rare"
    ),
    "a chat's windows for a common word: `held_terms` of its 20 hits' windows (ms)": (
        HELD_IN_WINDOWS % "common"
    ),
    "forgetting cycle at 100,000 items (s)": (
        "print(json.dumps(scale.forgetting_cycle(100_000, quiet=True)['cycle_s']))"
    ),
    "forgetting cycle in memory at 100,000 items (s)": (
        "cycle = scale.forgetting_cycle(100_000, quiet=True, store='memory')\n"
        "print(json.dumps(cycle['cycle_s']))"
    ),
    "semantic writes in memory, 100,000 (s)": (
        "print(json.dumps(scale.semantic_writes(100_000, quiet=True)['seconds']))"
    ),
    "semantic writes on SQLite, 2,000 (s)": (
        "print(json.dumps(scale.semantic_writes(2_000, quiet=True, sqlite=True)['seconds']))"
    ),
    "semantic writes on SQLite, 20,000 (s)": (
        "print(json.dumps(scale.semantic_writes(20_000, quiet=True, sqlite=True)['seconds']))"
    ),
}
# With --million: the forgetting cycle and the in-memory semantic writes at a million.
MILLION = {
    "forgetting cycle at 1,000,000 items (s)": (
        "print(json.dumps(scale.forgetting_cycle(1_000_000, quiet=True)['cycle_s']))"
    ),
    "forgetting cycle in memory at 1,000,000 items (s)": (
        "cycle = scale.forgetting_cycle(1_000_000, quiet=True, store='memory')\n"
        "print(json.dumps(cycle['cycle_s']))"
    ),
    "semantic writes in memory, 1,000,000 (s)": (
        "print(json.dumps(scale.semantic_writes(1_000_000, quiet=True)['seconds']))"
    ),
}


# The measures' modules, where the checkout keeps them: benchmarks/ since they left the
# package, recuris/bench/ before; `benchmarks` of an older checkout is a bare folder of scripts.
MEASURING = (
    "try:\n"
    "    from benchmarks import recall_scale, scale\n"
    "except ImportError:\n"
    "    from recuris.bench import recall_scale, scale\n"
)


def measure(root: Path, code: str, seed: int) -> float:
    """Run one measure in a fresh process on the checkout at root; return its number."""
    program = "import json\nSEED = %d\n%s%s" % (seed, MEASURING, code)
    completed = subprocess.run(
        [sys.executable, "-c", program],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="the checkout measured first in each pair")
    parser.add_argument("after", type=Path, help="the checkout measured second")
    parser.add_argument("--runs", type=int, default=3, help="pairs of runs per measure")
    parser.add_argument("--million", action="store_true", help="add the measures at 1,000,000")
    parser.add_argument("--only", default="", help="run only the measures whose name holds this")
    arguments = parser.parse_args()
    roots = {"before": arguments.before.resolve(), "after": arguments.after.resolve()}
    measures = {**MEASURES, **(MILLION if arguments.million else {})}
    chosen = {name: code for name, code in measures.items() if arguments.only in name}
    for name, code in chosen.items():
        figures = {side: [] for side in roots}
        for seed in range(1, arguments.runs + 1):
            # Turns alternate (A, B, then B, A): neither side always meets the machine second.
            pairs = list(roots.items())
            for side, root in pairs if seed % 2 else reversed(pairs):
                figures[side].append(measure(root, code, seed))
        cells = [
            f"{side} {statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"
            for side, values in figures.items()
        ]
        print(f"{name}: " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    main()
