"""Mock LLMs: deterministic stand-ins that let the demo and the tests run offline.

Document 000 §4.3 drives its prototype with a scripted model. `ScriptedLLM` replays a list;
`PromptFollowingLLM` decides *only* from the prompt, read back through `prompt.py`'s layout,
so it makes the documents' mistakes exactly when the memory that prevents them is missing:
without the goal it stops early, without progress it repeats a step, without a pin it
breaks a constraint, without a failed episode it retries a path known to fail.

Invariants:
    L1  every mock is a pure function of its inputs and its own call history.
    L2  `PromptFollowingLLM` reads nothing but the prompt text.
    L3  `PromptFollowingLLM` does the first pending subtask, by an option no pin forbids and
        not known to fail if there is one (one that worked first), its slots filled from the
        prompt or, if it can, asked of a tool; no subtasks: the next undone action of a path
        to follow; else FINISH.
"""

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from . import prompt as layout
from .text import normalize, tokenize

__all__ = ["ScriptedLLM", "PromptFollowingLLM", "PromptView", "read_prompt", "read_path"]


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
    known: dict[str, str] = field(default_factory=dict)  # slot text -> the value read for it
    asked: list[str] = field(default_factory=list)  # what the model already asked a tool
    instruction: str = ""  # the prompt's last paragraph: what to reply, and any tools
    latest_wins: bool = False  # a value given twice: read the last one, not the first

    def note(self, slot: str, value: str) -> None:
        """Read a value given for a slot text: the first one met, or with `latest_wins` the last."""
        if self.latest_wins or normalize(slot) not in self.known:
            self.known[normalize(slot)] = value


# A reader of a section the core does not lay out: given a line of it (stripped) and the view.
SectionReader = Callable[[str, PromptView], None]
# Asked for a slot nothing in the prompt fills: a reply that asks a tool for it, or None.
Asker = Callable[[str, PromptView], str | None]

_FOLLOW = re.compile(r"^- \[follow\] .*? succeeded: (.*?)(?: \(similarity [\d.]+\))?$")
_AVOID = re.compile(r'^- \[avoid\] .*? failed at "(.*?)": ')
_EARLIER = re.compile(r"^\(\+\d+ earlier\)$")
_FORBIDS = re.compile(
    r"(?:do not use|don't use|never use|avoid|不要使用|不要用|禁止使用)\s*(.+)", re.I
)


def _path(text: str, separator: str) -> list[str]:
    return [item for item in text.split(separator) if item and not _EARLIER.match(item)]


def read_path(text: str) -> list[str]:
    """Split a rendered path (`a -> b -> c`, maybe opening with `(+N earlier)`) into actions."""
    return _path(text, " -> ")


def read_prompt(
    text: str, latest_wins: bool = False, readers: Mapping[str, SectionReader] | None = None
) -> PromptView:
    """Parse a prompt laid out by `prompt.py` back into what it tells the model.

    The prompt is cut by `prompt.read_sections` (P4); each indented line is read by the
    section it stands under. A value noted twice in the recent steps is read as the first
    one met, or with `latest_wins` the last. `readers` reads the lines of the sections the
    core does not lay out, by their header.
    """
    readers = readers or {}
    view = PromptView(latest_wins=latest_wins)
    view.instruction = text.rsplit("\n\n", 1)[-1]  # the instruction ends the prompt (P1)
    for section in layout.read_sections(text):
        heading = section.heading
        if heading is not None and heading.startswith(layout.GOAL):
            view.goal = heading[len(layout.GOAL) :].strip()
        for body in section.body():
            if heading == layout.PINNED and body.startswith("- "):
                view.pins.append(body[2:])
            elif (heading or "").startswith(layout.SUBTASKS) and body[:3] in layout.MARKS:
                view.subtasks.append((body[:3] == layout.DONE_MARK, body[4:]))
            elif heading == layout.SUMMARY and body.startswith("done: "):
                view.done.extend(_path(body[len("done: ") :], " -> "))
            elif heading == layout.SUMMARY and body.startswith("failed: "):
                failures = _path(body[len("failed: ") :], "; ")
                view.failed.extend(item.partition(": ")[0] for item in failures)
            elif heading == layout.RECENT and (match := layout.RECENT_STEP.match(body)):
                (view.failed if match.group(3) else view.done).append(match.group(1))
                for slot, value in layout.NOTE.findall(body):
                    view.note(slot, value)
            elif heading == layout.EXPERIENCE_HEADER and (match := _FOLLOW.match(body)):
                view.follow.append(_path(match.group(1), " -> "))
            elif heading == layout.EXPERIENCE_HEADER and (match := _AVOID.match(body)):
                view.avoid.append(match.group(1))
            elif heading in readers:
                readers[heading](body, view)
    return view


def _stems(text: str) -> set[str]:
    return {word[:-1] if len(word) > 3 and word.endswith("s") else word for word in tokenize(text)}


class PromptFollowingLLM:
    """Choose the next action from the prompt alone: goal, pins, progress, experience (L2).

    `readers` read the sections a layer above adds (by header); `ask` is how the model asks a
    tool for a slot nothing fills (see `decide`). Both read and answer the prompt only.
    """

    def __init__(
        self,
        latest_wins: bool = False,
        readers: Mapping[str, SectionReader] | None = None,
        ask: Asker | None = None,
    ) -> None:
        self.prompts: list[str] = []
        self.latest_wins = latest_wins
        self.readers = dict(readers or {})
        self.ask = ask

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.decide(read_prompt(prompt, self.latest_wins, self.readers))

    def fill(self, option: str, view: PromptView) -> str:
        """Fill each `{slot}` from what the prompt says, or ask a tool for it (L3)."""
        option = layout.fill_slots(option, view.known)
        for slot in layout.SLOT.findall(option):
            request = self.ask(slot, view) if self.ask is not None else None
            if request is not None:
                return request
        return option

    def decide(self, view: PromptView) -> str:
        """Return the next action for what the view says (L3)."""
        if not view.goal:
            return layout.FINISH  # the goal is lost: nothing says the work is unfinished
        done = {normalize(action) for action in view.done}
        done.update(normalize(text) for finished, text in view.subtasks if finished)
        known_bad = {normalize(action) for action in view.avoid + view.failed}
        followed = {normalize(action) for path in view.follow for action in path}
        # A pin forbids an option holding every word it names, plural or not: "avoid red-eye
        # flights" rules out "book the red-eye flight" (a constraint, not a literal string).
        forbidden = []
        for pin in view.pins:
            named = _FORBIDS.search(pin)
            if named:
                forbidden.append(_stems(named.group(1)))

        def allowed(option: str) -> bool:
            words = _stems(option)
            banned = any(ban and ban <= words for ban in forbidden)
            return normalize(option) not in known_bad and not banned

        for finished, subtask in view.subtasks:
            options = layout.subtask_options(subtask)
            if finished:
                continue
            if any(layout.matches_option(a, o, view.known) for a in done for o in options):
                continue
            # Prefer an option that worked before, then any option not known to fail.
            ranked = sorted(options, key=lambda option: normalize(option) not in followed)
            chosen = next((option for option in ranked if allowed(option)), options[0])
            return self.fill(chosen, view)
        if not view.subtasks:
            for path in view.follow:
                for action in path:
                    if normalize(action) not in done and allowed(action):
                        return action
        return layout.FINISH
