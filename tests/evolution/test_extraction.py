"""Example tests for recuris.evolution.extraction: a model's reply is untrusted input (X1-X3)."""

import pytest

from recuris.evolution.extraction import Knowledge, extraction_prompt, parse_knowledge
from recuris.core.records import Step

GOOD = (
    '{"knowledge": [{"subject": "team language", "value": "Python", '
    '"category": "tech_rule", "confidence": 0.9}]}'
)


def test_a_well_formed_reply_gives_statements():
    """X2: a valid entry becomes a Knowledge statement."""
    assert parse_knowledge(GOOD) == ([Knowledge("team language", "Python", "tech_rule", 0.9)], [])


def test_json_wrapped_in_prose_and_fences_is_found():
    """X5: models wrap JSON in prose or ``` fences; the object inside is still read."""
    found, problems = parse_knowledge(f"Sure! Here you go:\n```json\n{GOOD}\n```\nAnything else?")
    assert len(found) == 1 and problems == []


@pytest.mark.parametrize(
    "reply, problem",
    [
        ("", "not JSON"),
        ("I could not find anything.", "not JSON"),
        ('{"knowledge": [{"subject": "a"', "not JSON"),
        ('{"facts": []}', 'no "knowledge" list'),
        (None, "not text"),
        (42, "not text"),
        ("[" * 100_000 + "]" * 100_000, "not JSON"),
    ],
)
def test_malformed_replies_are_reported_not_raised(reply, problem):
    """X1: empty, prose, truncated, wrong-shape, non-text or absurdly nested replies never raise."""
    found, problems = parse_knowledge(reply)
    assert found == [] and problem in problems[0]


def test_bad_entries_are_reported_and_good_ones_kept():
    """X3: each refused entry is reported with its number; valid ones are kept."""
    reply = (
        '{"knowledge": [{"subject": "a", "value": "b", "confidence": 0.8}, "just text", '
        '{"subject": "", "value": "v", "confidence": 1}, '
        '{"subject": "s", "value": "v", "confidence": 7}, '
        '{"subject": "s", "value": "v", "confidence": 0.5, "category": "gossip"}, '
        '{"subject": "s", "value": "v", "confidence": true}]}'
    )
    found, problems = parse_knowledge(reply)
    assert found == [Knowledge("a", "b", "general", 0.8)]
    assert [p.split(":")[0] for p in problems] == [
        "entry 2",
        "entry 3",
        "entry 4",
        "entry 5",
        "entry 6",
    ]


def test_a_flood_of_entries_is_cut_and_reported():
    """X3: past 50 entries the rest are reported, not read."""
    entry = '{"subject": "s", "value": "v", "confidence": 0.9}'
    found, problems = parse_knowledge('{"knowledge": [' + ", ".join([entry] * 60) + "]}")
    assert len(found) == 50 and problems == ["entries 51-60: more than 50, not read"]


def test_prompt_names_the_task_and_the_required_shape():
    """X5: the extraction prompt shows goal, status and steps, and the JSON shape expected."""
    text = extraction_prompt("ship v2", "success", [Step(1, "build", "ok")])
    assert "Goal: ship v2" in text and "1. build -> ok" in text and '"knowledge"' in text


@pytest.mark.parametrize(
    "entry, problem",
    [
        ('{"subject": "a", "value": "b", "confidence": 1' + "0" * 400 + "}", "confidence"),
        ('{"subject": "a", "value": "b", "confidence": 1e400}', "confidence"),
        ('{"subject": "a \\udc80", "value": "b", "confidence": 0.9}', "valid Unicode"),
    ],
)
def test_overflowing_numbers_and_lone_surrogates_are_reported_not_raised(entry, problem):
    """X1, X2: a confidence too large for a float, or text not valid Unicode, is refused by name."""
    found, problems = parse_knowledge('{"knowledge": [' + entry + "]}")
    assert found == [] and len(problems) == 1 and problem in problems[0]
