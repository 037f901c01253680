"""Recall ranking: one weighted sum of named terms per candidate, then a ranked list in a budget.

Document 002 §4 ranks memories by a weighted sum of relevance, recency and importance
("never relevance alone"); Generative Agents ranks the same way. Document 003 §4.4 fuses
the layers into one ranked list, and 004 §3 injects at most a token budget of it. Every
result carries its score breakdown and the reason it was included, so a surprising
recall can be explained from the log (003 §6.3).

The terms of the sum are written once, in `terms`, each named as a field of `Weights`; the
total, the breakdown and the explanation all read them from there, so a new term is a line
in `terms` and a field in `Weights`. The mix must not let recency or importance bury a
clearly relevant memory, so each term is put on a scale that means the same in every recall:
`Scale`, which candidates.py measures on the recall's candidates.

Invariants:
    Q1  results are sorted by total score, best first (ties: newer, then id); each total
        equals the weighted sum of its parts; assembled text never exceeds the budget.
    Q2  every part of a score lies in [0, 1], so the total lies in [0, sum of weights]; the
        most relevant candidate of a recall has relevance and context adding up to 1.
        Weights are finite, >= 0 and not all 0.
    Q3  assembled results never repeat a content (compared without case or spacing): the
        best-ranked copy is kept (document 002's "no dedup" failure).
    Q4  every result carries its score's breakdown (each term of `terms` by name, and the
        total) and the reason it was recalled (its layer, or the trigger of a procedure); its
        explanation names the terms that count in the total (a weight and a value above 0).
    Q5  the terms of `terms` are exactly the fields of `Weights`, in the same order.
    Q6  a recall that counts use writes its accesses and its one audit record in one call of
        `record_access`, so at most one transaction, one commit (none while a `BufferedStore`
        with `access_batch` above 1 defers them, G10); a recall that chose nothing writes nothing.
    Q7  a candidate's speaker term is 1 when every word of its `speaker` (MemoryManager.write)
        is a word of the query, else 0: a recall naming nobody ranks as if the term were not.
    Q8  weights are given by name only: `Weights` takes keywords, never positions, and
        `Weights.only(names)` keeps exactly the named terms at their defaults and zeroes every
        other, so a term added later is 0 in an ablation written before it.
    Q9  recency is the forgetting curve of decay (D8), the one `Scale.curve` carries, over the
        recall's half-life: the manager hands recall its decay's curve.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, replace

from ..core.decay import DecaySettings, ForgettingCurve
from ..storage.audit import AuditEntry
from ..core.similarity import Scorer
from ..core.text import fits, normalize
from ..core.validation import require_count, require_number
from ..storage.item import MemoryItem
from ..storage.store import Access, Store
from .bounds import check_token_budget
from .context import Context

__all__ = [
    "Weights",
    "RecallPolicy",
    "Candidate",
    "Scale",
    "Recalled",
    "RecallResult",
    "terms",
    "score",
    "rank",
    "assemble",
    "reinforce",
]


@dataclass(frozen=True, kw_only=True)
class Weights:
    """How much each term of `terms` counts in the total: one field per term, by name (Q2, Q5, Q8).

    Raises ValueError naming Q2 for a weight that is negative or not finite, or all zero; a
    weight given by position raises TypeError (Q8).
    """

    # How well the memory's words match the query, relative to the recall's best match: the
    # term that must dominate (docs/manager/recall.md says why these three values).
    relevance: float = 0.75
    # How recently the memory was used, halving over the recall's half-life.
    recency: float = 0.1
    # How important its writer said it was: set on purpose, so it weighs more than recency.
    importance: float = 0.15
    # Whether it was said by a speaker the query names (Q7): "what did Caroline research?"
    # asks for Caroline's words first, whoever else used the same ones.
    speaker: float = 0.3
    # How well the words around an episode in its thread match the query (context.py): as
    # much as its own words, so that relevance and context together are its window's score.
    context: float = 0.75

    def __post_init__(self) -> None:
        for term in fields(self):
            require_number(f"Q2: weight of {term.name}", getattr(self, term.name), 0)
        if not any(getattr(self, term.name) for term in fields(self)):
            raise ValueError(f"Q2: the weights must not all be 0, got {self!r}")

    @classmethod
    def only(cls, *names: str) -> "Weights":
        """Return the default weights of the named terms, every other term's weight 0 (Q8).

        Raises ValueError naming Q8 for a name that is not a term of `terms`.
        """
        known = [term.name for term in fields(cls)]
        unknown = [name for name in names if name not in known]
        if unknown:
            raise ValueError(f"Q8: {unknown} are not terms of the weights, which are {known}")
        return cls(**{name: 0.0 for name in known if name not in names})


@dataclass(frozen=True)
class RecallPolicy:
    """How recall finds, weighs and layers its candidates: the recall's settings.

    `scorer=None` ranks with the store's own BM25, in the store; a scorer factory (for
    example `JaccardScorer`) scores in Python the items `matching` finds instead. Raises
    ValueError naming the broken rule for a setting out of range.
    """

    # The weight of each term of the sum.
    weights: Weights = field(default_factory=Weights)
    # Recency halves over this many days, or over the age of the oldest candidate if that
    # is longer and `stretch_half_life` is set (CA3).
    recency_half_life_days: float = 7.0
    stretch_half_life: bool = True
    # Episodes are candidates only when fewer valid facts than this matched (CA1).
    thin_semantic: int = 2
    # The semantic and episodic layers each offer at most this many, their best (CA4).
    candidate_pool: int = 50
    # How an episode's neighbours in its thread count in its relevance (CA2, context.py).
    context: Context = field(default_factory=Context)
    # None: the store's BM25 scores, in the store; a factory: its scorers score instead.
    scorer: Callable[[], Scorer] | None = None

    def __post_init__(self) -> None:
        days = self.recency_half_life_days
        require_number("CA3: recency_half_life_days", days, 0, above_minimum=True)
        require_count("CA1: thin_semantic", self.thin_semantic, 0)
        require_count("CA4: candidate_pool", self.candidate_pool, 1)


@dataclass(frozen=True)
class Candidate:
    """One item a layer offers a recall: its relevance in the scorer's units, and why."""

    item: MemoryItem
    raw: float  # raw relevance: its window's score for an episode in a thread (CA2); >= 0
    reason: str
    context: float = 0.0  # the part of `raw` its neighbours' words gave (CX3)


