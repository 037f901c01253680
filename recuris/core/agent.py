"""Agent: the six-stage loop through which both memories serve one task.

Document 000 §2.3: (1) initialise: goal into working memory, similar episodes retrieved;
(2) decide: prompt = working memory, then experience; (3) act; (4) observe: the result into
working memory; (5) update: compress, mark progress; (6) settle: the whole task becomes an
episode. §3.3: retrieve rarely (start, new phase, after a failure), update often. The
prototype saved only the window; here the episode keeps the whole trajectory, however the
run ends.

Invariants:
    A1  a run executes at most `max_steps` actions and asks the LLM at most `max_steps` times.
    A2  every run writes exactly one episode, whatever ends it (FINISH, a failed step,
        `max_steps`, or an exception from the LLM or the action).
    A3  the goal is in every prompt the LLM receives.
    A4  experience is retrieved at the start, when a subtask completes and after a failed
        step that does not end the run, never on other steps.
    A5  on a manager, each retrieval also recalls the user's other layers into the prompt,
        and the episode is settled through the manager (stored, audited, extracted from).
    A6  a search_memory tool call is answered from memory, never executed as an action; it
        uses one of the `max_steps` calls; the prompt keeps the last three answers.
"""

import time
from collections.abc import Callable, Sequence

from ..manager.active_recall import TOOL_RESULT_HEADER, ActiveRecall, parse_tool_call
from .decay import DecayManager
from .episodic import EpisodicMemory
from .prompt import FINISH, build_prompt, matches_option, subtask_options
from .records import Episode, Hit, RunResult, StageEvent
from .text import estimate_tokens, flatten, looks_like_failure, require_text
from .working import WorkingMemory

__all__ = ["RecurisAgent"]


class RecurisAgent:
    """Run tasks with an LLM, remembering within a task and across tasks."""

    def __init__(
        self,
        working_memory: WorkingMemory,
        episodic_memory: EpisodicMemory,
        llm_fn: Callable[[str], str],
        max_steps: int = 15,
        *,
        top_k: int = 2,
        threshold: float = 0.25,
        max_failures: int = 1,
        is_failure: Callable[[str], bool] = looks_like_failure,
        decay: DecayManager | None = None,
        observer: Callable[[StageEvent], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        for name, value in (("max_steps", max_steps), ("max_failures", max_failures)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"A1: {name} must be an int >= 1, got {value!r}")
        episodic_memory.retrieve("", top_k, threshold)  # validates top_k and threshold now
        self.working, self.episodic, self.llm_fn = working_memory, episodic_memory, llm_fn
        self.max_steps, self.max_failures = max_steps, max_failures
        self.top_k, self.threshold = top_k, threshold
        self.is_failure, self.decay, self.observer, self.clock = is_failure, decay, observer, clock
        self.manager, self.user_id, self.recall_tool = None, None, None
        self._recalled, self._tool_answers = [], []  # the prompt's recalled and tool sections

    @classmethod
    def on_manager(cls, manager, user_id: str, llm_fn: Callable[[str], str], **options) -> "RecurisAgent":
        """Build an agent on one user's memory in a manager (A5); `working_memory` is optional."""
        working = options.pop("working_memory", None) or WorkingMemory()
        agent = cls(working, manager.layers(user_id).episodic, llm_fn, **options)
        agent.manager, agent.user_id, agent.recall_tool = manager, user_id, ActiveRecall(manager, user_id)
        return agent

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
        self._retrievals, self._reinforced, self._task_type = 0, set(), task_type
        self._recalled, self._tool_answers = [], []
        query = f"{task_type} {task_goal}"
        try:
            status, reason = self._loop(query, action_fn)
        except Exception as error:
            self._settle(task_goal, task_type, "failed", f"run aborted by {type(error).__name__}: {error}")
            raise
        episode = self._settle(task_goal, task_type, status, reason)
        steps = len(episode.trajectory)
        return RunResult(status == "success", status, steps, episode, reason, self._retrievals)

    def _loop(self, query: str, action_fn: Callable[[str], str]) -> tuple[str, str]:
        hits = self._retrieve(query, 1, "task start")
        failures = 0
        for number in range(1, self.max_steps + 1):
            prompt = build_prompt(self.working.to_prompt_section(), hits, self._recalled, self._tool_answers)
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
            if (call := parse_tool_call(action)) is not None:
                self._answer_tool(call)
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
                self._emit(5, f"window full: step {folded + 1} folded into the summary ({chars} chars)")
            if failed:
                failures += 1
                if failures >= self.max_failures:
                    return "failed", f"step {number} failed: {flatten(result, 200)}"
                hits = self._retrieve(query, 5, "after a failed step")
            elif self._complete_subtask(action):
                hits = self._retrieve(query, 5, "new phase")
        return "failed", f"reached max_steps ({self.max_steps}) without {FINISH}"

    def _answer_tool(self, call: dict) -> None:
        # A search_memory call is answered from memory, never executed; the last three answers
        # stay in the prompt, marked as recalled, so that the prompt stays bounded (A6).
        answer = self.recall_tool.answer(call) if self.recall_tool else f"{TOOL_RESULT_HEADER}\n  (no memory)"
        self._tool_answers = [*self._tool_answers, answer][-3:]
        self._emit(2, f"tool call {call['name']}: answered from memory")

    def _complete_subtask(self, action: str) -> bool:
        for subtask in self.working.pending_subtasks:
            if any(matches_option(action, option) for option in subtask_options(subtask)):
                self.working.mark_done(subtask)
                self._emit(5, f"subtask done: {flatten(subtask, 80)!r}")
                return True
        return False

    def _retrieve(self, query: str, stage: int, why: str) -> list[Hit]:
        hits = self.episodic.retrieve(query, self.top_k, self.threshold)
        self._retrievals += 1
        for hit in hits:
            # Reinforce once per run: re-reading the same memory in one task is not new use.
            if self.decay is not None and hit.episode.id not in self._reinforced:
                self.decay.on_access(hit.episode)
                self.episodic.save(hit.episode)
                self._reinforced.add(hit.episode.id)
        found = "; ".join(f"{hit.episode.id} ({hit.episode.status}, {hit.score:.2f})" for hit in hits)
        self._emit(stage, f"retrieve ({why}): {found or 'nothing above the threshold'}")
        if self.manager is not None:
            recalled = self.manager.recall(query, self.user_id, self.top_k + 2, task_type=self._task_type,
                                           count_access=False)
            shown = {hit.episode.id for hit in hits}
            fresh = [r for r in recalled.results if r.item.id not in self._reinforced | shown]
            self.manager.count_access(self.user_id, fresh)
            self._reinforced.update(r.item.id for r in fresh)
            self._recalled = [r.render() for r in recalled.results if r.item.id not in shown]
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
        if self.manager is not None:
            self.manager.settle_episode(self.user_id, episode)
        else:
            self.episodic.add_episode(episode)
        ending = f" ({reason})" if reason else ""
        self._emit(6, f"{episode.id} written: {status}, {len(episode.trajectory)} steps{ending}")
        return episode

    def _emit(self, stage: int, detail: str) -> None:
        if self.observer is not None:
            self.observer(StageEvent(stage, detail))
