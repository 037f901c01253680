"""Mock LLMs: deterministic stand-ins that let the demo and the tests run offline.

Document 000 §4.3 drives its prototype with a scripted model and a mock executor. Here
`ScriptedLLM` replays a list; `PromptFollowingLLM` goes further and decides *only* from the
prompt it is given, reading it back through the layout of `prompt.py`. So it makes the
mistakes the documents describe exactly when the memory that prevents them is missing:
without the goal it stops early, without progress it repeats a finished step, without a
pin it breaks a constraint, without a failed episode it retries a path known to fail.

`ReflectingLLM` answers reflection prompts (document 004 §1) by fixed rules.

Invariants:
    L1  every mock is a pure function of its inputs and its own call history.
    L2  `PromptFollowingLLM` and `ReflectingLLM` read nothing but the prompt text.
"""

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from . import prompt as layout
from ..manager.active_recall import TOOL_RESULT_HEADER
from ..manager.routing import statement
from .text import normalize

__all__ = ["ScriptedLLM", "PromptFollowingLLM", "ReflectingLLM", "read_prompt"]


class ScriptedLLM:
    """Reply with the given actions in order, then FINISH forever; keep every prompt seen."""

    def __init__(self, actions: Iterable[str]) -> None:
        self._actions = list(actions)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        index = len(self.prompts) - 1
        return self._actions[index] if index < len(self._actions) else layout.FINISH


@dataclass
class PromptView:
    """What a reader can know from a prompt, and nothing else (L2)."""

    goal: str | None = None
    pins: list[str] = field(default_factory=list)
    subtasks: list[tuple[bool, str]] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    follow: list[list[str]] = field(default_factory=list)
    avoid: list[str] = field(default_factory=list)
    known: dict[str, str] = field(default_factory=dict)  # "subject: value" lines recalled
    asked: list[str] = field(default_factory=list)  # queries already sent to search_memory


_RECENT_STEP = re.compile(r"^\d+\. (.*?) -> (.*?)( \[failed\])?$")
_FOLLOW = re.compile(r"^- \[follow\] .*? succeeded: (.*?)(?: \(similarity [\d.]+\))?$")
_PROCEDURE = re.compile(r"^- \[procedural\] [^:]*: (.*)$")
_AVOID = re.compile(r'^- \[avoid\] .*? failed at "(.*?)": ')
_EARLIER = re.compile(r"^\(\+\d+ earlier\)$")
_RECALLED_LINE = re.compile(r"^- \[\w+\] (.*?)(?: \(relevance [\d.]+\))?$")
_NOTE = re.compile(r"note: ([^=;]+?) = ([^;]+)")
_SLOT = re.compile(r"\{([^{}]+)\}")
_FORBIDS = re.compile(r"(?:do not use|don't use|never use|avoid|不要使用|不要用|禁止使用)\s*(.+)", re.I)


def _path(text: str, separator: str) -> list[str]:
    return [item for item in text.split(separator) if item and not _EARLIER.match(item)]


def read_prompt(text: str, latest_wins: bool = False) -> PromptView:
    """Parse a prompt laid out by `prompt.py` back into what it tells the model.

    A value noted twice ("note: port = 8080", later "= 9090") is read as the first one
    met, or with `latest_wins` as the last one: the two ways a model may resolve it.
    """
    view, section = PromptView(), None
    for line in text.splitlines():
        if not line.startswith(layout.INDENT):
            section = line
            if line.startswith(layout.GOAL):
                view.goal = line[len(layout.GOAL) :].strip()
            continue
        body = line.strip()
        if section == layout.PINNED and body.startswith("- "):
            view.pins.append(body[2:])
        elif (
            section
            and section.startswith(layout.SUBTASKS)
            and body[:3] in (layout.DONE_MARK, layout.PENDING_MARK)
        ):
            view.subtasks.append((body[:3] == layout.DONE_MARK, body[4:]))
        elif section == layout.SUMMARY and body.startswith("done: "):
            view.done.extend(_path(body[len("done: ") :], " -> "))
        elif section == layout.SUMMARY and body.startswith("failed: "):
            view.failed.extend(item.partition(": ")[0] for item in _path(body[len("failed: ") :], "; "))
        elif section == layout.RECENT and (match := _RECENT_STEP.match(body)):
            (view.failed if match.group(3) else view.done).append(match.group(1))
            for subject, value in _NOTE.findall(match.group(2)):
                if latest_wins or normalize(subject) not in view.known:
                    view.known[normalize(subject)] = value
        elif section == layout.EXPERIENCE_HEADER and (match := _FOLLOW.match(body)):
            view.follow.append(_path(match.group(1), " -> "))
        elif section == layout.EXPERIENCE_HEADER and (match := _AVOID.match(body)):
            view.avoid.append(match.group(1))
        elif section == layout.RECALLED_HEADER and (match := _PROCEDURE.match(body)):
            view.follow.append(_path(match.group(1), " -> "))  # a recalled procedure is a path to follow
        elif section == TOOL_RESULT_HEADER and body.startswith("query: "):
            view.asked.append(normalize(body[len("query: ") :]))
        if section in (layout.RECALLED_HEADER, TOOL_RESULT_HEADER) and (match := _RECALLED_LINE.match(body)):
            if pair := statement(match.group(1)):
                view.known.setdefault(normalize(pair[0]), pair[1])
    return view


