"""Example tests for recuris.manager.tasks: the manager's task lifecycle and LLM extraction (N1-N3)."""

import pytest

from recuris import ManagerSettings, ManualClock, MemoryManager
from recuris.core.records import Step
from recuris.manager.tasks import TaskState

GOOD = (
    '{"knowledge": [{"subject": "deploy target", "value": "eu-west", '
    '"category": "project_rule", "confidence": 0.9}]}'
)


def manager_with(llm=None, **settings):
    return MemoryManager(clock=ManualClock(1_000), llm=llm, settings=ManagerSettings(**settings))


def run_task(manager, user="ana", steps=3, goal="ship release 2"):
    manager.start_task(user, goal, "release")
    for n in range(steps):
        manager.record_step(user, f"step {n}", "ok")
    return manager.finish_task(user)


def test_one_task_at_a_time_per_user():
    """N1: a second start_task before finishing is refused."""
    manager = manager_with()
    manager.start_task("ana", "first")
    with pytest.raises(ValueError, match="N1"):
        manager.start_task("ana", "second")


def test_the_task_in_progress_is_a_task_state_holding_every_recorded_step():
    """N2: a task in progress is a TaskState whose steps are every recorded step, in order, evicted or not."""
    manager = manager_with(
        working_token_budget=10
    )  # so small that steps are evicted from working memory
    task_id = manager.start_task("ana", "ship release 2", "release")
    steps = [manager.record_step("ana", f"step {n}", "ok") for n in range(4)]
    task = manager.tasks.get("ana")
    assert (task.id, task.goal, task.task_type, task.steps) == (
        task_id,
        "ship release 2",
        "release",
        steps,
    )
    assert list(manager.tasks) == ["ana"]


def test_a_task_state_reads_on_one_line():
    """N1: a TaskState's repr names the task, its goal (folded), type, step count and protected goal item."""
    task = TaskState(
        "task-1", "ship\nrelease  2", "release", [Step(1, "roll out", "ok", False)], "item-1"
    )
    assert repr(task) == (
        "TaskState('task-1', goal='ship release 2', task_type='release', steps=1, goal_item_id='item-1')"
    )


def test_finish_writes_one_episode_with_every_step_and_clears_working_memory():
    """N2: the episode holds all steps; the task's working items are gone."""
    manager = manager_with(working_token_budget=10)  # so small that steps were evicted on the way
    report = run_task(manager, steps=6)
    assert [s.action for s in report.episode.trajectory] == [f"step {n}" for n in range(6)]
    assert manager.list("ana", "working") == [] and len(manager.users.get("ana").episodic) == 1


def test_the_goal_survives_the_working_budget():
    """N1, BU2: under a tiny budget, steps are evicted but the goal item stays."""
    manager = manager_with(working_token_budget=10)
    manager.start_task("ana", "keep this goal in view")
    for n in range(5):
        manager.record_step("ana", f"step {n}", "a fairly long result " * 3)
    contents = [item.content for item in manager.list("ana", "working")]
    assert "goal: keep this goal in view" in contents and len(contents) == 2
    assert any(r.operation == "evict" for r in manager.history("ana"))


def test_extracted_knowledge_is_observed_and_promoted_on_the_second_task():
    """C1 in finish_task: extraction feeds the consolidator: one statement from two tasks becomes a fact."""
    manager = manager_with(llm=lambda prompt: GOOD)
    assert run_task(manager).facts == ()
    [fact] = run_task(manager).facts
    assert (fact.subject, fact.value, len(fact.source_ids)) == ("deploy target", "eu-west", 2)


@pytest.mark.parametrize("reply", ["not json at all", "", '{"knowledge": [{"subject": 3}]}', None])
def test_bad_extraction_loses_nothing_and_is_reported(reply):
    """N3: a malformed reply costs only the extraction; the episode is stored and the problem audited."""
    manager = manager_with(llm=lambda prompt: reply)
    report = run_task(manager)
    assert report.problems and len(manager.users.get("ana").episodic) == 1
    assert [r.operation for r in manager.history("ana", report.episode.id)][-1] == "extract-problem"


def test_an_llm_exception_is_reported_not_raised():
    """N3: an exception from the model is reported with its type."""

    def broken(prompt):
        raise TimeoutError("model took too long")

    report = run_task(manager_with(llm=broken))
    assert report.problems == ("llm raised TimeoutError: model took too long",)


def test_low_confidence_knowledge_is_reported_and_not_observed():
    """N3: a statement below min_confidence is not observed."""
    low = GOOD.replace("0.9", "0.2")
    manager = manager_with(llm=lambda prompt: low)
    run_task(manager)
    report = run_task(manager)
    assert report.facts == () and "confidence 0.2 < 0.6" in report.problems[0]


def test_llm_context_as_text_and_as_messages():
    """N5: get_llm_context gives the task and recalled memory; get_llm_messages the same as chat messages."""
    manager = manager_with()
    manager.write("deploy target: eu-west", "ana", level="semantic")
    manager.start_task("ana", "ship to the deploy target")
    manager.record_step("ana", "build", "ok")
    text = manager.get_llm_context("ana")
    assert "Goal: ship to the deploy target" in text and "deploy target: eu-west" in text
    messages = manager.get_llm_messages("ana")
    assert [m["role"] for m in messages] == ["system", "user"] and text in messages[0]["content"]


def test_a_lone_surrogate_from_the_model_is_reported_never_raised_from_finish_task():
    """N3: a subject that is not valid Unicode is a problem reported, not an exception."""
    entry = '{"subject": "region \\ud800", "value": "eu", "confidence": 0.9}'
    manager = manager_with(llm=lambda prompt: '{"knowledge": [' + entry + "]}")
    report = run_task(manager)
    assert report.problems and report.facts == () and len(manager.users.get("ana").episodic) == 1
