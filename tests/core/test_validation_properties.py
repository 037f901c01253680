"""Property tests for recuris.core.validation against the rule written out (VL1, VL2, VL4)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.core.validation import replace_surrogates, require_count, require_text

anything = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(), st.binary()
)


@given(anything, st.integers(-5, 5), st.one_of(st.none(), st.integers(-5, 10)))
def test_VL2_a_count_is_accepted_exactly_when_it_is_an_int_in_range(value, minimum, maximum):
    """VL2: accepted iff an int, not a bool, with minimum <= value < maximum; nothing else."""
    expected = (
        isinstance(value, int)
        and not isinstance(value, bool)
        and value >= minimum
        and (maximum is None or value < maximum)
    )
    try:
        assert require_count("n", value, minimum, maximum) == value and expected
    except ValueError:
        assert not expected


@given(st.text())
def test_VL1_text_is_accepted_exactly_when_it_is_not_blank(text):
    """VL1: a str not blank and encodable as UTF-8 comes back unchanged; the rest raise."""
    try:
        text.encode("utf-8")
        encodable = True
    except UnicodeEncodeError:
        encodable = False
    try:
        assert require_text("t", text) is text and text.strip() and encodable
    except ValueError:
        assert not text.strip() or not encodable


surrogates = st.integers(0xD800, 0xDFFF).map(chr)


@given(st.text(st.characters(blacklist_categories=()) | surrogates))
def test_VL4_replaced_text_encodes_and_keeps_every_other_character(text):
    """VL4: the result encodes as UTF-8 and differs from text only where text held a surrogate."""
    replaced = replace_surrogates(text)
    replaced.encode("utf-8")
    assert len(replaced) == len(text)
    assert all(
        new == old or (new == "\ufffd" and 0xD800 <= ord(old) <= 0xDFFF)
        for old, new in zip(text, replaced, strict=True)
    )
