"""Reflection: turn a buffer of raw interactions into a few durable insights, off the live path.

Document 004 §1: the live path only appends each interaction to a buffer (constant time,
no model call); when the buffer reaches a threshold, an LLM reflects on it and returns JSON
insights `{type: user_fact | agent_learning, content, confidence, supersedes}`; each is
merged into the most similar memory of its type, or added. Generative Agents reflect the
same way; LangMem's users report that background reflection can fail silently, so here
every failure is kept visible: in `failures`, in the audit log, and in a buffer that is
left intact for the next try.

Invariants:
    Y1  `add_interaction` never calls the LLM.
    Y2  a failed reflection (an exception, an unusable reply, every insight refused, a write
        refused midway) is reported, never raised, and leaves the buffer as it was (but Y6).
    Y3  reflecting on the same input again stores no duplicate insight.
    Y4  a merged insight keeps every source id of the memory it replaces.
    Y5  each buffered interaction is stored raw at most once, however often it is retried.
    Y6  a prompt holds at most `max_batch` interactions; after a failure, a buffer past
        `max_buffer` keeps its newest `max_buffer`; the older are stored raw, never dropped.
    Y7  an insight at or above `min_confidence` (MIN_INSIGHT_CONFIDENCE) is stored naming the
        interactions it came from, each kept raw as an episode; one below it is reported as
        skipped, and not stored.
    Y8  a stored insight (a semantic item whose metadata's `kind` is "insight") holds `type`
        as one of INSIGHT_TYPES and `source_ids` as a list of text (FA4); `check_insight`
        raises ValueError naming Y8 (and the item's id) for one that does not, and `reflect`
        leaves it out of the insights it merges into, unchanged in the store, logging a
        warning that names its id and Y8.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass

from ..storage.audit import AuditEntry
from ..core.similarity import jaccard
from ..core.text import flatten, normalize, statement, tokenize
from ..core.validation import require_count, require_text
from ..storage.item import MemoryItem
from ..storage.store import append_superseding
from .extraction import INSIGHT_TYPES, Insight, ask, parse_insights, reflection_prompt
from .stored_facts import sources_of

__all__ = [
    "ReflectionCallback",
    "Interaction",
    "ReflectionReport",
    "MIN_INSIGHT_CONFIDENCE",
    "INSIGHT_KIND",
    "check_insight",
]

log = logging.getLogger("recuris.evolution.reflection")

# The `kind` in the metadata of a semantic item that holds a reflected insight (Y8).
INSIGHT_KIND = "insight"

# The least confidence at which an insight is stored. It is the floor of the importance an
# insight is stored with (max(0.5, confidence)), so each stored insight ranks by its own
# confidence. A setting of its own, not extraction's MIN_KNOWLEDGE_CONFIDENCE (extraction.py).
MIN_INSIGHT_CONFIDENCE = 0.5


@dataclass(frozen=True)
class Interaction:
    """One exchange on the live path: what the user said and what the agent answered."""

    id: str
    user: str
    agent: str
    at: float

    def render(self) -> str:
        return f"[{self.id}] user: {flatten(self.user, 300)} | agent: {flatten(self.agent, 300)}"


@dataclass(frozen=True)
class ReflectionReport:
    """What one reflect() did: insights stored, merged or skipped, and what went wrong."""

    stored: tuple[MemoryItem, ...] = ()
    skipped: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    failed: bool = False


def check_insight(item: MemoryItem) -> None:
    """Raise ValueError naming Y8 (and the item's id) if a stored insight cannot be read."""
    kind = item.metadata.get("type")
    try:
        if kind not in INSIGHT_TYPES:
            raise ValueError(f"its type must be one of {INSIGHT_TYPES}, got {kind!r}")
        if "source_ids" not in item.metadata:
            raise ValueError("it lacks the field source_ids")
        sources_of(item)
    except ValueError as error:
        raise ValueError(f"Y8: insight {item.id!r} cannot be read: {error}") from None


def _readable(item: MemoryItem) -> bool:
    """Return whether a stored insight can be read; warn, naming Y8, if it cannot."""
    try:
        check_insight(item)
    except ValueError as error:
        # One item edited by hand or written by a fork must not fail every reflection: it is
        # left in the store, unread (Y8).
        log.warning("%s; left out of reflection", error)
        return False
    return True


class ReflectionCallback:
    """Buffer interactions on the live path; reflect on them in batches with an LLM."""

    def __init__(
        self,
        llm: Callable[[str], str],
        manager,
        threshold: int = 3,
        *,
        user_id: str = "default",
        min_confidence: float = MIN_INSIGHT_CONFIDENCE,
        merge_similarity: float = 0.5,
        timeout_seconds: float | None = None,
        max_batch: int = 20,
        max_buffer: int = 200,
    ) -> None:
        require_count("threshold", threshold, 1)
        require_count("Y6: max_batch", max_batch, 1)
        require_count("Y6: max_buffer", max_buffer, 1)
        self.llm = llm
        self.manager = manager
        self.threshold = threshold
        self.user_id = require_text("user_id", user_id)
        self.min_confidence = min_confidence
        self.merge_similarity = merge_similarity
        self.timeout_seconds = timeout_seconds
        self.max_batch = max_batch
        self.max_buffer = max_buffer
        self.buffer: list[Interaction] = []
        self.failures: list[str] = []
        self._count = 0
        self._kept: dict[str, str] = {}  # buffered interaction id -> its raw item's id (Y5)

    # -- the live path: append only (Y1) ----------------------------------------------
    def add_interaction(self, user: str, agent: str) -> Interaction:
        """Append one exchange to the buffer and return it; no model call, no store call."""
        require_text("user", user)
        require_text("agent", agent)
        self._count += 1  # a local id; the store gives the lasting one when the turn is kept
        interaction = Interaction(f"turn-{self._count}", user, agent, self.manager.clock())
        self.buffer.append(interaction)
        return interaction

    @property
    def ready(self) -> bool:
        """True when the buffer has reached the threshold and a reflect() is due."""
        return len(self.buffer) >= self.threshold

    # -- the background path -------------------------------------------------------
    def reflect(self) -> ReflectionReport:
        """Reflect on the oldest `max_batch` turns: store insights, drop the turns on success."""
        if not self.buffer:
            return ReflectionReport()
        # Y6: the prompt stays bounded however long the buffer.
        batch = self.buffer[: self.max_batch]
        try:
            existing = self._insights()
            prompt = reflection_prompt(
                [i.render() for i in batch], [(i.id, i.content) for i in existing]
            )
            insights, problems = parse_insights(ask(self.llm, prompt, self.timeout_seconds))
            if insights is None or (problems and not insights):  # nothing usable is not a success
                raise ValueError("; ".join(problems))
            stored, skipped = self._apply(batch, insights, existing)
        except Exception as error:  # noqa: BLE001 - an untrusted model: record, keep, retry (Y2)
            reason = f"{type(error).__name__}: {flatten(str(error), 200)}"
            self.failures.append(reason)
            self._audit(
                self.user_id, "-", "reflect-failed", f"{len(batch)} interactions kept; {reason}"
            )
            self._overflow()
            return ReflectionReport(problems=(reason,), failed=True)
        for problem in problems:
            self._audit(self.user_id, "-", "reflect-problem", problem)
        self._release(len(batch))  # only now; anything added meanwhile stays
        self._audit(
            self.user_id, "-", "reflect", f"{len(batch)} interactions, {len(stored)} insights"
        )
        return ReflectionReport(tuple(stored), tuple(skipped), tuple(problems))

    def _audit(self, user_id: str, item_id: str, operation: str, reason: str) -> None:
        record = AuditEntry(item_id, operation, reason, self.manager.clock(), None, user_id)
        self.manager.store.append_audit([record])

    def _overflow(self) -> None:
        # Y6: while the model keeps failing, the oldest turns past the bound leave the buffer
        # for episodic memory, raw: nothing is lost, and the buffer stops growing.
        excess = len(self.buffer) - self.max_buffer
        if excess > 0:
            self._keep_raw(self.buffer[:excess])
            self._release(excess)
            self._audit(self.user_id, "-", "reflect-overflow", f"{excess} interactions kept raw")

    def _release(self, count: int) -> None:
        for interaction in self.buffer[:count]:
            self._kept.pop(interaction.id, None)
        del self.buffer[:count]

    def _apply(self, batch: list[Interaction], insights: list[Insight], existing: list[MemoryItem]):
        stored_ids = self._keep_raw(batch)  # lossless: the raw turns become episodic items
        stored = []
        skipped = []
        for insight in insights:
            sources = [stored_ids[i] for i in insight.sources if i in stored_ids] or list(
                stored_ids.values()
            )
            if insight.confidence < self.min_confidence:
                skipped.append(
                    f"{insight.content!r}: confidence {insight.confidence} < {self.min_confidence}"
                )
                continue
            written = self._store(insight, sources, existing)
            if written is None:
                skipped.append(f"{insight.content!r}: already known")
                continue
            item, replaced = written
            stored.append(item)
            existing = [held for held in existing if held is not replaced] + [item]
        return stored, skipped

    def _keep_raw(self, batch: list[Interaction]) -> dict[str, str]:
        store = self.manager.store
        fresh = [i for i in batch if i.id not in self._kept]  # Y5
        items = [
            MemoryItem(
                id=store.new_id("interaction"),
                user_id=self.user_id,
                level="episodic",
                content=f"user: {i.user} | agent: {i.agent}",
                created_at=i.at,
                metadata={"kind": "interaction"},
            )
            for i in fresh
        ]
        store.put(items)
        self._kept.update(
            (interaction.id, item.id) for interaction, item in zip(fresh, items, strict=True)
        )
        return {interaction.id: self._kept[interaction.id] for interaction in batch}

    def _insights(self) -> list[MemoryItem]:
        items = self.manager.store.list(self.user_id, "semantic")
        insights = [item for item in items if item.metadata.get("kind") == INSIGHT_KIND]
        return [item for item in insights if item.is_valid and _readable(item)]

    def _similar(self, insight: Insight, candidates: list[MemoryItem]) -> MemoryItem | None:
        # Two statements about one subject ("deploy region: ...") are the same memory;
        # otherwise the most similar text, if similar enough.
        subject = statement(insight.content)
        for item in candidates:
            other = subject and statement(item.content)
            if other and normalize(other[0]) == normalize(subject[0]):
                return item
        tokens = set(tokenize(insight.content))
        scored = [(jaccard(tokens, tokenize(item.content)), item) for item in candidates]
        best = max(scored, key=lambda pair: pair[0], default=(0.0, None))
        return best[1] if best[0] >= self.merge_similarity else None

    def _store(
        self, insight: Insight, sources: list[str], existing: list[MemoryItem]
    ) -> tuple[MemoryItem, MemoryItem | None] | None:
        """Write the insight, superseding the memory it updates; return (new, replaced), or None."""
        same_type = [item for item in existing if item.metadata["type"] == insight.type]
        if any(normalize(item.content) == normalize(insight.content) for item in same_type):
            return None  # Y3: the same insight twice is one memory
        named = next((item for item in same_type if item.id == insight.supersedes), None)
        target = named or self._similar(insight, same_type)
        kept = list(target.metadata["source_ids"]) if target is not None else []  # Y4
        item = MemoryItem(
            id=self.manager.store.new_id("insight"),
            user_id=self.user_id,
            level="semantic",
            content=insight.content,
            created_at=self.manager.clock(),
            importance=max(0.5, insight.confidence),
            metadata={
                "kind": INSIGHT_KIND,
                "type": insight.type,
                "confidence": insight.confidence,
                "source_ids": list(dict.fromkeys(kept + sources)),
            },
        )
        reason = f"reflected {insight.type}" + (f", superseding {target.id}" if target else "")
        append_superseding(self.manager.store, item, [target] if target else [], reason)
        return item, target

    def __repr__(self) -> str:
        buffered = f"{len(self.buffer)}/{self.threshold}"
        return f"ReflectionCallback(buffer={buffered}, failures={len(self.failures)})"
