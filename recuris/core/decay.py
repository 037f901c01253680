"""Decay: forget what has not been used, on an exponential (half-life) curve.

Document 004 §2 (after Ebbinghaus): a memory's weight is

    importance · 2^(−elapsed / half_life) + min(cap, per_access · access_count)

where `elapsed` runs from the last access; every access resets that clock and adds to the
reinforcement, so memories in use survive. A periodic cycle forgets, with an audit record,
the items below a retention threshold; it only *decides*: their owner removes them.

Invariants:
    D1  at a fixed access count, weight never increases as time passes.
    D2  after exactly one half-life the decayed part is exactly half the importance.
    D3  the reinforcement part never exceeds the cap.
    D4  a cycle forgets exactly the items below the threshold and audits each of them once.
    D5  consolidated memory (semantic or procedural items) decays `consolidated_slowdown`
        times more slowly than raw memory of the same importance and use.
    D6  `audit_log` holds at most `max_audit_log` records, the newest; the durable log is the
        store's (the manager writes every cycle's records there).
    D7  `weight` is the formula above, `elapsed` never below 0; `on_access` resets it and adds one access.
"""

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from .clock import DAY
from .records import AuditRecord

__all__ = ["DecayManager", "DecayReport", "Decaying", "halved"]


def halved(elapsed: float, half_life: float) -> float:
    """Return 2^(-elapsed / half_life): 1 at no time, exactly 1/2 after one half-life (D2).

    Elapsed time below 0 (clock skew, an imported record) counts as 0, so the result is never
    above 1. This is the one half-life curve of recuris: decay and recall's recency both use it.
    """
    # 0.5 ** x rather than exp(-ln 2 · x): the same curve, but exactly 1/2 at x = 1 (D2).
    return 0.5 ** (max(0.0, elapsed) / half_life)


class Decaying(Protocol):
    """Anything decay can weigh: an Episode, or a record of your own."""

    id: str
    importance: float
    last_access_at: float | None
    access_count: int


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
        half_life_days: float = 7,
        retention_threshold: float = 0.15,
        reinforcement_per_access: float = 0.05,
        reinforcement_cap: float = 0.3,
        clock: Callable[[], float] = time.time,
        consolidated_slowdown: float = 3.0,
        max_audit_log: int = 1_000,
    ) -> None:
        settings = {
            "half_life_days": half_life_days,
            "retention_threshold": retention_threshold,
            "reinforcement_per_access": reinforcement_per_access,
            "reinforcement_cap": reinforcement_cap,
            "consolidated_slowdown": consolidated_slowdown,
        }
        for name, value in settings.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} must be a number, got {type(value).__name__}")
            # Written as "not >=" so that NaN fails too.
            strict = name in ("half_life_days", "consolidated_slowdown")
            if not value >= 0 or (strict and not value > 0):
                raise ValueError(f"{name} must be {'> 0' if strict else '>= 0'}, got {value!r}")
        self.half_life_seconds = half_life_days * DAY
        self.retention_threshold = retention_threshold
        self.reinforcement_per_access = reinforcement_per_access
        self.reinforcement_cap = reinforcement_cap
        self.clock, self.consolidated_slowdown = clock, consolidated_slowdown
        self.audit_log: deque[AuditRecord] = deque(maxlen=max_audit_log)  # D6

    def half_life(self, item: Decaying) -> float:
        """Return the item's half-life in seconds: longer for consolidated memory (D5)."""
        # A fact or a procedure was distilled from many episodes; it should outlive any one.
        consolidated = getattr(item, "level", None) in ("semantic", "procedural")
        return self.half_life_seconds * (self.consolidated_slowdown if consolidated else 1.0)

    def weight(self, item: Decaying, now: float | None = None) -> float:
        """Return the item's retention weight at `now` (default: the clock)."""
        now = self.clock() if now is None else now
        # A last access "in the future" counts as now (`halved`), so that weight can never
        # exceed importance plus the cap.
        decayed = item.importance * halved(now - item.last_access_at, self.half_life(item))
        reinforcement = min(
            self.reinforcement_cap, self.reinforcement_per_access * item.access_count
        )
        return decayed + reinforcement

    def on_access(self, item: Decaying) -> None:
        """Count a retrieval of the item: reset its decay clock and reinforce it."""
        item.last_access_at = self.clock()
        item.access_count += 1

    def run_cycle(self, items: Iterable[Decaying], now: float | None = None) -> DecayReport:
        """Weigh every item once at `now` (default: the clock); report those below the threshold (D4)."""
        now = self.clock() if now is None else now
        forgotten, kept, audit, weights = [], [], [], {}
        for item in items:
            weight = weights[item.id] = self.weight(item, now)
            if weight < self.retention_threshold:
                forgotten.append(item)
                idle_days = (now - item.last_access_at) / DAY
                reason = (
                    f"below retention threshold {self.retention_threshold} after "
                    f"{idle_days:.1f} idle days, accesses={item.access_count}"
                )
                audit.append(AuditRecord(item.id, "forget", reason, now, weight))
            else:
                kept.append(item)
        self.audit_log.extend(audit)
        return DecayReport(now, tuple(forgotten), tuple(kept), tuple(audit), weights)

    def __repr__(self) -> str:
        return (
            f"DecayManager(half_life_days={self.half_life_seconds / DAY:g}, "
            f"retention_threshold={self.retention_threshold}, audit_records={len(self.audit_log)})"
        )
