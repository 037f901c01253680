"""Example tests for recuris.storage.memory_store: write order, copies, work (MS1, S4, S7, S8)."""

import os
import random
import sys
from functools import partial

from recuris import InMemoryStore, MemoryItem


def item(id, content="x", task_id=None):
    return MemoryItem(id=id, user_id="ana", level="episodic", content=content, task_id=task_id)


def test_what_is_read_is_a_copy():
    """S4: changing a read item's metadata changes nothing stored."""
    store = InMemoryStore()
    store.put(
        [MemoryItem(id="a", user_id="ana", level="episodic", content="x", metadata={"k": [1]})]
    )
    store.get("ana", "a").metadata["k"].append(2)
    assert store.get("ana", "a").metadata == {"k": [1]}


def operations(call) -> int:
    """Count the lines of recuris code that a call runs: its work, whatever the machine's speed."""
    count = 0
    package = f"{os.sep}recuris{os.sep}"

    def line(frame, event, argument):
        nonlocal count
        count += event == "line"
        return line

    def enter(frame, event, argument):
        return line if package in frame.f_code.co_filename else None

    sys.settrace(enter)
    try:
        call()
    finally:
        sys.settrace(None)
    return count


def filled(unrelated: int, rare: int = 20, seed: int = 5) -> InMemoryStore:
    """Return a store of `unrelated` items (half hold "deploy") and `rare` ones (zebra, yak)."""
    rng = random.Random(seed)
    words = [f"w{n}" for n in range(500)]
    store = InMemoryStore()
    batch = []
    for n in range(unrelated + rare):
        filler = rng.choices(words, k=rng.randint(4, 12))
        if n % 2:
            filler.append("deploy")
        if n >= unrelated:
            filler.append("zebra" if n % 3 else "yak")
        batch.append(item(f"m{n}", " ".join(filler)))
    store.put(batch)
    return store


def test_a_rare_word_costs_the_same_among_ten_times_the_items():
    """S7, S8: a rare word's search and matching do no more work among tenfold unrelated items."""
    small = filled(2_000)
    large = filled(20_000)
    for read in (
        lambda store: store.search("ana", "episodic", ["zebra"], 10),
        lambda store: store.matching("ana", "episodic", ["zebra"]),
        lambda store: store.search("ana", "episodic", ["zebra", "yak"], 10),
    ):
        assert operations(partial(read, large)) <= 1.5 * operations(partial(read, small))


def test_a_common_word_top_10_costs_the_same_in_ten_times_the_items_holding_it():
    """S8, B2: a one-word top 10 reads a few impact groups, however many items hold the word."""
    small = filled(2_000)
    large = filled(20_000)
    for store in (small, large):
        store.search("ana", "episodic", ["deploy"], 10)  # the first search orders the word
    work = [
        operations(partial(store.search, "ana", "episodic", ["deploy"], 10))
        for store in (small, large)
    ]
    assert work[1] <= 1.5 * work[0]
