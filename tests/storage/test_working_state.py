"""Example tests for recuris.storage.working_state: a task's working memory as JSON (WJ1, WJ2)."""

import json

import pytest

from recuris import WorkingMemory, WorkingSettings
from recuris.storage.working_state import working_from_dict, working_to_dict


def started(*steps):
    """A task under way, with two subtasks, a window of three steps and these steps taken."""
    memory = WorkingMemory(WorkingSettings(window_size=3))
    memory.init_task("register an account", ["fill email", "set password"])
    for action in steps:
        memory.add_step(action, "ok")
    return memory


def test_a_saved_working_memory_comes_back_the_same():
    memory = started()
    """WJ1: working_from_dict(working_to_dict()) renders, reads and holds the same task."""
    memory.pin("do not use MySQL")
    memory.mark_done("fill email")
    for number in range(5):
        memory.add_step(f"step {number}", "ok" if number % 2 else "error: timeout")
    data = json.loads(json.dumps(working_to_dict(memory)))
    again = working_from_dict(data, memory.settings)
    assert again.to_prompt_section() == memory.to_prompt_section()
    assert working_to_dict(again) == data and again.trajectory == memory.trajectory


def test_the_data_keeps_the_format_stored_tasks_have_always_had():
    memory = started()
    """WJ1: the keys and the step rows are those of every task already stored."""
    memory.pin("no MySQL")
    memory.add_step("build", "ok")
    assert working_to_dict(memory) == {
        "goal": "register an account",
        "subtasks": ["fill email", "set password"],
        "done": [],
        "pins": ["no MySQL"],
        "trajectory": [[1, "build", "ok", False]],
        "recent": 1,
        "summary": "",
        "summarizer_failures": [],
    }


def test_a_state_saved_with_a_larger_window_is_folded_down_on_load():
    """WJ2, W2: loaded under a smaller window, the extra recent steps fold into the summary."""
    memory = started("step 0", "step 1", "step 2")
    again = working_from_dict(working_to_dict(memory), WorkingSettings(window_size=1))
    assert [step.action for step in again.recent_steps] == ["step 2"]
    assert "step 1" in again.summary and again.trajectory == memory.trajectory


@pytest.mark.parametrize(
    "change",
    [
        {"trajectory": [[2, "a", "ok", False]]},
        {"trajectory": [[1, "", "ok", False]]},
        {"recent": 5},
        {"summary": 3},
        {"goal": "", "trajectory": [[1, "a", "ok", False]]},
    ],
)
def test_saved_data_that_breaks_a_rule_is_refused(change):
    """WJ2: data whose steps, window or summary break a rule raises an error, not a bad memory."""
    memory = started("a")
    with pytest.raises((ValueError, TypeError)):
        working_from_dict({**working_to_dict(memory), **change})


def test_data_that_is_no_dict_is_refused_naming_the_rule():
    """WJ2: a list where the working memory's data should be raises ValueError naming WJ2."""
    with pytest.raises(ValueError, match="WJ2"):
        working_from_dict([])
