"""Lessons: a failure that a later outcome in the same situation contradicts is contested.

Document 000 §3.2 shows a failed episode as a path to avoid, and that stays the rule. A world
changes, though, and changes back: the registry that failed in March works in May. A lesson
is a failed action after the actions done before it; when a later task in the same situation
(the same action after the same actions, its goal passing the retrieval threshold against the
lesson's) did the action without failing, the lesson is contradicted. Shown as a path to avoid
it would keep the agent off a way that works now; dropped, it would be lost when the world
changes back. It is shown as contested instead (the core's prompt layout, P5): every outcome of
the situation, newest first, so that the newest one decides.

Document 003 §4.2 consolidates what is seen consistently across episodes into a fact citing
them, which decays as slowly as consolidated memory does; an episode alone is forgotten after
a few unused weeks, and the mistake comes back with the next similar task. A lesson that
recurred (two past tasks, their goals alike, failed at the same action after the same actions)
or that saved a task (a task shown it did the actions before and not the failed one, and
worked) becomes such a fact, unless `ExperienceSettings.consolidate` is off: its subject the
task type and the path, its value the goals, its sources the episodes. It is recalled like an
episode (its task type and goals scored against the query) and shown as what it is, a path to
avoid; a later outcome that contradicts it contests it as it contests an episode, and a
contested lesson is never consolidated.

A task that comes back after longer than the forgetting horizon finds the episode of its
first failure gone, and a mistake made once every month would never be seen twice. Document
003's minimal consolidator counts each candidate apart from the memories it came from, so
each failure's lesson is kept as a fact seen once (its goals after SEEN_ONCE, under the
lesson's subject, where a consolidated lesson's follow LEARNED): never shown, it stands for
the episode when the mistake is made again, and the lesson it then becomes supersedes it.

Invariants:
    LS1 a hit is contested iff it failed at an action and an episode of the pool created after
        it did that action without failing after the same actions done, its task type and goal
        scoring at least the threshold against the lesson's (a lesson read back from its fact
        scores as its nearest goal).
    LS2 a contested hit keeps its episode and score; it renders (P5) every outcome of its
        situation among the pool, the lesson's own included, newest first: the episodes that
        did the action after the same actions, worked or failed, whose goals pass the threshold.
    LS3 `recall_lessons` returns the first `top_k` of `settled_candidates` (DG4), each hit
        contested as LS1 says: the same episodes, in the same order, as `retrieve_settled`;
        given consolidated lessons, those scoring at least the threshold by their nearest goal
        (none of whose failed sources is a candidate) are candidates beside the episodes, in
        order of score.
    LS4 `to_consolidate` returns a lesson only if it recurred (another episode of the pool,
        or a lesson stated as a fact of the same task type that no episode of the pool
        contests, alike by LS1's test, failed in the same situation) or saved the episode (a
        shown lesson whose actions before it the episode did, then not its action, and
        worked), and only if no episode of the pool contests it (LS1); its sources are those
        episodes, a stated lesson standing for the episodes it cites, never for its fact.
    LS5 a lesson read back from its fact (`read_lesson`) is a failed episode with the fact's
        id, task type, goals, time, the actions before it and the failed action: it renders
        as a path to avoid; a fact that is not a lesson, or a lesson seen once, reads as None.
    LS6 given the actions done so far (`step`), `recall_lessons` adds after the top `top_k`
        the lessons about the step at hand: of the settled candidates beyond them, best first,
        each that failed after exactly those actions, at an action no hit shown already
        failed at after them; without `step` it adds nothing.
    LS7 `lesson_of` is the lesson of a failed episode (its situation, goal and id), None for
        one that did not fail; stated as a fact (`lesson_fact(..., once=True)`) it has
        the consolidated lesson's subject and its goals after SEEN_ONCE (a consolidated
        lesson's follow LEARNED, so that a goal's own words never make a lesson stored so
        read as the other kind), and reads back only with `read_lesson(..., once=True)`.
"""

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from ..core.episodic import EpisodicMemory, RetrievalSettings
from ..core.prompt import render_contested
from ..core.records import Episode, Hit, Step
from ..core.similarity import jaccard
from ..core.text import flatten
from .settling import (
    as_query,
    candidates_and_evidence,
    compared_words,
    done_actions,
    done_before,
    retrieve_settled,
    settle,
    situation,
)

__all__ = [
    "ContestedHit",
    "Lesson",
    "LESSON",
    "contest",
    "alike",
    "at_step",
    "lesson_fact",
    "read_lesson",
    "recall_lessons",
    "situation",
    "to_consolidate",
    "lesson_of",
    "SEEN_ONCE",
    "LEARNED",
    "GOALS",
    "lesson_value",
]

# A consolidated lesson's subject opens with this word, then its task type and path.
LESSON = "lesson"
# A lesson seen once, kept until it recurs, states its goals after these words (LS7); its
# subject is the lesson's, so that the lesson, once consolidated, supersedes it (F2).
SEEN_ONCE = "seen once: "
# A consolidated lesson states its goals after these words: a goal that itself begins with
# SEEN_ONCE's words is then read as a goal, not as the mark (LS7).
LEARNED = "learned from: "
GOALS = " | "  # between the goals of a lesson's value
PATH = " -> "  # between the actions of a lesson's path


