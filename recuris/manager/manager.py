"""Manager: one write and one read interface over every layer, each call scoped to one user.

Document 002 §4 puts a management layer between the agent and storage: route each write to
its level, recall "relevant memory" through one call. Document 003 §4.4 layers the read
(working, then semantic, episodic when semantic is thin, procedural on a trigger) and §6.3
and §7 ask for a reason logged with every operation, isolation between users, deletion that
reaches every copy, and an agent that keeps working when memory does not. The manager holds
its parts, `Tasks` (tasks.py), `UserLayers` (user_layers.py) and `ForgettingCycle`
(evolution/forgetting.py), and carries out their operations under its own names and lock.

Invariants:
    MG1 no recall, get, list or export for one user returns an item of another.
    MG2 semantic facts are never modified in place; superseding keeps the old one, invalid.
    MG3 after `forget_user(U)`, no item and no audit entry holds U's text.
    MG4 every write, promotion, supersession, eviction, forgetting and recall is audited.
    MG5 a failing store makes recall return nothing (with a warning), never raise.
    MG6 `write` checks every argument (user, content, tags, level) and reads the clock (I4) before it
        stores or audits anything: a refused write leaves no trace.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from ..core import prompt
from ..core.agent import RecurisAgent
from ..core.clock import DAY
from ..core.records import AuditRecord
from ..core.similarity import Scorer
from ..core.text import statement
from ..core.validation import require_count, require_text
from ..core.working import WorkingSettings
from ..evolution.extraction import MIN_KNOWLEDGE_CONFIDENCE
from ..evolution.forgetting import ForgettingCycle
from ..storage.buffered_store import BufferedStore
from ..storage.item import LEVELS, CheckedClock, MemoryItem, require_texts
from ..storage.memory_store import InMemoryStore
from ..storage.shared import delegate, serialize
from ..storage.store import ForgottenUserError, Store, StoreError
from .bounds import MAX_LOADED_USERS, cap_query, check_token_budget
from .candidates import gather
from .experience import agent_on_manager
from .recall import RecallPolicy, RecallResult, Recalled, assemble, rank, reinforce
from .routing import is_trivial, route
from .tasks import Tasks
from .user_layers import UserLayers

__all__ = ["MemoryManager", "RecallResult"]

log = logging.getLogger("recuris.manager.manager")


class MemoryManager:
    """Route writes to the right layer and recall across layers, for many isolated users.

    It holds three parts, each with its own chapter: `tasks` (each user's task in progress),
    `users` (each user's layers, loaded on use) and `forgetting` (decay cycles).
    """

    def __init__(
        self,
        store: Store | None = None,
        *,
        clock: Callable[[], float] = time.time,
        llm: Callable[[str], str] | None = None,
        policy: RecallPolicy | None = None,
        working_token_budget: int | None = WorkingSettings.token_budget,
        min_occurrences: int = 2,
        window_seconds: float = 7 * DAY,
        min_confidence: float = MIN_KNOWLEDGE_CONFIDENCE,
        min_content_chars: int = 3,
        max_loaded_users: int = MAX_LOADED_USERS,
        episodic_scorer: Callable[[], Scorer] | None = None,
    ) -> None:
        # Every layer reads time through the checked clock: a broken reading is refused (I4).
        self.clock, self.policy = CheckedClock(clock), policy or RecallPolicy()
        self.store = BufferedStore(store if store is not None else InMemoryStore(), self.clock)
        self.min_content_chars = min_content_chars
        self._lock = threading.RLock()  # one public operation at a time (TS1)
        self.users = UserLayers(
            self.store,
            self.clock,
            on_forget=lambda user_id: self.tasks.drop(user_id),
            min_occurrences=min_occurrences,
            window_seconds=window_seconds,
            max_loaded_users=max_loaded_users,
            episodic_scorer=episodic_scorer,
        )
        self.tasks = Tasks(
            self.store,
            self.clock,
            self.users,
            lock=self._lock,
            llm=llm,
            min_confidence=min_confidence,
            working_settings=WorkingSettings(token_budget=working_token_budget),
        )
        self.forgetting = ForgettingCycle(self.store, self.clock, on_change=self.refresh)

    def agent(self, user_id: str, llm_fn: Callable[[str], str], **options) -> RecurisAgent:
        """Build an agent that runs document 000's loop on this user's memory (experience.py)."""
        return agent_on_manager(self, user_id, llm_fn, **options)

    def audit(self, user_id: str, item_id: str, operation: str, reason: str) -> None:
        """Append one audit record for the user."""
        self.store.append_audit(
            [AuditRecord(item_id, operation, reason, self.clock(), None, user_id)]
        )

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
    ) -> MemoryItem | None:
        """Store content at its level (given, or chosen by `route`); return the item, or None if trivial.

        A routed `subject: value` is kept as an event and observed by the consolidator.
        """
        require_text("user_id", user_id)
        if not isinstance(content, str):
            raise TypeError(f"content must be a str, got {type(content).__name__}")
        tags = require_texts("tags", tags)
        if level is not None and level not in LEVELS:
            raise ValueError(f"I1: level must be one of {LEVELS}, got {level!r}")
        now = self.clock()  # read first: a broken clock (I4) is refused before anything is stored
        if is_trivial(content, self.min_content_chars):
            self.audit(user_id, "-", "skip", f"trivial content ({len(content)} characters)")
            return None
        chosen = level or route(content, tags)
        layers = (
            None if chosen == "episodic" else self.layers(user_id)
        )  # an event needs none loaded
        if chosen == "procedural":
            meta = metadata or {}
            procedure = layers.procedural.add(
                content,
                meta.get("steps", ()),
                meta.get("task_types", ()),
                meta.get("keywords", tags),
            )
            return self.store.get(user_id, procedure.id)
        if level == "semantic":
            subject, value = statement(content) or (content, "true")
            fact = layers.semantic.add(subject, value, [task_id or "direct write"])
            return self.store.get(user_id, fact.id)
        if task_id is None and chosen == "working" and (task := self.tasks.get(user_id)):
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
        why = f"routed to {chosen} " + ("as given" if level else "by rule")
        item = self.users.put_written(
            item, why, loaded=layers is not None
        )  # with its audit record (S5)
        if chosen == "semantic":
            layers.consolidator.observe(*statement(content), item.id)  # audits a promotion itself
        return item

    def get(self, item_id: str, user_id: str) -> MemoryItem | None:
        """Return the user's item with this id, or None: never another user's item (MG1)."""
        return self.store.get(require_text("user_id", user_id), item_id)

    def list(self, user_id: str, level: str | None = None) -> list[MemoryItem]:
        """Return the user's items, oldest first, optionally of one level."""
        return self.store.list(require_text("user_id", user_id), level)

    def export(self, user_id: str) -> list[dict]:
        """Return every item of the user, superseded ones included, as JSON-ready dicts."""
        return [item.to_dict() for item in self.list(user_id)]

    def history(self, user_id: str, item_id: str | None = None) -> list[AuditRecord]:
        """Return the user's audit records, optionally for one item, oldest first."""
        return self.store.audit(require_text("user_id", user_id), item_id)

    def recall(
        self,
        query: str,
        user_id: str,
        top_k: int = 5,
        token_budget: int | None = None,
        task_type: str | None = None,
        include_invalid: bool = False,
        count_access: bool = True,
    ) -> RecallResult:
        """Recall across layers, ranked by relevance, recency and importance (Q1, MG5).

        Counts an access on each result unless `count_access` is False (an inspection). A query
        longer than MAX_QUERY_CHARS is cut, and the result's `query_truncated` says so (BD2).
        Raises ValueError for top_k < 1 or a budget that is not an int >= 0.
        """
        require_count("Q1: top_k", top_k, 1)
        check_token_budget(token_budget)
        query, cut = cap_query(query)  # BD2: a longer query costs time and says no more
        try:
            now, layers, task = self.clock(), self.layers(user_id), self.tasks.get(user_id)
            triggered = layers.procedural.match(query, task_type or (task and task.task_type))
            stored = [(self.store.get(user_id, procedure.id), why) for procedure, why in triggered]
            procedures = [
                (item, why) for item, why in stored if item is not None
            ]  # deleted meanwhile
            task_id = task and task.id
            found = gather(
                self.store, user_id, query, self.policy, now, task_id, procedures, include_invalid
            )
            chosen, text = assemble(rank(found)[:top_k], token_budget)
            if count_access:
                self.count_access(user_id, chosen)
        except StoreError as error:
            log.warning("memory unavailable, recalling nothing: %s", error)
            return RecallResult((), "", degraded=True, query_truncated=cut)
        return RecallResult(tuple(chosen), text, query_truncated=cut)

    def count_access(self, user_id: str, results: Iterable[Recalled]) -> None:
        """Count a use of each result: reset its decay clock, reinforce it, audit it (document 004 §2)."""
        now, episodic = self.clock(), self.layers(user_id).loaded_episodic
        try:
            touched = reinforce(self.store, user_id, results, now)
        except ForgottenUserError:
            return  # forgotten while recalling: there is no memory left to count a use of (S6)
        for item in touched:
            if episodic and (episode := episodic.get(item.id)):  # keep a loaded layer in step
                episode.access_count, episode.last_access_at = item.access_count, now

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
            lines = [found.render() for found in recalled.results if found.item.level != "working"]
            return "\n\n".join([self.tasks.section(user_id), prompt.render_recalled(lines)])

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

    # The parts' operations, under the manager's names; each keeps its part's signature and docstring.
    start_task = delegate("tasks", Tasks.start)
    record_step = delegate("tasks", Tasks.record)
    finish_task = delegate("tasks", Tasks.finish)
    settle_episode = delegate("tasks", Tasks.settle)
    layers = delegate("users", UserLayers.get)
    generation_of = delegate("users", UserLayers.generation_of)
    refresh = delegate("users", UserLayers.refresh)
    forget_user = delegate("users", UserLayers.forget)
    run_decay = delegate("forgetting", ForgettingCycle.run)
    # Settings the parts hold, readable where they were before the manager held parts.
    llm = property(lambda self: self.tasks.llm, doc="the model that extracts knowledge, or None")
    min_confidence = property(lambda self: self.tasks.min_confidence)
    working_token_budget = property(lambda self: self.tasks.working_settings.token_budget)
    episodic_scorer = property(lambda self: self.users.episodic_scorer)


# Several threads may share one manager: its caches change with the store, so each
# public operation runs whole under the manager's lock (TS1).
serialize(
    MemoryManager,
    [
        name
        for name, value in vars(MemoryManager).items()
        if not name.startswith("_") and not isinstance(value, property)
    ],
)
