"""Agent: the six-stage loop through which both memories serve one task.

Document 000 §2.3: (1) initialise: goal into working memory, similar episodes retrieved;
(2) decide: prompt = working memory, then experience; (3) act; (4) observe: the result into
working memory; (5) update: compress, mark progress; (6) settle: the whole task becomes an
episode. §3.3: retrieve rarely (start, new phase, after a failure), update often. The
prototype saved only the window; the episode keeps the whole trajectory, however it ends.

The loop calls a few named methods, `start`, `recall`, `prompt`, `answer_tool`,
`after_step`, `completes_option` and `settle_episode`: a layer above the core (the
experience layer's agent) extends the loop by overriding them, the loop itself unchanged.

Invariants:
    A1  a run executes at most `max_steps` actions and asks the LLM at most `max_steps` times.
    A2  every run writes exactly one episode, whatever ends it (FINISH, a failed step,
        `max_steps`, or an exception from the LLM or the action).
    A3  the goal is in every prompt the LLM receives.
    A4  experience is recalled at the start, when a subtask completes (the action is one of
        its options) and after a failed step that does not end the run, never on other steps;
        a recall returns exactly `EpisodicMemory.retrieve`'s hits for the run's query.
    A5  a recalled episode is reinforced (decay) at most once per run, however often it returns.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .decay import DecayManager
from .episodic import EpisodicMemory, RetrievalSettings
from .prompt import FINISH, build_prompt, subtask_options
from .records import Episode, Hit, RunResult, Step, StageEvent
from .text import estimate_tokens, flatten, looks_like_failure, normalize
from .validation import require_count, require_text
from .working import WorkingMemory

__all__ = ["RecurisAgent", "AgentSettings", "RunState", "reinforce_once"]


@dataclass(frozen=True)
class AgentSettings:
    """How long a run may go, what ends it, and how much experience each recall brings."""

    max_steps: int = 15  # actions, and model calls, per run at most (A1)
    max_failures: int = 1  # failed steps that end a run; the first, as in document 000
    # How many episodes each recall brings, and how similar they must be (E1, E2).
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)

    def __post_init__(self) -> None:
        require_count("A1: max_steps", self.max_steps, minimum=1)
        require_count("A4: max_failures", self.max_failures, minimum=1)
        if not isinstance(self.retrieval, RetrievalSettings):
            kind = type(self.retrieval).__name__
            raise TypeError(f"A4: retrieval must be a RetrievalSettings, got {kind}")


def reinforce_once(
    episodic: EpisodicMemory, decay: DecayManager | None, hits: Sequence[Hit], reinforced: set[str]
) -> None:
    """Reinforce each hit's episode that `reinforced` lacks through `decay`, then add its id (A5).

    A reinforced episode's decay fields are saved back through `episodic`; no decay: none.
    """
    for hit in hits:
        # Re-reading the same memory within one task is not new use (A5).
        if decay is not None and hit.episode.id not in reinforced:
            decay.on_access(hit.episode)
            episodic.save(hit.episode)
        reinforced.add(hit.episode.id)


@dataclass
class RunState:
    """What one run keeps beside working memory: made by `start()`, gone when the run ends."""

    query: str  # what experience is recalled with: the task type and the goal
    task_type: str
    hits: list[Hit] = field(default_factory=list)  # the episodes the prompt shows
    reinforced: set[str] = field(default_factory=set)  # the episodes reinforced (A5)
    retrievals: int = 0
    failures: int = 0


class RecurisAgent:
    """Run tasks with an LLM, remembering within a task and across tasks (document 000).

    `episodic` is where episodes are recalled from and settled into; `decay`, if given,
    reinforces each recalled episode once per run (A5). `is_failure` judges a step's result;
    `observer` hears each stage.
    """

    def __init__(
        self,
        working_memory: WorkingMemory,
        episodic: EpisodicMemory,
        llm_fn: Callable[[str], str],
        settings: AgentSettings | None = None,
        *,
        decay: DecayManager | None = None,
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
        self.working = working_memory
        self.episodic = episodic
        self.llm_fn = llm_fn
        self.settings = settings
        self.decay = decay
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
        run = self.start(f"{task_type} {task_goal}", task_type)
        try:
            status, reason = self._loop(run, action_fn)
        except Exception as error:
            aborted = f"run aborted by {type(error).__name__}: {error}"
            self._settle(task_goal, task_type, "failed", aborted)
            raise
        episode = self._settle(task_goal, task_type, status, reason)
        steps = len(episode.trajectory)
        return RunResult(status == "success", status, steps, episode, reason, run.retrievals)

    # -- what a layer above may override ----------------------------------------------
    def start(self, query: str, task_type: str) -> RunState:
        """Begin a run recalled with `query`: return the record it keeps its state in."""
        return RunState(query, task_type)

    def recall(self, run: RunState) -> list[Hit]:
        """Return the episodes similar to the run's query, each reinforced once per run (A4, A5)."""
        retrieval = self.settings.retrieval
        hits = self.episodic.retrieve(run.query, retrieval.top_k, retrieval.threshold)
        reinforce_once(self.episodic, self.decay, hits, run.reinforced)
        return hits

    def prompt(self, run: RunState) -> str:
        """Return the prompt of the next step: working memory, then experience (A3)."""
        return build_prompt(self.working.to_prompt_section(), run.hits)

    def answer_tool(self, run: RunState, reply: str) -> bool:
        """Return True if the reply was a tool call, answered instead of executed.

        The documents' agent offers no tools: every reply is an action.
        """
        return False

    def after_step(self, run: RunState, step: Step) -> None:
        """Take note of a step just added to working memory; the documents' agent needs none."""

    def completes_option(self, run: RunState, action: str, option: str) -> bool:
        """Return True if the action is this option of a pending subtask, in normalised words."""
        return normalize(action) == normalize(option)

    def settle_episode(self, episode: Episode) -> Episode:
        """Store the finished episode in episodic memory and return it, its id assigned."""
        return self.episodic.add_episode(episode)

    # -- the loop ---------------------------------------------------------------------
    def _loop(self, run: RunState, action_fn: Callable[[str], str]) -> tuple[str, str]:
        self._recall(run, 1, "task start")
        for number in range(1, self.settings.max_steps + 1):
            prompt = self.prompt(run)
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
            if self.answer_tool(run, action):
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
            self.after_step(run, step)
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
            if any(self.completes_option(run, action, option) for option in options):
                self.working.mark_done(subtask)
                self._emit(5, f"subtask done: {flatten(subtask, 80)!r}")
                return True
        return False

    def _recall(self, run: RunState, stage: int, why: str) -> None:
        run.hits = self.recall(run)
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
        episode = self.settle_episode(episode)
        ending = f" ({reason})" if reason else ""
        self._emit(6, f"{episode.id} written: {status}, {len(episode.trajectory)} steps{ending}")
        return episode

    def _emit(self, stage: int, detail: str, recalled: tuple[str, ...] | None = None) -> None:
        if self.observer is not None:
            self.observer(StageEvent(stage, detail, recalled))
