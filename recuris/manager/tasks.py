"""Tasks: the life of one task inside the manager, from goal to settled episode.

Document 001 §6 gives its manager a task lifecycle: `start_task` writes the goal into
working memory, `record_step` adds each step, `finish_task` settles the task as an episode
and asks an LLM to extract reusable knowledge, and `get_llm_context` assembles what the
model should see. The same document warns that extraction output may be malformed; here a
bad reply, a wrong field or an exception costs only that extraction, which is reported.
`Tasks` keeps each user's task in progress as a `TaskState` (iterating it gives the users);
the manager holds one, and hands it what it uses of the manager: `write`, `layers`, `recall`.

Invariants:
    N1  a user has at most one task in progress; its goal item is never evicted (BU2).
    N2  `finish_task` writes exactly one episode holding every recorded step, and clears
        the task's working items, whatever the extraction does.
    N3  extraction problems are returned and audited, never raised; statements below
        `min_confidence` are reported and not observed.
    N4  finishing a task is one transaction: its episode, the episode's audit record and
        the deletion of its working items commit together, so a crash loses no step.
    N5  `context` shows the task's goal and last steps, then the user's recall for it; `messages` gives
        the same text as a system message, then the query (by default the goal) as a user message.
"""

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from ..core.records import AuditRecord, Episode, Step
from ..core.text import flatten
from ..core.validation import require_text
from ..evolution.extraction import Knowledge, extraction_prompt, parse_knowledge
from ..evolution.semantic import Fact
from ..storage.item import MemoryItem
from ..storage.store import Store, StoreError
from . import budget

__all__ = ["Tasks", "TaskState", "FinishReport"]


