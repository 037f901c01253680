"""Extraction: turn a model's JSON reply into checked records, or say why not.

Document 001 §5 ends a task by asking an LLM to extract reusable knowledge as JSON, and
warns that the reply can be malformed; document 003 §4.1 attaches a confidence to every
write; document 004 §1 asks a model to reflect on interactions and return insights
`{type, content, confidence, supersedes}`. A model's reply is untrusted input: it may be
prose, fenced, truncated, the wrong shape, or hostile. The parsers never raise on it; they
return what is valid and a reason for everything they refused.

Invariants:
    X1  `parse_knowledge` never raises, whatever the reply.
    X2  every statement returned has non-empty subject and value (valid Unicode, at most
        300 characters), a known category and a confidence in [0, 1] (a number too large for
        a float is refused, not raised).
    X3  every entry of the reply is either returned or reported, never silently dropped.
    X4  the same holds for `parse_insights`, which returns None (and the reasons) when the
        reply as a whole is unusable, so that the caller can keep its input and retry.
    X5  the prompt shows the task (goal, status, steps) and the JSON shape `parse_knowledge`
        reads; the object is read wherever the reply puts it, in prose or in ``` fences.
"""

import json
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..core.records import Step
from ..core.text import flatten
from ..core.validation import unicode_problem

__all__ = [
    "Knowledge",
    "Insight",
    "CATEGORIES",
    "INSIGHT_TYPES",
    "MIN_KNOWLEDGE_CONFIDENCE",
    "extraction_prompt",
    "parse_knowledge",
    "reflection_prompt",
    "parse_insights",
    "ask",
]

CATEGORIES = ("user_pref", "tech_rule", "project_rule", "general")
# The least confidence at which a statement extracted from one finished task is observed by
# the consolidator, on its way to a fact that supersedes its subject's old value. Neither
# document sets it; it is a setting of its own, not reflection's MIN_INSIGHT_CONFIDENCE
# (reflection.py), which gates insights drawn from a batch of interactions.
MIN_KNOWLEDGE_CONFIDENCE = 0.6
INSIGHT_TYPES = ("user_fact", "agent_learning")
MAX_TEXT = 300
MAX_ENTRIES = 50


@dataclass(frozen=True)
class Knowledge:
    """One statement a model extracted: `subject = value`, with its category and confidence."""

    subject: str
    value: str
    category: str
    confidence: float


@dataclass(frozen=True)
class Insight:
    """One insight a model drew from interactions, possibly naming the memory it supersedes."""

    type: str
    content: str
    confidence: float
    supersedes: str | None = None
    sources: tuple[str, ...] = ()  # ids of the interactions it came from, if the model says


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


def _text(entry: dict, name: str) -> str:
    text = entry.get(name)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"'{name}' is missing or not text")
    if len(text) > MAX_TEXT:
        raise ValueError(f"'{name}' is longer than {MAX_TEXT} characters")
    problem = unicode_problem(text)
    if problem:
        raise ValueError(f"'{name}' is not valid Unicode text: {problem}")
    return " ".join(text.split())


def _choice(entry: dict, name: str, allowed: tuple[str, ...], default: str | None = None) -> str:
    value = entry.get(name, default)
    if value not in allowed:
        raise ValueError(f"{name} {value!r} is not one of {list(allowed)}")
    return value


def _confidence(entry: dict) -> float:
    confidence = entry.get("confidence")
    number = isinstance(confidence, (int, float)) and not isinstance(confidence, bool)
    # math.isfinite only on floats: on an integer of 400 digits it raises OverflowError.
    if not number or (isinstance(confidence, float) and not math.isfinite(confidence)):
        raise ValueError("'confidence' is missing or not a number")
    if not 0.0 <= confidence <= 1.0:  # compared exactly, never converted first
        raise ValueError(f"confidence {flatten(str(confidence), 24)} is outside [0, 1]")
    return float(confidence)


