"""Example tests for recuris.retrieval.chunks: a sequence the garbage collector stops walking."""

import gc

import pytest

from recuris.retrieval.chunks import CHUNK, Chunks


def test_CH1_every_value_is_read_back_by_the_index_it_was_appended_at():
    """CH1: chunks[i] is the i-th value appended, across the tuples and the last list."""
    values = [f"v{number}" for number in range(CHUNK + 3)]
    chunks = Chunks(values)
    assert len(chunks) == len(values)
    assert [chunks[index] for index in range(len(values))] == values == list(chunks)


def test_CH1_an_index_outside_the_values_is_refused():
    """CH1: an index below 0 or past the last value raises IndexError, never wraps around."""
    chunks = Chunks(["a", "b", "c", "d", "e"], size=3)
    for index in (-1, 5, 6, 7, 3 * 4096):
        with pytest.raises(IndexError):
            chunks[index]
        with pytest.raises(IndexError):
            chunks.picked([0, index])


def test_CH1_picked_reads_many_values_in_the_order_asked():
    """CH1: `picked` returns the values at the indexes given, in their order, repeats kept."""
    chunks = Chunks([f"v{number}" for number in range(10)], size=4)
    assert chunks.picked([9, 0, 4, 4, 3]) == ["v9", "v0", "v4", "v4", "v3"]
    assert chunks.picked([]) == []


def test_CH2_full_chunks_are_tuples_the_collector_stops_tracking():
    """CH2: a full chunk is a tuple of strings, which one collection leaves untracked."""
    chunks = Chunks(str(number) for number in range(2 * CHUNK + 1))
    gc.collect()
    assert [len(chunk) for chunk in chunks._full] == [CHUNK, CHUNK]
    assert not any(gc.is_tracked(chunk) for chunk in chunks._full)
    assert chunks._tail == [str(2 * CHUNK)]


def test_CH2_a_chunk_size_that_is_not_a_count_of_at_least_one_is_refused():
    """CH2: a size that is not an int >= 1 (a float, a bool, 0) raises a ValueError naming CH2."""
    for size in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="CH2"):
            Chunks(size=size)
