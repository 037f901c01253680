"""Property tests for recuris.core.prompt: slots filled from the values a run was given, and a
prompt read back into its sections (P1, P3, P4)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.core.prompt import (
    ContextSection,
    build_prompt,
    completes,
    noted_values,
    read_sections,
)
from recuris.core.text import flatten, normalize

words = st.sampled_from(["deploy", "eu-west", "8080", "Hotel Lux", "port", "staging", "9090"])
values = st.lists(words, max_size=4)


@given(values, words)
def test_P3_an_action_completes_a_slot_exactly_when_it_uses_a_value_given(known, used):
    """P3: "use {port}" is completed by "use v" iff v is one of the values given for port."""
    given_values = {"port": known} if known else {}
    expected = normalize(used) in {normalize(value) for value in known}
    assert completes(f"use {used}", "use {port}", given_values) == expected


@given(values)
def test_P3_a_slot_without_a_value_matches_only_itself(known):
    """P3: with no value for its text, a slot is completed only by the option as written."""
    assert completes("use {port}", "use {port}", {"other": known})
    assert not any(completes(f"use {value}", "use {port}", {"other": known}) for value in known)


@given(st.lists(st.tuples(words, words), max_size=4))
def test_P3_every_note_in_a_result_gives_its_value(pairs):
    """P3: a result noting `key = value` several times gives every pair, keys normalised."""
    result = "; ".join(f"note: {key} = {value}" for key, value in pairs)
    assert noted_values(result) == [(normalize(key), value) for key, value in pairs]


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
