"""Prompt: the fixed layout in which memory reaches the model.

Document 000 §3.3 fixes the order: working memory first (goal, summary, recent steps),
related experience after it, each in the same place on every step, so that the goal can
never scroll out of sight. The labels below are spelled only here, so the writer
(`WorkingMemory`, `RecurisAgent`) and the reader (`PromptFollowingLLM`) cannot disagree.

Invariants:
    P1  a prompt has the working section first, the experience section second, then the
        recalled section and tool results when there are any, and the instruction last.
    P2  experience is rendered best first, at most the hits given; none renders as "(none)".
    P3  a subtask's alternatives are separated by `OPTION_SEPARATOR`; an action completes
        a subtask when it is one of its options, each `{slot}` filled with the value the
        prompt gave for the slot's text; a slot no value filled matches only itself.
"""

import re
from collections.abc import Sequence

from .records import Hit
from .text import normalize, statement

__all__ = [
    "build_prompt",
    "render_experience",
    "render_recalled",
    "subtask_options",
    "matches_option",
    "slot_values",
    "FINISH",
]

WORKING_HEADER = "## Working memory"
GOAL = "Goal:"
PINNED = "Pinned constraints:"
SUBTASKS = "Subtasks:"
SUMMARY = "Summary of earlier steps:"
RECENT = "Recent steps (oldest first):"
EXPERIENCE_HEADER = "## Related experience (retrieved, most similar first)"
TOOL_RESULT_HEADER = "## Recalled by search_memory (a tool call you made)"
RECALLED_HEADER = "## Recalled memory (from the manager's recall: facts, procedures, events)"
NONE = "(none)"
INDENT = "  "
FINISH = "FINISH"
INSTRUCTION = f"Reply with the next action only, or {FINISH} when the goal is met."
OPTION_SEPARATOR = " | "
SLOT = re.compile(r"\{([^{}]+)\}")
NOTE = re.compile(r"note: ([^=;]+?) = ([^;]+)")
RECENT_STEP = re.compile(r"^\d+\. (.*?) -> (.*?)( \[failed\])?$")
RECALLED_LINE = re.compile(r"^- \[(?!follow\]|avoid\])\w+\] (.*?)(?: \(relevance [\d.]+\))?$")
DONE_MARK, PENDING_MARK = "[x]", "[ ]"
MARKS = (DONE_MARK, PENDING_MARK)


def subtask_options(subtask: str) -> list[str]:
    """Split a subtask into its alternative actions, first choice first (P3)."""
    return [option.strip() for option in subtask.split(OPTION_SEPARATOR) if option.strip()]


def fill_slots(option: str, values: dict[str, str]) -> str:
    """Replace each `{slot}` whose text has a value; leave the others as written."""
    return SLOT.sub(lambda match: values.get(normalize(match.group(1)), match.group(0)), option)


def matches_option(action: str, option: str, values: dict[str, str] | None = None) -> bool:
    """Return True if the action is the option, its slots filled from `values` (P3)."""
    return normalize(action) == normalize(fill_slots(option, values or {}))


def slot_values(prompt: str, latest_wins: bool = False) -> dict[str, str]:
    """Read the values a prompt gives: `note: key = value` in results, `key: value` recalled.

    A note given twice is read as the first one met, or with `latest_wins` the last: the
    two ways a model may resolve it. Keys are normalised slot texts.
    """
    values: dict[str, str] = {}
    for line in prompt.splitlines():
        for key, value in NOTE.findall(line) if RECENT_STEP.match(line.strip()) else ():
            if latest_wins or normalize(key) not in values:
                values[normalize(key)] = value
        if (match := RECALLED_LINE.match(line.strip())) and (pair := statement(match.group(1))):
            values.setdefault(normalize(pair[0]), pair[1])
    return values


def render_experience(hits: Sequence[Hit]) -> str:
    """Render retrieved episodes as the experience section (P2)."""
    lines = [EXPERIENCE_HEADER]
    lines.extend(f"{INDENT}- {hit.render()}" for hit in hits)
    if not hits:
        lines.append(f"{INDENT}{NONE}")
    return "\n".join(lines)


def render_recalled(lines: Sequence[str]) -> str:
    """Render recalled memories, one a line, as the recalled section; none renders as "(none)"."""
    body = [f"{INDENT}- {line}" for line in lines] or [f"{INDENT}{NONE}"]
    return "\n".join([RECALLED_HEADER, *body])


def build_prompt(
    working_section: str,
    hits: Sequence[Hit],
    recalled: Sequence[str] = (),
    tool_results: Sequence[str] = (),
    tools_instruction: str = "",
) -> str:
    """Assemble a prompt: working memory, experience, recalled memory, tool results, instruction (P1).

    The recalled section and tool results appear only when there are some.
    """
    parts = [working_section, render_experience(hits)]
    if recalled:
        parts.append(render_recalled(recalled))
    return "\n\n".join([*parts, *tool_results, f"{INSTRUCTION} {tools_instruction}".strip()])
