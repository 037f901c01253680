"""Routing: decide whether content is worth remembering, and at which level it belongs.

Document 002 §4 puts a perception layer in front of memory ("is this worth remembering?")
and a routing step that sends each write to its store; document 003 §4.1 routes task state
to working memory, concrete events to episodic memory and regular conclusions towards
semantic memory. These are small, explicit rules; a fork can replace them with a model.

Invariants:
    U1  `is_trivial` is true for blank text, text shorter than the minimum, and the
        acknowledgements in TRIVIAL, compared without case or spacing.
    U2  `route` returns a level; "semantic" only for text `statement` (core/text.py) can split.
"""

from collections.abc import Iterable

from ..core.text import normalize, statement

__all__ = ["route", "is_trivial", "TRIVIAL", "MIN_CONTENT_CHARS"]

TRIVIAL = frozenset(
    {"ok", "okay", "thanks", "thank you", "yes", "no", "好的", "嗯", "谢谢", "收到"}
)
# Shorter content says too little to be worth a memory ("ok", "no", a stray key).
MIN_CONTENT_CHARS = 3


def is_trivial(content: str, min_chars: int = MIN_CONTENT_CHARS) -> bool:
    """Return True for content not worth a memory: blank, too short, a bare acknowledgement (U1)."""
    return len(content.strip()) < min_chars or normalize(content) in TRIVIAL


def route(content: str, tags: Iterable[str] = ()) -> str:
    """Choose a level for a write that names none: task state, a statement, or an event (U2)."""
    if {"state", "task"} & set(tags):
        return "working"
    return "semantic" if statement(content) else "episodic"
