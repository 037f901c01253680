"""Slot LLM: the core's prompt-following mock, taught to fill slots and read the layers above.

Document 000 §4.3 drives its prototype with a scripted model; the core's
`PromptFollowingLLM` is the simplest one whose decisions memory changes. The product's
runs need more of it: a plan step holding a `{slot}` (experience/slots.py) filled from
what the prompt says, the sections a layer above adds (document 003 §4.4's recall across
layers), and a tool it may ask for a value nothing states (document 004 §3's
`search_memory`). `SlotFollowingLLM` adds them and decides otherwise as the core's does.

Invariants:
    SL1 `SlotFollowingLLM` reads nothing but the prompt text, through the core's one reader
        (`read_prompt`, hence `read_sections`); a section the core does not lay out is read
        only by the reader given for its header.
    SL2 a `{slot}` is filled with the value the prompt gives for its text: a note in a
        recent step's result, or what a section's reader takes in; a value given twice is
        the first one met, or with `latest_wins` the last.
    SL3 a subtask is done when an action done is one of its options, its slots filled as
        SL2 says (ST1); the chosen option's slot that nothing fills is asked of a tool when
        `ask` returns a reply, else left as written. Everything else is decided by L3.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..core import prompt as layout
from ..core.mock_llm import PromptFollowingLLM, PromptView
from ..core.text import normalize
from .slots import NOTE, SLOT, fill_slots, matches_option

__all__ = ["SlotFollowingLLM", "SlotView", "SectionReader", "Asker"]


@dataclass
class SlotView(PromptView):
    """What a reader can know from a prompt, the values of its slots included (SL1, SL2)."""

    known: dict[str, str] = field(default_factory=dict)  # slot text -> the value read for it
    asked: list[str] = field(default_factory=list)  # what the model already asked a tool
    instruction: str = ""  # the prompt's last paragraph: what to reply, and any tools
    latest_wins: bool = False  # a value given twice: read the last one, not the first
    # Header -> the reader of each line of a section the core does not lay out.
    readers: Mapping[str, "SectionReader"] = field(default_factory=dict, repr=False)

    def note(self, slot: str, value: str) -> None:
        """Read a value given for a slot text: the first one met, or with `latest_wins` the last."""
        if self.latest_wins or normalize(slot) not in self.known:
            self.known[normalize(slot)] = value

    def read(self, section: layout.ReadSection) -> None:
        """Take in a section as the core does, then its notes, or its lines by their reader."""
        super().read(section)
        heading = section.heading
        # A blank line ends a paragraph: the instruction is what follows the last one (P1).
        self.instruction = "" if heading == "" else self.instruction + section.text
        for body in section.body():
            if heading == layout.RECENT and layout.RECENT_STEP.match(body):
                for slot, value in NOTE.findall(body):
                    self.note(slot, value)
            elif heading in self.readers:
                self.readers[heading](body, self)


# A reader of a section the core does not lay out: given a line of it (stripped) and the view.
SectionReader = Callable[[str, SlotView], None]
# Asked for a slot nothing in the prompt fills: a reply that asks a tool for it, or None.
Asker = Callable[[str, SlotView], str | None]


class SlotFollowingLLM(PromptFollowingLLM):
    """Choose the next action from the prompt alone, filling `{slot}`s from what it says.

    `readers` read the sections a layer above adds (by header); `ask` is how the model asks a
    tool for a slot nothing fills. Both read and answer the prompt only.
    """

    def __init__(
        self,
        latest_wins: bool = False,
        readers: Mapping[str, SectionReader] | None = None,
        ask: Asker | None = None,
    ) -> None:
        super().__init__()
        self.latest_wins = latest_wins
        self.readers = dict(readers or {})
        self.ask = ask

    def new_view(self) -> SlotView:
        return SlotView(latest_wins=self.latest_wins, readers=self.readers)

    def is_done(self, option: str, done: set[str], view: SlotView) -> bool:
        """Return True if an action done is the option, its slots filled from the view (SL3)."""
        return any(matches_option(action, option, view.known) for action in done)

    def act(self, option: str, view: SlotView) -> str:
        """Fill each `{slot}` from what the prompt says, or ask a tool for it (SL2, SL3)."""
        option = fill_slots(option, view.known)
        for slot in SLOT.findall(option):
            request = self.ask(slot, view) if self.ask is not None else None
            if request is not None:
                return request
        return option
