"""Candidates: what each layer offers a recall, found and scored in the store, and their scale.

Document 003 §4.4 recalls in layers: working memory, then semantic facts, episodes only when
semantic memory is thin, procedures when a trigger matches. Document 002 §4 ranks by
relevance, recency and importance together, and its troubleshooting table blames most bad
recall on the similarity function. Here each layer's candidates come from the store, ranked
by its own BM25 and cut to a pool (`Store.search`), so a recall reads what can matter and
not the whole memory. An episodic candidate of a task or session is scored with the items
around it in that task (context.py), since an answer often sits next to the words of the
question ("What did you adopt?" / "A puppy!"). Then the recall's
`Scale` is measured on the candidates, so that each term (recall.py) means the same in every
recall and neither recency nor importance can bury a clearly relevant memory:

- relevance is divided by the best candidate's raw score (the best scores 1, whatever the
  scorer's units);
- recency halves over a time scale taken from the candidates themselves: the policy's
  half-life, stretched to the age of the oldest candidate, so that on a memory spanning a
  year a month-old item is not worth nothing.

Invariants:
    CA1 episodic items are considered only when semantic memory is thin (fewer valid,
        relevant facts than `thin_semantic`); superseded facts only when asked for.
    CA2 with the store's BM25 (no `scorer`), an episode's raw relevance is its window's score
        (context.py, CX2) and the items within the context's width of a found episode are
        candidates too (CX4); with a `scorer`, or a context whose width or weight is 0, it is
        the episode's own score. Items outside a task are scored alone.
    CA3 recency halves over the policy's half-life or, with `stretch_half_life`, over the
        age of the oldest candidate if that is longer (its recency is then 1/2): never
        faster than the policy says.
    CA4 the semantic and the episodic layers each offer at most `candidate_pool`
        candidates, their best by raw relevance: the episodic layer cuts its windows (up to
        2 · width + 1 around each of `Context.hits` hits) to the pool, ties to the smaller
        id (CX5). The current task's working items (with no task in progress, all of the
        user's) and the triggered procedures all enter, each saying which.
"""

from collections.abc import Iterable

from ..core.clock import DAY
from ..core.decay import DecaySettings, ForgettingCurve
from ..core.text import tokenize
from ..retrieval.scoring import analyze
from ..storage.item import MemoryItem
from ..storage.store import SCORE_DIGITS, Store
from .context import in_context
from .recall import Candidate, RecallPolicy, Recalled, Scale, score

__all__ = ["gather"]


def _hits(
    store: Store,
    user_id: str,
    level: str,
    query: str,
    terms: list[str],
    policy: RecallPolicy,
    extra: int = 0,
) -> list[tuple[MemoryItem, float]]:
    """Return the level's best candidates with their raw relevance, best first: at most
    `candidate_pool` and `extra` more.

    `terms` are the query's analysed terms (`analyze(query)`), found once per recall.
    """
    pool = policy.candidate_pool + extra
    if policy.scorer is None:
        found = store.search(user_id, level, terms, pool)
    else:
        items = store.matching(user_id, level, terms)
        scorer = policy.scorer()
        for item in items:
            scorer.add(item.id, scorer.analyzer(item.content))
        scores = dict(scorer.score_candidates(scorer.analyzer(query)))
        ranked = sorted(
            ((item, scores.get(item.id, 0.0)) for item in items), key=lambda pair: -pair[1]
        )
        found = [pair for pair in ranked[:pool] if pair[1] > 0]
    # Rounded so that two stores summing the same terms in another order rank alike (S8).
    return [(item, round(raw, SCORE_DIGITS)) for item, raw in found]


def _episodes(
    store: Store, user_id: str, query: str, terms: list[str], policy: RecallPolicy
) -> list[tuple[MemoryItem, float, float]]:
    """Return the episodic candidates, each with its raw relevance and context part (CA2, CA4)."""
    hits = _hits(store, user_id, "episodic", query, terms, policy)
    if policy.scorer is not None or not policy.context.active:
        return [(item, raw, 0.0) for item, raw in hits]
    # Windows around 20 hits number up to 100: the layer still offers only its pool's best.
    pool = in_context(
        store, user_id, "episodic", terms, hits, policy.context, policy.candidate_pool
    )
    return [(window.item, window.raw, window.context) for window in pool]


def _half_life(candidates: list[Candidate], now: float, policy: RecallPolicy) -> float:
    """Return the seconds over which recency halves in this recall (CA3)."""
    # Over the span of these candidates, never faster than the policy says.
    oldest = max((now - candidate.item.last_access_at for candidate in candidates), default=0.0)
    stretched = oldest if policy.stretch_half_life else 0.0
    return max(policy.recency_half_life_days * DAY, stretched)


def _named(candidates: list[Candidate], query: str) -> frozenset[str]:
    """Return the candidates' speakers every word of whom the query holds (Q7)."""
    asked = set(tokenize(query))
    speakers = {candidate.item.metadata.get("speaker") for candidate in candidates}
    return frozenset(
        speaker
        for speaker in speakers
        if isinstance(speaker, str) and tokenize(speaker) and set(tokenize(speaker)) <= asked
    )


def gather(
    store: Store,
    user_id: str,
    query: str,
    policy: RecallPolicy,
    now: float,
    task_id: str | None,
    procedures: Iterable[tuple[MemoryItem, str]],
    include_invalid: bool = False,
    unreadable: frozenset[str] = frozenset(),
    curve: ForgettingCurve = DecaySettings.curve,
    leave_out: frozenset[str] = frozenset(),
) -> list[Recalled]:
    """Score the candidates of each layer: working, semantic, episodic if thin, procedural (CA1).

    `unreadable` names stored facts and tasks the user's layers and tasks could not read (FA4,
    N8): no candidates (MG8). `leave_out` names facts to gather as if they were not stored
    (MG9): no candidates, and no place in the pool (CA4).
    Recency falls along `curve`, the forgetting curve of the caller's decay (Q9).
    """
    terms = analyze(query)
    working = _hits(store, user_id, "working", query, terms, policy)
    relevant = {item.id: raw for item, raw in working}
    # With no task in progress, the list is the user's working items written outside a task.
    reason = "working memory of the current task" if task_id else "working memory, no task"
    matched = [
        Candidate(item, relevant.get(item.id, 0.0), reason)
        for item in store.list(user_id, "working", task_id)
        if item.id not in unreadable
    ]
    found = _hits(store, user_id, "semantic", query, terms, policy, len(leave_out))
    pooled = [(item, raw) for item, raw in found if item.id not in leave_out]
    facts = [
        (item, raw)
        for item, raw in pooled[: policy.candidate_pool]
        if (item.is_valid or include_invalid) and item.id not in unreadable
    ]
    for item, raw in facts:
        reason = "semantic fact" if item.is_valid else "semantic fact, superseded"
        matched.append(Candidate(item, raw, reason))
    valid = sum(item.is_valid for item, _ in facts)
    if valid < policy.thin_semantic:
        reason = f"episode (semantic memory had {valid} relevant fact(s))"
        for item, raw, context in _episodes(store, user_id, query, terms, policy):
            matched.append(Candidate(item, raw, reason, context))
    best = max((candidate.raw for candidate in matched), default=0.0) or 1.0
    # A triggered procedure counts as relevant as the best match: its relevance is 1.
    triggered = [
        Candidate(item, best, f"procedure triggered by {trigger}") for item, trigger in procedures
    ]
    candidates = matched + triggered
    half_life = _half_life(candidates, now, policy)
    scale = Scale(now, best, half_life, _named(candidates, query), curve)
    return [score(candidate, scale, policy.weights) for candidate in candidates]
