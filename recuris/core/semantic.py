"""Semantic memory: conclusions distilled from many episodes, stated once, kept long.

Document 003 §3.3 and §4.2: semantic memory holds abstract, stable knowledge ("the team
writes Python") promoted from episodes, each fact citing the episodes it came from.
Document 001 makes it append-only, and 002 §3.3 and 003 §4.3 say what happens when a
conclusion changes: the newest wins, and the old one is marked invalid, not deleted, so an
audit can still see what the agent believed and when it stopped believing it. Facts live
in this object; a `FactArchive`, when given, keeps them beyond it (the manager's store).

Invariants:
    F1  a fact's subject, value and sources never change; superseding only closes its
        validity, once, recording when and by which fact.
    F2  at most one valid fact per subject; re-adding the valid statement is refused.
    F3  every fact names at least one source.
    F4  adding a fact never touches a fact about another subject.
    F5  loading leaves one valid fact per subject: a valid fact that a newer valid fact of the
        same subject contradicts (one written by another process, or during an outage that
        hid it) is closed then, pointing at the newest, in the archive too when it can write.
    F6  the subject index names, for each normalised subject, exactly the facts a scan of
        every fact would find, in order: a write looks up one subject, whatever the count.
"""

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Protocol

from .text import normalize
from .validation import require_text

__all__ = ["SemanticMemory", "FactArchive", "Fact"]


@dataclass(frozen=True)
class Fact:
    """A statement promoted to semantic memory, with the episodes that support it (F3).

    A fact is valid until a newer fact about the same subject supersedes it; then it is
    kept, closed at `invalidated_at`, naming its successor.
    """

    id: str
    subject: str
    value: str
    source_ids: tuple[str, ...]
    created_at: float = 0.0
    invalidated_at: float | None = None
    superseded_by: str | None = None

    def __post_init__(self) -> None:
        if not self.source_ids:
            raise ValueError("F3: a fact must name at least one source")

    @property
    def is_valid(self) -> bool:
        return self.invalidated_at is None

    def render(self) -> str:
        """Render as `subject: value (from a, b)`, marked if superseded."""
        closed = "" if self.is_valid else f" [superseded by {self.superseded_by}]"
        return f"{self.subject}: {self.value} (from {', '.join(self.source_ids)}){closed}"


class FactArchive(Protocol):
    """Where facts outlive the memory that holds them.

    `load()` yields every kept fact; `new_id()` returns an id no fact has; `write(fact,
    closed, reason, importance)` keeps a new fact and the facts it closes, audited, in one
    transaction; `close(stale, reason)` keeps facts closed on load (F5) and returns False
    when the archive cannot be written now (the facts then stay as loaded).
    """

    def load(self) -> Iterable[Fact]: ...
    def new_id(self) -> str: ...
    def write(self, fact: Fact, closed: list[Fact], reason: str, importance: float) -> None: ...
    def close(self, stale: list[Fact], reason: str) -> bool: ...


