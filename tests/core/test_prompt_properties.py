"""Property tests for recuris.core.prompt: slots filled from the values a run was given (P1, P3)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.core.prompt import ContextSection, build_prompt, completes, noted_values
from recuris.core.text import normalize

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
