"""Experience on a manager: the agent's loop run over every layer of one user's memory.

Document 000 §2.3 retrieves similar episodes at the start of a task; document 003 §4.4
recalls across layers (facts, procedures, events) and document 004 §3 lets the model ask
memory itself, through a `search_memory` tool. The experience layer's agent takes all three
by injection: an `Experience` to recall from and settle into, a `ContextSource` for a section
of its own, and a tool handler. This module builds the first two on a `MemoryManager` (the
third is `ActiveRecall`), so that `manager.agent(user_id, llm)` runs document 000's loop on
it, and teaches the mock model to read the section it adds.

Invariants:
    MX1 each recall returns the user's similar episodes; the recalled section then holds the
        manager's recall of the user's other memories, leaving out the episodes already shown,
        recalled as if the user's lessons (consolidated or seen once) were not stored (MG9).
    MX2 every memory a prompt shows, episodes included, counts as used: once per run, in the
        store, however often it returns.
    MX3 the finished episode is settled through the manager: stored with its audit record
        and the task's deletions in one transaction, then offered to extraction.
    MX4 unless told otherwise, a manager ranks episodes by `episode_scorer` (Jaccard over
        analysed terms) and its agent shows the `EPISODE_TOP_K` most similar, at least
        `EPISODE_THRESHOLD`, disagreements settled (experience/settling.py) and contradicted
        lessons contested (experience/lessons.py).
    MX5 with `consolidate` set (the default), a settled episode consolidates each lesson
        `to_consolidate` finds (LS4, given the hits its run was shown and the lessons the user's
        facts state) into a fact of the user's semantic memory citing its episodes (a lesson already
        a fact gains the new goals and sources); a failed episode none of whose lessons is
        consolidated is kept as a lesson seen once (LS7), unless a consolidated lesson states its
        situation, never among the hits nor in the recalled section (a `search_memory` call, which
        recalls all the user's memory, finds it); each recall offers the user's current lessons
        (LS5) as candidates beside the episodes, and a lesson shown counts as used (MX2).
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..core.agent import AgentSettings
from ..core.mock_llm import read_path
from ..core.prompt import ContextSection
from ..core.records import Episode, Hit
from ..core.semantic import Fact
from ..core.similarity import JaccardScorer
from ..core.working import WorkingMemory
from ..experience.agent import ExperienceAgent, ExperienceSettings
from ..experience.lessons import (
    GOALS,
    ContestedHit,
    Lesson,
    alike,
    lesson_fact,
    read_lesson,
    lesson_of,
    lesson_value,
    recall_lessons,
    to_consolidate,
)
from ..experience.settling import CANDIDATES, as_query
from ..evolution.stored_facts import fact_to_item
from ..experience.slot_llm import SlotFollowingLLM, SlotView
from ..retrieval.scoring import analyze
from ..storage.archives import episode_to_item
from .active_recall import (
    TOOL_RESULT_HEADER,
    ActiveRecall,
    ask_memory,
    read_answer,
    read_memory,
    read_memory_line,
)
from .recall import Recalled

__all__ = [
    "ManagedExperience",
    "EPISODE_THRESHOLD",
    "EPISODE_TOP_K",
    "agent_on_manager",
    "episode_scorer",
    "model_on_manager",
    "read_recalled",
    "recalled_section",
    "RECALLED_HEADER",
]

RECALLED_HEADER = "## Recalled memory (from the manager's recall: facts, procedures, events)"
# The least similarity a past task needs to be shown, for `episode_scorer`: one analysed term
# in twenty. Two phrasings of one task share few ("roll out the new build of the billing API
# on EU prod" and "deploy the storefront to the EU production cluster": 0.1 to 0.3), some
# only their task type; what a low bar lets in is cut by the top k and, where past tasks
# contradict each other, by `retrieve_settled` (experience/settling.py, MX4).
EPISODE_THRESHOLD = 0.05
# Past tasks shown at once: one more than the core's two, so that a task's own kind is shown
# beside a near miss that reads like it (settling.py settles what they contradict).
EPISODE_TOP_K = 3
# Besides the episodes shown, the recall brings this many more memories of the other layers.
OTHER_MEMORIES = 2
_PROCEDURE = re.compile(r"^- \[procedural\] [^:]*: (.*)$")


class ManagedExperience:
    """One user's experience in a manager: their episodes, then a section of every other layer.

    It is both the agent's `Experience` and a `ContextSource`: `recall` finds the episodes
    and the other memories together, and `section` shows the latter (MX1).
    """

    def __init__(self, manager, user_id: str) -> None:
        self.manager = manager
        self.user_id = user_id
        self.episodic = manager.users.get(user_id).episodic
        self.counted: set[str] = set()
        self.others: list[Recalled] = []  # the other memories found at the last recall
        self.shown: dict[str, Hit] = {}  # the run's hits, by id: a lesson may save it (MX5)
        self.settings = ExperienceSettings()  # the last recall's, for settling (MX5)

    def begin(self) -> None:
        self.counted = set()
        self.others = []
        self.shown = {}

    def lessons(self) -> tuple[dict[str, tuple[Episode, Fact]], dict[str, tuple[Episode, Fact]]]:
        """Return the user's current lessons by id, each with its fact: the consolidated ones
        (LS5), then those seen once (LS7)."""
        consolidated = {}
        seen = {}
        for fact in self.manager.users.get(self.user_id).semantic.current():
            once, _ = lesson_value(fact.value)
            lesson = read_lesson(fact.id, fact.subject, fact.value, fact.created_at, once)
            if lesson is not None:
                found = seen if once else consolidated
                found[fact.id] = (lesson, fact)
        return consolidated, seen

    def recall(
        self, query: str, task_type: str, settings: ExperienceSettings, done: Sequence[str] = ()
    ) -> list[Hit]:
        retrieval = settings.retrieval
        self.settings = settings
        lessons, seen = self.lessons()
        consolidated = [(lesson, fact.source_ids) for lesson, fact in lessons.values()]
        step = tuple(done) if settings.step_lessons else None
        hits = recall_lessons(
            self.episodic, query, retrieval, settings.settle, settings.contest, consolidated, step
        )
        # Lessons are the experience's: a consolidated one is a candidate among the episodes
        # (MX5), a lesson seen once is not shown at all (LS7; while it is stored, the episode
        # that taught it says it). The other memories are recalled as if neither were stored,
        # so that no lesson takes their place, nor makes semantic memory look full and keep
        # the episodes out (MG9, CA1).
        recalled = self.manager.recall(
            query,
            self.user_id,
            retrieval.top_k + OTHER_MEMORIES,
            task_type=task_type,
            count_access=False,
            leave_out={*lessons, *seen},
        )
        for hit in hits:
            # The run's hits, for consolidation: a lesson shown contested stays contested.
            if isinstance(hit, ContestedHit) or hit.episode.id not in self.shown:
                self.shown[hit.episode.id] = hit
        shown = {hit.episode.id for hit in hits}
        self.others = [result for result in recalled.results if result.item.id not in shown]
        # Every memory the prompt shows is a use, counted in the store once per run (MX2):
        # that is what keeps an episode in use from being forgotten by the next decay cycle.
        # Counted after the recall above, so that this recall's own ranking is unchanged.
        episodes = [
            Recalled(
                fact_to_item(lessons[hit.episode.id][1], self.user_id)
                if hit.episode.id in lessons
                else episode_to_item(hit.episode, self.user_id),
                {"relevance": hit.score},
                hit.score,
                "a similar past task",
            )
            for hit in hits
            if hit.episode.id not in self.counted
        ]
        others = [result for result in self.others if result.item.id not in self.counted]
        fresh = [*episodes, *others]
        self.manager.users.count_access(self.user_id, fresh)
        self.counted.update(result.item.id for result in fresh)
        return hits

    def section(self, query: str, task_type: str, hits: Sequence[Hit]) -> ContextSection:
        """Return the other memories found at the last recall, with the statements they make."""
        return recalled_section(self.others)

    def settle(self, episode: Episode) -> Episode:
        # The manager assigns the id and stores the episode in one transaction (MX3).
        self.manager.tasks.settle(self.user_id, episode)
        self.consolidate(episode)
        return episode

    def consolidate(self, episode: Episode) -> None:
        """Make each lesson the settled episode makes worth it a fact citing its episodes (MX5)."""
        if not self.settings.consolidate:
            return
        retrieval = self.settings.retrieval
        query = as_query(episode.task_type, episode.goal)
        pool = self.episodic.retrieve(query, retrieval.top_k * CANDIDATES, retrieval.threshold)
        # Read, then written: under the manager's lock, so that two agents of one user
        # neither lose a lesson's goals nor state one twice (TS1).
        with self.manager.tasks.lock:
            consolidated, seen = self.lessons()
            similar = alike(self.episodic, retrieval.threshold, consolidated)
            facts = [*seen.values(), *consolidated.values()]
            stated = [(lesson, fact.source_ids) for lesson, fact in facts]
            lessons = to_consolidate(episode, list(self.shown.values()), pool, similar, stated)
            for lesson in lessons:
                self.remember(lesson)
            first = lesson_of(episode)
            if first is not None and not lessons:
                self.remember(first, once=True)

    def remember(self, lesson: Lesson, once: bool = False) -> None:
        """Store a lesson as a fact (LS5), or as seen once (LS7) unless a consolidated lesson
        states its situation.

        A consolidated lesson already stored gathers the new goals and sources; a lesson seen
        once replaces the one stored.
        """
        semantic = self.manager.users.get(self.user_id).semantic
        subject, value = lesson_fact(lesson, once)
        sources = lesson.sources
        known = semantic.about(subject)
        current = known[0] if known else None
        stored_once, stated = lesson_value(current.value) if current is not None else (True, "")
        consolidated = not stored_once
        if once and consolidated:
            return  # the consolidated lesson stands (LS7)
        if consolidated:
            # The lesson learned again: its goals and sources gather in one fact.
            goals = [*stated.split(GOALS), *lesson.goals]
            sources = tuple(dict.fromkeys([*current.source_ids, *sources]))
            subject, value = lesson_fact(replace(lesson, goals=tuple(goals)))
        if semantic.knows(subject, value):
            return  # nothing new to say: the fact stands as it is (F2)
        reason = "a lesson seen once" if once else "a lesson consolidated"
        semantic.add(subject, value, sources, importance=1.0, reason=reason)

    def __repr__(self) -> str:
        return f"ManagedExperience(user={self.user_id!r})"


def episode_scorer() -> JaccardScorer:
    """Return the manager's episodic scorer: Jaccard over BM25's analysis (MX4).

    The core's default compares raw words; stop words and word forms then decide as much as
    the task's own words do.
    """
    return JaccardScorer(analyze)


def recalled_section(results: Sequence[Recalled]) -> ContextSection:
    """Return recalled memories as the recalled section: one `- [level] content` line each.

    Its values are the statements (`subject: value`) the memories make.
    """
    lines = tuple(f"- {result.render()}" for result in results)
    stated = [read_memory(result.item.content) for result in results]
    return ContextSection(RECALLED_HEADER, lines, tuple(pair for pair in stated if pair))


def read_recalled(line: str, view: SlotView) -> None:
    """Read a line of the recalled section: a procedure is a path to follow, a statement a value."""
    if match := _PROCEDURE.match(line):
        view.follow.append(read_path(match.group(1)))
    pair = read_memory_line(line)
    if pair:
        view.known.setdefault(*pair)


def model_on_manager(latest_wins: bool = False) -> SlotFollowingLLM:
    """Return the mock model reading also what a manager's agent adds to its prompts.

    It follows recalled procedures, takes recalled statements as slot values and asks
    `search_memory` for a slot nothing fills (once per slot).
    """
    readers = {RECALLED_HEADER: read_recalled, TOOL_RESULT_HEADER: read_answer}
    return SlotFollowingLLM(latest_wins, readers, ask_memory)


def agent_on_manager(
    manager,
    user_id: str,
    llm_fn: Callable[[str], str],
    settings: AgentSettings | None = None,
    *,
    working_memory: WorkingMemory | None = None,
    **injected,
) -> ExperienceAgent:
    """Build an agent on one user's memory in a manager; `working_memory` is optional.

    Without `settings`, the agent retrieves episodes as `ManagerSettings.episodes` says, and
    settles disagreements (MX4); an `AgentSettings` gets the experience layer's defaults.

    The other keywords are `ExperienceAgent`'s (`is_failure`, `observer`, `clock`). Its
    experience and recalled section come from the user's memory, and its tools answer
    `search_memory` calls from it.
    """
    experience = ManagedExperience(manager, user_id)
    if settings is None:
        settings = ExperienceSettings(retrieval=manager.settings.episodes)  # MX4
    return ExperienceAgent(
        working_memory or WorkingMemory(),
        experience,
        llm_fn,
        settings,
        context=[experience],
        tools=ActiveRecall(manager, user_id),
        **injected,
    )