class SemanticMemory:
    """The facts of one user, append-only, kept in an optional archive."""

    def __init__(
        self, archive: FactArchive | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.archive = archive
        self.clock = clock
        # Each fact as a plain tuple of its fields, which the cyclic garbage collector stops
        # walking: a million facts held as objects would slow every collection of the process.
        self._facts: dict[str, tuple] = {}
        self._next_number = 1
        # Normalised subject -> its newest fact's id, and each fact's id -> the id of the fact
        # of its subject before it: a write reads one subject's facts instead of scanning every
        # fact of the user (F6). Plain strings, like the tuples, so the collector never walks them.
        self._newest: dict[str, str] = {}
        self._older: dict[str, str] = {}
        for fact in archive.load() if archive is not None else ():
            self._remember(fact)
        self._close_contradicted()

    def _remember(self, fact: Fact) -> None:
        if fact.id not in self._facts:
            subject = normalize(fact.subject)
            if subject in self._newest:
                self._older[fact.id] = self._newest[subject]
            self._newest[subject] = fact.id
        # Flat, the sources last: a tuple nested in it could keep it tracked by the collector.
        self._facts[fact.id] = (
            fact.id,
            fact.subject,
            fact.value,
            fact.created_at,
            fact.invalidated_at,
            fact.superseded_by,
            *fact.source_ids,
        )

    def _fact(self, fact_id: str) -> Fact:
        fact_id, subject, value, created_at, invalidated_at, superseded_by, *sources = self._facts[
            fact_id
        ]
        return Fact(
            fact_id, subject, value, tuple(sources), created_at, invalidated_at, superseded_by
        )

    def _all(self) -> list[Fact]:
        return [self._fact(fact_id) for fact_id in self._facts]

    def _close_contradicted(self) -> None:
        # F5: two writers that could not see each other's fact leave two valid ones; the
        # newest wins, as it would have had the second writer seen the first.
        valid = sorted(
            (fact for fact in self._all() if fact.is_valid), key=lambda fact: fact.created_at
        )
        # The sort is stable: of two facts made at the same time, the one stored later wins.
        newest = {normalize(fact.subject): fact for fact in valid}
        stale = []
        for fact in valid:
            winner = newest[normalize(fact.subject)]
            if winner is not fact:
                stale.append(
                    replace(fact, invalidated_at=winner.created_at, superseded_by=winner.id)
                )
        why = "found valid beside a newer fact of its subject on load"
        if stale and self.archive is not None and not self.archive.close(stale, why):
            return  # an archive that cannot be written keeps both; the newest is still current
        for fact in stale:
            self._remember(fact)

    def add(
        self,
        subject: str,
        value: str,
        source_ids: Iterable[str],
        created_at: float | None = None,
        importance: float = 0.8,
        reason: str = "added",
    ) -> Fact:
        """Append a fact; a valid fact about the same subject is superseded by it (F2).

        Raises TypeError/ValueError for empty text, no sources (F3), or the statement
        that is already the valid fact (F2); nothing is stored then.
        """
        require_text("subject", subject)
        require_text("value", value)
        sources = tuple(dict.fromkeys(require_text("source id", s) for s in source_ids))
        if not sources:
            raise ValueError("F3: a fact must name at least one source")
        current = self._current(subject)
        if current is not None and normalize(current.value) == normalize(value):
            raise ValueError(f"F2: the fact {subject!r} = {value!r} is already known")
        now = self.clock() if created_at is None else created_at
        fact = Fact(self._new_id(), subject, value, sources, now)
        # The newest statement wins; the old one is closed, never rewritten (F1, F4).
        closed = [replace(current, invalidated_at=now, superseded_by=fact.id)] if current else []
        if self.archive is not None:
            self.archive.write(fact, closed, reason, importance)
        for kept in [*closed, fact]:
            self._remember(kept)
        return fact

    def _new_id(self) -> str:
        if self.archive is not None:
            return self.archive.new_id()
        while f"fact-{self._next_number}" in self._facts:
            self._next_number += 1
        self._next_number += 1
        return f"fact-{self._next_number - 1}"

    def _current(self, subject: str) -> Fact | None:
        # Not invalidated
        valid = (i for i in self._newest_first(subject) if self._facts[i][4] is None)
        return next((self._fact(i) for i in valid), None)

    def _newest_first(self, subject: str) -> Iterator[str]:
        fact_id = self._newest.get(normalize(subject))
        while fact_id is not None:
            yield fact_id
            fact_id = self._older.get(fact_id)

    def knows(self, subject: str, value: str) -> bool:
        """Return True if `subject = value` is the valid fact about the subject."""
        current = self._current(subject)
        return current is not None and normalize(current.value) == normalize(value)

    def about(self, subject: str, include_invalid: bool = False) -> list[Fact]:
        """Return the facts about a subject, newest first; superseded ones only if asked."""
        facts = (self._fact(i) for i in self._newest_first(subject))
        return [fact for fact in facts if include_invalid or fact.is_valid]

    @property
    def facts(self) -> tuple[Fact, ...]:
        """Every fact, superseded ones included, oldest first."""
        return tuple(self._all())

    def current(self) -> tuple[Fact, ...]:
        """The valid facts, oldest first."""
        return tuple(fact for fact in self._all() if fact.is_valid)

    def __len__(self) -> int:
        return len(self._facts)

    def to_prompt_section(self) -> str:
        """Render the valid facts, one per line, for a prompt."""
        return "\n".join(["## Known facts"] + [f"  - {fact.render()}" for fact in self.current()])

    def __repr__(self) -> str:
        return f"SemanticMemory(facts={len(self._facts)}, valid={len(self.current())})"
