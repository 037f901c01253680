"""Long-horizon A/B: the same model and tasks under full history, a sliding window, and recuris.

Document 003 §6.2 asks for an A/B test with memory on and off, measuring success, pollution
and token cost; document 000 §1.2 names the failure modes to provoke. Each task here is a
plan of 10 to 60 steps with traps: a goal that must stay in view, a path that fails and
tempts a retry later, a constraint stated first and needed last, a value that is revised
midway. `PromptFollowingLLM` runs every task under three memories that differ only in what
they put in the prompt. This simulates the data flow, not a real model. The mock fails
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
"""

import sys
from collections import Counter
from dataclasses import dataclass, field
from statistics import fmean

from ..core import prompt as layout
from ..core.agent import AgentSettings, RecurisAgent
from ..core.clock import ManualClock
from ..core.episodic import EpisodicMemory
from ..core.mock_llm import PromptFollowingLLM
from ..core.text import normalize
from ..core.working import WorkingMemory, WorkingSettings
from ..manager.cli import run_piped
from .evaluation import pollution_rate, prompt_tokens

__all__ = ["Task", "suite", "run_suite", "SlidingWindowMemory", "CONDITIONS"]


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
        return f"ok: done; note: {note}" if note else "ok: done"

    def succeeded(self) -> bool:
        actions = self.log.get("actions", [])
        # A {slot} step is done with the slot's current value: a later note revises an earlier one.
        values = {
            normalize(key): value
            for key, value in (note.split(" = ", 1) for _, note in sorted(self.notes.items()))
        }
        done = all(
            any(
                layout.matches_option(a, o, values)
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


def suite(count: int = 24) -> list[Task]:
    """Build `count` tasks of 10 to 60 steps, each with the traps its length allows (LH1)."""
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
        tasks.append(task)
    return tasks


class SlidingWindowMemory(WorkingMemory):
    """The plain baseline: the last `window_size` messages, where message 1 stated the task.

    While the task statement is in the window, the prompt shows it (goal, constraints, plan,
    none marked done); once it scrolls out, only the recent steps remain.
    """

    def to_prompt_section(self) -> str:
        statement_visible = len(self.trajectory) < self.window_size
        lines = [layout.WORKING_HEADER]
        if statement_visible:
            lines.append(f"{layout.GOAL} {self.goal}")
            lines += [layout.PINNED] + [f"  - {pin}" for pin in self.pins]
            lines += [f"{layout.SUBTASKS} 0 of {len(self.subtasks)} done"]
            lines += [f"  {layout.PENDING_MARK} {subtask}" for subtask in self.subtasks]
        lines.append(layout.RECENT)
        lines += [f"  {step.render()}" for step in self.trajectory[-(self.window_size - 1) :]]
        return "\n".join(lines)


CONDITIONS = {
    "full history": lambda: WorkingMemory(WorkingSettings(window_size=10_000, token_budget=None)),
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
    runs: int
    value_uses: int  # how many times a run used the revised value at all
    failures: tuple[tuple[str, int], ...] = ()  # (the rule broken, how many runs broke it)


def run_suite(tasks_factory=suite, latest_wins: bool = False) -> dict[str, ConditionResult]:
    """Run every task under every condition with a fresh PromptFollowingLLM; summarise each."""
    results = {}
    for name, memory in CONDITIONS.items():
        outcomes = []
        stale_uses = 0
        slot_uses = 0
        tokens = []
        failures = Counter()
        for task in tasks_factory():
            llm = PromptFollowingLLM(latest_wins)
            settings = AgentSettings(max_steps=len(task.plan) + 10, max_failures=3)
            agent = RecurisAgent(memory(), EpisodicMemory(), llm, settings, clock=ManualClock(0))
            agent.run(task.goal, "migration", task.act, task.plan, task.constraints)
            outcomes.append(task.succeeded())
            failures.update([task.failure()] if task.failure() else [])
            uses = [a for a in task.log.get("actions", []) if "smoke-test" in a]
            slot_uses += len(uses)
            stale_uses += sum(a in task.stale for a in uses)
            tokens.extend(prompt_tokens(llm.prompts))
        polluted = ["stale"] * stale_uses + ["fresh"] * (slot_uses - stale_uses)
        results[name] = ConditionResult(
            fmean(outcomes),
            pollution_rate(polluted, ["stale"]),
            fmean(tokens),
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
            "runs | failures |"
        )
        print("| --- | --- | --- | --- | --- | --- |")
        for condition, result in run_suite(latest_wins=latest).items():
            failed = ", ".join(f"{count} {why}" for why, count in result.failures) or "none"
            print(
                f"| {condition} | {result.success_rate:.2f} | {result.pollution:.2f} of "
                f"{result.value_uses} | {result.tokens_per_step:.0f} | {result.runs} | {failed} |"
            )


if __name__ == "__main__":
    sys.exit(run_piped(main))
