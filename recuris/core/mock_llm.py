"""Mock LLMs: deterministic stand-ins that let the demo and the tests run offline.

Document 000 §4.3 drives its prototype with a scripted model. `ScriptedLLM` replays a list;
`PromptFollowingLLM` decides *only* from the prompt, read back through `prompt.py`'s layout,
so it makes the documents' mistakes exactly when the memory that prevents them is missing:
without the goal it stops early, without progress it repeats a step, without a pin it
breaks a constraint, without a failed episode it retries a path known to fail.

Invariants:
    L1  every mock is a pure function of its inputs and its own call history.
    L2  `PromptFollowingLLM` reads nothing but the prompt text, cut by `read_sections` and
        turned into a `PromptView` by `read_prompt` alone.
    L3  `PromptFollowingLLM` finishes when the prompt shows no goal; otherwise it does the
        first pending subtask, by an option that no pin forbids and that no failure shown
        marks as known to fail (one that a shown success followed first), a contested
        action known to fail iff its newest outcome failed (P5); with no
        subtasks, the next undone action of a shown successful path; else FINISH.
"""

import re
from collections.abc import Iterable
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


_FOLLOW = re.compile(r"^- \[follow\] .*? succeeded: (.*?)(?: \(similarity [\d.]+\))?$")
_AVOID = re.compile(r'^- \[avoid\] .*? failed at "(.*?)": ')
_CONTESTED = re.compile(
    rf'^- {re.escape(layout.CONTESTED)} "(.*?)", newest first: ({layout.WORKED}|{layout.FAILED}) '
)
_EARLIER = re.compile(r"^\(\+\d+ earlier\)$")
_FORBIDS = re.compile(
    r"(?:do not use|don't use|never use|avoid|不要使用|不要用|禁止使用)\s*(.+)", re.I
)


def _path(text: str, separator: str) -> list[str]:
    return [item for item in text.split(separator) if item and not _EARLIER.match(item)]


def read_path(text: str) -> list[str]:
    """Split a rendered path (`a -> b -> c`, maybe opening with `(+N earlier)`) into actions."""
    return _path(text, " -> ")


@dataclass
class PromptView:
    """What a reader can know from a prompt, and nothing else (L2)."""

    goal: str | None = None
    pins: list[str] = field(default_factory=list)
    subtasks: list[tuple[bool, str]] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    follow: list[list[str]] = field(default_factory=list)  # paths a shown success took
    avoid: list[str] = field(default_factory=list)  # actions a shown failure broke at
    # Contested actions: action -> whether its newest outcome worked (P5).
    contested: dict[str, bool] = field(default_factory=dict)

    def read(self, section: layout.ReadSection) -> None:
        """Take in what one section of the prompt says, each indented line by its heading."""
        heading = section.heading
        if heading is not None and heading.startswith(layout.GOAL):
            self.goal = heading[len(layout.GOAL) :].strip()
        for body in section.body():
            if heading == layout.PINNED and body.startswith("- "):
                self.pins.append(body[2:])
            elif (heading or "").startswith(layout.SUBTASKS) and body[:3] in layout.MARKS:
                self.subtasks.append((body[:3] == layout.DONE_MARK, body[4:]))
            elif heading == layout.SUMMARY and body.startswith("done: "):
                self.done.extend(_path(body[len("done: ") :], " -> "))
            elif heading == layout.SUMMARY and body.startswith("failed: "):
                failures = _path(body[len("failed: ") :], "; ")
                self.failed.extend(item.partition(": ")[0] for item in failures)
            elif heading == layout.RECENT and (match := layout.RECENT_STEP.match(body)):
                (self.failed if match.group(3) else self.done).append(match.group(1))
            elif heading == layout.EXPERIENCE_HEADER and (match := _FOLLOW.match(body)):
                self.follow.append(_path(match.group(1), " -> "))
            elif heading == layout.EXPERIENCE_HEADER and (match := _AVOID.match(body)):
                self.avoid.append(match.group(1))
            elif heading == layout.EXPERIENCE_HEADER and (match := _CONTESTED.match(body)):
                self.contested[normalize(match.group(1))] = match.group(2) == layout.WORKED


def read_prompt(text: str, view: PromptView | None = None) -> PromptView:
    """Parse a prompt laid out by `prompt.py` back into what it tells the model (L2).

    The prompt is cut by `prompt.read_sections` (P4) and each section, in order, is read by
    the view (`PromptView.read`); a view that reads more is given as `view`.
    """
    view = PromptView() if view is None else view
    for section in layout.read_sections(text):
        view.read(section)
    return view


def _stems(text: str) -> set[str]:
    return {word[:-1] if len(word) > 3 and word.endswith("s") else word for word in tokenize(text)}


class PromptFollowingLLM:
    """Choose the next action from the prompt alone: goal, pins, progress, experience (L2)."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.decide(read_prompt(prompt, self.new_view()))

    def new_view(self) -> PromptView:
        """Return the empty view a prompt is read into."""
        return PromptView()

    def is_done(self, option: str, done: set[str], view: PromptView) -> bool:
        """Return True if an action done (normalised) is the option (P3)."""
        return normalize(option) in done

    def act(self, option: str, view: PromptView) -> str:
        """Return the reply that carries out the chosen option: the option itself."""
        return option

    def decide(self, view: PromptView) -> str:
        """Return the next action for what the view says (L3)."""
        if not view.goal:
            return layout.FINISH  # the goal is lost: nothing says the work is unfinished
        done = {normalize(action) for action in view.done}
        done.update(normalize(text) for finished, text in view.subtasks if finished)
        # A contested action is decided by its newest outcome, whatever an older lesson says;
        # a failure in this very run is known whatever memory says.
        known_bad = {normalize(action) for action in view.avoid}
        known_bad -= {action for action, worked in view.contested.items() if worked}
        known_bad |= {action for action, worked in view.contested.items() if not worked}
        known_bad |= {normalize(action) for action in view.failed}
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
            if finished or any(self.is_done(option, done, view) for option in options):
                continue
            # Prefer an option that worked before, then any option not known to fail: this is
            # where memory changes a decision, since each reason to skip one is in the prompt.
            ranked = sorted(options, key=lambda option: normalize(option) not in followed)
            chosen = next((option for option in ranked if allowed(option)), options[0])
            return self.act(chosen, view)
        if not view.subtasks:
            for path in view.follow:
                for action in path:
                    if normalize(action) not in done and allowed(action):
                        return action
        return layout.FINISH
