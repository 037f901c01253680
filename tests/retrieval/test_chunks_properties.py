"""Chunks checked against a naive model: a plain list of every value appended (CH1, CH2)."""

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from recuris.retrieval.chunks import Chunks

SMALL = 3  # chunks of three values, so that a few appends cross several chunks


class ChunksMachine(RuleBasedStateMachine):
    """A Chunks beside the list of what was appended to it."""

    def __init__(self):
        super().__init__()
        self.chunks = Chunks(size=SMALL)
        self.model: list = []

    @rule(value=st.integers() | st.text(max_size=3) | st.none())
    def append(self, value):
        self.chunks.append(value)
        self.model.append(value)

    @rule(count=st.integers(0, 8))
    def append_several(self, count):
        for number in range(count):
            self.append(number)

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def read_one(self, data):
        index = data.draw(st.integers(0, len(self.model) - 1))
        assert self.chunks[index] == self.model[index]

    @rule(data=st.data())
    def read_past_either_end(self, data):
        index = data.draw(st.integers(-5, -1) | st.integers(len(self.model), len(self.model) + 9))
        with pytest.raises(IndexError):
            self.chunks[index]

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def read_several(self, data):
        indexes = data.draw(st.lists(st.integers(0, len(self.model) - 1), max_size=8))
        assert self.chunks.picked(indexes) == [self.model[index] for index in indexes]

    @invariant()
    def CH1_every_value_reads_back_in_order(self):
        assert len(self.chunks) == len(self.model)
        assert list(self.chunks) == self.model

    @invariant()
    def CH2_full_chunks_are_tuples_and_the_last_is_shorter(self):
        assert all(type(chunk) is tuple and len(chunk) == SMALL for chunk in self.chunks._full)
        assert len(self.chunks._tail) < SMALL


TestChunks = ChunksMachine.TestCase