@dataclass(frozen=True)
class Lesson:
    """A lesson worth a fact: where it was learned and the episodes it cites (LS4)."""

    task_type: str
    before: tuple[str, ...]
    action: str
    goals: tuple[str, ...]
    sources: tuple[str, ...]


@dataclass(frozen=True)
class ContestedHit(Hit):
    """A retrieved lesson that a later outcome contradicts, with every outcome newest first."""

    action: str = ""
    outcomes: tuple[tuple[str, bool], ...] = ()  # (goal, worked), newest first (LS2)

    def render(self) -> str:
        """Render as the core's contested line (P5), with the similarity that brought it."""
        line = render_contested(flatten(self.action, 120), self.outcomes)
        return f"{line} (similarity {self.score:.2f})"


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
    found_in_pool = {found.episode.id: found.episode for found in pool}
    for hit in hits:
        lesson = situation(hit.episode)
        if lesson is None:
            shown.append(hit)
            continue
        before, action = lesson
        outcomes = []
        others = {**found_in_pool, hit.episode.id: hit.episode}
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


def lesson_fact(lesson: Lesson, once: bool = False) -> tuple[str, str]:
    """Return a lesson's fact as (subject, value), its goals after SEEN_ONCE if `once`, after
    LEARNED if not."""
    path = PATH.join([*lesson.before, lesson.action])
    goals = GOALS.join(dict.fromkeys(lesson.goals))
    return f"{LESSON} {lesson.task_type}: {path}", f"{SEEN_ONCE if once else LEARNED}{goals}"


def lesson_value(value: str) -> tuple[bool, str]:
    """Return whether a lesson's value states a lesson seen once, and its goals (LS7).

    A value with neither mark, as consolidated lessons were first stored, is consolidated.
    """
    if value.startswith(SEEN_ONCE):
        return True, value.removeprefix(SEEN_ONCE)
    return False, value.removeprefix(LEARNED)


def read_lesson(
    fact_id: str, subject: str, value: str, created_at: float, once: bool = False
) -> Episode | None:
    """Return the lesson a fact states, as a failed episode under the fact's id (LS5).

    With `once`, the lesson seen once it states (LS7). None for any other fact.
    """
    head, colon, path = subject.partition(": ")
    if not head.startswith(f"{LESSON} ") or not colon or not path:
        return None
    seen_once, goals = lesson_value(value)
    if seen_once != once:
        return None
    actions = path.split(PATH)
    steps = [Step(number, action, "done") for number, action in enumerate(actions[:-1], 1)]
    steps.append(Step(len(actions), actions[-1], "failed (a consolidated lesson)", failed=True))
    return Episode(
        task_type=head[len(LESSON) + 1 :],
        goal=goals,
        status="failed",
        id=fact_id,
        trajectory=tuple(steps),
        failure_reason=f"failed at {actions[-1]}",
        created_at=created_at,
    )


def to_consolidate(
    episode: Episode,
    shown: Sequence[Hit],
    pool: Sequence[Hit],
    similar: Callable[[Episode, Episode], bool],
    stated: Sequence[tuple[Episode, tuple[str, ...]]] = (),
) -> list[Lesson]:
    """Return the lessons the finished episode makes worth a fact (LS4).

    `shown` are the hits its prompts showed, `pool` the episodes alike to it (its own recall's
    candidates), `similar` LS1's test of two episodes' goals, `stated` the lessons its user's
    facts state (seen once or consolidated), each read back as a failed episode with the ids
    of the episodes it cites.
    """
    found = []  # (the episode the lesson is read from, its situation, goals, sources)
    lesson = situation(episode)
    if lesson is not None:
        goals = []
        sources = []
        for hit in pool:
            other = hit.episode
            if other.id != episode.id and situation(other) == lesson and similar(episode, other):
                goals.append(other.goal)
                sources.append(other.id)
        # A lesson stated recurs even when the episodes that taught it are forgotten: its
        # goals and the episodes it cites stand for them.
        for earlier, cited in stated:
            if situation(earlier) != lesson or earlier.task_type != episode.task_type:
                continue
            # Contradicted since it was seen (the world changed), it does not recur.
            contested = isinstance(contest([Hit(1.0, earlier)], pool, similar)[0], ContestedHit)
            if not contested and similar(episode, earlier):
                goals.extend(earlier.goal.split(GOALS))
                sources.extend(cited)
        if sources:
            found.append((episode, lesson, [*goals, episode.goal], [*sources, episode.id]))
    elif episode.status == "success":
        done = done_actions(episode)
        # A stated lesson shown is read back under its fact's id: it cites its episodes.
        citing = {earlier.id: cited for earlier, cited in stated}
        for hit in shown:
            taught = situation(hit.episode)
            if isinstance(hit, ContestedHit) or taught is None:
                continue
            before, action = taught
            if tuple(done[: len(before)]) == before and action not in done:
                goals = [*hit.episode.goal.split(GOALS), episode.goal]
                cited = citing.get(hit.episode.id, (hit.episode.id,))
                found.append((hit.episode, taught, goals, [*cited, episode.id]))
    lessons = []
    for source, (before, action), goals, sources in found:
        # A lesson a later outcome contradicts is contested, and contested is not consolidated.
        if isinstance(contest([Hit(1.0, source)], pool, similar)[0], ContestedHit):
            continue
        cited = tuple(dict.fromkeys(sources))
        lessons.append(Lesson(source.task_type, before, action, tuple(goals), cited))
    return lessons


