"""Semantic memory: conclusions distilled from many episodes, stated once, kept long.

Document 003 §3.3 and §4.2: semantic memory holds abstract, stable knowledge ("the team
writes Python") promoted from episodes, each fact citing the episodes it came from;
document 001 makes it append-only: knowing something new adds an entry, it never
rewrites an old one. Promotion itself is the `Consolidator`'s job (consolidation.py).

Invariants:
    F1  facts are only ever appended: a stored fact is never changed or removed.
    F2  no two facts state the same (subject, value), compared case- and space-insensitively.
    F3  every fact names at least one source.
"""

from collections.abc import Iterable

from .records import Fact
from .text import normalize, require_text

__all__ = ["SemanticMemory"]


class SemanticMemory:
    """An append-only list of facts, each about one subject."""

    def __init__(self) -> None:
        self._facts: list[Fact] = []
        self._known: set[tuple[str, str]] = set()

    def add(self, subject: str, value: str, source_ids: Iterable[str], created_at: float = 0.0) -> Fact:
        """Append a fact and return it.

        Raises TypeError/ValueError for empty text, ValueError for no sources (F3) or
        for a (subject, value) already known (F2); nothing is stored then.
        """
        require_text("subject", subject)
        require_text("value", value)
        sources = tuple(dict.fromkeys(require_text("source id", s) for s in source_ids))
        key = (normalize(subject), normalize(value))
        if key in self._known:
            raise ValueError(f"F2: the fact {subject!r} = {value!r} is already known")
        fact = Fact(f"fact-{len(self._facts) + 1}", subject, value, sources, created_at)
        self._facts.append(fact)
        self._known.add(key)
        return fact

    def knows(self, subject: str, value: str) -> bool:
        """Return True if this (subject, value) is already a fact."""
        return (normalize(subject), normalize(value)) in self._known

    def about(self, subject: str) -> list[Fact]:
        """Return the facts about a subject, newest first."""
        key = normalize(subject)
        return [fact for fact in reversed(self._facts) if normalize(fact.subject) == key]

    @property
    def facts(self) -> tuple[Fact, ...]:
        """Every fact, oldest first."""
        return tuple(self._facts)

    def __len__(self) -> int:
        return len(self._facts)

    def to_prompt_section(self) -> str:
        """Render every fact, one per line, for a prompt."""
        return "\n".join(["## Known facts"] + [f"  - {fact.render()}" for fact in self._facts])

    def __repr__(self) -> str:
        return f"SemanticMemory(facts={len(self._facts)})"
