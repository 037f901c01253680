"""Property tests for recuris.tour.trace (TR1, TR2, TR3)."""

from html import escape

from hypothesis import given
from hypothesis import strategies as st

from recuris import AgentSettings, ManualClock
from recuris.tour.mock_environment import MockEnvironment
from recuris.tour.recorder import Recorder
from recuris.tour.trace import render_page

from trace_pages import Page, recorded_agent, traced_run

printable = st.characters(blacklist_categories=("Cs", "Cc"))
memories = st.text(printable, min_size=1, max_size=40).filter(str.strip)


@given(memories)
def test_TR2_any_memory_text_shows_escaped_and_the_page_still_parses(text):
    """TR2: a goal, a failure and a note holding any
    text leave the page balanced and script-free."""
    recorder = traced_run(goal=text, failing=f"失败 {text}")
    recorder.note(text)
    page_text = render_page(recorder)
    page = Page(page_text)
    assert page.errors == [] and "script" not in [tag for tag, _ in page.elements]
    assert f'<p class="note">{escape(text)}</p>' in page_text and text in "".join(page.text)


@given(
    st.lists(
        st.sampled_from(["open", "fill", "submit", "pay"]), min_size=1, max_size=6, unique=True
    ),
    st.sets(st.sampled_from(["fill", "pay"])),
    st.integers(1, 3),
    st.integers(1, 3),
)
def test_TR3_one_prompt_block_per_model_call_in_its_step(plan, failing, window, max_failures):
    """TR3: however runs end, the page has one prompt
    block per model call, each in a stage-2 item."""
    recorder = Recorder(ManualClock(0.0))
    agent = recorded_agent(recorder, window, AgentSettings(max_failures=max_failures))
    for number in range(2):
        recorder.begin(f"run {number}")
        agent.run("do it", "task", MockEnvironment({action: "error" for action in failing}), plan)
    calls = sum(kind == "prompt" for part in recorder.parts for kind, _ in part.entries)
    text = render_page(recorder)
    steps = text.count('<li class="stage-2"><span class="tag">2 ')
    assert len(Page(text).with_class("prompt")) == calls == steps
