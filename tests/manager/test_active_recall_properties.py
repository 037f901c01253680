"""Property tests for recuris.manager.active_recall (Z1-Z3)."""

import json

from hypothesis import given
from hypothesis import strategies as st

from recuris import ManualClock, MemoryManager
from recuris.manager.active_recall import ActiveRecall
from recuris.core.text import estimate_tokens

memories = st.lists(st.text(min_size=3, max_size=120).filter(str.strip), max_size=10)
queries = st.text(max_size=60)


def manager_with(texts):
    manager = MemoryManager(clock=ManualClock(0))
    for text in texts:
        manager.write(text, "u", level="episodic")
    return manager


@given(memories, queries, st.integers(0, 80))
def test_Z1_retrieved_context_fits_the_budget(texts, query, budget):
    """Z1: for any store and text, the context's estimated tokens stay within max_tokens."""
    context = ActiveRecall(manager_with(texts), "u", threshold=0.0).retrieve_context(
        query, max_tokens=budget
    )
    assert sum(estimate_tokens(line) for line in context) <= budget


@given(memories, queries, st.floats(0, 1), st.floats(0, 1))
def test_Z2_the_gate_is_monotone_in_the_threshold(texts, query, low, high):
    """Z2: if the higher threshold retrieves, the lower one does too."""
    low, high = sorted((low, high))
    manager = manager_with(texts)
    if ActiveRecall(manager, "u", high).should_retrieve(query):
        assert ActiveRecall(manager, "u", low).should_retrieve(query)


@given(st.text() | st.binary().map(repr) | st.none() | st.integers())
def test_Z3_any_arguments_get_a_json_answer(arguments):
    """Z3: whatever the model sends, the answer is JSON, never an exception."""
    assert isinstance(
        json.loads(ActiveRecall(manager_with(["a note"]), "u").handle_search_memory(arguments)),
        dict,
    )
