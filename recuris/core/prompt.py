"""Prompt: the fixed layout in which memory reaches the model.

Document 000 §3.3 fixes the order: working memory first (goal, summary, recent steps),
related experience after it, each in the same place on every step, so that the goal can
never scroll out of sight. This module owns that layout: the labels below are the only
place it is spelled, so the writer (`WorkingMemory`, `RecurisAgent`) and the reader
(`mock_llm.PromptFollowingLLM`, or a human) cannot disagree about it.

Invariants:
    P1  a prompt has the working section first, the experience section second, then the
        recalled section and tool results when there are any, and the instruction last.
    P2  experience is rendered best first, at most the hits given; none renders as "(none)".
    P3  a subtask's alternatives are separated by `OPTION_SEPARATOR`; an action completes
        a subtask when it matches one of its options, where a `{slot}` matches any text.
"""

import re
from collections.abc import Sequence

from .records import Hit
from .text import normalize

__all__ = ["build_prompt", "render_experience", "subtask_options", "matches_option", "FINISH"]

WORKING_HEADER = "## Working memory"
GOAL = "Goal:"
PINNED = "Pinned constraints:"
SUBTASKS = "Subtasks:"
SUMMARY = "Summary of earlier steps:"
RECENT = "Recent steps (oldest first):"
EXPERIENCE_HEADER = "## Related experience (retrieved, most similar first)"
RECALLED_HEADER = "## Recalled memory (from the manager's recall: facts, procedures, events)"
NONE = "(none)"
INDENT = "  "
FINISH = "FINISH"
INSTRUCTION = (
    f"Reply with the next action only, or {FINISH} when the goal is met. To search memory, reply with\n"
    '{"function_call": {"name": "search_memory", "arguments": "{\\"query\\": \\"...\\"}"}}'
)
OPTION_SEPARATOR = " | "
DONE_MARK, PENDING_MARK = "[x]", "[ ]"


def subtask_options(subtask: str) -> list[str]:
    """Split a subtask into its alternative actions, first choice first (P3)."""
    return [option.strip() for option in subtask.split(OPTION_SEPARATOR) if option.strip()]


def matches_option(action: str, option: str) -> bool:
    """Return True if the action is the option, a `{slot}` in it standing for any text (P3)."""
    parts = re.split(r"\{[^{}]+\}", normalize(option))
    return re.fullmatch(".+".join(map(re.escape, parts)), normalize(action)) is not None


def render_experience(hits: Sequence[Hit]) -> str:
    """Render retrieved episodes as the experience section (P2)."""
    lines = [EXPERIENCE_HEADER]
    lines.extend(f"{INDENT}- {hit.render()}" for hit in hits)
    if not hits:
        lines.append(f"{INDENT}{NONE}")
    return "\n".join(lines)


def build_prompt(
    working_section: str, hits: Sequence[Hit], recalled: Sequence[str] = (), tool_results: Sequence[str] = ()
) -> str:
    """Assemble a prompt: working memory, experience, recalled memory, tool results, instruction (P1).

    The recalled section and tool results appear only when there are some.
    """
    parts = [working_section, render_experience(hits)]
    if recalled:
        parts.append("\n".join([RECALLED_HEADER, *(f"{INDENT}- {line}" for line in recalled)]))
    return "\n\n".join([*parts, *tool_results, INSTRUCTION])
