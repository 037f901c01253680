"""Clock: the injected source of time that makes every memory repeatable.

Every component that reads time takes `clock=`, a callable returning epoch seconds
(`time.time` by default). Tests and the demo pass a `ManualClock` instead, so that
"a week later" is one method call and every run prints the same figures.

Invariants:
    K1  a `ManualClock` never goes backwards.
"""

from .validation import require_number

__all__ = ["ManualClock", "DAY"]

DAY = 86_400.0


class ManualClock:
    """A clock that moves only when told to (K1)."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = float(start)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        """Move the clock forward and return the new time.

        Raises ValueError unless seconds is a finite number >= 0 (K1).
        """
        self.now += require_number("K1: a ManualClock never goes backwards: seconds", seconds, 0.0)
        return self.now

    def __repr__(self) -> str:
        return f"ManualClock(now={self.now})"
