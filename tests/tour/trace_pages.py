"""Helpers for the trace tests: a small recorded run, and a strict reader of the page it gives."""

import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from recuris import (
    AgentSettings,
    DecayManager,
    Episode,
    EpisodicMemory,
    ManualClock,
    RecurisAgent,
    WorkingMemory,
    WorkingSettings,
)
from recuris.tour.mock_environment import MockEnvironment
from recuris.tour.recorder import Recorder
from recuris.core.clock import DAY
from recuris.core.mock_llm import PromptFollowingLLM

VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}
SVG_NS = "{http://www.w3.org/2000/svg}"


class Page(HTMLParser):
    """Read a page; note unbalanced tags, every element with its attributes, headings, and text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.open = []
        self.errors = []
        self.elements = []
        self.headings = []
        self.text = []
        self._heading = None
        self.feed(text)
        self.close()
        self.errors += [f"never closed: <{tag}>" for tag in self.open]

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag not in VOID:
            self.open.append(tag)
        if tag in ("h1", "h2", "h3", "h4"):
            self._heading = []

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.open or self.open[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.open[-1] if self.open else None}>")
        else:
            self.open.pop()
        if tag in ("h1", "h2", "h3", "h4") and self._heading is not None:
            self.headings.append("".join(self._heading).strip())
            self._heading = None

    def handle_data(self, data):
        self.text.append(data)
        if self._heading is not None:
            self._heading.append(data)

    def with_class(self, name: str) -> list[dict]:
        return [attrs for _, attrs in self.elements if name in (attrs.get("class") or "").split()]


def svgs(page: str) -> list[ET.Element]:
    """Parse every inline <svg> of the page as XML."""
    found = []
    rest = page
    while "<svg" in rest:
        start = rest.index("<svg")
        end = rest.index("</svg>", start) + len("</svg>")
        found.append(ET.fromstring(rest[start:end]))
        rest = rest[end:]
    return found


def svg_texts(svg: ET.Element, css_class: str | None = None) -> list[str]:
    return [
        "".join(t.itertext())
        for t in svg.iter(f"{SVG_NS}text")
        if css_class is None or t.get("class") == css_class
    ]


def recorded_agent(
    recorder: Recorder,
    window: int = 2,
    settings: AgentSettings | None = None,
    episodic: EpisodicMemory | None = None,
    decay: DecayManager | None = None,
) -> RecurisAgent:
    """An agent with a working window of `window` steps, on the recorder's clock, whose model
    (the core's mock) and stages the recorder records."""
    return RecurisAgent(
        WorkingMemory(WorkingSettings(window_size=window)),
        EpisodicMemory() if episodic is None else episodic,
        recorder.wrap(PromptFollowingLLM()),
        settings,
        decay=decay,
        clock=recorder.clock,
        observer=recorder.observe,
    )


def traced_run(goal: str = "注册一个新账号", failing: str = "失败：需要先完成验证码") -> Recorder:
    """A failure, a similar task that retrieves it, and a decay cycle, all recorded."""
    clock = ManualClock(0.0)
    recorder = Recorder(clock)
    episodic = EpisodicMemory()
    decay = recorder.watch(DecayManager(clock=clock))
    agent = recorded_agent(recorder, episodic=episodic, decay=decay)
    old = Episode(task_type="report", goal="old report", status="success", created_at=-30 * DAY)
    episodic.add_episode(old)
    plan = ["open", "fill", "submit | submit after captcha"]
    site = MockEnvironment({"submit": failing})
    recorder.begin("first task")
    recorder.note("a failure, remembered")
    agent.run(goal, "form", site, plan)
    recorder.settle({"episodic": [e.render() for e in episodic.episodes]})
    clock.advance(DAY)
    recorder.begin("second task")
    agent.run(goal + " again", "form", site, plan)
    recorder.settle({"episodic": [e.render() for e in episodic.episodes]})
    clock.advance(10 * DAY)
    recorder.begin("decay")
    report = decay.run_cycle(episodic.episodes)
    recorder.settle({"episodic": [e.id for e in episodic.episodes]}, report.audit)
    return recorder
