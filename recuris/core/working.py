"""Working memory: the agent's scratch pad for the task at hand.

Document 000 §2.1 and §3.1: a goal written once and never overwritten, the subtasks done
so far, a window of the last 5-10 steps, and a structured summary of the older ones, all
cleared with the next task. 003 §1.2's hard constraints ("do not use MySQL") are pinned.

Invariants:
    W1  the goal stays the same for the whole task: only `init_task` sets it.
    W2  `len(recent_steps) <= window_size`.
    W3  `trajectory` holds every step added, in order, and equals
        `compressed_steps + recent_steps`: compression forgets nothing from the record.
    W4  the prompt section's size is bounded by the configuration (goal, pins, subtasks,
        `window_size`, `max_step_chars`, `max_summary_chars`), not by the number of steps.
    W5  every pinned constraint appears in every prompt section.
    W6  `init_task` starts afresh (no steps, summary, pins or progress); before it, nothing can be added.
"""

from collections import deque
from collections.abc import Callable, Sequence

from . import prompt
from .compression import MIN_CHARS, StructuredSummarizer
from .records import Step
from .text import clip, flatten
from .validation import require_count, require_text

__all__ = ["WorkingMemory", "Summarizer"]

Summarizer = Callable[[str, Sequence[Step]], str]


class WorkingMemory:
    """A fixed goal, a bounded window of recent steps, and a merged summary of the rest."""

    def __init__(
        self,
        window_size: int = 6,
        max_summary_chars: int = 400,
        summarizer: Summarizer | None = None,
        max_step_chars: int = 200,
    ) -> None:
        self.window_size = require_count("W4: window_size", window_size, minimum=1)
        self.max_summary_chars = require_count(
            "W4: max_summary_chars", max_summary_chars, minimum=MIN_CHARS
        )
        self.max_step_chars = require_count("W4: max_step_chars", max_step_chars, minimum=1)
        # The rule-based summarizer doubles as the fallback when a pluggable one fails.
        self._fallback = StructuredSummarizer(max_summary_chars)
        self._summarizer = summarizer or self._fallback
        self._goal = ""
        self._subtasks: tuple[str, ...] = ()
        self._done: list[str] = []
        self._pins: list[str] = []
        self._recent: deque[Step] = deque(maxlen=window_size)
        self._trajectory: list[Step] = []
        self._summary = ""
        self.summarizer_failures: list[str] = []

    # -- the task ------------------------------------------------------------------
    def init_task(self, goal: str, subtasks: Sequence[str] | None = None) -> None:
        """Start a task: set the goal (W1) and clear steps, summary, pins and progress.

        Raises TypeError or ValueError if the goal or a subtask is not non-empty text;
        on error the previous task is left as it was.
        """
        goal = require_text("goal", goal)
        subtasks = tuple(require_text("subtask", s) for s in (subtasks or ()))
        self._goal, self._subtasks = goal, subtasks
        self._done, self._pins = [], []
        self._recent.clear()
        self._trajectory, self._summary = [], ""
        self.summarizer_failures = []

    @property
    def goal(self) -> str:
        return self._goal

    @goal.setter
    def goal(self, value: str) -> None:
        raise AttributeError(
            "W1: the goal is fixed for the whole task; call init_task to start another"
        )

    @property
    def subtasks(self) -> tuple[str, ...]:
        return self._subtasks

    @property
    def done_subtasks(self) -> tuple[str, ...]:
        return tuple(self._done)

    @property
    def pending_subtasks(self) -> tuple[str, ...]:
        return tuple(s for s in self._subtasks if s not in self._done)

    @property
    def pins(self) -> tuple[str, ...]:
        return tuple(self._pins)

    @property
    def recent_steps(self) -> tuple[Step, ...]:
        return tuple(self._recent)

    @property
    def trajectory(self) -> tuple[Step, ...]:
        return tuple(self._trajectory)

    @property
    def compressed_steps(self) -> tuple[Step, ...]:
        return tuple(self._trajectory[: len(self._trajectory) - len(self._recent)])

    @property
    def summary(self) -> str:
        return self._summary

    # -- writing -------------------------------------------------------------------
    def _require_task(self) -> None:
        if not self._goal:
            raise RuntimeError("no task in progress: call init_task(goal) first")

    def add_step(self, action: str, result: str, failed: bool | None = None) -> Step:
        """Record one step; a step pushed out of the window is merged into the summary.

        `failed` defaults to the text rule `looks_like_failure(result)`.
        Raises TypeError/ValueError for a non-text or empty action, or non-text result.
        """
        self._require_task()
        step = Step.observed(len(self._trajectory) + 1, action, result, failed)
        # deque(maxlen) drops its oldest element on append; catch it first (W3).
        evicted = self._recent[0] if len(self._recent) == self.window_size else None
        self._recent.append(step)
        self._trajectory.append(step)
        if evicted is not None:
            self._fold([evicted])
        return step

    def _fold(self, evicted: list[Step]) -> None:
        # A pluggable summarizer may be an LLM: its output is untrusted. On an exception,
        # a non-string or an empty answer the rule-based summary is used instead, and the
        # failure is recorded, so history is never silently dropped.
        try:
            merged = self._summarizer(self._summary, evicted)
            if not isinstance(merged, str) or not merged.strip():
                raise TypeError(f"summarizer returned {merged!r}, not a non-empty str")
        except Exception as error:  # noqa: BLE001 - any failure of a plug-in is survivable
            self.summarizer_failures.append(f"{type(error).__name__}: {error}")
            merged = self._fallback(self._summary, evicted)
        self._summary = clip(merged, self.max_summary_chars)

    def pin(self, constraint: str) -> None:
        """Pin a hard constraint that every prompt section will show (W5)."""
        self._require_task()
        constraint = require_text("constraint", constraint)
        if constraint not in self._pins:
            self._pins.append(constraint)

    def mark_done(self, subtask: str) -> None:
        """Mark one of the task's subtasks as done; marking it twice is harmless.

        Raises ValueError if it is not one of the subtasks given to `init_task`.
        """
        self._require_task()
        if subtask not in self._subtasks:
            raise ValueError(f"{subtask!r} is not a subtask of this task: {list(self._subtasks)}")
        if subtask not in self._done:
            self._done.append(subtask)

    # -- reading -------------------------------------------------------------------
    def to_prompt_section(self) -> str:
        """Render goal, pins, subtask progress, summary and recent steps, in that order."""
        indent, none = prompt.INDENT, f"{prompt.INDENT}{prompt.NONE}"
        lines = [prompt.WORKING_HEADER, f"{prompt.GOAL} {flatten(self._goal, len(self._goal))}"]
        lines.append(prompt.PINNED)
        lines.extend([f"{indent}- {flatten(p, len(p))}" for p in self._pins] or [none])
        lines.append(f"{prompt.SUBTASKS} {len(self._done)} of {len(self._subtasks)} done")
        for subtask in self._subtasks:
            mark = prompt.DONE_MARK if subtask in self._done else prompt.PENDING_MARK
            lines.append(f"{indent}{mark} {flatten(subtask, len(subtask))}")
        lines.append(prompt.SUMMARY)
        lines.extend([f"{indent}{line}" for line in self._summary.splitlines()] or [none])
        lines.append(prompt.RECENT)
        steps = [f"{indent}{step.render(self.max_step_chars)}" for step in self._recent]
        lines.extend(steps or [none])
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"WorkingMemory(goal={self._goal!r}, steps={len(self._trajectory)}, "
            f"recent={len(self._recent)}/{self.window_size}, summary_chars={len(self._summary)})"
        )
