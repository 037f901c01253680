"""Procedural memory: how to do a kind of task, recalled when its trigger matches.

Document 002 §2 separates procedural memory ("how to do it") from facts; document 003
§3.4 and §4.4 store procedures as workflows or templates that change slowly and load
only when the task matches their trigger. A procedure here is a name, ordered steps and
its triggers: task types and keywords.

Invariants:
    H1  `match` returns a valid procedure iff one of its triggers matches: the task type
        equals one of its task types, or every token of one keyword is in the query.
    H2  a procedure has at least one step and at least one trigger.
    H3  a new procedure with the name of a valid one supersedes it; the old one is kept,
        closed, and no longer matches.
    H4  a procedure renders as `procedure NAME: 1. a; 2. b`, its steps numbered in order.
    H5  a stored procedural item is a procedure only if its metadata holds `name` as text and
        `steps`, `task_types` and `keywords` as lists of text, by H2; `procedure_of` raises
        ValueError naming H5 for one that does not, and `ProceduralMemory` leaves such an item
        out, logging a warning that names its id and H5, and lists it in `skipped`.
"""

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..core.text import normalize, tokenize
from ..core.validation import require_text
from ..storage.item import MemoryItem, require_texts
from ..storage.memory_store import InMemoryStore
from ..storage.store import Store, append_superseding

__all__ = ["Procedure", "ProceduralMemory", "procedure_of"]

log = logging.getLogger("recuris.evolution.procedural")


@dataclass(frozen=True)
class Procedure:
    """Named, ordered steps, and the triggers that call for them."""

    id: str
    name: str
    steps: tuple[str, ...]
    task_types: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()

    def render(self) -> str:
        """Render as `procedure NAME: 1. a; 2. b`."""
        steps = "; ".join(f"{number}. {step}" for number, step in enumerate(self.steps, 1))
        return f"procedure {self.name}: {steps}"


def procedure_of(item: MemoryItem) -> Procedure:
    """Return the procedure a procedural item holds.

    Raises ValueError naming H5 (and the item's id) for metadata that is not a procedure's.
    """
    meta = item.metadata
    try:
        missing = [key for key in ("name", "steps", "task_types", "keywords") if key not in meta]
        if missing:
            raise ValueError(f"it lacks the fields {missing}")
        name = require_text("name", meta["name"])
        for field in ("steps", "task_types", "keywords"):
            # A JSON object would pass as its keys.
            if not isinstance(meta[field], list | tuple):
                raise TypeError(f"{field} must be a list of text, got {type(meta[field]).__name__}")
        steps = require_texts("steps", meta["steps"])
        task_types = require_texts("task_types", meta["task_types"])
        keywords = require_texts("keywords", meta["keywords"])
        if not steps:
            raise ValueError("it has no step")
        if not task_types and not keywords:
            raise ValueError("it has no trigger: a task type or a keyword")
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"H5: procedural item {item.id!r} is not a procedure (name, steps, task_types and "
            f"keywords as text, by H2): {error}"
        ) from None
    return Procedure(item.id, name, tuple(steps), tuple(task_types), tuple(keywords))


class ProceduralMemory:
    """One user's procedures, persisted in a Store as `procedural` items."""

    def __init__(
        self,
        store: Store | None = None,
        user_id: str = "default",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store if store is not None else InMemoryStore()
        self.user_id = require_text("user_id", user_id)
        self.clock = clock
        self._items: dict[str, MemoryItem] = {}
        # Each item's procedure, read once: a recall matches them without reading them again.
        self._procedures: dict[str, Procedure] = {}
        skipped = []
        for item in self.store.list(user_id, "procedural"):
            try:
                self._procedures[item.id] = procedure_of(item)
            except ValueError as error:
                # One item edited by hand or written by a fork must not take every recall of
                # the user down: it is left in the store, unread (H5).
                log.warning("%s; left out of the user's procedures", error)
                skipped.append(item.id)
                continue
            self._items[item.id] = item
        # The ids of the stored items that are not procedures, left out (H5).
        self.skipped: tuple[str, ...] = tuple(skipped)

    def add(
        self,
        name: str,
        steps: Sequence[str],
        task_types: Iterable[str] = (),
        keywords: Iterable[str] = (),
    ) -> Procedure:
        """Store a procedure; one of the same name is superseded (H3).

        Raises TypeError/ValueError for empty text, a str or a number where a list of text
        belongs, no steps or no trigger (H2).
        """
        require_text("name", name)
        steps = require_texts("steps", steps, "H2")
        task_types = require_texts("task_types", task_types, "H2")
        keywords = require_texts("keywords", keywords, "H2")
        if not steps:
            raise ValueError("H2: a procedure needs at least one step")
        if not task_types and not keywords:
            raise ValueError("H2: a procedure needs a trigger: a task type or a keyword")
        now = self.clock()
        metadata = {"name": name, "steps": steps, "task_types": task_types, "keywords": keywords}
        item = MemoryItem(
            id=self.store.new_id("procedure"),
            user_id=self.user_id,
            level="procedural",
            content=f"{name}: " + " -> ".join(steps),
            created_at=now,
            importance=0.7,
            metadata=metadata,
        )
        same_name = [
            old for old in self._valid() if normalize(old.metadata["name"]) == normalize(name)
        ]
        written = append_superseding(self.store, item, same_name, f"procedure {name!r}")
        self._items.update((stored.id, stored) for stored in written)
        # Closing a procedure changes none of what it holds: only the new one is read.
        self._procedures[item.id] = procedure_of(item)
        return self._procedures[item.id]

    def _valid(self) -> list[MemoryItem]:
        return [item for item in self._items.values() if item.is_valid]

    @property
    def procedures(self) -> tuple[Procedure, ...]:
        """The valid procedures, oldest first."""
        return tuple(self._procedures[item.id] for item in self._valid())

    def match(self, query: str, task_type: str | None = None) -> list[tuple[Procedure, str]]:
        """Return each valid procedure whose trigger matches, with the trigger that did (H1)."""
        tokens = set(tokenize(query))
        matches = []
        for procedure in self.procedures:
            why = None
            if task_type is not None and normalize(task_type) in map(
                normalize, procedure.task_types
            ):
                why = f"task type {task_type!r}"
            for keyword in procedure.keywords:
                if why is None and set(tokenize(keyword)) <= tokens and tokenize(keyword):
                    why = f"keyword {keyword!r}"
            if why is not None:
                matches.append((procedure, why))
        return matches

    def __repr__(self) -> str:
        return f"ProceduralMemory(user={self.user_id!r}, procedures={len(self._valid())})"
