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

__all__ = ["MAX_QUERY_CHARS", "MAX_LOADED_USERS", "check_token_budget", "cap_query", "LayerCache"]

MAX_QUERY_CHARS = 2_000  # about 300 words: more than any question, far less than a document
MAX_LOADED_USERS = 1_000


def check_token_budget(token_budget: object) -> None:
    """Raise ValueError unless the budget is an int >= 0 or None (BD1, Q1)."""
    if token_budget is None:
        return
    # NaN compares false with everything: unchecked, it would silently lift the budget.
    if isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget < 0:
        raise ValueError(f"Q1: token_budget must be an int >= 0 or None, got {token_budget!r}")


def cap_query(query: str, limit: int = MAX_QUERY_CHARS) -> tuple[str, bool]:
    """Return the query cut to `limit` characters, and whether it was cut (BD2)."""
    return (query, False) if len(query) <= limit else (query[:limit], True)


class LayerCache(OrderedDict):
    """A dict of per-user layers that keeps only the `capacity` most recently used (BD3)."""

    def __init__(self, capacity: int = MAX_LOADED_USERS) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"BD3: capacity must be an int >= 1, got {capacity!r}")
        super().__init__()
        self.capacity = capacity

    def __getitem__(self, user_id: str):
        value = super().__getitem__(user_id)
        self.move_to_end(user_id)
        return value

    def __setitem__(self, user_id: str, layers) -> None:
        super().__setitem__(user_id, layers)
        self.move_to_end(user_id)
        while len(self) > self.capacity:
            self.popitem(last=False)
