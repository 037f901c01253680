"""Example tests for recuris.storage.item.MemoryItem (I1-I3)."""

import json
from dataclasses import replace

import pytest

from recuris import MemoryItem


def item(**changes):
    fields = dict(id="item-1", user_id="ana", level="semantic", content="team language: Python")
    fields.update(changes)
    return MemoryItem(**fields)


def test_defaults_fill_access_and_validity_from_creation():
    """I3: a new item is valid, and one never accessed was last accessed when it was created."""
    fresh = item(created_at=42.0)
    assert (fresh.last_access_at, fresh.is_valid) == (42.0, True)


@pytest.mark.parametrize(
    "changes, error, rule",
    [
        (dict(level="cache"), ValueError, "level"),
        (dict(importance=1.5), ValueError, "importance"),
        (dict(importance="high"), ValueError, "importance"),
        (dict(content="  "), ValueError, "content"),
        (dict(user_id=None), TypeError, "user_id"),
        (dict(created_at=float("nan")), ValueError, "created_at"),
        (dict(metadata={"when": object()}), TypeError, "JSON"),
        (dict(metadata={"x": float("inf")}), TypeError, "JSON"),
    ],
)
def test_invalid_fields_are_refused_naming_the_rule(changes, error, rule):
    """I1, I2: a bad level, importance, text, time or metadata raises, naming what is wrong."""
    with pytest.raises(error, match=rule):
        item(**changes)


def test_to_dict_is_json_and_round_trips():
    """I2: to_dict is plain JSON data and from_dict rebuilds an equal item."""
    original = item(metadata={"tags": ("a", "b"), "source_ids": ["e1"]}, task_id="task-1")
    data = json.loads(json.dumps(original.to_dict()))
    assert MemoryItem.from_dict(data) == original


def test_an_export_written_before_schema_4_still_imports():
    """I2: from_dict drops the retired `valid_from`
    of an older export and rebuilds the same item."""
    original = item(created_at=42.0)
    assert MemoryItem.from_dict({**original.to_dict(), "valid_from": 42.0}) == original
    assert "valid_from" not in original.to_dict()


def test_an_item_rebuilt_from_its_stored_row_equals_the_one_written():
    """I2: `trusted` builds through the constructor an
    item equal to the one written; its copies are checked."""
    original = item(created_at=42.0, metadata={"tags": ["a"]}, access_count=3)
    rebuilt = MemoryItem.trusted(original.to_dict())
    assert (
        type(rebuilt) is MemoryItem
        and rebuilt == original
        and rebuilt.to_dict() == original.to_dict()
    )
    with pytest.raises(ValueError, match="I1: access_count"):
        replace(rebuilt, access_count=-1)


@pytest.mark.parametrize("key", ["owner", "_stored"])
def test_from_dict_refuses_unknown_fields(key):
    """I2: from_dict names the fields it does not know, `trusted`'s private keyword among them."""
    with pytest.raises(TypeError, match="unknown fields of a memory item"):
        MemoryItem.from_dict({**item().to_dict(), key: "mallory"})


def test_closing_records_time_and_successor():
    """I3: a closed copy is invalid from `at` and names its successor; the original is unchanged."""
    original = item()
    closed = original.closed(99.0, "fact-2")
    assert (closed.is_valid, closed.invalidated_at, closed.superseded_by) == (False, 99.0, "fact-2")
    assert original.is_valid


def test_render_is_one_line_with_level():
    """I5: an item renders as `[level] content` on one line."""
    assert item(content="a\nb").render() == "[semantic] a b"


@pytest.mark.parametrize(
    "changes, rule",
    [
        (dict(access_count="abc"), "I1: access_count"),
        (dict(access_count=-1), "I1: access_count"),
        (dict(access_count=2**63), "I1: access_count"),
        (dict(access_count=True), "I1: access_count"),
        (dict(created_at=10**20), "I1: created_at"),
        (dict(created_at="1"), "I1: created_at"),
        (dict(content="caf\udce9"), "content must be valid Unicode"),
        (dict(user_id="\ud800"), "user_id must be valid Unicode"),
        (dict(metadata={"note": "\udfff"}), "I2: metadata must be valid Unicode"),
    ],
)
def test_values_no_store_could_keep_are_refused_naming_the_rule(changes, rule):
    """I1, I2: a non-count access count, an out-of-range
    time or a lone surrogate is refused by rule."""
    with pytest.raises((TypeError, ValueError), match=rule):
        item(**changes)


def test_metadata_nested_past_the_limit_is_refused_naming_the_rule():
    """I2: metadata nested more than MAX_METADATA_DEPTH
    levels is refused before any copy could overflow."""
    from recuris.storage.item import MAX_METADATA_DEPTH

    nested = 1
    for _ in range(MAX_METADATA_DEPTH):
        nested = {"a": nested}
    assert item(metadata=nested).metadata == nested
    with pytest.raises(TypeError, match="I2: metadata must be JSON data nested at most"):
        item(metadata={"a": nested})


@pytest.mark.parametrize("field", ["task_id", "superseded_by"])
@pytest.mark.parametrize("value", [5, ["fact-2"], " ", "\ud800"])
def test_a_link_to_another_item_is_text_or_none(field, value):
    """I1: task_id and superseded_by are valid text or None; anything else is refused."""
    with pytest.raises((TypeError, ValueError), match=f"I1: {field}"):
        MemoryItem(id="f1", user_id="ana", level="semantic", content="x", **{field: value})


def test_from_dict_names_the_missing_fields_in_words():
    """I2: a dict lacking required fields is refused naming them, not a Python signature."""
    with pytest.raises(TypeError, match=r"I2: a memory item needs the fields \['user_id'"):
        MemoryItem.from_dict({"id": "x"})
