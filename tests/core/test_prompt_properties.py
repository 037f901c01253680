"""Property tests for recuris.core.prompt: extra sections in their place, and a prompt read
back into its sections (P1, P4)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.core.prompt import ContextSection, build_prompt, read_sections
from recuris.core.text import flatten

words = st.sampled_from(["deploy", "eu-west", "8080", "Hotel Lux", "port", "staging", "9090"])


@given(st.lists(st.lists(words, max_size=3), max_size=4))
def test_P1_sections_follow_experience_in_order_and_only_with_lines(bodies):
    """P1: each section with lines appears after experience and before the instruction, in order."""
    sections = [ContextSection(f"## Part {n}", tuple(body)) for n, body in enumerate(bodies)]
    text = build_prompt("## Working memory", [], sections)
    shown = [section.header for section in sections if section.lines]
    positions = [text.index(header) for header in shown]
    assert positions == sorted(positions)
    assert all(f"{section.header}\n" not in text for section in sections if not section.lines)
    assert text.rstrip().endswith("when the goal is met.")


# A header or a line as a section holds one: on one line, without white space around it.
one_line = st.text(min_size=1, max_size=30).map(lambda text: flatten(text, 30)).filter(bool)
context_sections = st.lists(
    st.builds(ContextSection, one_line, st.lists(one_line, min_size=1, max_size=4).map(tuple)),
    max_size=4,
)


@given(context_sections, st.lists(one_line, max_size=3))
def test_P4_a_prompt_rendered_from_sections_reads_back_to_the_same_sections(sections, pins):
    """P4: each section given to build_prompt reads back as its header and its lines, in order."""
    working = ContextSection("## Working memory", tuple(f"- {pin}" for pin in pins))
    text = build_prompt(working.render(), [], sections)
    read = [(section.heading, tuple(section.body())) for section in read_sections(text)]
    written = [(section.header, section.lines) for section in sections]
    # Between the working and experience sections before, and the instruction after.
    named = [(heading, body) for heading, body in read if heading]
    assert named[2 : 2 + len(written)] == written


prompt_lines = st.lists(st.sampled_from(["## A", "  - x", "", "  ", "Goal: y", " z", "\t"]))


@given(prompt_lines, st.sampled_from(["\n", "\r\n", "\u2028"]))
def test_P4_the_sections_joined_give_back_the_prompt(lines, line_break):
    """P4: the lines of the sections read, joined in order, are the prompt, whatever its breaks."""
    text = line_break.join(lines)
    assert "".join(section.text for section in read_sections(text)) == text
