"""Recall ranking: score each candidate by relevance, recency and importance, then fit a budget.

Document 002 §4 ranks memories by a weighted sum of relevance, recency and importance
("never relevance alone"); Generative Agents ranks the same way. Document 003 §4.4 fuses
the layers into one ranked list, and 004 §3 injects at most a token budget of it. Every
result carries its score breakdown and the reason it was included, so a surprising
recall can be explained from the log (003 §6.3).

The mix must not let recency or importance bury a clearly relevant memory, so each part is
put on a scale that means the same in every recall (candidates.py does the scaling).

Invariants:
    Q1  results are sorted by total score, best first (ties: newer, then id); each total
        equals the weighted sum of its parts; assembled text never exceeds the budget.
    Q2  every part of a score lies in [0, 1], so the total lies in [0, sum of weights]; the
        most relevant candidate of a recall has relevance 1.
    Q3  assembled results never repeat a content (compared without case or spacing): the
        best-ranked copy is kept (document 002's "no dedup" failure).
    Q4  every result carries its score's breakdown (relevance, recency, importance, total) and the
        reason it was recalled (its layer, or the trigger of a procedure).
"""

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from ..core.decay import halved
from ..core.records import AuditRecord
from ..core.similarity import Scorer
from ..core.text import estimate_tokens, normalize
from ..core.validation import require_count
from ..storage.item import MemoryItem
from ..storage.store import Access, Store

__all__ = [
    "Weights",
    "RecallPolicy",
    "Recalled",
    "RecallResult",
    "score",
    "rank",
    "assemble",
    "reinforce",
]


@dataclass(frozen=True)
class Weights:
    """How much relevance, recency and importance each count in the total."""

    relevance: float = 0.75
    recency: float = 0.1
    importance: float = 0.15

    def __post_init__(self) -> None:
        parts = (self.relevance, self.recency, self.importance)
        if not all(
            isinstance(w, (int, float)) and math.isfinite(w) and w >= 0 for w in parts
        ) or not any(parts):
            raise ValueError(f"Q2: weights must be finite, >= 0 and not all 0, got {parts}")


@dataclass(frozen=True)
class RecallPolicy:
    """How recall weighs and layers: weights, recency time scale, candidate pool, neighbours, scorer.

    `scorer=None` ranks with the store's own BM25, in the store; a scorer factory (for
    example `JaccardScorer`) scores in Python the items `matching` finds instead.
    """

    weights: Weights = field(default_factory=Weights)
    recency_half_life_days: float = 7.0
    thin_semantic: int = 2
    candidate_pool: int = 50
    neighbour_weight: float = 0.25
    stretch_half_life: bool = True  # to the age of the oldest candidate (candidates.py)
    scorer: Callable[[], Scorer] | None = None

    def __post_init__(self) -> None:
        if not self.recency_half_life_days > 0:
            raise ValueError(
                f"recency_half_life_days must be > 0, got {self.recency_half_life_days!r}"
            )
        require_count("candidate_pool", self.candidate_pool, 1)
        if not 0 <= self.neighbour_weight <= 1:
            raise ValueError(
                f"CA2: neighbour_weight must lie in [0, 1], got {self.neighbour_weight!r}"
            )


@dataclass(frozen=True)
class Recalled:
    """One recalled item with its score breakdown and why it was included."""

    item: MemoryItem
    relevance: float
    recency: float
    importance: float
    total: float
    reason: str

    def breakdown(self) -> dict[str, float]:
        """Return each part of the score and the total."""
        return {
            "relevance": self.relevance,
            "recency": self.recency,
            "importance": self.importance,
            "total": self.total,
        }

    def explain(self) -> str:
        """Return one line: total, parts and reason."""
        return (
            f"{self.total:.3f} = relevance {self.relevance:.2f}, recency {self.recency:.2f}, "
            f"importance {self.importance:.2f} ({self.reason})"
        )

    def render(self) -> str:
        """Render the item for a prompt."""
        return self.item.render()


def score(
    item: MemoryItem, relevance: float, now: float, weights: Weights, half_life: float, reason: str
) -> Recalled:
    """Score one candidate: relevance as given, recency halving every `half_life` seconds."""
    relevance = min(1.0, max(0.0, relevance))
    recency = halved(now - item.last_access_at, half_life)
    total = (
        weights.relevance * relevance
        + weights.recency * recency
        + weights.importance * item.importance
    )
    return Recalled(item, relevance, recency, item.importance, total, reason)


@dataclass(frozen=True)
class RecallResult:
    """What recall returns: ranked results with their breakdowns, and the assembled text."""

    results: tuple[Recalled, ...]
    text: str
    degraded: bool = False
    query_truncated: bool = False  # the query was cut to MAX_QUERY_CHARS (BD2)


def rank(candidates: Iterable[Recalled]) -> list[Recalled]:
    """Sort best total first; ties go to the newer item, then to the smaller id (Q1)."""
    return sorted(candidates, key=lambda r: (-r.total, -r.item.created_at, r.item.id))


def assemble(ranked: Iterable[Recalled], token_budget: int | None) -> tuple[list[Recalled], str]:
    """Take results in rank order, skipping repeats (Q3) and what does not fit the budget (Q1).

    Raises ValueError for a negative budget.
    """
    if token_budget is not None and (isinstance(token_budget, bool) or token_budget < 0):
        raise ValueError(f"Q1: token_budget must be >= 0 or None, got {token_budget!r}")
    chosen, lines, seen = [], [], set()
    for result in ranked:
        line, key = f"- {result.render()}", normalize(result.item.content)
        if key in seen:
            continue  # the same memory stored twice (a fact and the events it came from)
        if token_budget is not None and estimate_tokens("\n".join([*lines, line])) > token_budget:
            continue  # a smaller item further down may still fit
        chosen.append(result)
        lines.append(line)
        seen.add(key)
    return chosen, "\n".join(lines)


def reinforce(
    store: Store, user_id: str, chosen: Iterable[Recalled], now: float
) -> list[MemoryItem]:
    """Count a recall as use: reset each item's decay clock, add an access, audit why (document 004 §2).

    Only the access fields are written (S10): a copy read before another writer superseded
    the item cannot reopen it. One audit record per recall names every result and its reason.
    """
    chosen = list(chosen)
    touched = [
        replace(r.item, access_count=r.item.access_count + 1, last_access_at=now) for r in chosen
    ]
    store.record_access([Access(user_id, r.item.id, now) for r in chosen])
    if chosen:
        why = "; ".join(f"{r.item.id}: {r.reason}, total {r.total:.3f}" for r in chosen)
        store.append_audit([AuditRecord("-", "recall", why, now, None, user_id)])
    return touched
