"""Property tests for recuris.experience.slots: slots filled from the values a run was given
(ST2, ST3)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.core.text import normalize
from recuris.experience.slots import completes, noted_values

words = st.sampled_from(["deploy", "eu-west", "8080", "Hotel Lux", "port", "staging", "9090"])
values = st.lists(words, max_size=4)


@given(values, words)
def test_ST2_an_action_completes_a_slot_exactly_when_it_uses_a_value_given(known, used):
    """ST2: "use {port}" is completed by "use v" iff v is one of the values given for port."""
    given_values = {"port": known} if known else {}
    expected = normalize(used) in {normalize(value) for value in known}
    assert completes(f"use {used}", "use {port}", given_values) == expected


@given(values)
def test_ST2_a_slot_without_a_value_matches_only_itself(known):
    """ST2: with no value for its text, a slot is completed only by the option as written."""
    assert completes("use {port}", "use {port}", {"other": known})
    assert not any(completes(f"use {value}", "use {port}", {"other": known}) for value in known)


@given(st.lists(st.tuples(words, words), max_size=4))
def test_ST3_every_note_in_a_result_gives_its_value(pairs):
    """ST3: a result noting `key = value` several times gives every pair, keys normalised."""
    result = "; ".join(f"note: {key} = {value}" for key, value in pairs)
    assert noted_values(result) == [(normalize(key), value) for key, value in pairs]
