"""Clock: the injected source of time that makes every memory repeatable.

Every component that reads time takes `clock=`, a callable returning epoch seconds
(`time.time` by default). Tests and the demo pass a `ManualClock` instead, so that
"a week later" is one method call and every run prints the same figures.

Invariants:
    K1  a `ManualClock` never goes backwards.
    K2  a `CheckedClock` returns only finite numbers of seconds within ±MAX_TIME; any other
        reading (NaN, a string, 10**20) raises ValueError naming this rule.
"""

from collections.abc import Callable

__all__ = ["ManualClock", "CheckedClock", "DAY", "MAX_TIME"]

DAY = 86_400.0
# About the year 33,658. Today in milliseconds (1.7e12) is beyond it, so a clock read in the
# wrong unit, or an overflow, is caught; an int this large still fits SQLite's INTEGER.
MAX_TIME = 1e12


class CheckedClock:
    """Read a clock, refusing a reading that is not a time (K2); other attributes pass through."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock

    def __call__(self) -> float:
        now = self.clock()
        number = isinstance(now, (int, float)) and not isinstance(now, bool)
        # A range test, not math.isfinite: that raises OverflowError on a huge int; NaN fails it too.
        if not (number and -MAX_TIME <= now <= MAX_TIME):
            raise ValueError(f"K2: a clock must return a finite time within ±{MAX_TIME:.0f} s, got {now!r}")
        return float(now)

    def __getattr__(self, name: str):
        return getattr(self.clock, name)


class ManualClock:
    """A clock that moves only when told to (K1)."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = float(start)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        """Move the clock forward and return the new time.

        Raises ValueError if seconds is negative (K1).
        """
        if seconds < 0:
            raise ValueError(f"K1: a ManualClock never goes backwards, got advance({seconds})")
        self.now += seconds
        return self.now

    def __repr__(self) -> str:
        return f"ManualClock(now={self.now})"
