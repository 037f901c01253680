"""Tasks: the life of one task inside the manager, from goal to settled episode.

Document 001 §6 gives its manager a task lifecycle: `start_task` writes the goal into
working memory, `record_step` adds each step, `finish_task` settles the task as an episode
and asks an LLM to extract reusable knowledge, and `get_llm_context` assembles what the
model should see. The same document warns that extraction output may be malformed; here a
bad reply, a wrong field or an exception costs only that extraction, which is reported.

Invariants:
    N1  a user has at most one task in progress; its goal item is never evicted (BU2).
    N2  `finish_task` writes exactly one episode holding every recorded step, and clears
        the task's working items, whatever the extraction does.
    N3  extraction problems are returned and audited, never raised; statements below
        `min_confidence` are reported and not observed.
    N4  finishing a task is one transaction: its episode, the episode's audit record and
        the deletion of its working items commit together, so a crash loses no step.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from . import budget
from ..evolution.extraction import Knowledge, extraction_prompt, parse_knowledge
from ..storage.item import MemoryItem
from ..core.records import AuditRecord, Episode, Step
from ..evolution.semantic import Fact
from ..storage.store import StoreError
from ..core.text import flatten, looks_like_failure
from ..core.validation import require_text

__all__ = ["TaskLifecycle", "FinishReport"]


@dataclass(frozen=True)
class FinishReport:
    """How a task was settled: its episode, the facts it promoted, what extraction refused."""

    episode: Episode
    facts: tuple[Fact, ...] = ()
    knowledge: tuple[Knowledge, ...] = ()
    problems: tuple[str, ...] = ()


class TaskLifecycle:
    """The task methods of MemoryManager (document 001's start/record/finish/context)."""

    def start_task(self, user_id: str, goal: str, task_type: str = "task") -> str:
        """Start a task for the user: its goal becomes a protected working item. Return the task id.

        Raises ValueError if the user already has a task in progress (N1).
        """
        require_text("goal", goal)
        require_text("task_type", task_type)
        if user_id in self.tasks:
            raise ValueError(
                f"N1: user {user_id!r} already has task {self.tasks[user_id]['id']!r} in progress"
            )
        task_id = self.store.new_id("task")
        self.tasks[user_id] = {"id": task_id, "goal": goal, "type": task_type, "steps": [], "goal_item": None}
        try:
            goal_item = self.write(f"goal: {goal}", user_id, level="working", importance=1.0, task_id=task_id)
        except Exception:
            del self.tasks[user_id]  # a refused goal (a broken clock, say) leaves no task behind
            raise
        self.tasks[user_id]["goal_item"] = goal_item.id
        return task_id

    def _task(self, user_id: str) -> dict:
        if user_id not in self.tasks:
            raise ValueError(f"N1: user {user_id!r} has no task in progress; call start_task first")
        return self.tasks[user_id]

    def record_step(self, user_id: str, action: str, result: str, failed: bool | None = None) -> Step:
        """Record one step of the user's task in its trajectory and in working memory."""
        task = self._task(user_id)
        require_text("action", action)
        if not isinstance(result, str):
            raise TypeError(f"result must be a str, got {type(result).__name__}")
        failed = looks_like_failure(result) if failed is None else bool(failed)
        step = Step(len(task["steps"]) + 1, action, result, failed)
        task["steps"].append(step)
        self.write(step.render(), user_id, level="working", importance=0.8 if failed else 0.5)
        return step

    def _fit_working(self, user_id: str, task_id: str | None) -> None:
        task = self.tasks.get(user_id)
        protected = [task["goal_item"]] if task and task["goal_item"] else []
        try:
            items = self.store.list(user_id, "working", task_id)
        except StoreError:
            return  # the store cannot be read: the budget is fitted at the next write that can
        _, evicted = budget.fit(items, self.working_token_budget, self.clock(), protected)
        if evicted:
            self.store.delete(user_id, [item.id for item in evicted])
            for item in evicted:
                self.audit(
                    user_id, item.id, "evict", f"working memory over {self.working_token_budget} tokens"
                )

    def finish_task(self, user_id: str, status: str = "success", failure_reason: str = "") -> FinishReport:
        """Settle the user's task as one episode and clear its working items, in one transaction (N2, N4)."""
        task = self._task(user_id)
        episode = Episode(task_type=task["type"], goal=task["goal"], status=status, trajectory=task["steps"],
                          failure_reason=failure_reason, created_at=self.clock())
        working = self.store.list(user_id, "working", task["id"])
        why = f"{task['id']} finished"
        cleared = [AuditRecord(item.id, "clear", why, self.clock(), None, user_id) for item in working]
        report = self.settle_episode(user_id, episode, cleared, working)
        self.tasks.pop(user_id, None)
        return report

    def settle_episode(
        self, user_id: str, episode: Episode,
        audit: Iterable[AuditRecord] = (), delete: Iterable[MemoryItem] = (),
    ) -> FinishReport:
        """Store a finished episode, then let the LLM, if any, extract knowledge from it (N3).

        The episode, the audit of its write, `audit` and the deletion of `delete` commit in
        one transaction (N4): a crash leaves either the task's working items or its episode.
        """
        layers = self.layers(user_id)
        episode.id = episode.id or self.store.new_id("episode")
        why = f"episode: {episode.status}, {len(episode.trajectory)} steps"
        written = AuditRecord(episode.id, "write", why, self.clock(), None, user_id)
        layers.episodic.add_episode(episode, [*audit, written], delete)
        if self.llm is None:
            return FinishReport(episode)
        prompt = extraction_prompt(episode.goal, episode.status, episode.trajectory)
        try:
            knowledge, problems = parse_knowledge(self.llm(prompt))
        except Exception as error:  # noqa: BLE001 - the model is untrusted; its failure is reported
            knowledge, problems = [], [f"llm raised {type(error).__name__}: {flatten(str(error), 120)}"]
        facts = []
        for statement in knowledge:
            if statement.confidence < self.min_confidence:
                problems.append(
                    f"{statement.subject!r}: confidence {statement.confidence} < {self.min_confidence}"
                )
            elif fact := layers.consolidator.observe(statement.subject, statement.value, episode.id):
                facts.append(fact)
        for problem in problems:
            self.audit(user_id, episode.id, "extract-problem", problem)
        return FinishReport(episode, tuple(facts), tuple(knowledge), tuple(problems))

    def get_llm_context(self, user_id: str, query: str | None = None, token_budget: int | None = 600) -> str:
        """Assemble the model's context: the task's goal and steps, then recalled memory."""
        task = self.tasks.get(user_id)
        lines = ["## Current task"]
        if task:
            lines.append(f"Goal: {flatten(task['goal'], 300)}")
            lines.extend(f"  {step.render(120)}" for step in task["steps"][-5:])
        else:
            lines.append("  (none)")
        recalled = self.recall(query or (task["goal"] if task else ""), user_id, token_budget=token_budget)
        lines += ["", "## Recalled memory (from recall, ranked)", recalled.text or "  (nothing relevant)"]
        return "\n".join(lines)

    def get_llm_messages(
        self, user_id: str, query: str | None = None, token_budget: int | None = 600
    ) -> list[dict]:
        """Return the context as OpenAI-style chat messages: memory as system text, then the query."""
        context = self.get_llm_context(user_id, query, token_budget)
        task = self.tasks.get(user_id)
        question = query or (task["goal"] if task else "")
        system = f"You are an agent with long-term memory. Use it when relevant.\n\n{context}"
        messages = [{"role": "system", "content": system}]
        if question:
            messages.append({"role": "user", "content": question})
        return messages
