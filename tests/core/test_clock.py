"""Example tests for recuris.core.clock.ManualClock (K1)."""

import pytest

from recuris import ManualClock


def test_clock_reads_the_time_it_was_set_to():
    """A ManualClock is a callable returning its current time as a float."""
    assert ManualClock(5)() == 5.0


def test_advance_moves_the_clock_and_returns_the_new_time():
    """advance adds seconds and returns the new time."""
    clock = ManualClock(0)
    assert clock.advance(1.5) == 1.5 and clock() == 1.5


def test_clock_never_goes_backwards():
    """K1: a negative advance is refused, naming the rule, and the time is unchanged."""
    clock = ManualClock(10)
    with pytest.raises(ValueError, match="K1"):
        clock.advance(-1)
    assert clock() == 10.0
