"""Memory items: the one record every layer is stored as.

Document 001 §1 defines a `MemoryItem` (id, type, content, task, time, metadata, access
count, importance) kept in one store for all tiers; document 002 §3 adds the metadata to
filter on (user, time, source, tags) and document 003 §4.1 the confidence of a write.
Graphiti's bitemporal facts suggest the validity fields: an item is valid from its creation;
it is never rewritten to say something else, it is closed (`invalidated_at`) and points at
its successor.

Invariants:
    I1  `level` is one of LEVELS; `importance` lies in [0, 1]; id, user and content are valid
        Unicode text, and so are `task_id` and `superseded_by` unless None; `access_count`
        is an int in [0, 2**63); every time is a finite number of seconds within ±MAX_TIME
        (1e12), so that every store can keep it.
    I2  `MemoryItem.from_dict(item.to_dict()) == item`, and `to_dict` is plain JSON data,
        its metadata nested at most MAX_METADATA_DEPTH (32) levels deep. `from_dict` of
        anything else names, in words, the fields missing or unknown.
    I3  an item is valid until `invalidated_at`; once closed it names its successor, if any.
    I4  a `CheckedClock` returns only finite numbers of seconds within ±MAX_TIME; any other
        reading (NaN, a string, 10**20) raises ValueError naming this rule.
    I5  an item renders on one line as `[level] content`, an invalid one saying since when.
"""

import copy
import json
from collections.abc import Callable
from dataclasses import MISSING, InitVar, asdict, dataclass, field, fields, replace
from operator import attrgetter

from ..core.text import flatten
from ..core.validation import require_count, require_number, require_text, unicode_problem

__all__ = ["MemoryItem", "LEVELS", "CheckedClock", "MAX_TIME", "require_texts"]

LEVELS = ("working", "episodic", "semantic", "procedural")
# About the year 33,658. Today in milliseconds (1.7e12) is beyond it, so a clock read in the
# wrong unit, or an overflow, is caught; an int this large still fits SQLite's INTEGER.
MAX_TIME = 1e12
MAX_METADATA_DEPTH = 32  # deeper data would exhaust Python's recursion in a copy or an encoder
_CANONICAL_JSON = json.JSONEncoder(
    allow_nan=False, ensure_ascii=False
).encode  # made once, not per item
# Fields that older versions wrote and nothing read: an export holding them still imports.
RETIRED_FIELDS = frozenset({"valid_from"})


def _nested_too_deeply(data: object) -> bool:
    # Walked with a stack, not recursion, so that the check itself cannot overflow.
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list, tuple)):
            if depth > MAX_METADATA_DEPTH:
                return True
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return False


def _copied(value: object) -> object:
    """Copy JSON data: containers anew, immutable scalars shared, anything else deep-copied."""
    if isinstance(value, dict):
        return {key: _copied(child) for key, child in value.items()}
    if isinstance(value, list):
        return [_copied(child) for child in value]
    return value if value is None or isinstance(value, (str, int, float)) else copy.deepcopy(value)


