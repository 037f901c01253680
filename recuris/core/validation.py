"""Validation: the checks every input passes before memory takes it, each written once.

No design document asks for this, and the prototype of document 000 §4 checks no input:
it is recuris's own rule that memory is never corrupted by what it is given. A bad value is
refused at the door, with an error naming the rule it breaks, and nothing is stored.

Invariants:
    VL1 `require_text` returns its value unchanged, or raises naming the argument: TypeError
        for a non-str, ValueError for blank text or a lone surrogate.
    VL2 `require_count` accepts exactly the ints (not bools) in [minimum, maximum); anything
        else raises ValueError naming the argument.
    VL3 `require_number` accepts exactly the finite ints and floats (not bools) within its
        bounds, returned as float; anything else raises ValueError naming the argument.
    VL4 `replace_surrogates` returns text that encodes as UTF-8: each surrogate code point
        (which UTF-8 cannot carry) replaced by U+FFFD, every other character kept.
"""

import math
import re

__all__ = [
    "require_text",
    "require_count",
    "require_number",
    "unicode_problem",
    "replace_surrogates",
]

_SURROGATE = re.compile("[\ud800-\udfff]")


def require_text(name: str, value: object) -> str:
    """Return value if it is a non-blank str (VL1).

    Raises TypeError for a non-str and ValueError for blank text, naming `name`.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must not be empty")
    problem = unicode_problem(value)
    if problem:
        raise ValueError(f"{name} must be valid Unicode text: {problem}")
    return value


def require_count(name: str, value: object, minimum: int = 0, maximum: int | None = None) -> int:
    """Return value if it is an int (not a bool) with minimum <= value < maximum (VL2).

    Raises ValueError naming `name`, which carries the rule, e.g. "A1: max_steps".
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    if maximum is not None and value >= maximum:
        raise ValueError(f"{name} must be an int below {maximum}, got {value!r}")
    return value


def require_number(
    name: str,
    value: object,
    minimum: float | None = None,
    maximum: float | None = None,
    *,
    above_minimum: bool = False,
) -> float:
    """Return value as a float if it is a finite real number within the bounds (VL3).

    `minimum` and `maximum` are inclusive; with `above_minimum` the value must exceed `minimum`.
    Raises ValueError naming `name`, which carries the rule, e.g. "D2: half_life_days".
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:  # an int of hundreds of digits
        number = float("inf")
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {value!r}")
    too_low = minimum is not None and (value <= minimum if above_minimum else value < minimum)
    if too_low:
        relation = ">" if above_minimum else ">="
        raise ValueError(f"{name} must be {relation} {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value!r}")
    return number


def unicode_problem(text: str) -> str:
    """Return why text cannot be written as UTF-8 (a lone surrogate), or "" if it can."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"lone surrogate at position {error.start}"
    return ""


def replace_surrogates(text: str) -> str:
    """Return text with each surrogate code point replaced by U+FFFD (VL4)."""
    return _SURROGATE.sub("\ufffd", text)
