"""Decay: forget what has not been used, on a forgetting curve (by default, a half-life).

Document 004 §2 (after Ebbinghaus): a memory's weight is

    importance · curve(elapsed, half_life) + min(cap, per_access · access_count)

where `elapsed` runs from the last access and the curve is document 004's exponential,
2^(−elapsed / half_life), unless another is set in `DecaySettings`; every access resets that
clock and adds to the reinforcement, so memories in use survive. A periodic cycle forgets,
with an audit record, the items below a retention threshold; it only *decides*: their owner
removes them.

Invariants:
    D1  at a fixed access count, weight never increases as time passes.
    D2  after exactly one half-life the decayed part is exactly half the importance.
    D3  the reinforcement part never exceeds the cap.
    D4  a cycle forgets exactly the items below the threshold and audits each of them once.
    D5  consolidated memory (an item whose `consolidated` is true: a fact, a procedure) decays
        `consolidated_slowdown` times more slowly than raw memory of the same importance and use.
    D6  `audit_log` holds at most `max_audit_log` records, the newest; the durable log is the
        store's (the manager writes every cycle's records there).
    D7  `weight` is the formula above, `elapsed` never below 0; `on_access` resets it and adds
        one access.
    D8  the curve (`DecaySettings.curve`, a `ForgettingCurve`) is the one shape of forgetting:
        1 at no time, 1/2 after one half-life (the exponential exactly, D2), never increasing
        with time, and `elapsed_for` is its inverse (the curve at elapsed_for(w) is w, for w in
        (0, 1]). Decay, recall's recency and the experience benchmark's horizon all read it.
"""

import math
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from .clock import DAY
from .records import AuditRecord
from .validation import require_count, require_number

__all__ = [
    "DecayManager",
    "DecayReport",
    "DecaySettings",
    "Decaying",
    "Exponential",
    "ForgettingCurve",
]


@runtime_checkable
class ForgettingCurve(Protocol):
    """The shape of forgetting: how much of a memory is left after time unused (D8).

    `elapsed` and `half_life` are in one unit, any unit; `half_life` is above 0.
    """

    def weight(self, elapsed: float, half_life: float) -> float:
        """Return the share left after `elapsed`: 1 at 0 or before, exactly 1/2 at `half_life`."""
        ...

    def elapsed_for(self, weight: float, half_life: float) -> float:
        """Return the elapsed time after which the share left is `weight`: the inverse of `weight`.

        0 for a weight of 1 or more; infinity for a weight of 0 or less, never reached.
        """
        ...


@dataclass(frozen=True)
class Exponential:
    """Document 004's curve, 2^(−elapsed / half_life): each half-life halves what is left."""

    def weight(self, elapsed: float, half_life: float) -> float:
        """Return 2^(−elapsed / half_life): 1 at no time, exactly 1/2 after one half-life (D2).

        Elapsed time below 0 (clock skew, an imported record) counts as 0, so the result is never
        above 1 (D7).
        """
        # 0.5 ** x rather than exp(-ln 2 · x): the same curve, but exactly 1/2 at x = 1 (D2).
        return 0.5 ** (max(0.0, elapsed) / half_life)

    def elapsed_for(self, weight: float, half_life: float) -> float:
        """Return half_life · log2(1 / weight), the inverse of `weight` (D8)."""
        if weight >= 1.0:
            return 0.0
        if weight <= 0.0:
            return math.inf
        return half_life * math.log2(1.0 / weight)


@dataclass(frozen=True)
class DecaySettings:
    """The forgetting curve, the reinforcement by use, and the threshold below which to forget.

    Raises ValueError naming the broken rule for a number out of range, TypeError naming D8 for
    a curve that is not a `ForgettingCurve`.
    """

    half_life_days: float = 7.0  # days for an unused memory's decayed part to halve (D2)
    retention_threshold: float = 0.15  # a cycle forgets the items weighing less (D4)
    reinforcement_per_access: float = 0.05  # weight added by each access ...
    reinforcement_cap: float = 0.3  # ... up to this much in all (D3)
    consolidated_slowdown: float = 3.0  # how many times longer consolidated memory lasts (D5)
    max_audit_log: int = 1_000  # audit records kept in memory, the newest (D6)
    # The shape of forgetting (D8): decay, recall's recency and the benchmark's horizon read it.
    # One frozen instance, shared, so that `DecaySettings.curve` names the default elsewhere.
    curve: ForgettingCurve = field(default=Exponential())

    def __post_init__(self) -> None:
        require_number("D2: half_life_days", self.half_life_days, 0.0, above_minimum=True)
        require_number("D4: retention_threshold", self.retention_threshold, 0.0)
        require_number("D3: reinforcement_per_access", self.reinforcement_per_access, 0.0)
        require_number("D3: reinforcement_cap", self.reinforcement_cap, 0.0)
        slowdown = self.consolidated_slowdown
        require_number("D5: consolidated_slowdown", slowdown, 0.0, above_minimum=True)
        require_count("D6: max_audit_log", self.max_audit_log, minimum=0)
        if not isinstance(self.curve, ForgettingCurve):
            kind = type(self.curve).__name__
            raise TypeError(f"D8: curve must be a ForgettingCurve (weight, elapsed_for): {kind}")

    @property
    def half_life_seconds(self) -> float:
        """The half-life of raw memory, in seconds."""
        return self.half_life_days * DAY


