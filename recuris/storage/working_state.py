"""Working state: a task's working memory written down as JSON and read back.

Document 003 §4.1 keeps working memory with its task, and §7.3 asks that memory survive a
restart: a task in progress is stored as an item (manager/tasks.py) whose metadata holds its
working memory as plain data, rewritten with every step. The core's `WorkingMemory` keeps
its state in memory only; this module writes it down from its public reads and starts it
again through its public writes and `resume` (W8). It is in storage, not beside the tasks,
because the schema's migration (sqlite_schema.py) writes the same data for old files.

Invariants:
    WJ1 `working_from_dict(working_to_dict(memory), settings)` renders, reads and goes on
        exactly as `memory` under those settings (W8); the data is JSON-ready, with the keys
        goal, subtasks, done, pins, trajectory ([index, action, result, failed] rows,
        numbered from 1), recent, summary and summarizer_failures, the format every stored
        task has had, so that database files written before still open.
    WJ2 read under a smaller window, the extra recent steps are folded into the summary (W2);
        data that breaks a rule (no dict, steps out of order, a window longer than the steps,
        a summary that is no text) raises ValueError or TypeError naming the rule, and no
        working memory is returned.
"""

from ..core.records import Step
from ..core.working import Summarizer, WorkingMemory, WorkingSettings

__all__ = ["working_from_dict", "working_to_dict"]


def working_to_dict(memory: WorkingMemory) -> dict:
    """Return the task's state as JSON-ready data that `working_from_dict` reads back (WJ1)."""
    return {
        "goal": memory.goal,
        "subtasks": list(memory.subtasks),
        "done": list(memory.done_subtasks),
        "pins": list(memory.pins),
        "trajectory": [
            [step.index, step.action, step.result, step.failed] for step in memory.trajectory
        ],
        "recent": len(memory.recent_steps),
        "summary": memory.summary,
        "summarizer_failures": list(memory.summarizer_failures),
    }


def working_from_dict(
    data: dict,
    settings: WorkingSettings | None = None,
    summarizer: Summarizer | None = None,
) -> WorkingMemory:
    """Rebuild a working memory from `working_to_dict`'s data, under these settings (WJ1).

    A window saved larger than `settings.window_size` is folded down to it, and the budget
    (W7) applied. Raises ValueError naming the rule for data that breaks one (WJ2).
    """
    memory = WorkingMemory(settings, summarizer)
    if not isinstance(data, dict):
        raise ValueError(f"WJ2: working memory data must be a dict, got {data!r}")
    rows = data.get("trajectory", ())
    if not data.get("goal"):
        if rows:
            raise ValueError("WJ2: steps saved without a goal")
        return memory
    memory.init_task(data["goal"], data.get("subtasks", ()))
    for subtask in data.get("done", ()):
        memory.mark_done(subtask)
    for constraint in data.get("pins", ()):
        memory.pin(constraint)
    steps = []
    for position, row in enumerate(rows, start=1):
        if not isinstance(row, list) or len(row) != 4 or row[0] != position:
            raise ValueError(f"W3: step {position} is not [{position}, action, result, failed]")
        steps.append(Step.observed(*row))
    failures = data.get("summarizer_failures", ())
    memory.summarizer_failures = [str(failure) for failure in failures]
    memory.resume(steps, data.get("recent", 0), data.get("summary", ""))
    return memory