def _knowledge(entry: dict) -> Knowledge:
    category = _choice(entry, "category", CATEGORIES, "general")
    return Knowledge(_text(entry, "subject"), _text(entry, "value"), category, _confidence(entry))


def _insight(entry: dict) -> Insight:
    supersedes = entry.get("supersedes")
    sources = entry.get("sources", [])
    if supersedes is not None and not isinstance(supersedes, str):
        raise ValueError("'supersedes' is neither null nor an id")
    if not isinstance(sources, list) or not all(isinstance(source, str) for source in sources):
        raise ValueError("'sources' is not a list of ids")
    kind = _choice(entry, "type", INSIGHT_TYPES)
    content = _text(entry, "content")
    return Insight(kind, content, _confidence(entry), supersedes, tuple(sources))


def _parse(reply: object, key: str, check) -> tuple[list | None, list[str]]:
    if not isinstance(reply, str):
        return None, [f"the reply is {type(reply).__name__}, not text"]
    try:
        data = _json_object(reply)
    except (ValueError, RecursionError) as error:
        return None, [f"the reply is not JSON: {flatten(str(error), 120)}"]
    entries = data.get(key) if isinstance(data, dict) else data
    if not isinstance(entries, list):
        return None, [f'the reply has no "{key}" list']
    found = []
    problems = []
    for number, entry in enumerate(entries, 1):
        if number > MAX_ENTRIES:
            problems.append(f"entries {number}-{len(entries)}: more than {MAX_ENTRIES}, not read")
            break
        try:
            if not isinstance(entry, dict):
                raise ValueError(f"is {type(entry).__name__}, not an object")
            found.append(check(entry))
        except ValueError as error:
            problems.append(f"entry {number}: {error}")
    return found, problems


def parse_knowledge(reply: object) -> tuple[list[Knowledge], list[str]]:
    """Return (valid statements, reasons for everything refused) from a model's reply (X1-X3)."""
    found, problems = _parse(reply, "knowledge", _knowledge)
    return found or [], problems


def reflection_prompt(interactions: list[str], existing: list[tuple[str, str]]) -> str:
    """Ask for insights on a batch of interactions, showing the insights already held."""
    held = (
        "\n".join(f"  [{item_id}] {flatten(content, 200)}" for item_id, content in existing)
        or "  (none)"
    )
    batch = "\n".join(f"  {line}" for line in interactions)
    return (
        f"Interactions:\n{batch}\n\nInsights already held:\n{held}\n\n"
        "Reflect: what lasting facts about the user, or lessons for the agent, do these show?\n"
        'Reply with JSON only: {"insights": [{"type": "user_fact" | "agent_learning", '
        '"content": "...", "confidence": 0.0-1.0, '
        '"supersedes": null or the id of an insight held, '
        '"sources": [ids of the interactions it came from]}]}'
    )


def parse_insights(reply: object) -> tuple[list[Insight] | None, list[str]]:
    """Return (valid insights, or None if the reply is unusable; reasons for refusals) (X4)."""
    return _parse(reply, "insights", _insight)


def ask(llm: Callable[[str], str], prompt: str, timeout_seconds: float | None = None) -> str:
    """Return the model's reply; raise TimeoutError if it gives none within `timeout_seconds`.

    An exception the model raises is raised here, in the caller's thread.
    """
    if timeout_seconds is None:
        return llm(prompt)
    # The model may hang: wait in a daemon thread, and give up after the timeout.
    outcome: dict = {}

    def call() -> None:
        try:
            outcome["reply"] = llm(prompt)
        except BaseException as error:  # noqa: BLE001 - carried back to the caller's thread
            outcome["reply"] = error

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(timeout_seconds)
    if "reply" not in outcome:
        raise TimeoutError(f"the LLM gave no answer within {timeout_seconds} s")
    if isinstance(outcome["reply"], BaseException):
        raise outcome["reply"]
    return outcome["reply"]