class Decaying(Protocol):
    """Anything decay can weigh: an Episode, a stored item, or a record of your own.

    `consolidated` is true for memory distilled from many episodes (a fact, a procedure),
    which decays more slowly (D5).
    """

    id: str
    importance: float
    last_access_at: float | None
    access_count: int
    consolidated: bool


@dataclass(frozen=True)
class DecayReport:
    """What one cycle decided: the items to forget, the items kept, and the audit lines."""

    at: float
    forgotten: tuple
    kept: tuple
    audit: tuple[AuditRecord, ...]
    weights: dict = field(default_factory=dict, repr=False)  # item id -> weight at `at`


class DecayManager:
    """Weigh items by recency and use; forget those that fall below the threshold."""

    def __init__(
        self,
        settings: DecaySettings | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Raises TypeError unless `settings` is a DecaySettings (which checks its values).

        No settings: `DecaySettings()`, the defaults.
        """
        if settings is None:
            settings = DecaySettings()
        if not isinstance(settings, DecaySettings):
            raise TypeError(f"settings must be a DecaySettings, got {type(settings).__name__}")
        self.settings = settings
        self.clock = clock
        self.audit_log: deque[AuditRecord] = deque(maxlen=settings.max_audit_log)  # D6

    def half_life(self, item: Decaying) -> float:
        """Return the item's half-life in seconds: longer for consolidated memory (D5)."""
        # A fact or a procedure was distilled from many episodes; it should outlive any one.
        slowdown = self.settings.consolidated_slowdown if item.consolidated else 1.0
        return self.settings.half_life_seconds * slowdown

    def weight(self, item: Decaying, now: float | None = None) -> float:
        """Return the item's retention weight at `now` (default: the clock)."""
        settings = self.settings
        now = self.clock() if now is None else now
        # A last access "in the future" counts as now (the curve's 1, D8), so that weight can
        # never exceed importance plus the cap.
        elapsed = now - item.last_access_at
        decayed = item.importance * settings.curve.weight(elapsed, self.half_life(item))
        reinforcement = min(
            settings.reinforcement_cap, settings.reinforcement_per_access * item.access_count
        )
        return decayed + reinforcement

    def on_access(self, item: Decaying) -> None:
        """Count a retrieval of the item: reset its decay clock and reinforce it."""
        item.last_access_at = self.clock()
        item.access_count += 1

    def run_cycle(self, items: Iterable[Decaying], now: float | None = None) -> DecayReport:
        """Weigh every item once at `now` (default: the clock); report those below the threshold.

        Each item forgotten gets one audit record (D4).
        """
        threshold = self.settings.retention_threshold
        now = self.clock() if now is None else now
        forgotten = []
        kept = []
        audit = []
        weights = {}
        for item in items:
            weight = self.weight(item, now)
            weights[item.id] = weight
            if weight < threshold:
                forgotten.append(item)
                idle_days = (now - item.last_access_at) / DAY
                reason = (
                    f"below retention threshold {threshold} after "
                    f"{idle_days:.1f} idle days, accesses={item.access_count}"
                )
                audit.append(AuditRecord(item.id, "forget", reason, now, weight))
            else:
                kept.append(item)
        self.audit_log.extend(audit)
        return DecayReport(now, tuple(forgotten), tuple(kept), tuple(audit), weights)

    def __repr__(self) -> str:
        return (
            f"DecayManager(half_life_days={self.settings.half_life_days:g}, "
            f"retention_threshold={self.settings.retention_threshold}, "
            f"audit_records={len(self.audit_log)})"
        )
