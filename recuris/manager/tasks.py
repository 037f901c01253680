"""Tasks: each user's task in progress, kept as the core's working memory in the store.

Document 001 §6 gives its manager a task lifecycle: `start_task` writes the goal into
working memory, `record_step` adds each step, `finish_task` settles the task as an episode
and asks an LLM to extract reusable knowledge, and `get_llm_context` assembles what the
model should see. The working memory here is the core's `WorkingMemory` (core/working.py):
goal, pins, window, summary and the whole trajectory, under document 001 §3's token budget
(`WorkingSettings.token_budget`). Its state is one item of level "working" per task,
rewritten with every step, so that the task outlives the process that started it. The same
document warns that extraction output may be malformed; here a bad reply, a wrong field or
an exception costs only that extraction, which is reported. The manager holds one `Tasks`
and gives it the parts it uses: the store, the clock and the users' layers (user_layers.py).

Invariants:
    N1  a user has at most one task in progress: one item of level "working" whose metadata
        holds the task's type and its working memory (`kind` "task"), written with every step.
    N2  `finish` writes exactly one episode holding every recorded step, and clears the
        task's working items, whatever the extraction does.
    N3  extraction problems are returned and audited, never raised; statements below
        `min_confidence` are reported and not observed.
    N4  finishing a task is one transaction: its episode, the episode's audit record and
        the deletion of its working items commit together, so a crash loses no step.
    N5  the task in progress is read from the store when it is not loaded: a manager opened
        later on the same store, in this process or another, goes on with it or finishes it.
        A stored task whose state cannot be read is left in the store, unchanged, and not loaded.
    N6  `section` is the task's working memory in the core's prompt layout (core/prompt.py),
        or that layout's empty section when the user has no task in progress.
    N7  after a step is recorded or a note written (a working item of the task, `fit`), the
        task's working tier, its section (W7) and its notes together, fits document 001's
        `token_budget` unless only one note is left: the oldest notes are folded into the
        summary (W9) and their items deleted, each audited, in the put that rewrites the
        task's item. While the store fails (writes queued, reads refused), the notes wait for
        the next step or note the store takes.
    N8  a stored task (a working item whose metadata's `kind` is "task") has a task id, a
        `task_type` as text where present, and a `working` memory that W8 reads back with a
        goal; `task_of` raises ValueError naming N8 (and the item's id) for one that does
        not. Such a task is not loaded (N5), with a warning naming its id and N8: `start_task`
        starts a task beside it, `record_step` and `finish_task` see no task in progress, and
        a recall counts it in its result's `skipped` (MG8).
    N9  after a working note is written while its user has no task in progress (a loose
        note: a working item of no task, `fit_loose`), the user's loose notes and the one
        summary of those folded before (a working item of no task whose `kind` is "notes")
        together fit `token_budget` unless only one note is left: the oldest notes are
        folded, one at a time, into that summary by the summarizer that folds a task's
        notes (M5's `note:` lines, within `max_summary_chars`, M2, M3), and deleted, each
        fold audited, in the one put that writes the summary; the newest note stays whole.
        A task started later does not take them in: they were part of no task, so its
        episode (N2) does not clear them; they stay the user's, within the same budget.
        While the store fails, as in N7, the notes wait for the next loose note it takes.
        A user's working items thus hold at most two budgets at once, a task's tier (N7)
        and the loose notes' (N9), each past its budget only by its one newest note.
    N10 every item whose summary holds folded working notes (a task's, the notes summary
        of N9, the episode `finish` settles from a task) maps in its metadata
        (FOLDED_NOTES) each such note's id to the `note:` line it became (M5), for the
        lines it still holds. `unfold` takes the forgotten note's line out of every item
        mapping its id (M6) and the id out of their maps, and puts the note back as an
        item holding only that line, all in one put, for the erase that follows (MG7); a
        line M3 trimmed from a summary is held nowhere, and is no longer mapped.
    N11 a working note names the user's task in progress or no task: a write at the
        working level whose `task_id` names another task, or any while the user has no
        task in progress, is refused with ValueError naming N11, before anything is stored
        (MG6): such a note would belong to no tier N7 or N9 bounds, and no `finish` would
        clear it.
"""

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace

from ..core.records import Episode, Step
from ..storage.audit import AuditEntry
from ..core.text import estimate_tokens, flatten
from ..core.validation import require_number, require_text
from ..core.compression import StructuredSummarizer, note_line, without_note
from ..core.working import WorkingMemory, WorkingSettings
from ..evolution.extraction import (
    MIN_KNOWLEDGE_CONFIDENCE,
    Knowledge,
    extraction_prompt,
    parse_knowledge,
)
from ..core.semantic import Fact
from ..storage.archives import FOLDED_NOTES, item_to_episode
from ..storage.buffered_store import BufferedStore
from ..storage.item import MemoryItem
from ..storage.store import Store, StoreError
from ..storage.working_state import working_from_dict, working_to_dict
from .user_layers import UserLayers

__all__ = [
    "Tasks",
    "TaskState",
    "FinishReport",
    "TASK_KIND",
    "NOTES_KIND",
    "DEFAULT_TASK_TYPE",
    "task_of",
]

log = logging.getLogger("recuris.manager.tasks")

# The `kind` in the metadata of the item that holds a task in progress (N1); a working item
# written by `MemoryManager.write` during the task is an "event" of it.
TASK_KIND = "task"
# The `kind` in the metadata of the item that holds the summary of a user's loose working
# notes, those written with no task in progress (N9).
NOTES_KIND = "notes"
# The working items of no task that are no loose note: a stale task's item, the summary (N9).
LOOSE_KEPT = (TASK_KIND, NOTES_KIND)
# The task type of a stored task whose metadata names none.
DEFAULT_TASK_TYPE = "task"


@dataclass(frozen=True)
class FinishReport:
    """How a task was settled: its episode, the facts it promoted, what extraction refused."""

    episode: Episode
    facts: tuple[Fact, ...] = ()
    knowledge: tuple[Knowledge, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass
class TaskState:
    """One user's task in progress: its id and type, its working memory, and the item holding it."""

    id: str
    task_type: str
    working: WorkingMemory
    item: MemoryItem  # the stored item of level "working" that holds `working` (N1)
    # The notes folded into the summary: note id -> the `note:` line it became (N10).
    folded: dict[str, str] = field(default_factory=dict)

    @property
    def goal(self) -> str:
        return self.working.goal

    @property
    def steps(self) -> tuple[Step, ...]:
        """Every recorded step, in order, folded into the summary or not (W3)."""
        return self.working.trajectory

    def __repr__(self) -> str:
        return (
            f"TaskState({self.id!r}, goal={flatten(self.goal, 60)!r}, "
            f"task_type={self.task_type!r}, steps={len(self.steps)}, item_id={self.item.id!r})"
        )


def task_of(item: MemoryItem, settings: WorkingSettings) -> TaskState:
    """Return the task in progress a task item holds, its working memory under `settings`.

    Raises ValueError naming N8 (and the item's id) for an item that holds no task.
    """
    try:
        require_text("task_id", item.task_id)
        task_type = require_text("task_type", item.metadata.get("task_type", DEFAULT_TASK_TYPE))
        working = working_from_dict(item.metadata.get("working"), settings)
        if not working.goal:
            raise ValueError("its working memory has no goal")
        folded = folded_of(item)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"N8: task item {item.id!r} cannot be read as a task in progress: {error}"
        ) from None
    return TaskState(item.task_id, task_type, working, item, folded)


def folded_of(item: MemoryItem) -> dict[str, str]:
    """Return the item's map of folded notes to their lines (N10), empty if it has none.

    Raises ValueError for a map that is not one of ids to lines.
    """
    folded = item.metadata.get(FOLDED_NOTES, {})
    if not isinstance(folded, dict) or not all(
        isinstance(value, str) for value in folded.values()
    ):
        raise ValueError(f"N10: its {FOLDED_NOTES} is not a map of note ids to lines")
    return dict(folded)