@dataclass(frozen=True)
class Scale:
    """What puts every candidate of one recall on the same scale: the terms read it (Q2)."""

    now: float
    best: float  # the best raw relevance among the recall's candidates, above 0
    half_life: float  # seconds over which recency halves
    named: frozenset[str] = field(default_factory=frozenset)  # speakers the query names (Q7)
    curve: ForgettingCurve = DecaySettings.curve  # the shape recency falls by: decay's (Q9)


def terms(candidate: Candidate, scale: Scale) -> dict[str, float]:
    """Return the candidate's terms, each in [0, 1], named and ordered as `Weights` (Q2, Q5).

    The one definition of what recall adds up: the total, `Recalled.breakdown` and
    `Recalled.explain` all read these. A new term is one more entry here and a field of the
    same name in `Weights`.
    """
    item = candidate.item
    own = candidate.raw - candidate.context
    return {
        "relevance": min(1.0, max(0.0, own / scale.best)),
        "recency": scale.curve.weight(scale.now - item.last_access_at, scale.half_life),
        "importance": item.importance,
        "speaker": 1.0 if item.metadata.get("speaker") in scale.named else 0.0,
        "context": min(1.0, max(0.0, candidate.context / scale.best)),
    }


@dataclass(frozen=True)
class Recalled:
    """One recalled item with its score breakdown and why it was included."""

    item: MemoryItem
    parts: dict[str, float]  # each term of the sum by name, in the order of `terms` (Q4)
    total: float
    reason: str
    weights: Weights = field(default_factory=Weights, repr=False)  # those the total was made with

    def breakdown(self) -> dict[str, float]:
        """Return each term of the score by name, then the total."""
        return {**self.parts, "total": self.total}

    def explain(self) -> str:
        """Return one line: the total, the terms that count in it, and the reason.

        A term counts when its weight and its value are both above 0.
        """
        counted = [
            f"{name} {value:.2f}"
            for name, value in self.parts.items()
            if getattr(self.weights, name) and value
        ]
        return f"{self.total:.3f} = {', '.join(counted)} ({self.reason})"

    def render(self) -> str:
        """Render the item for a prompt."""
        return self.item.render()


def score(candidate: Candidate, scale: Scale, weights: Weights) -> Recalled:
    """Score one candidate: the weighted sum of its terms (Q1)."""
    parts = terms(candidate, scale)
    total = sum(getattr(weights, name) * value for name, value in parts.items())
    return Recalled(candidate.item, parts, total, candidate.reason, weights)


@dataclass(frozen=True)
class RecallResult:
    """What recall returns: ranked results with their breakdowns, and the assembled text."""

    results: tuple[Recalled, ...]
    text: str
    degraded: bool = False
    query_truncated: bool = False  # the query was cut to MAX_QUERY_CHARS (BD2)
    # The user's stored items left out as unreadable: no fact (FA4), no procedure (H5), no
    # task (N8) (MG8).
    skipped: int = 0


def rank(candidates: Iterable[Recalled]) -> list[Recalled]:
    """Sort best total first; ties go to the newer item, then to the smaller id (Q1)."""
    return sorted(candidates, key=lambda r: (-r.total, -r.item.created_at, r.item.id))


def assemble(ranked: Iterable[Recalled], token_budget: int | None) -> tuple[list[Recalled], str]:
    """Take results in rank order, skipping repeats (Q3) and what does not fit the budget (Q1).

    Raises ValueError for a budget that is not an int >= 0 or None.
    """
    check_token_budget(token_budget)
    chosen = []
    lines = []
    seen = set()
    for result in ranked:
        line = f"- {result.render()}"
        key = normalize(result.item.content)
        if key in seen:
            continue  # the same memory stored twice (a fact and the events it came from)
        if not fits("\n".join([*lines, line]), token_budget):
            continue  # recall's policy: the best first, and a smaller item further down may fit
        chosen.append(result)
        lines.append(line)
        seen.add(key)
    return chosen, "\n".join(lines)


def reinforce(
    store: Store, user_id: str, chosen: Iterable[Recalled], now: float
) -> list[MemoryItem]:
    """Count a recall as use: reset each item's decay clock, add an access, audit why.

    Document 004 §2. Only the access fields are written (S10): a copy read before another
    writer superseded the item cannot reopen it. One audit record per recall names every
    result and its reason; it is written with the accesses, one transaction (Q6).
    """
    chosen = list(chosen)
    touched = [
        replace(r.item, access_count=r.item.access_count + 1, last_access_at=now) for r in chosen
    ]
    if chosen:
        why = "; ".join(f"{r.item.id}: {r.reason}, total {r.total:.3f}" for r in chosen)
        audit = [AuditEntry("-", "recall", why, now, None, user_id)]
        store.record_access([Access(user_id, r.item.id, now) for r in chosen], audit)
    return touched
