"""Example tests for recuris.experience.slots: a plan step's `{slot}` and its values (ST1-ST3)."""

from recuris.experience.slots import completes, fill_slots, matches_option, noted_values


def test_fill_slots_fills_the_slots_with_a_value_and_leaves_the_others():
    """ST1: a slot whose normalised text has a value is filled; another stays as written."""
    filled = fill_slots("deploy to {Deploy  Region} on {port}", {"deploy region": "eu-west"})
    assert filled == "deploy to eu-west on {port}"


def test_a_slot_matches_the_value_given_for_its_text():
    """ST1: `{slot}` takes its text's value; the rest must match, ignoring case and spacing."""
    assert matches_option("Deploy to  EU-west", "deploy to {region}", {"region": "eu-west"})
    assert not matches_option("deploy to us-east", "deploy to {region}", {"region": "eu-west"})
    assert not matches_option("deploy from eu-west", "deploy to {region}", {"region": "eu-west"})
    assert matches_option("a.b", "a.b") and not matches_option("axb", "a.b")


def test_a_slot_without_a_value_matches_no_action_but_itself():
    """ST1: "book {preferred hotel}" is not done when "book the red-eye flight" runs."""
    assert not matches_option("book the red-eye flight", "book {preferred hotel}")
    assert matches_option("book {preferred hotel}", "book {preferred hotel}")


def test_a_note_in_a_result_gives_a_value_for_its_slot_text():
    """ST3: `note: key = value` in a step's result gives the value, its key normalised."""
    assert noted_values("ok; note: API  Port = 8080") == [("api port", "8080")]
    assert noted_values("ok: done") == []


def test_an_action_completes_an_option_with_any_value_given_for_its_slot():
    """ST2: each value given for the slot completes the option; a slot with none matches itself."""
    known = {"api port": ["8080", "9090"]}
    assert completes("use 8080", "use {api port}", known)
    assert completes("use 9090", "use {api port}", known)
    assert not completes("use 7070", "use {api port}", known)
    assert completes("use {api port}", "use {api port}", {})
    assert not completes("use {api port}", "use {api port}", known)