def lesson_of(episode: Episode) -> Lesson | None:
    """Return the lesson a failed episode teaches, to keep as seen once (LS7); None for one
    that did not fail."""
    lesson = situation(episode)
    if lesson is None:
        return None
    before, action = lesson
    return Lesson(episode.task_type, before, action, (episode.goal,), (episode.id,))


def recall_lessons(
    episodic: EpisodicMemory,
    query: str,
    retrieval: RetrievalSettings,
    settling: bool = True,
    contesting: bool = True,
    consolidated: Sequence[tuple[Episode, tuple[str, ...]]] = (),
    step: tuple[str, ...] | None = None,
) -> list[Hit]:
    """Return `retrieve_settled`'s hits, each contradicted lesson contested (LS3), and given
    the actions done (`step`), the lessons about the step at hand beside them (LS6).

    The outcomes that contest a lesson are read among the settled candidates, so that a twin's
    outcomes, settled away, contest nothing. `consolidated` are the lessons read back from
    their facts (LS5), each with its sources: candidates too when they pass the threshold.
    """
    if not consolidated and not contesting and step is None:
        return retrieve_settled(episodic, query, retrieval, settling)
    candidates, evidence = candidates_and_evidence(episodic, query, retrieval)
    scorer = episodic.scorer
    failed = {hit.episode.id for hit in candidates if hit.episode.status == "failed"}
    lessons = {lesson.id for lesson, _ in consolidated}
    asked = set(scorer.analyzer(query))
    for lesson, sources in consolidated:
        # A lesson whose failed episode is still a candidate says nothing that episode does
        # not; a success it cites (a task it saved) says nothing of the action.
        if failed.intersection(sources):
            continue
        # A lesson is as near as the nearest task it was learned from: its goals scored as one
        # text would make a lesson learned again and again the farthest from every query.
        readings = _readings(lesson, lessons)
        score = max(jaccard(asked, set(scorer.analyzer(text))) for text in readings)
        if score >= retrieval.threshold:
            candidates.append(Hit(score, lesson))
    candidates.sort(key=lambda hit: -hit.score)
    words = compared_words(episodic)
    pool = settle(candidates, query, words, evidence) if settling else candidates
    shown = pool[: retrieval.top_k]
    if step is not None:
        shown = [*shown, *at_step(pool[retrieval.top_k :], step, shown)]
    if not contesting:
        return shown
    return contest(shown, pool, alike(episodic, retrieval.threshold, lessons))


def at_step(hits: Sequence[Hit], done: tuple[str, ...], shown: Sequence[Hit]) -> list[Hit]:
    """Return the lessons about the step at hand (LS6): of the hits, best first, each first
    one that failed after exactly the actions `done`, at an action no shown hit failed at."""
    said = {situation(hit.episode) for hit in shown}
    found = []
    for hit in hits:
        lesson = situation(hit.episode)
        if lesson is None or lesson[0] != done or lesson in said:
            continue
        said.add(lesson)
        found.append(hit)
    return found


def _readings(episode: Episode, lessons: Collection[str]) -> list[str]:
    """Return the texts a past task is read as (`as_query`): its task type and goal; for a
    consolidated lesson (its id in `lessons`), its task type with each of its goals."""
    if episode.id not in lessons:
        return [as_query(episode.task_type, episode.goal)]
    return [as_query(episode.task_type, goal) for goal in episode.goal.split(GOALS)]


def alike(
    episodic: EpisodicMemory, threshold: float, lessons: Collection[str] = ()
) -> Callable[[Episode, Episode], bool]:
    """Return LS1's test: whether one episode's task type and goal score at least the
    threshold against another's (by the memory's scorer; one not stored, by Jaccard over
    the scorer's terms; a consolidated lesson, its id in `lessons`, by its nearest goal)."""
    scorer = episodic.scorer

    def similar(lesson: Episode, other: Episode) -> bool:
        readings = [scorer.analyzer(text) for text in _readings(lesson, lessons)]
        if episodic.get(other.id) is other:
            return any(scorer.score(terms, other.id) >= threshold for terms in readings)
        said = [set(scorer.analyzer(text)) for text in _readings(other, lessons)]
        return any(jaccard(set(terms), words) >= threshold for terms in readings for words in said)

    return similar
