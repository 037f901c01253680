"""Recorder: what a run of the agent did, kept whole for a trace page to show.

Document 000 §2.3 runs each task through six stages, and §3.3 fixes where each part of
memory sits in the prompt; document 004 §2 weighs every memory by recency and use. A
trace shows all three as they happened, so the recorder listens where the agent already
speaks, and changes nothing: it is the agent's `observer`, it wraps the model callable
(`wrap`) to keep each prompt, and it wraps a `DecayManager` (`watch`) to keep each access
and each cycle. The caller adds what only it knows: part titles, notes, what each tier
holds after a part (`settle`), and what it shows beside the run: a prompt cut into its
sections (`show_prompt`) and a table (`table`). `sections` names the sections
`prompt.read_sections` reads, the one reader of the layout.

Invariants:
    RC1 the sections of a prompt partition it: their texts, joined in order, give back the
        prompt exactly; a prompt in another layout is one section, labelled "prompt".
    RC2 every prompt the wrapped model receives is kept, in order, in the part open when it
        was sent; the reply is returned unchanged, and an exception passes through.
    RC3 a full-history prompt is the prompt with every step its run has shown so far,
        verbatim and in step order, in place of the summary and the window; nothing else differs.
    RC4 recording changes nothing it watches: the watched decay weighs, reinforces and
        decides exactly as the manager it wraps.
    RC5 a prompt the caller shows (`show_prompt`) and a table it prints (`table`) are kept
        in place among the notes; neither is a model call, so no run counts them (RC2).
"""

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace

from ..core import prompt as layout
from ..core.records import StageEvent

__all__ = ["Recorder", "Part", "Cycle", "sections", "full_history", "SECTION_LABELS"]

# How each section's first line starts, and what a reader calls it (document 000 §3.3's order).
SECTION_LABELS = (
    (layout.WORKING_HEADER, "goal"),
    (layout.PINNED, "pins"),
    (layout.SUBTASKS, "progress"),
    (layout.SUMMARY, "summary"),
    (layout.RECENT, "recent steps"),
    (layout.EXPERIENCE_HEADER, "experience"),
    (layout.INSTRUCTION.splitlines()[0], "instruction"),
)
_STEP_LINE = re.compile(r"^\s+(\d+)\. ")


def sections(prompt: str) -> list[tuple[str, str]]:
    """Cut a prompt into (label, text) sections at the layout's headers, losing nothing (RC1).

    The prompt is read by `prompt.read_sections` (P4). A line that starts no named section
    (the goal line, an entry, a blank line) belongs to the one above.
    """
    found: list[list] = []
    for section in layout.read_sections(prompt):
        heading = section.heading or ""
        label = label_of(heading)
        # The recorder's names: a section the layout reads apart (the goal line, the tools'
        # own instruction, a blank line) is part of the named one above it.
        if label is not None or not found:
            found.append([label or "prompt", ""])
        found[-1][1] += section.text
    return [(label, text) for label, text in found]


def label_of(heading: str) -> str | None:
    """Name a section by its heading: the layout's own names, else the heading's words."""
    named = next((name for header, name in SECTION_LABELS if heading.startswith(header)), None)
    if named is None and heading.startswith("## "):
        # A section a layer above the core adds names itself, by its heading before any gloss,
        # so that the tour's recorder need not import the layers whose sections it shows.
        named = heading.removeprefix("## ").split(" (")[0].strip().lower()
    return named


def full_history(prompts: Iterable[str]) -> list[str]:
    """Return each prompt of one run as it would be keeping every step so far verbatim (RC3)."""
    # seen: step number -> its line, as the window first showed it
    seen = {}
    out = []
    for prompt in prompts:
        parts = sections(prompt)
        for label, text in parts:
            for line in text.splitlines(keepends=True) if label == "recent steps" else ():
                if match := _STEP_LINE.match(line):
                    seen.setdefault(int(match.group(1)), line.rstrip("\r\n") + "\n")
        rebuilt = []
        for label, text in parts:
            if label == "summary":
                text = _replace_body(text, [f"{layout.INDENT}{layout.NONE}\n"])
            elif label == "recent steps" and seen:
                text = _replace_body(text, [seen[number] for number in sorted(seen)])
            rebuilt.append(text)
        out.append("".join(rebuilt))
    return out


def _replace_body(text: str, body: list[str]) -> str:
    """Keep a section's header line and its trailing blank lines; put `body` between them."""
    lines = text.splitlines(keepends=True)
    end = len(lines)
    while end > 1 and not lines[end - 1].strip():
        end -= 1
    header = lines[0] if lines[0].endswith("\n") else lines[0] + "\n"
    new = header + "".join(body) + "".join(lines[end:])
    return new if text.endswith("\n") else new.rstrip("\n")


