"""Consolidation: promote a statement from episodes to a semantic fact once it has held up.

Document 003 §4.2: a conclusion becomes long-term knowledge when it was seen two or three
times, consistently (no conflicting version), within an observation window, and the fact
keeps references to the episodes it came from. Promote too eagerly and one remark ("let's
try Redis this time") becomes a rule; too late and nothing is ever learned.

Invariants:
    C1  a statement is promoted iff, at the sighting that promotes it, `min_occurrences`
        distinct sources stated that value within the window and no source in the window
        stated another value for the subject.
    C2  every fact names its source episodes: exactly the sources that promoted it.
    C3  no duplicate facts: the statement that is already the subject's valid fact is
        never promoted again (a value that returns after being superseded may be).
    C4  every sighting that meets a conflicting value in the window is reported.
    C5  after `forget_sources(S)` no sighting or conflict of a source in S is kept: a
        forgotten source never counts toward a promotion, and its text is not held.
"""

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .clock import DAY
from .text import normalize
from .validation import require_count, require_number, require_text
from .semantic import Fact, SemanticMemory

__all__ = ["Consolidator", "ConsolidationSettings", "Conflict", "Sighting"]


@dataclass(frozen=True)
class ConsolidationSettings:
    """When repeated sightings of a statement make it a fact (C1).

    Raises ValueError, naming C1, for a count below 1 or a window that is not a positive number.
    """

    # Distinct sources that must state a value before it is promoted: document 003 §4.2's
    # "two or three times", at its lower end, so that a preference stated twice is learned.
    min_occurrences: int = 2
    # How long a sighting counts, for the value or against it: a week of use.
    window_seconds: float = 7 * DAY

    def __post_init__(self) -> None:
        require_count("C1: min_occurrences", self.min_occurrences, 1)
        require_number("C1: window_seconds", self.window_seconds, 0, above_minimum=True)


@dataclass(frozen=True)
class Sighting:
    """One source stating one value for a subject, at a time."""

    subject: str
    value: str
    source_id: str
    at: float


@dataclass(frozen=True)
class Conflict:
    """Sources in one window disagreeing about a subject: promotion is blocked (C4)."""

    subject: str
    values: tuple[str, ...]
    source_ids: tuple[str, ...]
    at: float

    def render(self) -> str:
        values = " vs ".join(map(repr, self.values))
        return f"conflict on {self.subject!r}: {values} (from {', '.join(self.source_ids)})"


class Consolidator:
    """Count sightings of statements and promote consistent, repeated ones into semantic memory.

    `settings` default to `ConsolidationSettings()`: two sources within seven days.
    """

    def __init__(
        self,
        semantic: SemanticMemory,
        settings: ConsolidationSettings | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.semantic = semantic
        self.settings = settings if settings is not None else ConsolidationSettings()
        self.clock = clock
        self.conflicts: list[Conflict] = []
        self._sightings: dict[str, list[Sighting]] = {}

    def observe(self, subject: str, value: str, source_id: str) -> Fact | None:
        """Record that a source stated `subject = value`; return the fact it promotes, if any.

        Raises TypeError/ValueError for empty or non-text arguments (nothing is recorded).
        """
        for name, text in (("subject", subject), ("value", value), ("source_id", source_id)):
            require_text(name, text)
        now = self.clock()
        key = normalize(subject)
        # Sightings that fell out of the observation window no longer count, for or against.
        window_seconds = self.settings.window_seconds
        window = [s for s in self._sightings.get(key, []) if now - s.at <= window_seconds]
        window.append(Sighting(subject, value, source_id, now))
        self._sightings[key] = window

        first_wording: dict[str, str] = {}
        for sighting in window:
            first_wording.setdefault(normalize(sighting.value), sighting.value)
        # One episode repeating itself is one witness: count distinct sources only.
        sources = tuple(dict.fromkeys(s.source_id for s in window))
        if len(first_wording) > 1:
            self.conflicts.append(Conflict(subject, tuple(first_wording.values()), sources, now))
            return None
        if self.semantic.knows(subject, value):
            return None
        if len(sources) < self.settings.min_occurrences:
            return None
        days = window_seconds / DAY
        reason = f"consolidated: {len(sources)} consistent sources within {days:g} days"
        return self.semantic.add(subject, value, sources, created_at=now, reason=reason)

    def forget_sources(self, source_ids: Iterable[str]) -> None:
        """Drop every sighting and conflict of these sources: they no longer count (C5)."""
        gone = set(source_ids)
        if not gone:
            return
        for key, window in list(self._sightings.items()):
            kept = [sighting for sighting in window if sighting.source_id not in gone]
            if kept:
                self._sightings[key] = kept
            else:
                del self._sightings[key]
        self.conflicts = [
            conflict for conflict in self.conflicts if gone.isdisjoint(conflict.source_ids)
        ]

    def __repr__(self) -> str:
        return (
            f"Consolidator({self.settings!r}, subjects={len(self._sightings)}, "
            f"conflicts={len(self.conflicts)})"
        )
