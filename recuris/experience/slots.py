"""Slots: a plan step that names a value the run learns on the way ("deploy to {region}").

Document 000 §2.3 keeps progress as subtasks and §3.3 marks one done when an action does it;
its subtasks are fixed strings. A long task often learns what a later step needs while it
runs (the port a service came up on, the hotel the user prefers; document 003 §4.4 recalls
such statements as facts). A `{slot}` in a subtask stands for that value: a step's result
gives it as `note: key = value`, or a section states it (`ContextSection.values`), and the
action that uses it completes the subtask.

Invariants:
    ST1 `fill_slots` replaces each `{slot}` whose normalised text has a value and leaves the
        others as written; `matches_option` compares the action with the filled option,
        normalised, so a slot no value fills matches only itself.
    ST2 `completes` is True iff the action is the option with each slot filled by one of the
        values given for its text (the first one or a revised one) or left as written when
        none is given.
    ST3 `noted_values` returns every `note: key = value` pair of a result, in order, its key
        normalised.
"""

import itertools
import re
from collections.abc import Mapping, Sequence

from ..core.text import normalize

__all__ = ["SLOT", "NOTE", "fill_slots", "matches_option", "completes", "noted_values"]

SLOT = re.compile(r"\{([^{}]+)\}")
NOTE = re.compile(r"note: ([^=;]+?) = ([^;]+)")


def fill_slots(option: str, values: Mapping[str, str]) -> str:
    """Replace each `{slot}` whose normalised text has a value; leave the others as written."""
    return SLOT.sub(lambda match: values.get(normalize(match.group(1)), match.group(0)), option)


def matches_option(action: str, option: str, values: Mapping[str, str] | None = None) -> bool:
    """Return True if the action is the option, its slots filled from `values` (ST1)."""
    return normalize(action) == normalize(fill_slots(option, values or {}))


def completes(action: str, option: str, known: Mapping[str, Sequence[str]]) -> bool:
    """Return True if the action is the option with each slot filled by one of its known values.

    `known` maps a normalised slot text to every value given for it; a slot left unfilled
    matches only itself (ST2).
    """
    slots = list(dict.fromkeys(normalize(slot) for slot in SLOT.findall(option)))
    choices = [list(dict.fromkeys(known.get(slot, ()))) for slot in slots]
    # Each slot takes one of its values or none: few slots and values, so every way is tried.
    for chosen in itertools.product(*(values or [None] for values in choices)):
        filled = {
            slot: value for slot, value in zip(slots, chosen, strict=True) if value is not None
        }
        if matches_option(action, option, filled):
            return True
    return False


def noted_values(result: str) -> list[tuple[str, str]]:
    """Return the (slot text, value) pairs a step's result notes as `note: key = value` (ST3)."""
    return [(normalize(key), value) for key, value in NOTE.findall(result)]
