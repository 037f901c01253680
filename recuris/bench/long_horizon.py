"""Long-horizon A/B: the same model and tasks under full history, cut or not, a window, recuris.

Document 003 §6.2 asks for an A/B test with memory on and off, measuring success, pollution
and token cost; document 000 §1.2 names the failure modes to provoke. Each task here is a
plan of 10 to 60 steps with traps: a goal that must stay in view, a path that fails and
tempts a retry later, a constraint stated first and needed last, a value that is revised
midway; a third of the tasks print their tool's log at every step, as real tools do, so
that full history outgrows a model's context. `SlotFollowingLLM` runs every task under
memories that differ only in what they put in the prompt: full history, full history cut
to a context limit of 4,096 or 2,048 tokens as a chat client cuts it, a sliding window,
and recuris. This simulates the data flow, not a real model. The mock fails
where its prompt lacks what it needs (the goal, the constraint, the failed path), and in
one place where the prompt holds too much: a value noted twice. Which copy a model reads is
its own choice, not the memory's, so the suite runs under both rules (the first value met
wins; the last one wins) and every failure is reported with the rule of LH2 it broke.

Invariants:
    LH1 the suite is deterministic; every condition runs the same tasks with the same model.
    LH2 a run succeeds iff every planned step was done, no constraint was broken, no stale
        value was used, and at most one step failed.
    LH3 the sliding window shows the task statement (goal, pins, plan) only while its first
        message is within the last `window_size`; after that, only the recent steps.
    LH4 full history cut to a context limit keeps the system message and the newest
        messages that fit the limit with it, each whole, and drops the older ones: a prompt
        is over `context_limit` tokens (by `estimate_tokens`) only if the system message
        alone is; the task statement is the first message dropped (unless
        `keep_statement`), then the steps, oldest first, a step's action with its result.
"""

import sys
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from statistics import fmean

from ..core import prompt as layout
from ..core.clock import ManualClock
from ..core.episodic import EpisodicMemory
from ..core.text import estimate_tokens, normalize
from ..core.validation import require_count
from ..core.working import WorkingMemory, WorkingSettings
from ..experience.agent import ExperienceAgent, ExperienceSettings
from ..experience.slot_llm import SlotFollowingLLM
from ..experience.slots import matches_option
from ..manager.entry import run_piped
from .evaluation import pollution_rate, prompt_tokens

__all__ = [
    "Task",
    "suite",
    "run_suite",
    "SlidingWindowMemory",
    "ContextLimitedHistory",
    "CONDITIONS",
]


@dataclass
class Task:
    """A plan, its constraints, and the world's rules: which actions fail, violate, or go stale."""

    goal: str
    plan: list[str]
    constraints: list[str] = field(default_factory=list)
    failing: set[str] = field(default_factory=set)  # actions whose result is an error
    forbidden: str | None = None  # a word an action must not contain (the constraint)
    # Step -> a "note: x = y" its result carries
    notes: dict[int, str] = field(default_factory=dict)
    stale: set[str] = field(default_factory=set)  # actions that use a revised value
    output: str = ""  # what the tool prints after every done step, as a real tool's log
    log: dict = field(default_factory=dict)

    def act(self, action: str) -> str:
        log = self.log.setdefault("actions", [])
        log.append(action)
        if action in self.failing:
            return "error: the connection timed out"
        if self.forbidden and self.forbidden.casefold() in action.casefold():
            self.log["violations"] = self.log.get("violations", 0) + 1
            return f"ok, but {self.forbidden} was used"
        if action in self.stale:
            self.log["stale"] = self.log.get("stale", 0) + 1
        note = self.notes.get(len(log))
        done = f"ok: done; note: {note}" if note else "ok: done"
        return f"{done}; {self.output}" if self.output else done

    def succeeded(self) -> bool:
        actions = self.log.get("actions", [])
        # A {slot} step is done with the slot's current value: a later note revises an earlier one.
        values = {
            normalize(key): value
            for key, value in (note.split(" = ", 1) for _, note in sorted(self.notes.items()))
        }
        done = all(
            any(
                matches_option(a, o, values)
                for a in actions
                for o in layout.subtask_options(step)
            )
            for step in self.plan
        )
        errors = sum(action in self.failing for action in actions)
        return done and not self.log.get("violations") and not self.log.get("stale") and errors <= 1

    def failure(self) -> str | None:
        """Return which rule of LH2 the run broke first, or None if it succeeded."""
        actions = self.log.get("actions", [])
        if self.log.get("violations"):
            return "constraint broken"
        if self.log.get("stale"):
            return "stale value used"
        if sum(action in self.failing for action in actions) > 1:
            return "failed path retried"
        return None if self.succeeded() else "plan unfinished"


