"""Example tests for recuris.storage.term_index: terms per scope, order per task (TI1)."""

import pytest

from recuris import MemoryItem
from recuris.retrieval.bm25 import BM25Settings
from recuris.storage.term_index import BLOCK, TermIndex, Thread


def thread_of(item):
    """Return what files the item in its thread: its user, level and task."""
    return (item.user_id, item.level, item.task_id)


def item(id, content, level="episodic", task_id="t", user_id="ana"):
    return MemoryItem(id=id, user_id=user_id, level=level, content=content, task_id=task_id)


def test_a_rewrite_keeps_its_place_and_moves_between_threads():
    """TI1: a moved item keeps the position `remove` returns; its old thread forgets it."""
    index = TermIndex(BM25Settings())
    first = item("a", "one")
    second = item("b", "two")
    third = item("c", "three")
    for each in (first, second, third):
        index.add(each)
    index.add(item("b", "two", task_id="u"), index.remove(second.id, thread_of(second)))
    assert index.listed("ana", "episodic", "t") == ["a", "c"] and index.listed("ana") == [
        "a",
        "b",
        "c",
    ]
    assert index.adjacent(first.id, thread_of(first)) == (None, "c")


def test_a_deleted_item_leaves_no_term_and_no_user_behind():
    """TI1: after the last item of a user goes, the user, their terms and their threads are gone."""
    index = TermIndex(BM25Settings())
    only = item("a", "deploy keys", user_id="bob")
    index.add(only)
    index.remove(only.id, thread_of(only), forget_position=True)
    assert index.users() == [] and index.matching("bob", "episodic", ["deploy"]) == []
    assert index.search("bob", "episodic", ["deploy"], 5) == []


def test_TI1_a_position_held_by_another_item_is_refused():
    """TI1: `add` refuses a position that is another item's, before anything is indexed."""
    index = TermIndex(BM25Settings())
    index.add(item("a", "one"))
    taken = index.remove("a", ("ana", "episodic", "t"))
    index.add(item("a", "one"), taken)
    with pytest.raises(ValueError, match="TI1"):
        index.add(item("b", "two"), taken)
    assert index.listed("ana") == ["a"] and index.matching("ana", "episodic", ["two"]) == []


def test_TI2_among_equal_scores_a_rewritten_item_keeps_its_early_place():
    """TI2: a rewrite gives the item's terms a new BM25 document, but ties still go by position."""
    index = TermIndex(BM25Settings())
    first = item("a", "deploy keys")
    index.add(first)
    index.add(item("b", "deploy keys"))
    # Rewritten: the same text, another task.
    index.add(item("a", "deploy keys", task_id="u"), index.remove(first.id, thread_of(first)))
    assert [key for key, _ in index.search("ana", "episodic", ["deploy"], 2)] == ["b", "a"]


def test_TI3_a_thread_moves_one_block_per_change_and_keeps_few_blocks():
    """TI3: a thread's blocks stay between BLOCK / 4 and 2 · BLOCK as positions come and go."""
    thread = Thread()
    for position in range(5000):
        thread.add(position)
    for position in range(0, 5000, 3):
        thread.remove(position)
    for position in range(0, 5000, 3):
        thread.add(position)
    for position in range(4000):
        thread.remove(position)
    assert list(thread) == list(range(4000, 5000))
    assert all(BLOCK // 4 <= len(block) <= 2 * BLOCK for block in thread.blocks)
    assert thread.around(4000) == (None, 4001) and thread.around(4999) == (4998, None)
