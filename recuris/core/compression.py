"""Compression: fold the steps that leave the window into one bounded, structured summary.

Document 000 §3.1 turns old steps into a structured summary ("done: a -> b; phase: c");
002 §3.1 keeps it bounded by merging the previous summary with each overflow. 000's
prototype replaced the summary with the latest batch, losing history older than a window.
`StructuredSummarizer` is the default; any `(old_summary, evicted_steps) -> str` (an LLM)
can take its place.

The summary is three labelled lines, the first two optional:

    done: (+4 earlier) -> fill email -> set password
    failed: submit form: error: captcha required
    phase: set password

Invariants:
    M1  merging loses no count: done actions = earlier count + listed actions, over all
        steps that succeeded, however many merges happened.
    M2  the summary never exceeds `max_chars` characters.
    M3  trimming drops notes first (foreign lines, or notes folded in by `with_notes`), the
        oldest first, then the oldest done actions (counted, not lost), then the oldest
        failure notes, so failures and the phase outlive progress.
    M4  the phase line names the action of the most recent folded step.
    M5  `with_notes` adds each note, on one line, as a `note:` line after those already
        there; the done, failed and phase lines stay as they were, but for M3's trimming.
    M6  `without_note` takes out of a summary one line that `note_line` gives for a note
        folded in by `with_notes`, leaving every other line as it was; a summary that no
        longer holds that line (M3 trimmed it) is returned unchanged.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .records import Step
from .text import clip, flatten
from .validation import require_count

__all__ = ["StructuredSummarizer", "note_line", "without_note"]

ITEM_CHARS = 60
# Room for the three lines with their counts alone: below this, M1 could not hold.
MIN_CHARS = 80
_EARLIER = re.compile(r"^\(\+(\d+) earlier\)$")


@dataclass
class _Parts:
    """The summary as data: what it lists, what it only counts, and what it reached."""

    done: list[str] = field(default_factory=list)
    done_earlier: int = 0
    failed: list[str] = field(default_factory=list)
    failed_earlier: int = 0
    notes: list[str] = field(default_factory=list)
    phase: str = ""

    def render(self) -> str:
        lines = []
        if self.done or self.done_earlier:
            lines.append("done: " + " -> ".join(_with_count(self.done_earlier, self.done)))
        if self.failed or self.failed_earlier:
            lines.append("failed: " + "; ".join(_with_count(self.failed_earlier, self.failed)))
        lines.extend(f"note: {note}" for note in self.notes)
        if self.phase:
            lines.append(f"phase: {self.phase}")
        return "\n".join(lines)


def _with_count(earlier: int, items: list[str]) -> list[str]:
    return ([f"(+{earlier} earlier)"] if earlier else []) + items


def _item(text: str) -> str:
    # Untrusted text must not forge the summary's own syntax: a line break, a separator
    # or a leading count marker would be read back as structure by `parse`.
    item = flatten(text, ITEM_CHARS).replace("->", "→").replace(";", ",")
    return "[" + item[1:] if _EARLIER.match(item) else item


def note_line(note: str) -> str:
    """Return the line `with_notes` folds this note into a summary as (M5)."""
    return f"note: {_item(note)}"


def without_note(summary: str, line: str) -> str:
    """Return the summary without one occurrence of this `note:` line, the last (M6)."""
    lines = summary.splitlines()
    if line not in lines:
        return summary
    # The last: of two equal lines the newest is the one the latest fold wrote; either
    # holds the same text.
    del lines[len(lines) - 1 - lines[::-1].index(line)]
    return "\n".join(lines)


def _split_count(items: list[str]) -> tuple[int, list[str]]:
    match = _EARLIER.match(items[0]) if items else None
    if match:
        return int(match.group(1)), items[1:]
    return 0, items


def parse(summary: str) -> _Parts:
    """Read a summary back into its parts; lines of any other form are kept as notes."""
    parts = _Parts()
    for line in summary.splitlines():
        label, separator, body = line.partition(": ")
        if separator and label == "done":
            earlier, done = _split_count(body.split(" -> "))
            parts.done_earlier = earlier
            parts.done = done
        elif separator and label == "failed":
            earlier, failed = _split_count(body.split("; "))
            parts.failed_earlier = earlier
            parts.failed = failed
        elif separator and label == "phase":
            parts.phase = body
        elif line.strip():
            # A summary written by another summarizer (an LLM, say) is kept, not parsed.
            parts.notes.append(_item(body if label == "note" else line))
    return parts


class StructuredSummarizer:
    """Merge evicted steps into the previous summary and keep it within `max_chars` (M1-M4)."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = require_count("M2: max_chars", max_chars, minimum=MIN_CHARS)

    def __call__(self, old_summary: str, evicted_steps: Sequence[Step]) -> str:
        parts = parse(old_summary)
        for step in evicted_steps:
            if step.failed:
                parts.failed.append(f"{_item(step.action)}: {_item(step.result)}")
            else:
                parts.done.append(_item(step.action))
            parts.phase = _item(step.action)
        return self._fit(parts)

    def with_notes(self, old_summary: str, notes: Sequence[str]) -> str:
        """Add notes to the summary as `note:` lines, newest last, within `max_chars` (M5)."""
        parts = parse(old_summary)
        parts.notes.extend(_item(note) for note in notes)
        return self._fit(parts)

    def _fit(self, parts: _Parts) -> str:
        # Trim in order of least value (M3): notes are scratch or the oldest text, routine
        # progress can be counted instead of listed, and failure notes go last because
        # they are what stops the agent from repeating a mistake.
        while True:
            text = parts.render()
            if len(text) <= self.max_chars:
                return text
            if parts.notes:
                parts.notes.pop(0)
            elif parts.done:
                parts.done.pop(0)
                parts.done_earlier += 1
            elif parts.failed:
                parts.failed.pop(0)
                parts.failed_earlier += 1
            else:
                spare = len(parts.phase) - (len(text) - self.max_chars)
                parts.phase = clip(parts.phase, max(spare, 1))
                return clip(parts.render(), self.max_chars)
