"""Chunks: a long sequence kept where the cyclic garbage collector stops walking it.

Document 004 §2 forgets in cycles over the whole memory, and docs/benchmarks.md asks such a
cycle over a million items in memory to grow no faster than the store (its exponent). The
cyclic collector of CPython walks every element of every list it tracks at each full
collection, and stops tracking a tuple once it sees that it holds no container. A cycle
decodes its items in batches that outlive the young generations, so full collections come
every batch or two: each list as long as the store made each of them longer, and the
collector's share grew faster than the store. `Chunks` keeps the values in tuples of CHUNK,
the newest in a short list, so a full collection walks one pointer per CHUNK values.

Invariants:
    CH1 `chunks[index]` is the value appended `index`-th, counted from 0, for every index in
        range(len(chunks)); iteration yields them in that order, `picked(indexes)` the values
        at those indexes; any other index raises IndexError.
    CH2 every chunk but the last is a tuple of `size` values (CHUNK unless given); the last,
        a list, holds fewer.
"""

from collections.abc import Iterable, Iterator
from itertools import chain

from ..core.validation import require_count

__all__ = ["Chunks", "CHUNK"]

CHUNK = 4096  # values in each tuple


class Chunks:
    """An append-only sequence of values, kept in tuples of `size` and a short list (CH1, CH2).

    Raises ValueError naming CH2 for a size that is not an int >= 1.
    """

    __slots__ = ("_full", "_tail", "_size")

    def __init__(self, values: Iterable = (), size: int = CHUNK) -> None:
        require_count("CH2: size", size, 1)
        self._full: list[tuple] = []
        self._tail: list = []
        self._size = size
        for value in values:
            self.append(value)

    def append(self, value: object) -> None:
        """Add the value at the end."""
        tail = self._tail
        tail.append(value)
        if len(tail) == self._size:
            self._full.append(tuple(tail))
            tail.clear()

    def __getitem__(self, index: int):
        """Return the value appended `index`-th. Raises IndexError outside range(len(self))."""
        return self.picked((index,))[0]

    def picked(self, indexes: Iterable[int]) -> list:
        """Return the values at `indexes`, in their order: many reads in one call (CH1).

        Raises IndexError for an index outside range(len(self)).
        """
        full = self._full
        size = self._size
        tail = self._tail
        bound = len(full) * size
        end = bound + len(tail)
        values = []
        # One call and local names for many reads: a read through `chunks[index]` costs a
        # Python call each, several times a list's.
        for index in indexes:
            if not 0 <= index < end:
                raise IndexError(f"CH1: index {index} is outside the {end} values")
            if index < bound:
                values.append(full[index // size][index % size])
            else:
                values.append(tail[index - bound])
        return values

    def __iter__(self) -> Iterator:
        return chain(*self._full, self._tail)

    def __len__(self) -> int:
        return len(self._full) * self._size + len(self._tail)

    def __repr__(self) -> str:
        return f"Chunks({len(self)} values)"
