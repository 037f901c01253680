"""Agent: the six-stage loop through which both memories serve one task.

Document 000 §2.3: (1) initialise: goal into working memory, similar episodes retrieved;
(2) decide: prompt = working memory, then experience; (3) act; (4) observe: the result into
working memory; (5) update: compress, mark progress; (6) settle: the whole task becomes an
episode. §3.3: retrieve rarely (start, new phase, after a failure), update often. The
prototype saved only the window; the episode keeps the whole trajectory, however it ends.

Invariants:
    A1  a run executes at most `max_steps` actions and asks the LLM at most `max_steps` times.
    A2  every run writes exactly one episode, whatever ends it (FINISH, a failed step,
        `max_steps`, or an exception from the LLM or the action).
    A3  the goal is in every prompt the LLM receives.
    A4  experience is recalled, and the extra sections refreshed, at the start, when a
        subtask completes and after a failed step that does not end the run, never on other
        steps.
    A5  a recalled episode is reinforced (decay) at most once per run, however often it returns.
    A6  a reply the tool handler answers is never executed as an action; it uses one of the
        `max_steps` calls; the prompt keeps the last `tool_answers_kept` answers.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .decay import DecayManager
from .episodic import EpisodicMemory, RetrievalSettings
from .prompt import FINISH, ContextSection, build_prompt, completes, noted_values, subtask_options
from .records import Episode, Hit, RunResult, StageEvent
from .text import estimate_tokens, flatten, looks_like_failure, normalize
from .validation import require_count, require_text
from .working import WorkingMemory

__all__ = [
    "RecurisAgent",
    "AgentSettings",
    "Experience",
    "EpisodicExperience",
    "ContextSource",
    "Tools",
]


@dataclass(frozen=True)
class AgentSettings:
    """How long a run may go, what ends it, and how much experience each recall brings."""

    max_steps: int = 15  # actions, and model calls, per run at most (A1)
    max_failures: int = 1  # failed steps that end a run; the first, as in document 000
    # How many episodes each recall brings, and how similar they must be (E1, E2).
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    tool_answers_kept: int = 3  # the tools' latest answers each prompt keeps (A6)

    def __post_init__(self) -> None:
        require_count("A1: max_steps", self.max_steps, minimum=1)
        require_count("A4: max_failures", self.max_failures, minimum=1)
        require_count("A6: tool_answers_kept", self.tool_answers_kept, minimum=0)
        if not isinstance(self.retrieval, RetrievalSettings):
            kind = type(self.retrieval).__name__
            raise TypeError(f"A4: retrieval must be a RetrievalSettings, got {kind}")


class Experience(Protocol):
    """Memory across tasks: `begin` a run, `recall` similar episodes (stages 1, 5), `settle` (6).

    `episodic` is the episodic memory the experience settles into.
    """

    episodic: EpisodicMemory

    def begin(self) -> None: ...
    def recall(self, query: str, task_type: str, retrieval: RetrievalSettings) -> list[Hit]: ...
    def settle(self, episode: Episode) -> Episode: ...


class ContextSource(Protocol):
    """An extra prompt section, refreshed whenever experience is recalled (A4).

    `section` is given the query, the task type and the episodes just recalled (so that it
    need not repeat them); its section appears only when it has lines.
    """

    def section(self, query: str, task_type: str, hits: Sequence[Hit]) -> ContextSection: ...


class Tools(Protocol):
    """Tools the model may call: `instruction` ends each prompt; `respond` answers a call.

    `respond` returns None when the reply is an action, not a call.
    """

    instruction: str

    def respond(self, reply: str) -> ContextSection | None: ...


class EpisodicExperience:
    """Experience from one episodic memory: similar episodes, each reinforced once per run (A5)."""

    def __init__(self, episodic: EpisodicMemory, decay: DecayManager | None = None) -> None:
        self.episodic = episodic
        self.decay = decay
        self.reinforced: set[str] = set()

    def begin(self) -> None:
        self.reinforced = set()

    def recall(self, query: str, task_type: str, retrieval: RetrievalSettings) -> list[Hit]:
        hits = self.episodic.retrieve_settled(query, retrieval)
        for hit in hits:
            # Re-reading the same memory within one task is not new use (A5).
            if self.decay is not None and hit.episode.id not in self.reinforced:
                self.decay.on_access(hit.episode)
                self.episodic.save(hit.episode)
            self.reinforced.add(hit.episode.id)
        return hits

    def settle(self, episode: Episode) -> Episode:
        return self.episodic.add_episode(episode)

    def __repr__(self) -> str:
        return f"EpisodicExperience({self.episodic!r}, decay={self.decay!r})"


@dataclass
class RunState:
    """What one run keeps beside working memory: made by `run()`, gone when it ends."""

    query: str  # what experience is recalled with: the task type and the goal
    task_type: str
    hits: list[Hit] = field(default_factory=list)  # the episodes the prompt shows
    sections: list[ContextSection] = field(default_factory=list)  # the extra sections
    tool_answers: list[ContextSection] = field(default_factory=list)  # the latest (A6)
    # Every value given for a slot text, normalised: by a step's note or a section (P3).
    known: dict[str, list[str]] = field(default_factory=dict)
    retrievals: int = 0
    failures: int = 0

    def learn(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Remember each (slot text, value) pair as a value given for the slot."""
        for slot, value in pairs:
            self.known.setdefault(normalize(slot), []).append(value)


