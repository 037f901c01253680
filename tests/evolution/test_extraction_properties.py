"""Property tests for recuris.evolution.extraction: no reply can make it raise (X1-X3)."""

import json

from hypothesis import given
from hypothesis import strategies as st

from recuris.evolution.extraction import CATEGORIES, parse_knowledge

json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
entries = st.fixed_dictionaries(
    {},
    optional={
        "subject": st.text(max_size=20) | st.integers(),
        "value": st.text(max_size=20) | st.none(),
        "category": st.sampled_from([*CATEGORIES, "other"]),
        "confidence": st.floats(-1, 2) | st.text(max_size=3),
    },
)


@given(st.text() | json_values.map(json.dumps))
def test_X1_no_text_makes_parsing_raise(reply):
    """X1: any text, JSON or not, is answered with (statements, problems)."""
    found, problems = parse_knowledge(reply)
    assert isinstance(found, list) and isinstance(problems, list)


@given(st.lists(entries | json_values, max_size=8))
def test_X2_X3_every_entry_is_either_valid_and_returned_or_reported(items):
    """X2: every statement returned is valid; X3: returned + reported = entries."""
    found, problems = parse_knowledge(json.dumps({"knowledge": items}))
    assert len(found) + len(problems) == len(items)
    for statement in found:
        assert statement.subject and statement.value and statement.category in CATEGORIES
        assert 0.0 <= statement.confidence <= 1.0