@dataclass
class Part:
    """One titled part of a trace: its entries in order, then what each tier held at its end."""

    title: str
    at: float
    # ("note"|"prompt"|"event"|"shown prompt"|"table", ...)
    entries: list[tuple[str, object]] = field(default_factory=list)
    tiers: dict[str, list[str]] = field(default_factory=dict)
    audit: list[str] = field(default_factory=list)

    def runs(self) -> list[list[str]]:
        """The prompts of each run in this part; a run begins at its stage-1 event."""
        runs: list[list[str]] = []
        for kind, value in self.entries:
            if not runs or (kind == "event" and value.stage == 1):
                runs.append([])
            if kind == "prompt":
                runs[-1].append(value)
        return [run for run in runs if run]


@dataclass(frozen=True)
class Cycle:
    """One decay cycle seen by a watched manager: when, what it weighed, what it forgot."""

    at: float
    decay: object
    items: tuple[SimpleNamespace, ...]  # each item's state at the cycle (`_state`)
    forgotten: frozenset[str]


class Recorder:
    """Keep a run's parts, stage events, prompts, decay accesses and cycles for the trace."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.start = clock()
        self.parts = []
        self.accesses: dict[
            str, list[float]
        ] = {}  # item id -> the times a watched decay reinforced it
        self.cycles: list[Cycle] = []

    def _part(self) -> Part:
        return self.parts[-1] if self.parts else self.begin("run")

    def begin(self, title: str) -> Part:
        """Open a new part and return it; what is recorded next belongs to it."""
        part = Part(title, self.clock())
        self.parts.append(part)
        return part

    def note(self, text: str) -> None:
        """Add a line of narration to the open part."""
        self._part().entries.append(("note", text))

    def show_prompt(self, prompt: str) -> None:
        """Keep a prompt the caller shows, in place among the notes; no model call (RC5)."""
        self._part().entries.append(("shown prompt", prompt))

    def table(self, header: Sequence[object], rows: Iterable[Sequence[object]]) -> None:
        """Keep a table the caller prints, its header and rows as text, in place (RC5)."""
        cells = (tuple(str(cell) for cell in row) for row in [header, *rows])
        self._part().entries.append(("table", tuple(cells)))

    def observe(self, event: StageEvent) -> None:
        """Keep one stage event: pass this method as the agent's `observer`."""
        self._part().entries.append(("event", event))

    def settle(self, tiers: Mapping[str, Iterable[str]], audit: Iterable = ()) -> None:
        """Record what each tier holds at the end of the open part, and its audit lines."""
        part = self._part()
        part.tiers = {name: [str(line) for line in lines] for name, lines in tiers.items()}
        part.audit += [
            record.render() if hasattr(record, "render") else str(record) for record in audit
        ]

    def wrap(self, llm: Callable[[str], str]) -> "RecordingLLM":
        """Return a callable that records each prompt, then asks `llm` (RC2)."""
        return RecordingLLM(llm, self)

    def watch(self, decay) -> "WatchedDecay":
        """Return `decay` as it is, but keeping each access and each cycle (RC4)."""
        return WatchedDecay(decay, self)


class RecordingLLM:
    """The model callable, wrapped: every prompt goes to the open part and to `prompts` (RC2)."""

    def __init__(self, llm: Callable[[str], str], recorder: Recorder) -> None:
        self.llm = llm
        self.recorder = recorder
        self.prompts = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        self.recorder._part().entries.append(("prompt", prompt))
        return self.llm(prompt)


class WatchedDecay:
    """A DecayManager that also tells its recorder of every access and every cycle (RC4)."""

    def __init__(self, decay, recorder: Recorder) -> None:
        self.decay = decay
        self.recorder = recorder

    def __getattr__(self, name: str):
        return getattr(self.decay, name)

    def on_access(self, item) -> None:
        self.decay.on_access(item)
        self.recorder.accesses.setdefault(item.id, []).append(item.last_access_at)

    def run_cycle(self, items: Iterable, now: float | None = None):
        items = list(items)
        report = self.decay.run_cycle(items, now)
        seen = tuple(map(_state, items))
        forgotten = frozenset(item.id for item in report.forgotten)
        cycles = self.recorder.cycles
        if (
            cycles and cycles[-1].at == report.at and cycles[-1].decay is self.decay
        ):  # one cycle, in batches
            seen = cycles[-1].items + seen
            forgotten = cycles.pop().forgotten | forgotten
        cycles.append(Cycle(report.at, self.decay, seen, forgotten))
        return report


def _state(item) -> SimpleNamespace:
    """What decay reads of an item, and a text to name it by, as it stood at a cycle."""
    names = ("id", "created_at", "importance", "access_count", "last_access_at", "consolidated")
    text = getattr(item, "goal", None) or getattr(item, "content", "")
    level = getattr(item, "level", None)
    return SimpleNamespace(**{name: getattr(item, name) for name in names}, level=level, text=text)