@dataclass(frozen=True)
class FinishReport:
    """How a task was settled: its episode, the facts it promoted, what extraction refused."""

    episode: Episode
    facts: tuple[Fact, ...] = ()
    knowledge: tuple[Knowledge, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass
class TaskState:
    """One user's task in progress: its goal and type, the steps so far, the goal's working item."""

    id: str
    goal: str
    task_type: str = "task"
    steps: list[Step] = field(default_factory=list)
    goal_item_id: str | None = None  # never evicted from working memory (N1, BU2)

    def __repr__(self) -> str:
        return (
            f"TaskState({self.id!r}, goal={flatten(self.goal, 60)!r}, task_type={self.task_type!r}, "
            f"steps={len(self.steps)}, goal_item_id={self.goal_item_id!r})"
        )


class Tasks:
    """Each user's task in progress (at most one, N1), from start to settled episode."""

    def __init__(
        self,
        store: Store,
        clock: Callable[[], float],
        *,
        write: Callable[..., MemoryItem | None],
        layers: Callable,
        recall: Callable,
        llm: Callable[[str], str] | None = None,
        min_confidence: float = 0.6,
        working_token_budget: int = 800,
        lock=None,  # the manager's re-entrant lock (TS1); its methods take it
    ) -> None:
        self.lock = lock
        self.store, self.clock, self.write, self.layers, self.recall = (
            store,
            clock,
            write,
            layers,
            recall,
        )
        self.llm, self.min_confidence, self.working_token_budget = (
            llm,
            min_confidence,
            working_token_budget,
        )
        self.in_progress: dict[str, TaskState] = {}  # user id -> their task

    def __iter__(self) -> Iterator[str]:
        return iter(self.in_progress)

    def __len__(self) -> int:
        return len(self.in_progress)

    def get(self, user_id: str) -> TaskState | None:
        """Return the user's task in progress, or None."""
        return self.in_progress.get(user_id)

    def drop(self, user_id: str) -> None:
        """Let the user's task in progress go, unsettled: the user was forgotten (UL1)."""
        self.in_progress.pop(user_id, None)

    def start(self, user_id: str, goal: str, task_type: str = "task") -> str:
        """Start a task for the user: its goal becomes a protected working item. Return the task id.

        Raises ValueError if the user already has a task in progress (N1).
        """
        require_text("goal", goal)
        require_text("task_type", task_type)
        if task := self.in_progress.get(user_id):
            raise ValueError(f"N1: user {user_id!r} already has task {task.id!r} in progress")
        task = self.in_progress[user_id] = TaskState(self.store.new_id("task"), goal, task_type)
        try:
            goal_item = self.write(
                f"goal: {goal}", user_id, level="working", importance=1.0, task_id=task.id
            )
        except Exception:
            del self.in_progress[
                user_id
            ]  # a refused goal (a broken clock, say) leaves no task behind
            raise
        task.goal_item_id = goal_item.id
        return task.id

    def current(self, user_id: str) -> TaskState:
        """Return the user's task in progress; raise ValueError if there is none (N1)."""
        if user_id not in self.in_progress:
            raise ValueError(f"N1: user {user_id!r} has no task in progress; call start_task first")
        return self.in_progress[user_id]

    def record(self, user_id: str, action: str, result: str, failed: bool | None = None) -> Step:
        """Record one step of the user's task in its trajectory and in working memory."""
        task = self.current(user_id)
        step = Step.observed(len(task.steps) + 1, action, result, failed)
        task.steps.append(step)
        self.write(step.render(), user_id, level="working", importance=0.8 if failed else 0.5)
        return step

    def fit_working(self, user_id: str, task_id: str | None) -> None:
        """Evict the task's least valuable working items past the token budget, sparing its goal (BU2)."""
        task = self.in_progress.get(user_id)
        protected = [task.goal_item_id] if task and task.goal_item_id else []
        try:
            items = self.store.list(user_id, "working", task_id)
        except StoreError:
            return  # the store cannot be read: the budget is fitted at the next write that can
        _, evicted = budget.fit(items, self.working_token_budget, self.clock(), protected)
        if evicted:
            why, now = f"working memory over {self.working_token_budget} tokens", self.clock()
            self.store.delete(user_id, [item.id for item in evicted])
            self.store.append_audit(
                [AuditRecord(item.id, "evict", why, now, None, user_id) for item in evicted]
            )

    def finish(
        self, user_id: str, status: str = "success", failure_reason: str = ""
    ) -> FinishReport:
        """Settle the user's task as one episode and clear its working items, in one transaction (N2, N4)."""
        task = self.current(user_id)
        episode = Episode(
            task_type=task.task_type,
            goal=task.goal,
            status=status,
            trajectory=task.steps,
            failure_reason=failure_reason,
            created_at=self.clock(),
        )
        working = self.store.list(user_id, "working", task.id)
        cleared = [
            AuditRecord(item.id, "clear", f"{task.id} finished", self.clock(), None, user_id)
            for item in working
        ]
        report = self.settle(user_id, episode, cleared, working)
        self.in_progress.pop(user_id, None)
        return report

    def settle(
        self,
        user_id: str,
        episode: Episode,
        audit: Iterable[AuditRecord] = (),
        delete: Iterable[MemoryItem] = (),
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
            knowledge, problems = (
                [],
                [f"llm raised {type(error).__name__}: {flatten(str(error), 120)}"],
            )
        facts = []
        for statement in knowledge:
            if statement.confidence < self.min_confidence:
                problems.append(
                    f"{statement.subject!r}: confidence {statement.confidence} < {self.min_confidence}"
                )
            elif fact := layers.consolidator.observe(
                statement.subject, statement.value, episode.id
            ):
                facts.append(fact)
        if problems:
            self.store.append_audit(
                [
                    AuditRecord(episode.id, "extract-problem", problem, self.clock(), None, user_id)
                    for problem in problems
                ]
            )
        return FinishReport(episode, tuple(facts), tuple(knowledge), tuple(problems))

    def context(
        self, user_id: str, query: str | None = None, token_budget: int | None = 600
    ) -> str:
        """Assemble the model's context: the task's goal and steps, then recalled memory."""
        task = self.in_progress.get(user_id)
        lines = ["## Current task"]
        if task:
            lines.append(f"Goal: {flatten(task.goal, 300)}")
            lines.extend(f"  {step.render(120)}" for step in task.steps[-5:])
        else:
            lines.append("  (none)")
        recalled = self.recall(
            query or (task.goal if task else ""), user_id, token_budget=token_budget
        )
        lines += [
            "",
            "## Recalled memory (from recall, ranked)",
            recalled.text or "  (nothing relevant)",
        ]
        return "\n".join(lines)

    def messages(
        self, user_id: str, query: str | None = None, token_budget: int | None = 600
    ) -> list[dict]:
        """Return the context as OpenAI-style chat messages: memory as system text, then the query."""
        context = self.context(user_id, query, token_budget)
        task = self.in_progress.get(user_id)
        system = f"You are an agent with long-term memory. Use it when relevant.\n\n{context}"
        question = query or (task.goal if task else "")
        asked = [{"role": "user", "content": question}] if question else []
        return [{"role": "system", "content": system}, *asked]
