"""Prompt: the fixed layout in which memory reaches the model.

Document 000 §3.3 fixes the order: working memory first (goal, summary, recent steps),
related experience after it, each in the same place on every step, so that the goal can
never scroll out of sight. The labels below are spelled only here, so the writer
(`WorkingMemory`, `RecurisAgent`) and the readers (`PromptFollowingLLM`, the demo's
recorder) cannot disagree; `read_sections` is the one place a prompt is read back.
A layer above the core may add sections after experience (`ContextSection`: a header and
its lines, in its own words); the documents' agent adds none.

Invariants:
    P1  a prompt has the working section first, the experience section second, then the
        extra sections that have lines, then the tools' answers, and the instruction last.
    P2  experience is rendered best first, at most the hits given; none renders as "(none)".
    P3  a subtask's alternatives are separated by `OPTION_SEPARATOR`, first choice first;
        an action does a subtask when, normalised, it is one of its options.
    P4  `read_sections` cuts a prompt into sections, each opening at a line that is not
        indented (a blank line included): their lines, joined in order, give back the prompt
        exactly, and a `ContextSection` whose header and lines are each one line, without
        white space around them, reads back as that header and those lines.
    P5  a contested action renders as `CONTESTED`, the action quoted, then each past outcome
        of it, newest first, "worked" or "failed" and the goal of the task it came from.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .records import Hit

__all__ = [
    "ContextSection",
    "ReadSection",
    "read_sections",
    "build_prompt",
    "render_experience",
    "render_contested",
    "CONTESTED",
    "subtask_options",
    "FINISH",
]

WORKING_HEADER = "## Working memory"
GOAL = "Goal:"
PINNED = "Pinned constraints:"
SUBTASKS = "Subtasks:"
SUMMARY = "Summary of earlier steps:"
RECENT = "Recent steps (oldest first):"
EXPERIENCE_HEADER = "## Related experience (retrieved, most similar first)"
NONE = "(none)"
INDENT = "  "
FINISH = "FINISH"
INSTRUCTION = f"Reply with the next action only, or {FINISH} when the goal is met."
OPTION_SEPARATOR = " | "
# A past lesson that a later outcome in the same situation contradicts: shown with both.
CONTESTED = "[contested]"
WORKED = "worked"
FAILED = "failed"
RECENT_STEP = re.compile(r"^\d+\. (.*?) -> (.*?)( \[failed\])?$")
DONE_MARK = "[x]"
PENDING_MARK = "[ ]"
MARKS = (DONE_MARK, PENDING_MARK)


@dataclass(frozen=True)
class ContextSection:
    """A prompt section brought by a part of memory: a header, its lines, the values they state.

    `values` are the (subject, value) pairs the lines state, for a layer above to use without
    reading the prompt back.
    """

    header: str
    lines: tuple[str, ...] = ()
    values: tuple[tuple[str, str], ...] = ()

    def render(self) -> str:
        """Render as the header, then each line indented; no lines render as "(none)"."""
        body = [f"{INDENT}{line}" for line in self.lines] or [f"{INDENT}{NONE}"]
        return "\n".join([self.header, *body])


class ReadSection(NamedTuple):
    """One section of a prompt as read back: the line that opens it and every line of it (P4)."""

    # The unindented line that opens it, without its line break; None for indented lines
    # that open the prompt, under no heading.
    heading: str | None
    lines: list[str]  # every line as written, its line break kept, the heading's first

    @property
    def text(self) -> str:
        """The section's text exactly as the prompt holds it."""
        return "".join(self.lines)

    def body(self) -> list[str]:
        """Return the indented lines under the heading, each without its indent or line break."""
        return [line.strip() for line in self.lines if line.startswith(INDENT)]


def read_sections(text: str) -> list[ReadSection]:
    """Cut a prompt into its sections, in order, at each line that is not indented (P4)."""
    found: list[ReadSection] = []
    lines: list[str] | None = None  # the lines of the section being read
    for line in text.splitlines(keepends=True):
        indented = line.startswith(INDENT)
        if not indented or lines is None:
            lines = []
            # The heading is the line without its break, whichever `splitlines` broke it at.
            found.append(ReadSection(None if indented else line.splitlines()[0], lines))
        lines.append(line)
    return found


def subtask_options(subtask: str) -> list[str]:
    """Split a subtask into its alternative actions, first choice first (P3)."""
    return [option.strip() for option in subtask.split(OPTION_SEPARATOR) if option.strip()]


def render_experience(hits: Sequence[Hit]) -> str:
    """Render retrieved episodes as the experience section (P2)."""
    lines = [EXPERIENCE_HEADER]
    lines.extend(f"{INDENT}- {hit.render()}" for hit in hits)
    if not hits:
        lines.append(f"{INDENT}{NONE}")
    return "\n".join(lines)


def render_contested(action: str, outcomes: Sequence[tuple[str, bool]]) -> str:
    """Render an action whose past outcomes disagree, each (goal, worked), newest first (P5)."""
    said = "; ".join(f"{WORKED if worked else FAILED} in {goal}" for goal, worked in outcomes)
    return f'{CONTESTED} "{action}", newest first: {said}'


def build_prompt(
    working_section: str,
    hits: Sequence[Hit],
    sections: Sequence[ContextSection] = (),
    tool_answers: Sequence[ContextSection] = (),
    tools_instruction: str = "",
) -> str:
    """Assemble a prompt: working memory, experience, sections, tool answers, instruction (P1).

    A section without lines is left out.
    """
    parts = [working_section, render_experience(hits)]
    parts.extend(section.render() for section in sections if section.lines)
    parts.extend(answer.render() for answer in tool_answers)
    parts.append(f"{INSTRUCTION} {tools_instruction}".strip())
    return "\n\n".join(parts)