@dataclass(kw_only=True)
class MemoryItem:
    """A piece of memory of one user, at one level, with what ranking and decay read."""

    id: str
    user_id: str
    level: str
    content: str
    task_id: str | None = None
    created_at: float = 0.0
    last_access_at: float | None = None
    access_count: int = 0
    importance: float = 0.5
    metadata: dict = field(default_factory=dict)
    invalidated_at: float | None = None
    superseded_by: str | None = None
    # Not a field: True only from `trusted`, for a row its store wrote (and checked) itself.
    _stored: InitVar[bool] = False

    @property
    def consolidated(self) -> bool:
        """True for a fact or a procedure, distilled from many episodes: decay slows for it."""
        return self.level in ("semantic", "procedural")

    def __post_init__(self, _stored: bool) -> None:
        if _stored:
            return
        for name in ("id", "user_id", "content"):
            require_text(f"I1: {name}", getattr(self, name))
        for name in ("task_id", "superseded_by"):  # links to other items: text, or none
            if getattr(self, name) is not None:
                require_text(f"I1: {name}", getattr(self, name))
        if self.level not in LEVELS:
            raise ValueError(f"I1: level must be one of {LEVELS}, got {self.level!r}")
        require_number("I1: importance", self.importance, 0.0, 1.0)
        require_count("I1: access_count", self.access_count, 0, 2**63)
        for name in ("created_at", "last_access_at", "invalidated_at"):
            value = getattr(self, name)
            if value is None:
                continue
            require_number(f"I1: {name} (seconds)", value, -MAX_TIME, MAX_TIME)
        if not isinstance(self.metadata, dict):
            raise TypeError(f"I1: metadata must be a dict, got {type(self.metadata).__name__}")
        if _nested_too_deeply(self.metadata):
            raise TypeError(
                f"I2: metadata must be JSON data nested at most {MAX_METADATA_DEPTH} levels deep"
            )
        # Canonicalise through JSON once, here: tuples become lists and anything that
        # SQLite or an export could not carry is refused now, not at write time (I2).
        try:
            text = _CANONICAL_JSON(self.metadata)
        except (TypeError, ValueError, RecursionError) as error:
            raise TypeError(f"I2: metadata must be JSON data: {error}") from None
        problem = unicode_problem(text)
        if problem:
            raise ValueError(f"I2: metadata must be valid Unicode text: {problem}")
        self.metadata = json.loads(text)
        if self.last_access_at is None:
            self.last_access_at = self.created_at

    @property
    def is_valid(self) -> bool:
        """True until the item is invalidated (I3)."""
        return self.invalidated_at is None

    def to_dict(self) -> dict:
        """Return the item as plain JSON data: the mapping used by export and by SQLite (I2)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "MemoryItem":
        """Rebuild an item from `to_dict` output.

        Raises TypeError for a non-dict, unknown keys or missing ones, ValueError for invalid
        fields. A retired field (`valid_from`, written before schema version 4) is dropped.
        """
        if not isinstance(data, dict):
            raise TypeError(f"I2: a memory item is a JSON object, got {type(data).__name__}")
        data = {key: value for key, value in data.items() if key not in RETIRED_FIELDS}
        unknown = set(data) - set(_FIELD_NAMES)
        if unknown:
            raise TypeError(f"I2: unknown fields of a memory item: {sorted(unknown)}")
        missing = [name for name in _REQUIRED_FIELDS if name not in data]
        if missing:
            raise TypeError(f"I2: a memory item needs the fields {missing}")
        return cls(**data)

    @classmethod
    def trusted(cls, fields: dict) -> "MemoryItem":
        """Rebuild an item from a store's own row: built by `__init__`, without re-checking it.

        Only a Store that wrote the row itself may use this: the row passed I1 and I2 when
        it was written, and re-checking it (its metadata through JSON again) would make a
        read several times slower (docs/storage/memory-items.md gives the figures).
        """
        return cls(**fields, _stored=True)

    def copy(self) -> "MemoryItem":
        """Return an independent copy: only metadata is copied, every other field is immutable."""
        # Several times faster than copy.deepcopy, which a write and every read pay (S4); built
        # by __init__, so that no attribute dict is made for the garbage collector to walk.
        values = dict(zip(_FIELD_NAMES, _FIELD_VALUES(self)), metadata=_copied(self.metadata))
        return type(self).trusted(values)

    def closed(self, at: float, successor: str | None = None) -> "MemoryItem":
        """Return a copy invalidated at `at`, pointing at its successor (I3)."""
        return replace(self, invalidated_at=at, superseded_by=successor)

    def render(self, limit: int = 300) -> str:
        """Render for a prompt: `[level] content`, one line."""
        mark = "" if self.is_valid else f" (invalid since t={self.invalidated_at:.0f})"
        return f"[{self.level}] {flatten(self.content, limit)}{mark}"


_FIELD_NAMES = [field.name for field in fields(MemoryItem)]
_REQUIRED_FIELDS = [
    field.name
    for field in fields(MemoryItem)
    if field.default is MISSING and field.default_factory is MISSING
]
_FIELD_VALUES = attrgetter(*_FIELD_NAMES)


class CheckedClock:
    """Read a clock, refusing a reading that is not a time a store can keep (I4)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock

    def __call__(self) -> float:
        return require_number("I4: a clock's reading (seconds)", self.clock(), -MAX_TIME, MAX_TIME)

    def __repr__(self) -> str:
        return f"CheckedClock({self.clock!r})"


def require_texts(name: str, values: object, rule: str = "") -> list[str]:
    """Return values as a list if it is a collection of non-blank str (not one str).

    Raises TypeError naming `name` (and `rule`, if given) for a str or a non-iterable.
    """
    prefix = f"{rule}: " if rule else ""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{prefix}{name} must be a collection of str, got {type(values).__name__}")
    return [require_text(name, value) for value in values]