def _fill(option: str, view: PromptView) -> str:
    """Fill each `{slot}` from recalled memory, or ask memory for it once (active recall)."""
    for slot in _SLOT.findall(option):
        key = normalize(slot)
        if key in view.known:
            option = option.replace(f"{{{slot}}}", view.known[key])
        elif key not in view.asked:
            arguments = json.dumps({"query": slot, "max_results": 3})
            return json.dumps({"function_call": {"name": "search_memory", "arguments": arguments}})
    return option


class PromptFollowingLLM:
    """Choose the next action from the prompt alone: goal, pins, progress, experience (L2)."""

    def __init__(self, latest_wins: bool = False) -> None:
        self.prompts: list[str] = []
        self.latest_wins = latest_wins

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.decide(read_prompt(prompt, self.latest_wins))

    @staticmethod
    def decide(view: PromptView) -> str:
        if not view.goal:
            return layout.FINISH  # the goal is lost: nothing says the work is unfinished
        done = {normalize(action) for action in view.done}
        done.update(normalize(text) for finished, text in view.subtasks if finished)
        known_bad = {normalize(action) for action in view.avoid + view.failed}
        followed = {normalize(action) for path in view.follow for action in path}
        forbidden = [normalize(m.group(1)) for pin in view.pins if (m := _FORBIDS.search(pin))]

        def allowed(option: str) -> bool:
            key = normalize(option)
            return key not in known_bad and not any(phrase in key for phrase in forbidden)

        for finished, subtask in view.subtasks:
            options = layout.subtask_options(subtask)
            if finished or any(
                layout.matches_option(action, option) for action in done for option in options
            ):
                continue
            # Prefer an option that worked before, then any option not known to fail.
            ranked = sorted(options, key=lambda option: normalize(option) not in followed)
            return _fill(next((option for option in ranked if allowed(option)), options[0]), view)
        if not view.subtasks:
            for path in view.follow:
                for action in path:
                    if normalize(action) not in done and allowed(action):
                        return action
        return layout.FINISH


_INTERACTION = re.compile(r"^\[(?P<id>[^\]]+)\] user: (?P<user>.*) \| agent: (?P<agent>.*)$")
_USER_FACTS = [  # (pattern on the user's words, insight, confidence)
    (re.compile(r"\bour (.+?) is (.+?)[.!]*$", re.IGNORECASE), "{0}: {1}", 0.9),
    (re.compile(r"\bi (?:prefer|like|love) (.+?)[.!]*$", re.IGNORECASE), "user prefers {0}", 0.8),
    (re.compile(r"我(?:喜欢|偏好)(.+?)[。！]*$"), "用户偏好{0}", 0.8),
]
_APOLOGY = re.compile(r"\bsorry\b|\bi was wrong\b|抱歉", re.IGNORECASE)


class ReflectingLLM:
    """Reflect on interactions by fixed rules and answer in the insights JSON format (L1, L2).

    "our X is Y" gives the user fact "X: Y"; "I prefer X" gives "user prefers X"; an agent
    that apologises gives the learning "check before answering: <what the user said>".
    """

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        insights = {}
        for line in prompt.splitlines():
            if not (match := _INTERACTION.match(line.strip())):
                continue
            found = [
                (template.format(*hit.groups()), "user_fact", confidence)
                for pattern, template, confidence in _USER_FACTS
                if (hit := pattern.search(match["user"]))
            ]
            if _APOLOGY.search(match["agent"]):
                found.append((f"check before answering: {match['user'][:80]}", "agent_learning", 0.6))
            for content, kind, confidence in found:
                entry = {"type": kind, "content": content, "confidence": confidence, "sources": [match["id"]]}
                insights.setdefault(content, entry)
        return json.dumps({"insights": list(insights.values())}, ensure_ascii=False)
