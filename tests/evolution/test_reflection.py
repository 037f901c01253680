"""Example tests for recuris.evolution.reflection.ReflectionCallback (Y1-Y8)."""

import logging
import time
from dataclasses import replace

import pytest

from recuris import ManualClock, MemoryManager
from recuris.evolution.reflecting_llm import ReflectingLLM
from recuris.evolution.reflection import ReflectionCallback


@pytest.fixture
def manager():
    return MemoryManager(clock=ManualClock(1_000))


def insights(manager, user="ana"):
    return [i for i in manager.list(user, "semantic") if i.metadata.get("kind") == "insight"]


def test_adding_an_interaction_never_calls_the_model(manager):
    """Y1: the live path appends only, however full the buffer."""

    def forbidden(prompt):
        raise AssertionError("the LLM was called on the live path")

    callback = ReflectionCallback(forbidden, manager, threshold=2, user_id="ana")
    for n in range(5):
        callback.add_interaction(f"message {n}", "reply")
    assert len(callback.buffer) == 5 and callback.ready and manager.list("ana") == []


def test_reflection_stores_insights_with_their_sources(manager):
    """Y7: each insight names the interactions it came from; the raw turns are kept as episodes."""
    callback = ReflectionCallback(ReflectingLLM(), manager, threshold=2, user_id="ana")
    callback.add_interaction("Hello there", "Hi!")
    callback.add_interaction("Our deploy region is eu-west.", "Noted.")
    report = callback.reflect()
    [insight] = report.stored
    assert insight.content == "deploy region: eu-west" and insight.metadata["type"] == "user_fact"
    assert insight.metadata["source_ids"] == ["interaction-2"]
    assert (
        manager.get("interaction-2", "ana").content
        == "user: Our deploy region is eu-west. | agent: Noted."
    )
    assert callback.buffer == []


@pytest.mark.parametrize("reply", ["", "not json", '{"thoughts": []}', "[" * 50_000, None])
def test_a_failed_reflection_keeps_the_buffer_and_is_audited(manager, reply):
    """Y2: malformed output leaves the buffer as it was, records the failure, and a retry works."""
    answers = [reply]
    callback = ReflectionCallback(
        lambda p: answers.pop(0) if answers else ReflectingLLM()(p), manager, user_id="ana"
    )
    callback.add_interaction("Our team language is Python", "ok")
    before = list(callback.buffer)
    assert callback.reflect().failed and callback.buffer == before and len(callback.failures) == 1
    assert manager.history("ana")[-1].operation == "reflect-failed"
    assert [i.content for i in callback.reflect().stored] == ["team language: Python"]


def test_an_exception_from_the_model_keeps_the_buffer(manager):
    """Y2: an exception is a failure like any other."""

    def broken(prompt):
        raise ConnectionError("model down")

    callback = ReflectionCallback(broken, manager, user_id="ana")
    callback.add_interaction("Our team language is Python", "ok")
    report = callback.reflect()
    assert (
        report.failed
        and "ConnectionError: model down" in report.problems[0]
        and len(callback.buffer) == 1
    )


def test_a_model_that_hangs_times_out_and_keeps_the_buffer(manager):
    """Y2: with a timeout, a hanging model is abandoned and the buffer kept."""
    callback = ReflectionCallback(
        lambda p: time.sleep(2) or "{}", manager, user_id="ana", timeout_seconds=0.05
    )
    callback.add_interaction("Our team language is Python", "ok")
    report = callback.reflect()
    assert report.failed and "TimeoutError" in report.problems[0] and len(callback.buffer) == 1


def test_reflecting_on_the_same_input_twice_stores_no_duplicate(manager):
    """Y3: the same interactions reflected again add no second copy of an insight."""
    callback = ReflectionCallback(ReflectingLLM(), manager, user_id="ana")
    for _ in range(2):
        callback.add_interaction("Our deploy region is eu-west.", "Noted.")
        callback.reflect()
    assert [i.content for i in insights(manager)] == ["deploy region: eu-west"]


def test_a_new_value_supersedes_and_keeps_every_source(manager):
    """Y4: a changed fact supersedes the old insight and keeps all of its source ids."""
    callback = ReflectionCallback(ReflectingLLM(), manager, user_id="ana")
    callback.add_interaction("Our deploy region is eu-west.", "Noted.")
    old = callback.reflect().stored[0]
    callback.add_interaction("Correction: our deploy region is us-east.", "Updated.")
    new = callback.reflect().stored[0]
    assert new.content == "deploy region: us-east"
    assert set(old.metadata["source_ids"]) <= set(new.metadata["source_ids"])
    assert manager.get(old.id, "ana").superseded_by == new.id


def test_insights_below_the_confidence_floor_are_not_stored(manager):
    """Y7: insights below min_confidence are reported as skipped, and not stored."""
    callback = ReflectionCallback(ReflectingLLM(), manager, user_id="ana", min_confidence=0.95)
    callback.add_interaction("Our deploy region is eu-west.", "Noted.")
    report = callback.reflect()
    assert report.stored == () and "confidence 0.9 < 0.95" in report.skipped[0]