class RecurisAgent:
    """Run tasks with an LLM, remembering within a task and across tasks.

    `experience` is where episodes are recalled from and settled into: an `EpisodicMemory`
    (recalled as `EpisodicExperience(memory)`, without decay) or any `Experience`.
    `context` adds prompt sections, `tools` what the model may call; `is_failure` judges a
    step's result; `observer` hears each stage.
    """

    def __init__(
        self,
        working_memory: WorkingMemory,
        experience: Experience | EpisodicMemory,
        llm_fn: Callable[[str], str],
        settings: AgentSettings | None = None,
        *,
        context: Sequence[ContextSource] = (),
        tools: Tools | None = None,
        is_failure: Callable[[str], bool] = looks_like_failure,
        observer: Callable[[StageEvent], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Raises TypeError unless `settings` is an AgentSettings (which checks its values).

        No settings: `AgentSettings()`, the defaults.
        """
        if settings is None:
            settings = AgentSettings()
        if not isinstance(settings, AgentSettings):
            raise TypeError(f"settings must be an AgentSettings, got {type(settings).__name__}")
        if isinstance(experience, EpisodicMemory):
            experience = EpisodicExperience(experience)
        self.working = working_memory
        self.experience = experience
        self.llm_fn = llm_fn
        self.settings = settings
        self.context = tuple(context)
        self.tools = tools
        self.is_failure = is_failure
        self.observer = observer
        self.clock = clock

    def run(
        self,
        task_goal: str,
        task_type: str,
        action_fn: Callable[[str], str],
        subtasks: Sequence[str] | None = None,
        constraints: Sequence[str] = (),
    ) -> RunResult:
        """Run one task to FINISH, failure or `max_steps`; write and return its episode (A2).

        Raises TypeError/ValueError for a bad goal, type, subtask or constraint, first. An
        exception from the observer or `is_failure` settles the episode as failed, then
        propagates.
        """
        require_text("task_type", task_type)
        self.working.init_task(task_goal, subtasks)
        for constraint in constraints:
            self.working.pin(constraint)
        run = RunState(f"{task_type} {task_goal}", task_type)
        self.experience.begin()
        try:
            status, reason = self._loop(run, action_fn)
        except Exception as error:
            aborted = f"run aborted by {type(error).__name__}: {error}"
            self._settle(task_goal, task_type, "failed", aborted)
            raise
        episode = self._settle(task_goal, task_type, status, reason)
        steps = len(episode.trajectory)
        return RunResult(status == "success", status, steps, episode, reason, run.retrievals)

    def _loop(self, run: RunState, action_fn: Callable[[str], str]) -> tuple[str, str]:
        self._recall(run, 1, "task start")
        for number in range(1, self.settings.max_steps + 1):
            prompt = build_prompt(
                self.working.to_prompt_section(),
                run.hits,
                run.sections,
                run.tool_answers,
                self.tools.instruction if self.tools else "",
            )
            # The model and the environment are untrusted: an exception or a reply that
            # is not text ends the task as failed, with the reason, never the process.
            try:
                action = self.llm_fn(prompt)
            except Exception as error:
                return "failed", f"llm_fn raised {type(error).__name__}: {error}"
            if not isinstance(action, str) or not action.strip():
                return "failed", f"llm_fn returned {flatten(repr(action), 80)}, not an action"
            action = action.strip()
            tokens = estimate_tokens(prompt)
            self._emit(2, f"step {number}: prompt of {tokens} tokens -> {flatten(action, 80)!r}")
            if action.upper() == FINISH:
                return "success", ""
            answer = self.tools.respond(action) if self.tools is not None else None
            if answer is not None:
                # Answered, never executed; the latest answers stay in the prompt (A6).
                kept = self.settings.tool_answers_kept
                run.tool_answers = [*run.tool_answers, answer][-kept:] if kept else []
                run.learn(answer.values)
                self._emit(2, "tool call: answered from memory")
                continue
            try:
                result = action_fn(action)
                if not isinstance(result, str):
                    raise TypeError(f"action_fn returned {type(result).__name__}, not text")
            except Exception as error:
                # Keep the failed step in the trajectory: the episode then says where it broke.
                result = f"action raised {type(error).__name__}: {error}"
                self.working.add_step(action, result, failed=True)
                return "failed", f"step {number}: {flatten(result, 200)}"
            self._emit(3, f"executed {flatten(action, 80)!r}")
            failed = bool(self.is_failure(result))
            folded = len(self.working.compressed_steps)
            step = self.working.add_step(action, result, failed)
            run.learn(noted_values(result))
            self._emit(4, step.render(80))
            if len(self.working.compressed_steps) > folded:
                chars = len(self.working.summary)
                self._emit(
                    5, f"window full: step {folded + 1} folded into the summary ({chars} chars)"
                )
            if failed:
                run.failures += 1
                if run.failures >= self.settings.max_failures:
                    return "failed", f"step {number} failed: {flatten(result, 200)}"
                self._recall(run, 5, "after a failed step")
            elif self._complete_subtask(run, action):
                self._recall(run, 5, "new phase")
        return "failed", f"reached max_steps ({self.settings.max_steps}) without {FINISH}"

    def _complete_subtask(self, run: RunState, action: str) -> bool:
        for subtask in self.working.pending_subtasks:
            options = subtask_options(subtask)
            if any(completes(action, option, run.known) for option in options):
                self.working.mark_done(subtask)
                self._emit(5, f"subtask done: {flatten(subtask, 80)!r}")
                return True
        return False

    def _recall(self, run: RunState, stage: int, why: str) -> None:
        retrieval = self.settings.retrieval
        run.hits = self.experience.recall(run.query, run.task_type, retrieval)
        run.sections = [
            source.section(run.query, run.task_type, run.hits) for source in self.context
        ]
        for section in run.sections:
            run.learn(section.values)
        run.retrievals += 1
        found = "; ".join(
            f"{hit.episode.id} ({hit.episode.status}, {hit.score:.2f})" for hit in run.hits
        )
        recalled = tuple(hit.episode.id for hit in run.hits)
        detail = f"retrieve ({why}): {found or 'nothing above the threshold'}"
        self._emit(stage, detail, recalled)

    def _settle(self, goal: str, task_type: str, status: str, reason: str) -> Episode:
        episode = Episode(
            task_type=task_type,
            goal=goal,
            status=status,
            trajectory=self.working.trajectory,
            summary=self.working.summary,
            failure_reason=reason,
            created_at=self.clock(),
        )
        episode = self.experience.settle(episode)
        ending = f" ({reason})" if reason else ""
        self._emit(6, f"{episode.id} written: {status}, {len(episode.trajectory)} steps{ending}")
        return episode

    def _emit(self, stage: int, detail: str, recalled: tuple[str, ...] | None = None) -> None:
        if self.observer is not None:
            self.observer(StageEvent(stage, detail, recalled))
