"""Example tests for recuris.evolution.procedural.ProceduralMemory (H1-H4)."""

import pytest

from recuris import ManualClock, ProceduralMemory


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
