"""Manager: one write and one read interface over every layer, each call scoped to one user.

Document 002 §4 puts a management layer between the agent and storage: route each write to
its level, recall "relevant memory" through one call. Document 003 §4.4 layers the read
(working, then semantic, episodic when semantic is thin, procedural on a trigger) and §6.3
and §7 ask for a reason logged with every operation, isolation between users, deletion that
reaches every copy, and an agent that keeps working when memory does not. The manager holds
three parts, `tasks` (tasks.py), `users` (user_layers.py) and `forgetting`
(evolution/forgetting.py); it calls them, and they never call it back. An agent answering
several requests at once calls one manager from several threads: the manager's caches
(loaded layers, tasks in progress) change together with the store, so each public operation
runs whole under one re-entrant lock, which the manager makes and gives to each part.

Invariants:
    MG1 no recall, get, list or export for one user returns an item of another.
    MG2 semantic facts are never modified in place; superseding keeps the old one, invalid.
    MG3 after `forget_user(U)`, no item and no audit entry holds U's text.
    MG4 every write, promotion, supersession, forgetting and recall is audited.
    MG5 a failing store makes recall return nothing (with a warning), never raise.
    MG6 `write` checks every argument (user, content, tags, level, importance, a working
        note's task: N11) and reads the clock (I4) before it stores or audits anything: a
        refused write leaves no trace.
    MG7 after `forget_memory(item, U)` the item is in neither the store nor the queue, no
        audit entry of U quotes its text or names it (a recall's naming a procedure quotes
        its trigger; S13, SE1, G12), no summary holds it (a working note folded into a
        task's summary, the notes summary or an episode's: N10, whose forget answers True),
        no loaded layer holds it and it counts toward no consolidation (UL3); a fact
        consolidated from it (its sources read whole, FA4) goes with it once every other
        source of the fact is gone too, and one with a source left stays, its id taken out
        of its sources (as out of every item's quoted ids, S13); any other memory that
        states the same text stays. The forget is audited, and so is a fact's; an id that
        is not U's forgets nothing and says no more than an unknown one.
    MG8 a stored item that is no fact (FA4), no procedure (H5), no task (N8), no episode
        (AR4), no insight (Y8) or no item to merge (O7), or a row that is no item at all
        (SH5), edited by hand or written by a fork, takes no call of its user down: recall,
        `list`, `start_task`, `finish_task`, fact writes, `forget_memory`, reflection and
        forgetting cycles leave it out, unchanged in the store, with a warning naming its id
        and the rule, and a recall counts the user's such facts, procedures and tasks (those
        it reads) and such rows (those the store met) in its result's `skipped`; a
        `forget_memory` naming such a row erases it.
    MG9 a recall given facts to `leave_out` (ids, as a list or set of text) returns what it
        would return were they not stored, but for the store's term statistics, which still
        count them: none of them, no place in the pool taken by them (CA4), and episodes
        offered when the facts left are thin (CA1); its `skipped` does not count them.
    TS1 each public method runs whole under the manager's re-entrant lock, taken in the
        method itself, so one method may call another; the parts take the same lock.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..core.decay import DecayManager
from ..core.episodic import RetrievalSettings
from ..core.records import Step
from ..core.similarity import Scorer
from ..core.text import statement
from ..core.validation import require_count, require_number, require_text
from ..core.working import WorkingSettings
from ..core.consolidation import ConsolidationSettings
from ..evolution.extraction import MIN_KNOWLEDGE_CONFIDENCE
from ..experience.agent import ExperienceAgent
from ..evolution.forgetting import ForgettingCycle, ForgettingReport
from ..evolution.stored_facts import sources_of
from ..retrieval.scoring import forget_words
from ..storage.audit import AuditEntry
from ..storage.buffered_store import ACCESS_BATCH, BufferedStore, QueuedErasureError
from ..storage.item import LEVELS, CheckedClock, MemoryItem, require_texts
from ..storage.memory_store import InMemoryStore
from ..storage.sqlite_erasure import ErasureIncompleteError
from ..storage.store import Store, StoreError
from .bounds import MAX_LOADED_USERS, cap_query
from .candidates import gather
from .experience import (
    EPISODE_THRESHOLD,
    EPISODE_TOP_K,
    agent_on_manager,
    episode_scorer,
    recalled_section,
)
from .recall import RecallPolicy, RecallResult, assemble, rank
from .routing import MIN_CONTENT_CHARS, is_trivial, route
from .tasks import DEFAULT_TASK_TYPE, FinishReport, Tasks
from .user_layers import Layers, UserLayers

__all__ = ["MemoryManager", "ManagerSettings", "RecallResult"]

log = logging.getLogger("recuris.manager.manager")


@dataclass(frozen=True)
class ManagerSettings:
    """How a MemoryManager behaves: its own settings and its parts' records.

    Raises ValueError, naming the rule, for a setting out of its range.
    """

    # Content shorter than this many characters is trivial: audited as skipped, not stored (U1).
    min_content_chars: int = MIN_CONTENT_CHARS
    # Users whose layers stay loaded; the least recently used are let go first (BD3).
    max_loaded_users: int = MAX_LOADED_USERS
    # The task in progress: its window, summary and document 001's token budget (W4, W7).
    working: WorkingSettings = field(default_factory=WorkingSettings)
    # Statements a model extracts from a finished task with less confidence than this are
    # reported and not observed (N3); reflection's gate is another setting (chapter
    # evolution/extraction says why they differ).
    extraction_min_confidence: float = MIN_KNOWLEDGE_CONFIDENCE
    # When a statement seen in episodes becomes a fact (C1).
    consolidation: ConsolidationSettings = field(default_factory=ConsolidationSettings)
    # How recall weighs and layers its candidates.
    recall: RecallPolicy = field(default_factory=RecallPolicy)
    # Recalls whose counted accesses (and audit records) are written in one transaction: 1
    # writes each recall's at once; N waits for N recalls, the next write or the store's close,
    # and a process that dies loses up to N recalls' counts (G10, chapter manager/recall).
    access_batch: int = ACCESS_BATCH
    # How many past tasks a manager's agent is shown, and how similar they must be (MX4).
    episodes: RetrievalSettings = field(
        default_factory=lambda: RetrievalSettings(top_k=EPISODE_TOP_K, threshold=EPISODE_THRESHOLD)
    )

    def __post_init__(self) -> None:
        require_count("U1: min_content_chars", self.min_content_chars, 0)
        require_count("G10: access_batch", self.access_batch, 1)
        require_count("BD3: max_loaded_users", self.max_loaded_users, 1)
        require_number("N3: extraction_min_confidence", self.extraction_min_confidence, 0, 1)


class MemoryManager:
    """Route writes to the right layer and recall across layers, for many isolated users.

    It holds three parts, each with its own chapter: `tasks` (each user's task in progress),
    `users` (each user's layers, loaded on use) and `forgetting` (decay cycles). `scorer` is
    a factory of the scorer each user's episodic layer ranks with (by default
    `episode_scorer`, MX4); `decay` decides what a
    forgetting cycle forgets (by default a `DecayManager` on the manager's clock); `settings`
    default to `ManagerSettings()`.
    """

    def __init__(
        self,
        store: Store | None = None,
        *,
        clock: Callable[[], float] = time.time,
        llm: Callable[[str], str] | None = None,
        scorer: Callable[[], Scorer] | None = None,
        decay: DecayManager | None = None,
        settings: ManagerSettings | None = None,
    ) -> None:
        settings = settings if settings is not None else ManagerSettings()
        self.settings = settings
        # Every layer reads time through the checked clock: a broken reading is refused (I4).
        self.clock = CheckedClock(clock)
        self.policy = settings.recall  # the ranking's record, which recall hands to `gather`
        self.store = BufferedStore(
            store if store is not None else InMemoryStore(),
            self.clock,
            access_batch=settings.access_batch,
        )
        self._lock = threading.RLock()  # one public operation at a time (TS1)
        self.users = UserLayers(
            self.store,
            self.clock,
            consolidation=settings.consolidation,
            max_loaded_users=settings.max_loaded_users,
            scorer=scorer if scorer is not None else episode_scorer,
            lock=self._lock,
        )
        self.tasks = Tasks(
            self.store,
            self.clock,
            self.users,
            lock=self._lock,
            llm=llm,
            min_confidence=settings.extraction_min_confidence,
            working_settings=settings.working,
        )
        decay = decay if decay is not None else DecayManager(clock=self.clock)
        self.forgetting = ForgettingCycle(self.store, self.clock, decay, lock=self._lock)

    # -- writing and reading one user's memory ------------------------------------------

    def write(
        self,
        content: str,
        user_id: str,
        *,
        level: str | None = None,
        importance: float | None = None,
        tags: Iterable[str] = (),
        task_id: str | None = None,
        metadata: dict | None = None,
        speaker: str | None = None,
    ) -> MemoryItem | None:
        """Store content at its level (given, or chosen by `route`); return the item, or None.

        None means the content was trivial (U1). A routed `subject: value` is kept as an event
        and observed by the consolidator. `speaker`, who said it, is kept in an event's
        metadata, where recall prefers the speaker a query names (Q7). Raises
        TypeError/ValueError for a bad argument, before anything is stored or audited (MG6).
        """
        require_text("user_id", user_id)
        if not isinstance(content, str):
            raise TypeError(f"content must be a str, got {type(content).__name__}")
        tags = require_texts("tags", tags)
        if speaker is not None:
            require_text("speaker", speaker)
            metadata = {**(metadata or {}), "speaker": speaker}
        if level is not None and level not in LEVELS:
            raise ValueError(f"I1: level must be one of {LEVELS}, got {level!r}")
        if importance is not None:
            require_number("I1: importance", importance, 0.0, 1.0)
        with self._lock:
            return self._write(content, user_id, level, importance, tags, task_id, metadata)

    def _write(
        self,
        content: str,
        user_id: str,
        level: str | None,
        importance: float | None,
        tags: list[str],
        task_id: str | None,
        metadata: dict | None,
    ) -> MemoryItem | None:
        now = self.clock()  # read first: a broken clock (I4) is refused before anything is stored
        chosen = level or route(content, tags)
        if chosen == "working" and task_id is not None:
            # A note of a task not in progress would be bounded by no budget (N11).
            self.tasks.check_note(user_id, task_id)
        if is_trivial(content, self.settings.min_content_chars):
            self._audit(user_id, "-", "skip", f"trivial content ({len(content)} characters)")
            return None
        # An event needs no layers loaded; every other level does.
        layers = None if chosen == "episodic" else self._layers(user_id)
        if chosen == "procedural":
            details = metadata or {}
            procedure = layers.procedural.add(
                content,
                details.get("steps", ()),
                details.get("task_types", ()),
                details.get("keywords", tags),
            )
            return self.store.get(user_id, procedure.id)
        if level == "semantic":
            subject, value = statement(content) or (content, "true")
            fact = layers.semantic.add(subject, value, [task_id or "direct write"])
            return self.store.get(user_id, fact.id)
        if task_id is None and chosen == "working":
            task = self.tasks.get(user_id)
            if task is not None:
                task_id = task.id
        item = MemoryItem(
            id=self.store.new_id("item"),
            user_id=user_id,
            content=content,
            task_id=task_id,
            level="episodic" if chosen == "semantic" else chosen,
            created_at=now,
            importance=0.5 if importance is None else importance,
            metadata={**(metadata or {}), "tags": tags, "kind": "event"},
        )
        why = (
            "a statement, routed by rule to episodic until consolidation promotes it"
            if chosen == "semantic"
            else f"routed to {chosen} " + ("as given" if level else "by rule")
        )
        # Put with its audit record (S5); a forget found meanwhile ends the user's task (UL1).
        item = self.users.put_written(item, why, loaded=layers is not None)
        self._drop_tasks_of_forgotten_users()
        task = self.tasks.get(user_id) if chosen == "working" else None
        if task is not None and task.id == item.task_id:
            # A note of the task in progress: its working tier keeps to the budget (N7).
            self.tasks.fit(user_id)
        elif chosen == "working" and task is None:
            # A loose note: the user's loose notes keep to the same budget (N9).
            self.tasks.fit_loose(user_id)
        if chosen == "semantic":
            # The consolidator audits a promotion itself.
            layers.consolidator.observe(*statement(content), item.id)
        return item

    def get(self, item_id: str, user_id: str) -> MemoryItem | None:
        """Return the user's item with this id, or None: never another user's item (MG1)."""
        require_text("user_id", user_id)
        with self._lock:
            return self.store.get(user_id, item_id)

    def list(self, user_id: str, level: str | None = None) -> list[MemoryItem]:
        """Return the user's items, oldest first, optionally of one level."""
        require_text("user_id", user_id)
        with self._lock:
            return self.store.list(user_id, level)

    def export(self, user_id: str) -> list[dict]:
        """Return every item of the user, superseded ones included, as JSON-ready dicts."""
        with self._lock:
            return [item.to_dict() for item in self.list(user_id)]

    def history(self, user_id: str, item_id: str | None = None) -> list[AuditEntry]:
        """Return the user's audit records, optionally for one item, oldest first."""
        require_text("user_id", user_id)
        with self._lock:
            return self.store.audit(user_id, item_id)

    def recall(
        self,
        query: str,
        user_id: str,
        top_k: int = 5,
        token_budget: int | None = None,
        task_type: str | None = None,
        include_invalid: bool = False,
        count_access: bool = True,
        leave_out: Iterable[str] = (),
    ) -> RecallResult:
        """Recall across layers, ranked by relevance, recency and importance (Q1, MG5).

        Counts an access on each result unless `count_access` is False (an inspection). The
        facts named in `leave_out` are recalled as if they were not stored (MG9). A query
        longer than MAX_QUERY_CHARS is cut, and the result's `query_truncated` says so (BD2).
        Raises ValueError for top_k < 1 or a budget that is not an int >= 0 (checked where the
        results are fitted to it, `assemble`), TypeError for a `leave_out` that is one str.
        """
        require_count("Q1: top_k", top_k, 1)
        left_out = frozenset(require_texts("leave_out", leave_out, "MG9"))
        query, cut = cap_query(query)  # BD2: a longer query costs time and says no more
        with self._lock:
            try:
                now = self.clock()
                layers = self._layers(user_id)
                task = self.tasks.get(user_id)
                triggered = layers.procedural.match(query, task_type or (task and task.task_type))
                # Read only when a trigger matched: most recalls trigger nothing, and a store
                # waiting out an outage would replay its queue to answer an empty read.
                named = [procedure.id for procedure, _ in triggered]
                stored = self.store.get_many(user_id, named) if named else {}
                # A procedure deleted meanwhile is left out.
                procedures = [
                    (stored[procedure.id], why)
                    for procedure, why in triggered
                    if procedure.id in stored
                ]
                task_id = task and task.id
                # A fact, procedure or task that could not be read is none to recall either (MG8).
                skipped = {*layers.skipped, *self.tasks.skipped.get(user_id, ())}
                found = gather(
                    self.store,
                    user_id,
                    query,
                    self.policy,
                    now,
                    task_id,
                    procedures,
                    include_invalid,
                    frozenset(skipped),
                    self.forgetting.decay.settings.curve,  # recency is decay's curve (Q9)
                    left_out,
                )
                # Rows the store met and could not read, gathering or before (SH5), count too.
                skipped.update(self.store.unreadable(user_id))
                chosen, text = assemble(rank(found)[:top_k], token_budget)
                if count_access:
                    self.users.count_access(user_id, chosen)
            except StoreError as error:
                log.warning("memory unavailable, recalling nothing: %s", error)
                return RecallResult((), "", degraded=True, query_truncated=cut)
            return RecallResult(tuple(chosen), text, query_truncated=cut, skipped=len(skipped))

    # -- the task lifecycle, carried out by `tasks` ---------------------------------------

    def start_task(self, user_id: str, goal: str, task_type: str = DEFAULT_TASK_TYPE) -> str:
        """Start a task for the user: a working memory with this goal, stored. Return its id.

        Raises ValueError if the user already has a task in progress (N1).
        """
        with self._lock:
            # A forget found elsewhere ends the user's task before a new one starts (UL1).
            self._drop_tasks_of_forgotten_users()
            return self.tasks.start(user_id, goal, task_type)

    def record_step(
        self, user_id: str, action: str, result: str, failed: bool | None = None
    ) -> Step:
        """Record one step of the user's task in its trajectory and in working memory.

        Raises ValueError if the user has no task in progress (N1).
        """
        with self._lock:
            return self.tasks.record(user_id, action, result, failed)

    def finish_task(
        self, user_id: str, status: str = "success", failure_reason: str = ""
    ) -> FinishReport:
        """Settle the user's task as one episode and clear its working items (N2, N4)."""
        with self._lock:
            report = self.tasks.finish(user_id, status, failure_reason)
            self._drop_tasks_of_forgotten_users()
            return report

    def get_llm_context(
        self, user_id: str, query: str | None = None, token_budget: int | None = 600
    ) -> str:
        """Return the model's context: the task's working memory, then the recall for it (N6).

        The query is by default the task's goal. Recalled working items are left out: the
        working section shows the task whole.
        """
        with self._lock:
            task = self.tasks.get(user_id)
            asked = query or (task.goal if task is not None else "")
            recalled = self.recall(asked, user_id, token_budget=token_budget)
            shown = [found for found in recalled.results if found.item.level != "working"]
            return "\n\n".join([self.tasks.section(user_id), recalled_section(shown).render()])

    def get_llm_messages(
        self, user_id: str, query: str | None = None, token_budget: int | None = 600
    ) -> list[dict]:
        """Return the context as chat messages: memory as system text, then the query (N6)."""
        with self._lock:
            context = self.get_llm_context(user_id, query, token_budget)
            task = self.tasks.get(user_id)
            system = f"You are an agent with long-term memory. Use it when relevant.\n\n{context}"
            question = query or (task.goal if task is not None else "")
            asked = [{"role": "user", "content": question}] if question else []
            return [{"role": "system", "content": system}, *asked]

    # -- forgetting ----------------------------------------------------------------------

    def forget_user(self, user_id: str) -> int:
        """Delete every item of the user and scrub their audit text; return how many (MG3).

        Their task in progress goes too, unsettled. Every other manager on the store drops its
        caches of the user on its next call (UL1). Raises ErasureIncompleteError, a StoreError,
        when a reader in another connection kept old copies of the text (SE1).
        """
        with self._lock:
            self.tasks.drop(user_id)
            forget_words()  # no word of theirs stays remembered in this process either
            return self.users.forget(user_id)

    def forget_memory(self, item_id: str, user_id: str) -> bool:
        """Erase one of the user's memories everywhere and audit it; return whether it was there.

        Its text leaves the store, the queue, the audit records naming or quoting it and, in
        SQLite, the log; a fact consolidated from it whose every other source is gone is
        erased with it; the user's layers are reloaded without them, and the consolidator
        forgets their sightings (MG7). Raises ErasureIncompleteError or QueuedErasureError,
        StoreErrors, when copies may remain (SE1, G12), and StoreError while the store fails.
        """
        require_text("user_id", user_id)
        require_text("item_id", item_id)
        with self._lock:
            erased: list[str] = []
            try:
                # Read before the erase, which takes the id out of every fact's sources (S13).
                orphaned = self._facts_made_only_from(user_id, item_id)
            except StoreError:
                orphaned = []  # the erase below says what the failing store leaves
            try:
                # A note folded into summaries is put back as its line, taken out of them (N10).
                if self.store.get(user_id, item_id) is None:
                    self.tasks.unfold(user_id, item_id)
                if self.store.erase(user_id, [item_id]) > 0:
                    erased.append(item_id)
                    erased.extend(self._erase_facts(user_id, item_id, orphaned))
            except (ErasureIncompleteError, QueuedErasureError) as error:
                erased.append(item_id)
                self._audit(user_id, item_id, "forget", f"erased on request; {_unfinished(error)}")
                raise
            finally:
                # Even when the erasure raised, the loaded layers must not keep what it reached.
                self.users.refresh(user_id, forgotten=set(erased))
            if erased:
                self._audit(user_id, item_id, "forget", "erased on request")
                forget_words()  # nor a word of it in this process's memo of stems
            return bool(erased)

    def _facts_made_only_from(self, user_id: str, item_id: str) -> list[str]:
        """Return the facts naming the item whose every other source is gone (MG7).

        A fact whose sources cannot be read (FA4) is left out, as it is (MG8).
        """
        orphaned = []
        for fact in self.store.list(user_id, "semantic"):
            try:
                sources = sources_of(fact)
            except ValueError as error:
                log.warning("%s; not erased with %s", error, item_id)
                continue
            others = [source for source in sources if source != item_id]
            if item_id in sources and all(
                self.store.get(user_id, source) is None for source in others
            ):
                orphaned.append(fact.id)
        return orphaned

    def _erase_facts(self, user_id: str, item_id: str, orphaned: list[str]) -> list[str]:
        """Erase the facts made only from the erased item, each audited (MG7)."""
        if orphaned:
            self.store.erase(user_id, orphaned)
            for fact_id in orphaned:
                self._audit(user_id, fact_id, "forget", f"erased with its last source {item_id}")
        return orphaned

    def close(self) -> None:
        """Write what is queued and close the store.

        Raises StoreError naming what could not be written, which stays queued for another
        close (G5).
        """
        with self._lock:
            self.store.close()

    def run_decay(self, user_id: str, **options) -> ForgettingReport:
        """Run one forgetting cycle over the user's memory, then reload their layers (O1-O6).

        The options are `ForgettingCycle.run`'s: merge_ceiling, merge_similarity, itemized,
        batch_size, delete_batch, on_batch. Raises ValueError for a similarity outside (0, 1].
        """
        with self._lock:
            report = self.forgetting.run(user_id, **options)
            self.users.refresh(user_id)
            return report

    # -- an agent on the user's memory ---------------------------------------------------

    def agent(self, user_id: str, llm_fn: Callable[[str], str], **options) -> ExperienceAgent:
        """Build an agent that runs document 000's loop on this user's memory (experience.py)."""
        with self._lock:
            return agent_on_manager(self, user_id, llm_fn, **options)

    # -- internals ------------------------------------------------------------------------

    def _layers(self, user_id: str) -> Layers:
        layers = self.users.get(user_id)
        self._drop_tasks_of_forgotten_users()
        return layers

    def _drop_tasks_of_forgotten_users(self) -> None:
        # A forget made elsewhere, found by any read of the user's layers, ends their task in
        # progress before anything of it is used again (UL1).
        for user_id in self.users.found_forgotten():
            self.tasks.drop(user_id)

    def _audit(self, user_id: str, item_id: str, operation: str, reason: str) -> None:
        record = AuditEntry(item_id, operation, reason, self.clock(), None, user_id)
        self.store.append_audit([record])


def _unfinished(error: StoreError) -> str:
    """Say in the audit why an erasure is unfinished: copies in the log, or in the store."""
    if isinstance(error, QueuedErasureError):
        return "the store failed: a stored copy may remain"
    return "erasure incomplete"
