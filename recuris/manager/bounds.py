"""Bounds: the limits that keep memory's inputs and working structures from growing with use.

Document 003 §7 asks that memory degrade rather than stop the agent; a memory that grows
with every call, or a query of 200,000 words, stops it as surely as an outage. Each bound
here has a default that docs/manager/bounds.md lists with the others (the retry queue, the
reflection buffer, the decay audit log), and every cut is visible to the caller.

Invariants:
    BD1 a token budget is an int >= 0 or None; anything else (NaN, a float, a bool, text)
        is refused, naming Q1.
    BD2 `cap_query` cuts a query to at most MAX_QUERY_CHARS characters and says whether it cut.
    BD3 a `LayerCache` holds at most `capacity` users: using one makes it the most recent,
        and the least recently used is evicted first.
"""

from collections import OrderedDict
from collections.abc import Iterator

from ..core.validation import require_count

__all__ = ["MAX_QUERY_CHARS", "MAX_LOADED_USERS", "check_token_budget", "cap_query", "LayerCache"]

MAX_QUERY_CHARS = 2_000  # about 300 words: more than any question, far less than a document
MAX_LOADED_USERS = 1_000


def check_token_budget(token_budget: object) -> None:
    """Raise ValueError unless the budget is an int >= 0 or None (BD1, Q1)."""
    if token_budget is None:
        return
    # NaN compares false with everything: unchecked, it would silently lift the budget.
    require_count("Q1: token_budget", token_budget, 0)


def cap_query(query: str, limit: int = MAX_QUERY_CHARS) -> tuple[str, bool]:
    """Return the query cut to `limit` characters, and whether it was cut (BD2)."""
    return (query, False) if len(query) <= limit else (query[:limit], True)


class LayerCache:
    """Per-user layers, keeping only the `capacity` most recently used (BD3).

    It holds an OrderedDict rather than being one: a subclass reordering in `__getitem__`
    breaks Python 3.10's `pop` and `popitem`, which read through it.
    """

    def __init__(self, capacity: int = MAX_LOADED_USERS) -> None:
        self.capacity = require_count("BD3: capacity", capacity, 1)
        self._entries: OrderedDict = OrderedDict()  # user id -> layers, least recently used first

    def __contains__(self, user_id: object) -> bool:
        return user_id in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, user_id: str):
        self._entries.move_to_end(user_id)  # KeyError if the user is not loaded
        return self._entries[user_id]

    def __setitem__(self, user_id: str, layers) -> None:
        self._entries[user_id] = layers
        self._entries.move_to_end(user_id)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def pop(self, user_id: str, default=None):
        """Remove and return the user's layers, or `default` if none are loaded."""
        return self._entries.pop(user_id, default)
