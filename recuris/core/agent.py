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
    A4  experience is recalled at the start, when a subtask completes and after a failed
        step that does not end the run, never on other steps.
    A5  a recalled episode is reinforced (decay) at most once per run, however often it returns.
    A6  a reply the tool handler answers is never executed as an action; it uses one of the
        `max_steps` calls; the prompt keeps the last three answers.
"""

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from .decay import DecayManager
from .episodic import EpisodicMemory, check_query
from .prompt import FINISH, build_prompt, matches_option, slot_values, subtask_options
from .records import Episode, Hit, RunResult, StageEvent
from .text import estimate_tokens, flatten, looks_like_failure
from .validation import require_count, require_text
from .working import WorkingMemory

__all__ = ["RecurisAgent", "Experience", "EpisodicExperience", "Tools"]


class Experience(Protocol):
    """Memory across tasks: `begin` a run; `recall` episodes and lines (stages 1, 5); `settle` (6)."""

    def begin(self) -> None: ...
    def recall(self, query: str, task_type: str) -> tuple[list[Hit], list[str]]: ...
    def settle(self, episode: Episode) -> Episode: ...


class Tools(Protocol):
    """Tools the model may call: `instruction` ends each prompt; `respond` answers a call, or None."""

    instruction: str

    def respond(self, reply: str) -> str | None: ...


class EpisodicExperience:
    """Experience from one episodic memory: similar episodes, each reinforced once per run (A5)."""

    def __init__(
        self,
        episodic: EpisodicMemory,
        top_k: int = 2,
        threshold: float = 0.25,
        decay: DecayManager | None = None,
    ) -> None:
        check_query(top_k, threshold)
        self.episodic, self.top_k, self.threshold, self.decay = episodic, top_k, threshold, decay
        self.reinforced: set[str] = set()

    def begin(self) -> None:
        self.reinforced = set()

    def recall(self, query: str, task_type: str) -> tuple[list[Hit], list[str]]:
        hits = self.episodic.retrieve(query, self.top_k, self.threshold)
        for hit in hits:
            # Re-reading the same memory within one task is not new use (A5).
            if self.decay is not None and hit.episode.id not in self.reinforced:
                self.decay.on_access(hit.episode)
                self.episodic.save(hit.episode)
            self.reinforced.add(hit.episode.id)
        return hits, []

    def settle(self, episode: Episode) -> Episode:
        return self.episodic.add_episode(episode)


class RecurisAgent:
    """Run tasks with an LLM, remembering within a task and across tasks."""

    def __init__(
        self,
        working_memory: WorkingMemory,
        episodic_memory: EpisodicMemory,
        llm_fn: Callable[[str], str],
        max_steps: int = 15,
        *,
        top_k: int | None = None,
        threshold: float | None = None,
        decay: DecayManager | None = None,
        experience: Experience | None = None,
        tools: Tools | None = None,
        max_failures: int = 1,
        is_failure: Callable[[str], bool] = looks_like_failure,
        observer: Callable[[StageEvent], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Build the loop; `experience` replaces recall from `episodic_memory` (top_k 2, threshold 0.25).

        Raises ValueError for max_steps or max_failures below 1 (A1), a bad top_k or threshold,
        or top_k, threshold or decay given beside an experience, which holds its own.
        """
        self.max_steps = require_count("A1: max_steps", max_steps, minimum=1)
        self.max_failures = require_count("max_failures", max_failures, minimum=1)
        self.working, self.episodic, self.llm_fn = working_memory, episodic_memory, llm_fn
        if experience is not None and (top_k, threshold, decay) != (None, None, None):
            raise ValueError(
                "top_k, threshold and decay belong to the experience given: pass them to it"
            )
        self.experience = experience or EpisodicExperience(
            episodic_memory,
            2 if top_k is None else top_k,
            0.25 if threshold is None else threshold,
            decay,
        )
        self.is_failure, self.tools, self.observer, self.clock = is_failure, tools, observer, clock

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
        exception from the observer or `is_failure` settles the episode as failed, then propagates.
        """
        require_text("task_type", task_type)
        self.working.init_task(task_goal, subtasks)
        for constraint in constraints:
            self.working.pin(constraint)
        self._retrievals, self._task_type, self._recalled, self._tool_answers = 0, task_type, [], []
        self.experience.begin()
        try:
            status, reason = self._loop(f"{task_type} {task_goal}", action_fn)
        except Exception as error:
            self._settle(
                task_goal, task_type, "failed", f"run aborted by {type(error).__name__}: {error}"
            )
            raise
        episode = self._settle(task_goal, task_type, status, reason)
        steps = len(episode.trajectory)
        return RunResult(status == "success", status, steps, episode, reason, self._retrievals)

    def _loop(self, query: str, action_fn: Callable[[str], str]) -> tuple[str, str]:
        hits = self._retrieve(query, 1, "task start")
        failures = 0
        for number in range(1, self.max_steps + 1):
            prompt = build_prompt(
                self.working.to_prompt_section(),
                hits,
                self._recalled,
                self._tool_answers,
                self.tools.instruction if self.tools else "",
            )
            self._slot_values = slot_values(prompt)
            # The model and the environment are untrusted: an exception or a reply that
            # is not text ends the task as failed, with the reason, never the process.
            try:
                action = self.llm_fn(prompt)
            except Exception as error:
                return "failed", f"llm_fn raised {type(error).__name__}: {error}"
            if not isinstance(action, str) or not action.strip():
                return "failed", f"llm_fn returned {flatten(repr(action), 80)}, not an action"
            action, tokens = action.strip(), estimate_tokens(prompt)
            self._emit(2, f"step {number}: prompt of {tokens} tokens -> {flatten(action, 80)!r}")
            if action.upper() == FINISH:
                return "success", ""
            if self.tools is not None and (answer := self.tools.respond(action)) is not None:
                # Answered, never executed; the last three answers stay in the prompt (A6).
                self._tool_answers = [*self._tool_answers, answer][-3:]
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
            self._emit(4, step.render(80))
            if len(self.working.compressed_steps) > folded:
                chars = len(self.working.summary)
                self._emit(
                    5, f"window full: step {folded + 1} folded into the summary ({chars} chars)"
                )
            if failed:
                failures += 1
                if failures >= self.max_failures:
                    return "failed", f"step {number} failed: {flatten(result, 200)}"
                hits = self._retrieve(query, 5, "after a failed step")
            elif self._complete_subtask(action):
                hits = self._retrieve(query, 5, "new phase")
        return "failed", f"reached max_steps ({self.max_steps}) without {FINISH}"

    def _complete_subtask(self, action: str) -> bool:
        for subtask in self.working.pending_subtasks:
            if any(
                matches_option(action, option, self._slot_values)
                for option in subtask_options(subtask)
            ):
                self.working.mark_done(subtask)
                self._emit(5, f"subtask done: {flatten(subtask, 80)!r}")
                return True
        return False

    def _retrieve(self, query: str, stage: int, why: str) -> list[Hit]:
        hits, self._recalled = self.experience.recall(query, self._task_type)
        self._retrievals += 1
        found = "; ".join(
            f"{hit.episode.id} ({hit.episode.status}, {hit.score:.2f})" for hit in hits
        )
        self._emit(stage, f"retrieve ({why}): {found or 'nothing above the threshold'}")
        return hits

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

    def _emit(self, stage: int, detail: str) -> None:
        if self.observer is not None:
            self.observer(StageEvent(stage, detail))
