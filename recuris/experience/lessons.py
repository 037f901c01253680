"""Lessons: a failure that a later outcome in the same situation contradicts is contested.

Document 000 §3.2 shows a failed episode as a path to avoid, and that stays the rule. A world
changes, though, and changes back: the registry that failed in March works in May. A lesson
is a failed action after the actions done before it; when a later task in the same situation
(the same action after the same actions, its goal passing the retrieval threshold against the
lesson's) did the action without failing, the lesson is contradicted. Shown as a path to avoid
it would keep the agent off a way that works now; dropped, it would be lost when the world
changes back. It is shown as contested instead (the core's prompt layout, P5): every outcome of
the situation, newest first, so that the newest one decides.

Invariants:
    LS1 a hit is contested iff it failed at an action and an episode of the pool created after
        it did that action without failing after the same actions done, its task type and goal
        scoring at least the threshold against the lesson's.
    LS2 a contested hit keeps its episode and score; it renders (P5) every outcome of its
        situation among the pool, the lesson's own included, newest first: the episodes that
        did the action after the same actions, worked or failed, whose goals pass the threshold.
    LS3 `recall_lessons` returns the first `top_k` of `settled_candidates` (DG4), each hit
        contested as LS1 says: the same episodes, in the same order, as `retrieve_settled`.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..core.episodic import EpisodicMemory, RetrievalSettings
from ..core.prompt import render_contested
from ..core.records import Episode, Hit
from ..core.text import flatten, normalize
from .settling import (
    CANDIDATES,
    as_query,
    done_before,
    failed_at,
    retrieve_settled,
    settled_candidates,
)

__all__ = ["ContestedHit", "contest", "recall_lessons", "situation"]


@dataclass(frozen=True)
class ContestedHit(Hit):
    """A retrieved lesson that a later outcome contradicts, with every outcome newest first."""

    action: str = ""
    outcomes: tuple[tuple[str, bool], ...] = ()  # (goal, worked), newest first (LS2)

    def render(self) -> str:
        """Render as the core's contested line (P5), with the similarity that brought it."""
        line = render_contested(flatten(self.action, 120), self.outcomes)
        return f"{line} (similarity {self.score:.2f})"


def situation(episode: Episode) -> tuple[tuple[str, ...], str] | None:
    """Return a failed episode's lesson: the actions done before it failed, and the action."""
    action = failed_at(episode)
    if action is None:
        return None
    step = episode.failed_step
    earlier = episode.trajectory[: episode.trajectory.index(step)]
    return tuple(normalize(done.action) for done in earlier if not done.failed), action


def _outcome(episode: Episode, before: tuple[str, ...], action: str) -> bool | None:
    """Return whether the episode worked (True) or failed (False) at `action` after `before`,
    or None if it never met that situation."""
    if done_before(episode, action) == before:
        return True
    lesson = situation(episode)
    if lesson is not None and lesson == (before, action):
        return False
    return None


def contest(
    hits: Sequence[Hit], pool: Sequence[Hit], similar: Callable[[Episode, Episode], bool]
) -> list[Hit]:
    """Return the hits, each lesson that a later outcome in its situation contradicts contested
    (LS1, LS2). `similar` says whether two episodes' goals pass the retrieval threshold."""
    shown = []
    for hit in hits:
        lesson = situation(hit.episode)
        if lesson is None:
            shown.append(hit)
            continue
        before, action = lesson
        outcomes = []
        others = {found.episode.id: found.episode for found in pool}
        others[hit.episode.id] = hit.episode
        for other in others.values():
            worked = _outcome(other, before, action)
            if worked is None or not (other is hit.episode or similar(hit.episode, other)):
                continue
            outcomes.append((other.created_at, other.id, other.goal, worked))
        outcomes.sort(reverse=True)
        later = [worked for at, _, _, worked in outcomes if at > hit.episode.created_at]
        if not any(later):
            shown.append(hit)
            continue
        said = tuple((goal, worked) for _, _, goal, worked in outcomes)
        shown.append(ContestedHit(hit.score, hit.episode, hit.episode.failed_step.action, said))
    return shown


def recall_lessons(
    episodic: EpisodicMemory,
    query: str,
    retrieval: RetrievalSettings,
    settling: bool = True,
    contesting: bool = True,
) -> list[Hit]:
    """Return `retrieve_settled`'s hits, each contradicted lesson contested (LS3).

    The outcomes that contest a lesson are read among the settled candidates, so that a twin's
    outcomes, settled away, contest nothing.
    """
    if not contesting:
        return retrieve_settled(episodic, query, retrieval, settling)
    if settling:
        pool = settled_candidates(episodic, query, retrieval)
    else:
        pool = episodic.retrieve(query, retrieval.top_k * CANDIDATES, retrieval.threshold)
    scorer = episodic.scorer

    def similar(lesson: Episode, other: Episode) -> bool:
        terms = scorer.analyzer(as_query(lesson.task_type, lesson.goal))
        return scorer.score(terms, other.id) >= retrieval.threshold

    return contest(pool[: retrieval.top_k], pool, similar)
