"""Mock environment: a table-driven stand-in for the world the agent acts on.

Document 000 §4.3 pairs its scripted model with a mock executor that answers each action.
`MockEnvironment` answers from a table, with a default for every other action, and keeps
the list of actions it executed, so a test can check what the agent actually did.

Invariants:
    ME1 an action's result is the table's entry for it, or the default; nothing else
        changes the answer.
"""

from collections.abc import Mapping

__all__ = ["MockEnvironment"]


class MockEnvironment:
    """Answer actions from a table (default `ok`), recording what was executed."""

    def __init__(self, outcomes: Mapping[str, str] | None = None, default: str = "ok") -> None:
        self.outcomes = dict(outcomes or {})
        self.default = default
        self.executed: list[str] = []

    def __call__(self, action: str) -> str:
        self.executed.append(action)
        return self.outcomes.get(action, self.default)