# Tasks from this number on print their tool's log after every done step.
FIRST_LOGGED_TASK = 24


def suite(count: int = 36) -> list[Task]:
    """Build `count` tasks of 10 to 60 steps, each with the traps its length allows (LH1).

    From task `FIRST_LOGGED_TASK` on, every done step prints its tool's log (about 120
    tokens), so that full history outgrows a context limit of 2,048 or 4,096 tokens (LH4).
    """
    tasks = []
    for number in range(count):
        length = 10 + (number * 23) % 51
        plan = [f"migrate table t{number}_{n}" for n in range(length)]
        task = Task(goal=f"migrate database {number} to the new cluster", plan=plan)
        if number % 2 == 0:  # a path that fails early, and the same choice again late
            for at in (2, length - 3):
                plan[at] = (
                    f"connect to replica {number} | connect to replica {number} via the proxy"
                )
            task.failing.add(f"connect to replica {number}")
        if number % 3 == 0:  # a constraint stated first, needed last
            task.constraints.append("do not use MySQL")
            task.forbidden = "MySQL"
            plan[-2] = "build indexes in MySQL | build indexes in PostgreSQL"
        if number % 4 == 1:  # a value revised midway, needed at the end
            task.notes = {3: "api port = 8080", length - 4: "api port = 9090"}
            plan[-1] = "smoke-test the api on port {api port}"
            task.stale.add("smoke-test the api on port 8080")
        if number >= FIRST_LOGGED_TASK:
            batches = [
                f"batch {batch} of 8 copied {1_000 + 37 * number * batch:,} rows in "
                f"{0.5 + 0.1 * batch:.1f} s, checksums match"
                for batch in range(1, 9)
            ]
            task.output = f"log of database {number}: " + ", ".join(batches)
        tasks.append(task)
    return tasks


def _statement(memory: WorkingMemory) -> list[str]:
    # The task statement as the client first sent it: goal, constraints, and the plan with
    # no step marked done (a message once sent does not change).
    return [
        f"{layout.GOAL} {memory.goal}",
        layout.PINNED,
        *[f"{layout.INDENT}- {pin}" for pin in memory.pins],
        f"{layout.SUBTASKS} 0 of {len(memory.subtasks)} done",
        *[f"{layout.INDENT}{layout.PENDING_MARK} {subtask}" for subtask in memory.subtasks],
    ]


class SlidingWindowMemory(WorkingMemory):
    """The plain baseline: the last `window_size` messages, where message 1 stated the task.

    While the task statement is in the window, the prompt shows it (goal, constraints, plan,
    none marked done); once it scrolls out, only the recent steps remain.
    """

    def to_prompt_section(self) -> str:
        statement_visible = len(self.trajectory) < self.window_size
        lines = [layout.WORKING_HEADER]
        if statement_visible:
            lines += _statement(self)
        lines.append(layout.RECENT)
        lines += [f"  {step.render()}" for step in self.trajectory[-(self.window_size - 1) :]]
        return "\n".join(lines)


class ContextLimitedHistory(WorkingMemory):
    """Full history as a chat client sends it, its oldest messages dropped to fit (LH4).

    The system message (all the prompt holds besides the history: the experience section
    and the instruction) is always kept, as chat clients keep it. The history is the task
    statement (goal, constraints, plan: the first user message), then each step (the
    model's action with the tool's result, dropped together). While the prompt is over
    `context_limit` tokens, the oldest message is dropped whole: the task statement first,
    unless `keep_statement` puts it in the system message.
    """

    def __init__(
        self,
        context_limit: int,
        settings: WorkingSettings | None = None,
        keep_statement: bool = False,
    ) -> None:
        super().__init__(settings)
        self.context_limit = require_count("LH4: context_limit", context_limit, minimum=1)
        self.keep_statement = keep_statement

    def to_prompt_section(self) -> str:
        steps = [f"{layout.INDENT}{step.render(self.max_step_chars)}" for step in self.trajectory]
        # Everything; then without the statement (unless kept), the oldest steps one by one.
        shapes = [(True, 0)] + [(self.keep_statement, first) for first in range(len(steps) + 1)]
        for with_statement, first in shapes:
            statement = _statement(self) if with_statement else []
            section = "\n".join([layout.WORKING_HEADER, *statement, layout.RECENT, *steps[first:]])
            if estimate_tokens(layout.build_prompt(section, ())) <= self.context_limit:
                break
        return section


