"""Example tests for recuris.core.validation: the checks every input passes (VL1-VL4)."""

import pytest

from recuris.core.validation import (
    replace_surrogates,
    require_count,
    require_number,
    require_text,
    unicode_problem,
)


def test_text_is_returned_unchanged():
    """VL1: valid text comes back as it was given, spaces and case included."""
    assert require_text("goal", "  Ship it ") == "  Ship it "


def test_a_non_string_is_a_type_error_naming_the_argument():
    """VL1: a number where text belongs raises TypeError naming the argument."""
    with pytest.raises(TypeError, match="goal must be a str, got int"):
        require_text("goal", 3)


def test_blank_text_and_a_lone_surrogate_are_refused():
    """VL1: blank text, and text UTF-8 cannot encode, raise ValueError naming the argument."""
    with pytest.raises(ValueError, match="goal must not be empty"):
        require_text("goal", " \n ")
    with pytest.raises(
        ValueError, match="goal must be valid Unicode text: lone surrogate at position 1"
    ):
        require_text("goal", "a\ud800")
    assert unicode_problem("注册") == ""


def test_a_bool_is_not_a_count():
    """VL2: True is an int in Python, and never a count."""
    with pytest.raises(ValueError, match="E1: top_k must be an int >= 1, got True"):
        require_count("E1: top_k", True, minimum=1)


def test_a_count_must_lie_in_its_range():
    """VL2: below the minimum or at the maximum is refused: the bounds follow [min, max)."""
    assert require_count("n", 0) == 0 and require_count("n", 9, maximum=10) == 9
    with pytest.raises(ValueError, match="n must be an int >= 0, got -1"):
        require_count("n", -1)
    with pytest.raises(ValueError, match="n must be an int below 10, got 10"):
        require_count("n", 10, maximum=10)
    with pytest.raises(ValueError):
        require_count("n", 2.0)


@pytest.mark.parametrize("value", [True, "1", None, float("nan"), float("inf"), 10**400])
def test_require_number_refuses_what_is_not_a_finite_number(value):
    """VL3: a bool, a non-number, NaN, an infinity or an int too large for a float is refused."""
    with pytest.raises(ValueError, match="weight"):
        require_number("weight", value)


def test_require_number_holds_its_bounds():
    """VL3: the bounds are inclusive, or exclusive of the minimum with `above_minimum`."""
    assert require_number("weight", 0, 0, 1) == 0.0
    assert require_number("weight", 1, 0, 1) == 1.0
    with pytest.raises(ValueError, match="weight must be > 0"):
        require_number("weight", 0, 0, above_minimum=True)
    with pytest.raises(ValueError, match="weight must be <= 1"):
        require_number("weight", 1.5, 0, 1)


def test_each_surrogate_becomes_the_replacement_character():
    """VL4: a lone surrogate, and each half of a pair held apart, becomes U+FFFD; text stays."""
    assert (
        replace_surrogates("a\ud800b\ud83d\ude00c\U0001f600") == "a\ufffdb\ufffd\ufffdc\U0001f600"
    )
