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
    W6  `init_task` starts afresh (no steps, summary, pins or progress); before it, nothing can
        be added.
    W7  after a step is added, a constraint pinned or notes folded, the prompt section fits
        `token_budget` (document 001 §3's budget) unless only one recent step is left: the
        oldest recent steps are folded into the summary early; the goal, pins and subtasks
        are never folded.
    W8  a task started again from another's reads (goal, subtasks, done, pins, summarizer
        failures) and `resume`d with its trajectory, the length of its window and its summary
        renders, reads and goes on exactly as the original: saving a task loses nothing.
    W9  `fold_notes` merges notes kept beside the task (the manager's working items) into the
        summary as `note:` lines (M5), whatever the summarizer; the steps are left as they
        were but for W7's folding.
    W10 the goal appears whole in every prompt section, however long: `max_step_chars` clips
        the steps only (document 000 §3.1: the goal sits in every prompt, in a fixed place).
"""

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from . import prompt
from .compression import MIN_CHARS, StructuredSummarizer
from .records import Step
from .text import clip, fits, flatten
from .validation import require_count, require_text

__all__ = ["WorkingMemory", "WorkingSettings", "Summarizer"]

Summarizer = Callable[[str, Sequence[Step]], str]


@dataclass(frozen=True)
class WorkingSettings:
    """The sizes that bound working memory's prompt section (W2, W4, W7)."""

    # Steps shown whole, newest last: document 000 §3.1 keeps the last 5-10.
    window_size: int = 6
    # The merged summary of the older steps, in characters (002 §3.1 keeps it bounded).
    max_summary_chars: int = 400
    # Each side of a recent step (action, result) is clipped to this many characters.
    max_step_chars: int = 200
    # Document 001 §3's budget for the whole section, in estimated tokens; None: no budget.
    # 001 gives 8,000 for a whole context; the section is a goal, pins and a window, so 800.
    token_budget: int | None = 800

    def __post_init__(self) -> None:
        require_count("W2: window_size", self.window_size, minimum=1)
        require_count("W4: max_summary_chars", self.max_summary_chars, minimum=MIN_CHARS)
        require_count("W4: max_step_chars", self.max_step_chars, minimum=1)
        if self.token_budget is not None:
            require_count("W7: token_budget", self.token_budget, minimum=1)


class WorkingMemory:
    """A fixed goal, a bounded window of recent steps, and a merged summary of the rest."""

    def __init__(
        self, settings: WorkingSettings | None = None, summarizer: Summarizer | None = None
    ) -> None:
        self.settings = settings if settings is not None else WorkingSettings()
        if not isinstance(self.settings, WorkingSettings):
            raise TypeError(f"settings must be WorkingSettings, got {self.settings!r}")
        # The rule-based summarizer doubles as the fallback when a pluggable one fails.
        self._fallback = StructuredSummarizer(self.settings.max_summary_chars)
        self._summarizer = summarizer or self._fallback
        self._goal = ""
        self._subtasks: tuple[str, ...] = ()
        self._done: list[str] = []
        self._pins: list[str] = []
        self._recent: deque[Step] = deque()
        self._trajectory: list[Step] = []
        self._summary = ""
        self.summarizer_failures: list[str] = []

    @property
    def window_size(self) -> int:
        return self.settings.window_size

    @property
    def max_summary_chars(self) -> int:
        return self.settings.max_summary_chars

    @property
    def max_step_chars(self) -> int:
        return self.settings.max_step_chars

    @property
    def token_budget(self) -> int | None:
        return self.settings.token_budget

    # -- the task ------------------------------------------------------------------
    def init_task(self, goal: str, subtasks: Sequence[str] | None = None) -> None:
        """Start a task: set the goal (W1) and clear steps, summary, pins and progress.

        Raises TypeError or ValueError if the goal or a subtask is not non-empty text;
        on error the previous task is left as it was.
        """
        goal = require_text("goal", goal)
        subtasks = tuple(require_text("subtask", s) for s in (subtasks or ()))
        self._goal = goal
        self._subtasks = subtasks
        self._done = []
        self._pins = []
        self._recent.clear()
        self._trajectory = []
        self._summary = ""
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
        self._recent.append(step)
        self._trajectory.append(step)
        if len(self._recent) > self.window_size:
            self._fold([self._recent.popleft()])
        self._fit_budget()
        return step

    def _fit_budget(self) -> None:
        # W7: past the token budget (text.fits, T5), the oldest recent steps are folded early,
        # one at a time, while another stays to show; the goal, pins and subtasks are never
        # folded. Working memory's policy: what is oldest goes first, and into the summary.
        while len(self._recent) > 1 and not fits(self.to_prompt_section(), self.token_budget):
            self._fold([self._recent.popleft()])

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

    def fold_notes(self, notes: Sequence[str]) -> None:
        """Merge notes into the summary, newest last, then fit the budget (W9, W7).

        Raises TypeError or ValueError for a note that is not non-empty text, folding none.
        """
        self._require_task()
        notes = [require_text("W9: note", note) for note in notes]
        # The rule-based summarizer, whichever folds the steps: its `note:` lines are what a
        # summary of either kind keeps of text that is not a step, and trims first (M3).
        merged = self._fallback.with_notes(self._summary, notes)
        self._summary = clip(merged, self.max_summary_chars)
        self._fit_budget()

    def pin(self, constraint: str) -> None:
        """Pin a hard constraint that every prompt section will show (W5, W7)."""
        self._require_task()
        constraint = require_text("constraint", constraint)
        if constraint not in self._pins:
            self._pins.append(constraint)
            # A longer prompt section: it must fit the budget as a restored one would (W8).
            self._fit_budget()

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
        """Render goal, pins, subtask progress, summary and recent steps, in that order.

        With no task in progress the section says so under its header.
        """
        indent = prompt.INDENT
        none = f"{prompt.INDENT}{prompt.NONE}"
        if not self._goal:
            return f"{prompt.WORKING_HEADER}\n{none}"
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

    # -- resuming ------------------------------------------------------------------
    def resume(self, trajectory: Sequence[Step], recent: int, summary: str) -> None:
        """Take back a saved task's steps: the last `recent` in the window, the rest summarized.

        For a task just started (`init_task`, then its progress and pins): the steps are kept
        as given, numbered from 1, and `summary` stands for the older ones, summarized by
        nobody again; a window larger than `window_size` is folded down to it and the budget
        applied (W2, W7, W8). Raises RuntimeError with no task in progress or steps already
        added, ValueError naming the rule for steps out of order, a `recent` out of range or
        a summary that is not text.
        """
        # The one entry past the public writes: `add_step` would summarize the older steps
        # again, and a summarizer (an LLM) need not say the same twice.
        self._require_task()
        if self._trajectory:
            raise RuntimeError("W8: resume a task just started, before any step is added")
        steps = list(trajectory)
        for position, step in enumerate(steps, start=1):
            if not isinstance(step, Step) or step.index != position:
                raise ValueError(f"W3: step {position} is not the Step numbered {position}")
        recent = require_count("W3: recent", recent, 0, len(steps) + 1)
        if not isinstance(summary, str):
            raise ValueError(f"W4: summary must be a str, got {summary!r}")
        self._trajectory = steps
        self._recent.extend(steps[len(steps) - recent :])
        self._summary = clip(summary, self.max_summary_chars)
        while len(self._recent) > self.window_size:
            self._fold([self._recent.popleft()])
        self._fit_budget()

    def __repr__(self) -> str:
        return (
            f"WorkingMemory(goal={self._goal!r}, steps={len(self._trajectory)}, "
            f"recent={len(self._recent)}/{self.window_size}, summary_chars={len(self._summary)})"
        )
