"""Extraction: turn a model's JSON reply into checked knowledge statements, or say why not.

Document 001 §5 ends a task by asking an LLM to extract reusable knowledge as JSON, and
warns that the reply can be malformed; document 003 §4.1 attaches a confidence to every
write. A model's reply is untrusted input: it may be prose, fenced, truncated, the wrong
shape, or hostile. `parse_knowledge` never raises on it; it returns what is valid and a
reason for everything it refused.

Invariants:
    X1  `parse_knowledge` never raises, whatever the reply.
    X2  every statement returned has non-empty subject and value (at most 300 characters),
        a known category and a confidence in [0, 1].
    X3  every entry of the reply is either returned or reported, never silently dropped.
"""

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from .records import Step
from .text import flatten

__all__ = ["Knowledge", "CATEGORIES", "extraction_prompt", "parse_knowledge"]

CATEGORIES = ("user_pref", "tech_rule", "project_rule", "general")
MAX_TEXT = 300
MAX_ENTRIES = 50


@dataclass(frozen=True)
class Knowledge:
    """One statement a model extracted: `subject = value`, with its category and confidence."""

    subject: str
    value: str
    category: str
    confidence: float


def extraction_prompt(goal: str, status: str, steps: Sequence[Step]) -> str:
    """Ask for reusable knowledge from a finished task, as JSON of a fixed shape."""
    lines = "\n".join(f"  {step.render(120)}" for step in steps)
    return (
        f"A task has ended.\nGoal: {flatten(goal, 300)}\nStatus: {status}\nSteps:\n{lines}\n\n"
        "Extract knowledge worth keeping for future tasks (stable facts, preferences, rules).\n"
        'Reply with JSON only: {"knowledge": [{"subject": "...", "value": "...", '
        f'"category": one of {list(CATEGORIES)}, "confidence": 0.0-1.0}}]}}'
    )


def _json_object(text: str) -> object:
    # Models wrap JSON in prose or ``` fences: read from the first bracket to the last.
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise ValueError("no JSON object in the reply")
    start = min(starts)
    end = max(text.rfind("}"), text.rfind("]"))
    return json.loads(text[start : end + 1])


def _check(entry: object) -> Knowledge:
    if not isinstance(entry, dict):
        raise ValueError(f"is {type(entry).__name__}, not an object")
    fields = {}
    for name in ("subject", "value"):
        text = entry.get(name)
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"'{name}' is missing or not text")
        if len(text) > MAX_TEXT:
            raise ValueError(f"'{name}' is longer than {MAX_TEXT} characters")
        fields[name] = " ".join(text.split())
    category = entry.get("category", "general")
    if category not in CATEGORIES:
        raise ValueError(f"category {category!r} is not one of {list(CATEGORIES)}")
    confidence = entry.get("confidence")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, (int, float))
        or not math.isfinite(confidence)
    ):
        raise ValueError("'confidence' is missing or not a number")
    if not 0.0 <= confidence <= 1.0:
        raise ValueError(f"confidence {confidence} is outside [0, 1]")
    return Knowledge(fields["subject"], fields["value"], category, float(confidence))


def parse_knowledge(reply: object) -> tuple[list[Knowledge], list[str]]:
    """Return (valid statements, reasons for everything refused) from a model's reply (X1-X3)."""
    if not isinstance(reply, str):
        return [], [f"the reply is {type(reply).__name__}, not text"]
    try:
        data = _json_object(reply)
    except (ValueError, RecursionError) as error:
        return [], [f"the reply is not JSON: {flatten(str(error), 120)}"]
    entries = data.get("knowledge") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        return [], ['the reply has no "knowledge" list']
    found, problems = [], []
    for number, entry in enumerate(entries, 1):
        if number > MAX_ENTRIES:
            problems.append(f"entries {number}-{len(entries)}: more than {MAX_ENTRIES}, not read")
            break
        try:
            found.append(_check(entry))
        except ValueError as error:
            problems.append(f"entry {number}: {error}")
    return found, problems
