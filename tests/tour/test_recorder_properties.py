"""Property tests for recuris.tour.recorder (RC1, RC3)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.tour.recorder import SECTION_LABELS, full_history, sections
from recuris.core.prompt import build_prompt
from recuris.core.working import WorkingMemory, WorkingSettings

from prompt_sections import SECTIONS

words = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30).filter(
    str.strip
)
headers = st.sampled_from([header for header, _ in SECTION_LABELS])
lines = st.one_of(words, headers, st.just(""), words.map(lambda w: "  " + w))


@given(st.lists(lines, max_size=20), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_RC1_sections_partition_any_text(parts, newline, trailing):
    """RC1: joined, the sections give back the text exactly, whatever it holds."""
    text = newline.join(parts) + (newline if trailing else "")
    assert "".join(body for _, body in sections(text)) == text


@given(words, st.lists(words, max_size=3), st.lists(words, max_size=12), st.integers(1, 4))
def test_RC1_an_agent_prompt_has_its_sections_in_the_layout_order(goal, pins, actions, window):
    """RC1: a built prompt's labels are the layout's,
    in order, whatever goal, pins and steps it holds."""
    working = WorkingMemory(WorkingSettings(window_size=window))
    working.init_task(goal, ["a", "b"])
    for pin in pins:
        working.pin(pin)
    for action in actions:
        working.add_step(action, "ok")
    labels = [label for label, _ in sections(build_prompt(working.to_prompt_section(), []))]
    assert labels == SECTIONS


@given(st.lists(words, min_size=1, max_size=15), st.integers(1, 4))
def test_RC3_a_full_history_prompt_holds_every_step_so_far(actions, window):
    """RC3: prompt n's full history shows steps 1..n-1 exactly as the window showed them."""
    working = WorkingMemory(WorkingSettings(window_size=window))
    working.init_task("goal")
    prompts = []
    for action in actions:
        prompts.append(build_prompt(working.to_prompt_section(), []))
        working.add_step(action, "ok")
    prompts.append(build_prompt(working.to_prompt_section(), []))
    for number, full in enumerate(full_history(prompts)):
        recent = dict(sections(full))["recent steps"]
        shown = [step.render(working.max_step_chars) for step in working.trajectory[:number]]
        assert [line.strip() for line in recent.splitlines()[1:] if line.strip()] == (
            shown or ["(none)"]
        )