def test_bad_entries_are_audited_and_good_ones_kept(manager):
    """X4: a reply with one bad entry stores the good one and audits the problem."""
    reply = (
        '{"insights": [{"type": "user_fact", "content": "likes tea", "confidence": 0.9}, '
        '{"type": "rumour", "content": "x", "confidence": 1}]}'
    )
    callback = ReflectionCallback(lambda p: reply, manager, user_id="ana")
    callback.add_interaction("hello", "hi")
    report = callback.reflect()
    assert [i.content for i in report.stored] == ["likes tea"] and "entry 2" in report.problems[0]
    assert "reflect-problem" in [r.operation for r in manager.history("ana")]


def test_threshold_must_be_positive(manager):
    """VL2: a threshold below 1 is refused, naming it."""
    with pytest.raises(ValueError, match="threshold"):
        ReflectionCallback(ReflectingLLM(), manager, threshold=0)


def test_a_reply_whose_every_insight_is_refused_is_a_failure_and_keeps_the_buffer(manager):
    """Y2: insights all missing a required field are a failed reflection, retried, no success."""
    answers = [
        '{"insights": [{"type": "user_fact", "confidence": 0.9}, '
        '{"content": "x", "confidence": 1}]}'
    ]
    callback = ReflectionCallback(
        lambda p: answers.pop(0) if answers else ReflectingLLM()(p), manager, user_id="ana"
    )
    callback.add_interaction("Our team language is Python", "ok")
    before = list(callback.buffer)
    report = callback.reflect()
    assert report.failed and callback.buffer == before and manager.list("ana") == []
    assert [i.content for i in callback.reflect().stored] == ["team language: Python"]


def test_a_failure_while_storing_is_reported_and_a_retry_stores_nothing_twice(manager):
    """Y2, Y5: a write refused midway fails the reflection (no raise); a retry keeps turns once."""
    refuse = [True]
    put = manager.store.inner.put

    def refusing(items, *arguments):
        items = list(items)
        if refuse and any(item.id.startswith("insight") for item in items):
            refuse.clear()
            raise ValueError("S2: refused once")
        put(items, *arguments)

    manager.store.inner.put = refusing
    callback = ReflectionCallback(ReflectingLLM(), manager, user_id="ana")
    callback.add_interaction("Our deploy region is eu-west.", "Noted.")
    callback.add_interaction("Our team language is Python", "ok")
    assert callback.reflect().failed and len(callback.buffer) == 2
    assert not callback.reflect().failed and callback.buffer == []
    kinds = [item.metadata["kind"] for item in manager.list("ana")]
    assert kinds.count("interaction") == 2 and sorted(i.content for i in insights(manager)) == [
        "deploy region: eu-west",
        "team language: Python",
    ]


def test_while_the_model_keeps_failing_the_buffer_and_the_prompt_stay_bounded(manager):
    """Y6: a prompt holds at most `max_batch` turns; past `max_buffer` the oldest are stored raw."""
    prompts = []

    def failing(prompt):
        prompts.append(prompt)
        raise ConnectionError("model down")

    callback = ReflectionCallback(failing, manager, user_id="ana", max_batch=4, max_buffer=10)
    for n in range(25):
        callback.add_interaction(f"message {n}", "reply")
        callback.reflect()
    assert len(callback.buffer) == 10 and callback.buffer[0].user == "message 15"
    assert max(prompt.count("[turn-") for prompt in prompts) == 4
    kept = [item.content for item in manager.list("ana") if item.metadata["kind"] == "interaction"]
    assert kept == [f"user: message {n} | agent: reply" for n in range(15)]
    assert "reflect-overflow" in [record.operation for record in manager.history("ana")]


UNREADABLE_INSIGHTS = {
    "without-type": lambda metadata: {k: v for k, v in metadata.items() if k != "type"},
    "type-as-number": lambda metadata: {**metadata, "type": 5},
    "without-sources": lambda metadata: {k: v for k, v in metadata.items() if k != "source_ids"},
}


@pytest.mark.parametrize("edit", UNREADABLE_INSIGHTS.values(), ids=UNREADABLE_INSIGHTS)
def test_a_stored_insight_that_cannot_be_read_fails_no_reflection(manager, caplog, edit):
    """Y8: an insight whose type or sources were edited away is left out of reflection, unchanged
    in the store, with a warning naming its id and Y8; reflection goes on and stores its insight."""
    callback = ReflectionCallback(ReflectingLLM(), manager, user_id="ana")
    callback.add_interaction("Our deploy region is eu-west.", "Noted.")
    [old] = callback.reflect().stored
    edited = replace(old, metadata=edit(old.metadata))
    manager.store.put([edited])
    callback.add_interaction("Correction: our deploy region is us-east.", "Updated.")
    with caplog.at_level(logging.WARNING):
        report = callback.reflect()
    assert not report.failed and [i.content for i in report.stored] == ["deploy region: us-east"]
    assert manager.get(old.id, "ana") == edited
    assert f"Y8: insight {old.id!r}" in caplog.text
