"""Example tests for recuris.evolution.procedural.ProceduralMemory (H1-H5)."""

import logging

import pytest

from recuris import InMemoryStore, ManualClock, MemoryItem, ProceduralMemory
from recuris.evolution.procedural import procedure_of


@pytest.fixture
def memory():
    memory = ProceduralMemory(clock=ManualClock(0))
    memory.add(
        "deploy",
        ["run tests", "build image", "roll out"],
        task_types=["deployment"],
        keywords=["release"],
    )
    return memory


def test_a_procedure_matches_on_its_task_type(memory):
    """H1: the task type triggers the procedure, and the match says why."""
    [(procedure, why)] = memory.match("anything", task_type="Deployment")
    assert (procedure.name, why) == ("deploy", "task type 'Deployment'")


def test_a_procedure_matches_on_a_keyword_in_the_query(memory):
    """H1: every token of a keyword appearing in the query triggers it."""
    assert [p.name for p, _ in memory.match("prepare the release notes")] == ["deploy"]


def test_no_trigger_no_match(memory):
    """H1: an unrelated query and type match nothing."""
    assert memory.match("write a poem", task_type="writing") == []


def test_a_procedure_needs_steps_and_a_trigger(memory):
    """H2: no steps, or no trigger, is refused."""
    with pytest.raises(ValueError, match="H2"):
        memory.add("empty", [], task_types=["x"])
    with pytest.raises(ValueError, match="H2"):
        memory.add("untriggered", ["a"])


def test_same_name_supersedes_and_keeps_the_old_one(memory):
    """H3: a new 'deploy' replaces the old in matches; the old item is kept, closed."""
    new = memory.add("Deploy", ["run tests", "canary", "roll out"], task_types=["deployment"])
    assert [p.id for p, _ in memory.match("", task_type="deployment")] == [new.id]
    old = memory.store.get("default", "procedure-1")
    assert (old.is_valid, old.superseded_by) == (False, new.id)


def test_procedure_renders_its_numbered_steps(memory):
    """H4: a procedure renders as numbered steps."""
    assert (
        memory.procedures[0].render()
        == "procedure deploy: 1. run tests; 2. build image; 3. roll out"
    )


@pytest.mark.parametrize("field", ["steps", "task_types", "keywords"])
def test_triggers_and_steps_that_are_not_lists_of_text_are_refused_naming_the_rule(memory, field):
    """H2: steps, task types and keywords are collections of text: 5 or "abc" is refused by name."""
    for bad in (5, "abc"):
        arguments = {"steps": ["build"], "task_types": ["release"], "keywords": [], field: bad}
        with pytest.raises(TypeError, match=f"H2: {field} must be a collection of str"):
            memory.add("release", **arguments)
    assert [procedure.name for procedure in memory.procedures] == ["deploy"]


def stored_procedure(**metadata) -> MemoryItem:
    """Return a procedural item as `add` stores it, its metadata changed by `metadata`."""
    kept = {"name": "deploy", "steps": ["build", "ship"], "task_types": [], "keywords": ["deploy"]}
    return MemoryItem(
        id="procedure-9",
        user_id="ana",
        level="procedural",
        content="deploy: build -> ship",
        metadata={key: value for key, value in {**kept, **metadata}.items() if value is not None},
    )


@pytest.mark.parametrize(
    "metadata, said",
    [
        ({"keywords": None}, "['keywords']"),
        ({"name": None}, "['name']"),
        ({"steps": "build"}, "steps must be a list of text"),
        ({"steps": {"build": 1}}, "steps must be a list of text"),
        ({"steps": []}, "no step"),
        ({"keywords": []}, "no trigger"),
        ({"task_types": [5]}, "task_types must be a str"),
    ],
    ids=["no-keywords", "no-name", "steps-text", "steps-object", "no-step", "no-trigger", "type-5"],
)
def test_an_item_whose_metadata_is_no_procedure_is_refused_naming_h5(metadata, said):
    """H5: name as text and steps, task_types, keywords as lists of text (H2), or ValueError."""
    with pytest.raises(ValueError, match="H5") as refused:
        procedure_of(stored_procedure(**metadata))
    assert said in str(refused.value) and "'procedure-9'" in str(refused.value)


def test_a_stored_item_that_is_no_procedure_is_left_out_with_a_warning(caplog):
    """H5: the layer loads the other procedures, warns naming the item and H5, lists it."""
    store = InMemoryStore()
    store.put([stored_procedure(keywords=None)])
    memory = ProceduralMemory(store, "ana", ManualClock(0))
    memory.add("review", ["read", "comment"], keywords=["review"])
    with caplog.at_level(logging.WARNING, "recuris.evolution.procedural"):
        loaded = ProceduralMemory(store, "ana", ManualClock(0))
    assert [procedure.name for procedure, _ in loaded.match("deploy and review")] == ["review"]
    assert loaded.skipped == ("procedure-9",)
    assert "procedure-9" in caplog.text and "H5" in caplog.text
    assert store.get("ana", "procedure-9") == stored_procedure(keywords=None)
