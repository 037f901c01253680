"""Settling: past tasks that contradict each other about an action, settled by their words.

Document 000 §3.2 shows the most similar episodes and trusts them all; its §1.2 warns that
memory can mislead as well as help. Two tasks can read alike and live in worlds that differ
in one detail: "deploy the storefront to the EU cluster" fails at the internal registry, "deploy
the storefront to the US cluster" works through it. Shown both, an agent is told that the
action fails and that it works, and word similarity cannot say which applies: the twin
often scores higher than the task's own kind in other words. Their disagreement says what
similarity cannot: when the episodes that failed at an action share a word that none of
those that did it without failing has (or the other way round), that word is what the
outcome depends on, and a query holding it sides with that group.

Two kinds of disagreement are settled. Over one action: one episode failed at it, another
did it without failing. Over one step: two episodes failed at different actions after doing
the same ones (alternatives, each failing in its own world), which would rule both out.

Invariants:
    DG1 `settle` returns a subsequence of its hits, in their order; where no two of them
        disagree, over an action or over a step, it returns them all.
    DG2 a hit is left out only when it is on one side of a disagreement and the query holds
        a word that every hit of the other side holds and no hit of its side does, and no
        such word of its own side.
    DG3 a hit that the query sides with in one disagreement is never left out by another.
    DG4 `retrieve_settled` returns the first top_k of what `settle` leaves of the episodic
        memory's `retrieve` top_k · CANDIDATES (with `settle` off, `retrieve`'s top_k): a
        subsequence of `retrieve`'s hits, so E1-E3 hold.
"""

from collections.abc import Callable, Sequence

from ..core.episodic import EpisodicMemory, RetrievalSettings
from ..core.records import Episode, Hit
from ..core.text import normalize, tokenize

__all__ = ["settle", "retrieve_settled", "failed_at", "CANDIDATES"]

# `retrieve_settled` reads this many times `top_k` candidates, so that both sides of a
# disagreement can be among them, then keeps `top_k` of what `settle` leaves.
CANDIDATES = 4


def failed_at(episode: Episode) -> str | None:
    """Return the action a failed episode is shown failing at (its last failed step's,
    normalised), or None for an episode that did not fail."""
    step = episode.failed_step
    return normalize(step.action) if episode.status == "failed" and step else None


def _done(episode: Episode) -> set[str]:
    """Return every action the episode did without failing, a retry that worked included."""
    return {normalize(step.action) for step in episode.trajectory if not step.failed}


def _before(episode: Episode) -> tuple[str, ...]:
    """Return the actions done without failing before the step it is shown as failing at."""
    step = episode.failed_step
    earlier = episode.trajectory[: episode.trajectory.index(step)] if step else ()
    return tuple(normalize(other.action) for other in earlier if not other.failed)


def _telling(side: list[set[str]], other: list[set[str]]) -> set[str]:
    """Return the words every member of `side` holds and no member of `other` holds."""
    return set.intersection(*side) - set.union(*other)


def _sides(hits: Sequence[Hit]) -> list[tuple[list[str], list[str]]]:
    """Return each disagreement among the hits as its two sides, lists of episode ids."""
    failed = {hit.episode.id: failed_at(hit.episode) for hit in hits}
    done = {hit.episode.id: _done(hit.episode) for hit in hits}
    sides = []
    # Over an action: failed at it here, done without failing there.
    for action in sorted({action for action in failed.values() if action is not None}):
        failing = [key for key, at in failed.items() if at == action]
        working = [key for key, actions in done.items() if action in actions]
        if working:
            sides.append((failing, working))
    # Over a step: failed at different actions after doing the same ones.
    steps: dict[tuple, list[str]] = {}
    for hit in hits:
        at = failed[hit.episode.id]
        if at is not None:
            steps.setdefault((_before(hit.episode), at), []).append(hit.episode.id)
    ordered = sorted(steps)
    for number, one in enumerate(ordered):
        for other in ordered[number + 1 :]:
            if one[0] == other[0]:
                sides.append((steps[one], steps[other]))
    return sides


def settle(
    hits: Sequence[Hit], query: str, words: Callable[[str], Sequence[str]] = tokenize
) -> list[Hit]:
    """Leave out the hits whose advice the query's words side against (DG1-DG3).

    `words` splits a goal or the query into the words compared (the episodic scorer's
    analysis, say: stop words then decide nothing); the core's `tokenize` by default.
    """
    held = {hit.episode.id: set(words(hit.episode.goal)) for hit in hits}
    asked = set(words(query))
    losing: set[str] = set()
    winning: set[str] = set()
    for first, second in _sides(hits):
        first_words = _telling([held[key] for key in first], [held[key] for key in second])
        second_words = _telling([held[key] for key in second], [held[key] for key in first])
        # The query sides with one side only if it holds a word that tells that side apart
        # and none that tells the other: a query holding both, or neither, settles nothing.
        if asked & first_words and not asked & second_words:
            winning.update(first)
            losing.update(second)
        elif asked & second_words and not asked & first_words:
            winning.update(second)
            losing.update(first)
    # A hit the query sided with in one disagreement stays, whatever another one says (DG3).
    left_out = losing - winning
    return [hit for hit in hits if hit.episode.id not in left_out]


def retrieve_settled(
    episodic: EpisodicMemory, query: str, retrieval: RetrievalSettings, settling: bool = True
) -> list[Hit]:
    """Return up to `top_k` similar episodes, disagreements settled by the query (DG4).

    The `top_k` · `CANDIDATES` most similar above the threshold are read, `settle` leaves out
    those the query's words side against, and the first `top_k` of the rest come back, best
    first. With `settling` False, `retrieve`'s top k as they are.
    """
    if not settling:
        return episodic.retrieve(query, retrieval.top_k, retrieval.threshold)
    candidates = episodic.retrieve(query, retrieval.top_k * CANDIDATES, retrieval.threshold)
    # Settled on the words the scorer compares, so that what it leaves out (stop words,
    # word forms) decides nothing here either; a scorer of vectors has no words.
    scorer = episodic.scorer
    words = tokenize if scorer.persist else scorer.analyzer
    return settle(candidates, query, words)[: retrieval.top_k]