# Full history as a chat client sends it: every step whole, however long its result.
FULL_HISTORY = WorkingSettings(window_size=10_000, token_budget=None, max_step_chars=100_000)
# The context limits a client cuts full history to (LH4), in tokens.
CONTEXT_LIMITS = (4_096, 2_048)

CONDITIONS = {
    "full history": lambda: WorkingMemory(FULL_HISTORY),
    **{
        f"full history cut to {limit:,} tokens": (
            lambda limit=limit: ContextLimitedHistory(limit, FULL_HISTORY)
        )
        for limit in CONTEXT_LIMITS
    },
    "sliding window (12 messages)": lambda: SlidingWindowMemory(
        WorkingSettings(window_size=12, token_budget=None)
    ),
    "recuris (window 6 + summary + pins)": lambda: WorkingMemory(WorkingSettings()),
}


@dataclass(frozen=True)
class ConditionResult:
    success_rate: float
    pollution: float  # share of uses of the revised value that used the stale one
    tokens_per_step: float
    largest_prompt: int  # tokens of the largest prompt of any run
    runs: int
    value_uses: int  # how many times a run used the revised value at all
    failures: tuple[tuple[str, int], ...] = ()  # (the rule broken, how many runs broke it)


def run_suite(
    tasks_factory=suite,
    latest_wins: bool = False,
    conditions: Mapping[str, Callable[[], WorkingMemory]] = CONDITIONS,
) -> dict[str, ConditionResult]:
    """Run every task under every condition with a fresh SlotFollowingLLM; summarise each.

    `conditions` maps a name to a function making a fresh working memory.
    """
    results = {}
    for name, memory in conditions.items():
        outcomes = []
        stale_uses = 0
        slot_uses = 0
        tokens = []
        failures = Counter()
        for task in tasks_factory():
            llm = SlotFollowingLLM(latest_wins)
            settings = ExperienceSettings(max_steps=len(task.plan) + 10, max_failures=3)
            # The experience layer's agent, for its slots: a plan step such as "smoke-test the
            # api on port {api port}" is done by the action that fills it (ST2).
            agent = ExperienceAgent(
                memory(), EpisodicMemory(), llm, settings, clock=ManualClock(0)
            )
            agent.run(task.goal, "migration", task.act, task.plan, task.constraints)
            broken = task.failure()  # None exactly when the run succeeded
            outcomes.append(broken is None)
            failures.update([broken] if broken else [])
            uses = [a for a in task.log.get("actions", []) if "smoke-test" in a]
            slot_uses += len(uses)
            stale_uses += sum(a in task.stale for a in uses)
            tokens.extend(prompt_tokens(llm.prompts))
        polluted = ["stale"] * stale_uses + ["fresh"] * (slot_uses - stale_uses)
        results[name] = ConditionResult(
            fmean(outcomes),
            pollution_rate(polluted, ["stale"]),
            fmean(tokens),
            max(tokens),
            len(outcomes),
            slot_uses,
            tuple(sorted(failures.items())),
        )
    return results


def main() -> None:
    """Print the A/B table under each reading rule of the mock model."""
    for rule, latest in (("the first value met wins", False), ("the last value met wins", True)):
        print(f"\nA value noted twice: {rule}\n")
        print(
            "| memory | success rate | pollution (stale uses / uses) | prompt tokens per step | "
            "largest prompt | runs | failures |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for condition, result in run_suite(latest_wins=latest).items():
            failed = ", ".join(f"{count} {why}" for why, count in result.failures) or "none"
            print(
                f"| {condition} | {result.success_rate:.2f} | {result.pollution:.2f} of "
                f"{result.value_uses} | {result.tokens_per_step:.0f} | {result.largest_prompt:,} | "
                f"{result.runs} | {failed} |"
            )


if __name__ == "__main__":
    sys.exit(run_piped(main))