def still_held(folded: dict[str, str], summary: str) -> dict[str, str]:
    """Return the entries of the map whose line the summary still holds (N10)."""
    lines = set(summary.splitlines())
    return {note_id: line for note_id, line in folded.items() if line in lines}


class Tasks:
    """Each user's task in progress (at most one, N1), from start to settled episode."""

    def __init__(
        self,
        store: Store,
        clock: Callable[[], float],
        users: UserLayers,
        *,
        lock: AbstractContextManager,
        llm: Callable[[str], str] | None = None,
        min_confidence: float = MIN_KNOWLEDGE_CONFIDENCE,
        working_settings: WorkingSettings | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.users = users
        self.lock = lock
        self.llm = llm
        self.min_confidence = require_number("N3: min_confidence", min_confidence, 0.0, 1.0)
        if working_settings is None:
            working_settings = WorkingSettings()
        self.working_settings = working_settings
        # The tasks this manager has loaded or started: user id -> their task (N5).
        self.in_progress: dict[str, TaskState] = {}
        # user id -> the ids of their stored tasks the last load found unreadable (N8).
        self.skipped: dict[str, tuple[str, ...]] = {}
        # The summarizer a task's working memory folds its notes with (W9), for loose notes.
        self.notes_summarizer = StructuredSummarizer(working_settings.max_summary_chars)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.in_progress))

    def __len__(self) -> int:
        return len(self.in_progress)

    def get(self, user_id: str) -> TaskState | None:
        """Return the user's task in progress, loading it from the store; None if there is none.

        While the store cannot be read, a task not loaded yet reads as none.
        """
        with self.lock:
            if user_id in self.in_progress:
                return self.in_progress[user_id]
            try:
                task = self._load(user_id)
            except StoreError:
                return None
            if task is not None:
                self.in_progress[user_id] = task
            return task

    def _load(self, user_id: str) -> TaskState | None:
        """Read the user's task in progress from the store (N5)."""
        held = [
            item
            for item in self.store.list(user_id, "working")
            if item.metadata.get("kind") == TASK_KIND
        ]
        # The latest, should a file hold several (tasks of a process that died, migrated).
        skipped = []
        found = None
        for item in reversed(held):
            try:
                found = task_of(item, self.working_settings)
            except ValueError as error:
                # A task whose stored state cannot be read (edited by hand, written by a fork)
                # is left in the store as it is, never dropped; the user goes on without it.
                log.warning("%s; left as it is", error)
                skipped.append(item.id)
                continue
            break
        self.skipped[user_id] = tuple(skipped)
        return found

    def current(self, user_id: str) -> TaskState:
        """Return the user's task in progress; raise ValueError if there is none (N1)."""
        task = self.get(user_id)
        if task is None:
            raise ValueError(f"N1: user {user_id!r} has no task in progress; call start_task first")
        return task

    def drop(self, user_id: str) -> None:
        """Let the user's loaded task go, unsettled: the user was forgotten (UL1)."""
        with self.lock:
            self.in_progress.pop(user_id, None)
            self.skipped.pop(user_id, None)

    def start(self, user_id: str, goal: str, task_type: str = DEFAULT_TASK_TYPE) -> str:
        """Start a task for the user: a working memory with this goal, stored. Return the task id.

        Raises ValueError if the user already has a task in progress (N1), and for a goal,
        task type or clock reading that breaks a rule, storing nothing then.
        """
        with self.lock:
            require_text("user_id", user_id)
            working = WorkingMemory(self.working_settings)
            working.init_task(goal)
            require_text("task_type", task_type)
            task = self.get(user_id)
            if task is not None:
                raise ValueError(f"N1: user {user_id!r} already has task {task.id!r} in progress")
            # Read first: a broken clock (I4) is refused before anything is stored.
            now = self.clock()
            self.users.get(user_id)
            task_id = self.store.new_id("task")
            item = MemoryItem(
                id=self.store.new_id("item"),
                user_id=user_id,
                level="working",
                content=f"goal: {goal}",
                task_id=task_id,
                created_at=now,
                importance=1.0,
                metadata=self._metadata(task_type, working),
            )
            why = f"task {task_id} started: working memory"
            item = self.users.put_written(item, why, loaded=True)
            self.in_progress[user_id] = TaskState(task_id, task_type, working, item)
            return task_id

    def record(self, user_id: str, action: str, result: str, failed: bool | None = None) -> Step:
        """Add one step to the user's task's working memory and store it (N1).

        Raises ValueError if the user has no task in progress, and TypeError or ValueError
        for a step that breaks a rule (R1), storing nothing then.
        """
        with self.lock:
            task = self.current(user_id)
            # Read first: a broken clock (I4) is refused before the step is added.
            now = self.clock()
            step = task.working.add_step(action, result, failed)
            self._store(task, f"step {step.index} of task {task.id}", now)
            return step

    def fit(self, user_id: str) -> None:
        """Fold the oldest notes of the user's task while its working tier passes the budget (N7).

        The manager calls it after it writes a working item of the task in progress.
        """
        with self.lock:
            task = self.get(user_id)
            if task is not None:
                self._store(task, f"notes of task {task.id} folded", self.clock(), changed=False)

    def fit_loose(self, user_id: str) -> None:
        """Fold the user's oldest loose working notes while they pass the budget (N9).

        The manager calls it after it writes a working item while the user has no task.
        """
        with self.lock:
            budget = self._fold_budget()  # the notes wait for the store, as a task's (N7)
            if budget is None:
                return
            try:
                held = [item for item in self.store.list(user_id, "working") if not item.task_id]
            except StoreError:
                return
            summaries = [item for item in held if item.metadata.get("kind") == NOTES_KIND]
            notes = [item for item in held if item.metadata.get("kind") not in LOOSE_KEPT]
            summary = summaries[-1] if summaries else None
            text = summary.content if summary is not None else ""
            try:
                lines = folded_of(summary) if summary is not None else {}
            except ValueError as error:
                # A map edited by hand is left as it is, and no note is folded under it.
                log.warning("%s: item %s; notes not folded", error, summary.id)
                return
            left = sum(estimate_tokens(note.content) for note in notes)
            folded: list[MemoryItem] = []
            while len(notes) - len(folded) > 1 and estimate_tokens(text) + left > budget:
                note = notes[len(folded)]
                # One at a time, oldest first: each note folded lengthens the summary.
                text = self.notes_summarizer.with_notes(text, [note.content])
                lines[note.id] = note_line(note.content)
                left -= estimate_tokens(note.content)
                folded.append(note)
            if folded:
                self._store_loose(user_id, summary, text, still_held(lines, text), folded)

    def _store_loose(
        self,
        user_id: str,
        summary: MemoryItem | None,
        text: str,
        lines: dict[str, str],
        folded: list[MemoryItem],
    ) -> None:
        # The summary is written, and the notes folded into it deleted, in one put (S5): a
        # note is in its item or in the summary, never neither.
        now = self.clock()
        if summary is None:
            summary = MemoryItem(
                id=self.store.new_id("item"),
                user_id=user_id,
                level="working",
                content=text,
                created_at=now,
                metadata={"kind": NOTES_KIND, FOLDED_NOTES: lines},
            )
        else:
            metadata = {**summary.metadata, FOLDED_NOTES: lines}
            summary = replace(summary, content=text, metadata=metadata)
        why = f"{len(folded)} loose working note(s) folded into their summary"
        written = AuditEntry(summary.id, "write", why, now, None, user_id)
        reason = "loose working notes past the token budget: folded into their summary"
        cleared = [AuditEntry(note.id, "fold", reason, now, None, user_id) for note in folded]
        self.store.put([summary], [written, *cleared], folded)

    def check_note(self, user_id: str, task_id: str) -> None:
        """Raise ValueError naming N11 unless the task id names the user's task in progress."""
        with self.lock:
            task = self.get(user_id)
            if task is None or task.id != task_id:
                held = "none" if task is None else repr(task.id)
                raise ValueError(
                    f"N11: a working note names the task in progress or none: "
                    f"user {user_id!r} has {held}, not {task_id!r}"
                )

    def unfold(self, user_id: str, note_id: str) -> bool:
        """Take a folded note's line out of every summary holding it, for its erase (N10).

        The items mapping the note are rewritten, and the note put back as an item holding
        only its line, in one put (S5), so that erasing the note's id reaches them all
        (MG7). Return whether any item mapped it. A stored task, notes summary or episode
        that cannot be read (N8, AR4) is left as it is (MG8).
        """
        with self.lock:
            now = self.clock()
            held = [*self.store.list(user_id, "working"), *self.store.list(user_id, "episodic")]
            rewritten = []
            line = None
            for item in held:
                try:
                    folded = folded_of(item)
                    if note_id not in folded:
                        continue
                    line = folded.pop(note_id)
                    rewritten.append(self._without_line(item, line, folded))
                except (TypeError, ValueError) as error:
                    log.warning("%s: item %s; left as it is", error, item.id)
            if line is None:
                return False
            note = MemoryItem(
                id=note_id,
                user_id=user_id,
                level="working",
                content=line.removeprefix("note: "),
                created_at=now,
                metadata={"kind": "event"},
            )
            why = "a folded working note taken out of this summary on request"
            audit = [AuditEntry(item.id, "write", why, now, None, user_id) for item in rewritten]
            self.store.put([note, *rewritten], audit)
            # The task in progress is read back as it is stored now (N5).
            self.in_progress.pop(user_id, None)
            return True

    @staticmethod
    def _without_line(item: MemoryItem, line: str, folded: dict[str, str]) -> MemoryItem:
        """Return the item holding a summary without the line, mapping `folded` (N10, M6)."""
        metadata = {**item.metadata, FOLDED_NOTES: folded}
        kind = item.metadata.get("kind")
        if kind == TASK_KIND:
            working = dict(item.metadata.get("working"))
            working["summary"] = without_note(working.get("summary", ""), line)
            metadata["working"] = working
            return replace(item, metadata=metadata)
        if kind == NOTES_KIND:
            return replace(item, content=without_note(item.content, line), metadata=metadata)
        # An episode: its summary is in its metadata, and its content does not show it.
        episode = item_to_episode(item)
        metadata["summary"] = without_note(episode.summary, line)
        return replace(item, metadata=metadata)

    def _store(self, task: TaskState, why: str, now: float, changed: bool = True) -> None:
        # The task's item is rewritten with its working memory, and the notes folded into it
        # deleted, in one put (S5): a note is in its item or in the summary, never neither.
        try:
            folded = self._fold_notes(task)
            if not changed and not folded:
                return
            lines = {**task.folded, **{note.id: note_line(note.content) for note in folded}}
            # A line trimmed from the summary (M3) is held nowhere: no longer mapped (N10).
            lines = still_held(lines, task.working.summary)
            metadata = self._metadata(task.task_type, task.working, lines)
            item = replace(task.item, metadata=metadata)
            written = AuditEntry(item.id, "write", why, now, None, item.user_id)
            reason = f"{why}: past the token budget"
            cleared = [
                AuditEntry(note.id, "fold", reason, now, None, note.user_id) for note in folded
            ]
            self.store.put([item], [written, *cleared], folded)
        except Exception:
            # Nothing is stored: the next call reads the task back as the store has it.
            self.in_progress.pop(task.item.user_id, None)
            raise
        task.item = item
        task.folded = lines

    def _fold_budget(self) -> int | None:
        """Return the token budget notes are folded to; None without one, or while writes wait.

        While writes wait in the queue, a read would replay it at every step and note, and a
        fold would only queue more: the notes wait for the store (G13).
        """
        if isinstance(self.store, BufferedStore) and self.store.pending:
            return None
        return self.working_settings.token_budget

    def _fold_notes(self, task: TaskState) -> list[MemoryItem]:
        """Fold the oldest notes into the summary until the tier fits the budget (N7).

        Return the notes folded, oldest first; none when there is no budget, or while the
        store fails (writes queued, or reads refused).
        """
        budget = self._fold_budget()
        if budget is None:
            return []
        try:
            held = self.store.list(task.item.user_id, "working", task.id)
        except StoreError:
            return []
        notes = [note for note in held if note.metadata.get("kind") != TASK_KIND]
        left = sum(estimate_tokens(note.content) for note in notes)
        folded: list[MemoryItem] = []
        while len(notes) - len(folded) > 1:
            if estimate_tokens(task.working.to_prompt_section()) + left <= budget:
                break
            note = notes[len(folded)]
            # One at a time: each note folded lengthens the summary the section shows.
            task.working.fold_notes([note.content])
            left -= estimate_tokens(note.content)
            folded.append(note)
        return folded

    def _metadata(
        self, task_type: str, working: WorkingMemory, folded: dict[str, str] | None = None
    ) -> dict:
        metadata = {"kind": TASK_KIND, "task_type": task_type, "working": working_to_dict(working)}
        if folded:
            metadata[FOLDED_NOTES] = folded
        return metadata

    def section(self, user_id: str) -> str:
        """Return the working section of the user's task, in the core's prompt layout (N6)."""
        with self.lock:
            task = self.get(user_id)
            working = task.working if task is not None else WorkingMemory(self.working_settings)
            return working.to_prompt_section()

    def finish(
        self, user_id: str, status: str = "success", failure_reason: str = ""
    ) -> FinishReport:
        """Settle the user's task as one episode and clear its working items (N2, N4).

        Raises ValueError if the user has no task in progress.
        """
        with self.lock:
            task = self.current(user_id)
            now = self.clock()
            episode = Episode(
                task_type=task.task_type,
                goal=task.goal,
                status=status,
                trajectory=task.steps,
                summary=task.working.summary,
                failure_reason=failure_reason,
                created_at=now,
            )
            working = self.store.list(user_id, "working", task.id)
            why = f"{task.id} finished"
            cleared = [AuditEntry(item.id, "clear", why, now, None, user_id) for item in working]
            folded = still_held(task.folded, episode.summary)
            report = self.settle(user_id, episode, cleared, working, folded)
            self.in_progress.pop(user_id, None)
            return report

    def settle(
        self,
        user_id: str,
        episode: Episode,
        audit: Iterable[AuditEntry] = (),
        delete: Iterable[MemoryItem] = (),
        folded: dict[str, str] | None = None,
    ) -> FinishReport:
        """Store a finished episode, then let the LLM, if any, extract knowledge from it (N3).

        The episode, the audit of its write, `audit` and the deletion of `delete` commit in
        one transaction (N4): a crash leaves either the task's working items or its episode.
        `folded` maps the notes its summary holds to their lines (N10).
        """
        with self.lock:
            layers = self.users.get(user_id)
            episodes = layers.episodic
            # The store hands out episode ids, here as when the memory saves one itself.
            episode.id = episode.id or episodes.new_id()
            why = f"episode: {episode.status}, {len(episode.trajectory)} steps"
            written = AuditEntry(episode.id, "write", why, self.clock(), None, user_id)
            episodes.settle(episode, [*audit, written], delete, folded)
            if self.llm is None:
                return FinishReport(episode)
            prompt = extraction_prompt(episode.goal, episode.status, episode.trajectory)
            try:
                knowledge, problems = parse_knowledge(self.llm(prompt))
            # The model is untrusted: its failure is reported, not raised (N3).
            except Exception as error:  # noqa: BLE001
                knowledge = []
                problems = [f"llm raised {type(error).__name__}: {flatten(str(error), 120)}"]
            facts = []
            for statement in knowledge:
                if statement.confidence < self.min_confidence:
                    problems.append(
                        f"{statement.subject!r}: confidence {statement.confidence} "
                        f"< {self.min_confidence}"
                    )
                    continue
                fact = layers.consolidator.observe(statement.subject, statement.value, episode.id)
                if fact:
                    facts.append(fact)
            if problems:
                now = self.clock()
                self.store.append_audit(
                    [
                        AuditEntry(episode.id, "extract-problem", problem, now, None, user_id)
                        for problem in problems
                    ]
                )
            return FinishReport(episode, tuple(facts), tuple(knowledge), tuple(problems))
