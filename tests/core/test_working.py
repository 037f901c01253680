"""Example tests for recuris.core.working.WorkingMemory (W1-W10)."""

import pytest

from recuris import StructuredSummarizer, WorkingMemory, WorkingSettings
from recuris.core.records import Step
from recuris.core.text import estimate_tokens


@pytest.fixture
def memory():
    memory = WorkingMemory(WorkingSettings(window_size=3))
    memory.init_task("register an account", ["fill email", "set password"])
    return memory


def test_goal_cannot_be_assigned_during_a_task(memory):
    """W1: assigning the goal raises, naming the rule; the goal is unchanged."""
    with pytest.raises(AttributeError, match="W1"):
        memory.goal = "something else"
    assert memory.goal == "register an account"


def test_init_task_resets_window_summary_trajectory_pins_and_progress(memory):
    """W6: init_task starts from a clean slate."""
    memory.pin("do not use MySQL")
    memory.mark_done("fill email")
    for i in range(5):
        memory.add_step(f"a{i}", "ok")
    memory.init_task("a new task")
    assert (
        memory.recent_steps,
        memory.trajectory,
        memory.summary,
        memory.pins,
        memory.subtasks,
    ) == (
        (),
        (),
        "",
        (),
        (),
    )


def test_window_keeps_only_the_last_steps(memory):
    """W2: recent_steps holds the last window_size steps, oldest first."""
    for i in range(5):
        memory.add_step(f"a{i}", "ok")
    assert [step.action for step in memory.recent_steps] == ["a2", "a3", "a4"]


def test_trajectory_keeps_every_step(memory):
    """W3: compression never removes a step from the trajectory."""
    for i in range(10):
        memory.add_step(f"a{i}", "ok")
    assert [step.index for step in memory.trajectory] == list(range(1, 11))
    assert memory.compressed_steps + memory.recent_steps == memory.trajectory


def test_overflow_is_merged_into_the_summary_not_overwriting_it(memory):
    """M1 in working memory: a second compression keeps the first one's history."""
    for i in range(8):
        memory.add_step(f"a{i}", "ok")
    assert memory.summary.startswith("done: a0 -> a1 -> a2 -> a3 -> a4")


def test_pinned_constraint_is_in_the_prompt_after_many_steps(memory):
    """W5: a pinned constraint survives every compression."""
    memory.pin("do not use MySQL")
    for i in range(50):
        memory.add_step(f"step {i}", "ok")
    assert "do not use MySQL" in memory.to_prompt_section()


def test_prompt_section_order_is_goal_pins_subtasks_summary_recent(memory):
    """The prompt section has a fixed order (document 000 §3.3)."""
    memory.pin("no MySQL")
    for i in range(5):
        memory.add_step(f"a{i}", "ok")
    section = memory.to_prompt_section()
    positions = [
        section.index(label)
        for label in (
            "Goal:",
            "Pinned constraints:",
            "Subtasks:",
            "Summary of earlier steps:",
            "Recent steps",
        )
    ]
    assert positions == sorted(positions)


def test_mark_done_shows_progress(memory):
    """Subtask progress is rendered with [x] for done and [ ] for pending."""
    memory.mark_done("fill email")
    section = memory.to_prompt_section()
    assert (
        "Subtasks: 1 of 2 done" in section
        and "[x] fill email" in section
        and "[ ] set password" in section
    )


def test_mark_done_of_an_unknown_subtask_is_refused(memory):
    """mark_done names the subtasks when given one that is not among them."""
    with pytest.raises(ValueError, match="not a subtask"):
        memory.mark_done("fly to the moon")


def test_failing_summarizer_falls_back_to_the_rule_based_one(memory):
    """W3: an exception from a pluggable summarizer loses nothing: the fallback summarizes."""

    def broken(old, steps):
        raise RuntimeError("LLM timed out")

    memory = WorkingMemory(WorkingSettings(window_size=1), summarizer=broken)
    memory.init_task("goal")
    first = memory.add_step("a", "ok")
    memory.add_step("b", "ok")
    assert memory.summary == StructuredSummarizer(memory.max_summary_chars)("", [first])
    assert memory.summarizer_failures == ["RuntimeError: LLM timed out"]


@pytest.mark.parametrize("answer", [None, "", "   ", 42])
def test_summarizer_answer_that_is_not_text_is_rejected(answer):
    """W3: untrusted summarizer output (None, empty, a number) is replaced by the fallback."""
    memory = WorkingMemory(WorkingSettings(window_size=1), summarizer=lambda old, steps: answer)
    memory.init_task("goal")
    first = memory.add_step("a", "ok")
    memory.add_step("b", "ok")
    assert memory.summary == StructuredSummarizer(memory.max_summary_chars)("", [first])
    assert len(memory.summarizer_failures) == 1


def test_summarizer_output_is_clipped_to_the_budget():
    """W4: an over-long summary from a plug-in is clipped to max_summary_chars."""
    settings = WorkingSettings(window_size=1, max_summary_chars=100)
    memory = WorkingMemory(settings, summarizer=lambda old, steps: "x" * 1000)
    memory.init_task("goal")
    memory.add_step("a", "ok")
    memory.add_step("b", "ok")
    assert len(memory.summary) == 100


def test_summarizer_receives_old_summary_and_evicted_steps():
    """A pluggable summarizer is called as (old_summary, evicted_steps)."""
    calls = []
    memory = WorkingMemory(
        WorkingSettings(window_size=2),
        summarizer=lambda old, steps: calls.append((old, steps)) or f"{old}+",
    )
    memory.init_task("goal")
    for action in "abcd":
        memory.add_step(action, "ok")
    assert [(old, [s.action for s in steps]) for old, steps in calls] == [("", ["a"]), ("+", ["b"])]


def test_failed_flag_defaults_to_the_text_rule(memory):
    """R1: the failed flag is decided on observing: by the text rule, unless the caller says."""
    assert memory.add_step("submit", "Error: 500").failed
    assert not memory.add_step("submit", "Error: 500", failed=False).failed


@pytest.mark.parametrize("window_size", [0, -1, 1.5, True])
def test_window_size_must_be_a_positive_int(window_size):
    """W4: bad configuration: window_size < 1 is a ValueError naming the rule."""
    with pytest.raises(ValueError, match="window_size"):
        WorkingMemory(WorkingSettings(window_size=window_size))


@pytest.mark.parametrize(
    "goal, error", [("", ValueError), ("   ", ValueError), (None, TypeError), (3, TypeError)]
)
def test_init_task_needs_a_non_empty_text_goal(goal, error):
    """VL1: init_task with an empty or non-string goal raises, naming the goal."""
    with pytest.raises(error, match="goal"):
        WorkingMemory().init_task(goal)


def test_bad_init_task_leaves_the_current_task_intact(memory):
    """W1: a refused init_task changes nothing already stored: the goal stays, and the steps."""
    memory.add_step("a", "ok")
    with pytest.raises(ValueError):
        memory.init_task("new goal", ["ok", ""])
    assert memory.goal == "register an account" and len(memory.trajectory) == 1


@pytest.mark.parametrize("action, error", [(None, TypeError), ("", ValueError), (["x"], TypeError)])
def test_add_step_needs_a_non_empty_text_action(memory, action, error):
    """VL1: add_step rejects a non-string or empty action, naming it, and stores nothing."""
    with pytest.raises(error, match="action"):
        memory.add_step(action, "ok")
    assert memory.trajectory == ()


def test_add_step_before_init_task_is_refused():
    """W6: there is no step without a task."""
    with pytest.raises(RuntimeError, match="init_task"):
        WorkingMemory().add_step("a", "ok")


def test_steps_are_numbered_from_one():
    """W3: steps carry their 1-based index in the task, in the order added."""
    memory = WorkingMemory()
    memory.init_task("g")
    assert memory.add_step("a", "ok") == Step(1, "a", "ok", False)


@pytest.mark.parametrize("token_budget", [0, -5, 1.5, True])
def test_the_token_budget_must_be_a_positive_int_or_none(token_budget):
    """W7: bad configuration: a token budget that is not an int >= 1 is refused, naming the rule."""
    with pytest.raises(ValueError, match="W7: token_budget"):
        WorkingSettings(token_budget=token_budget)


def test_past_the_token_budget_the_oldest_steps_are_folded_early():
    """W7: a section over the budget folds its oldest recent steps into the summary."""
    memory = WorkingMemory(WorkingSettings(window_size=6, token_budget=120))
    memory.init_task("ship the release")
    for number in range(4):
        memory.add_step(f"step {number}", "a fairly long result " * 4)
    assert len(memory.recent_steps) < 4 and memory.summary
    assert estimate_tokens(memory.to_prompt_section()) <= 120


def test_the_token_budget_never_folds_the_goal_pins_or_the_newest_step():
    """W7: however small the budget, the goal, every pin and the newest step stay in the section."""
    memory = WorkingMemory(WorkingSettings(token_budget=1))
    memory.init_task("keep this goal in view")
    memory.pin("do not use MySQL")
    for number in range(3):
        memory.add_step(f"step {number}", "ok")
    section = memory.to_prompt_section()
    assert "keep this goal in view" in section and "do not use MySQL" in section
    assert [step.action for step in memory.recent_steps] == ["step 2"]
    assert len(memory.trajectory) == 3


def test_without_a_budget_only_the_window_bounds_the_recent_steps():
    """W7: with token_budget None, steps leave the window only when it is full (W2)."""
    memory = WorkingMemory(WorkingSettings(window_size=3, token_budget=None))
    memory.init_task("g")
    for number in range(3):
        memory.add_step(f"step {number}", "a fairly long result " * 40)
    assert len(memory.recent_steps) == 3 and memory.summary == ""


def resumed(memory, settings=None, summarizer=None):
    """A working memory started again from `memory`'s reads and resumed with its steps (W8)."""
    again = WorkingMemory(settings if settings is not None else memory.settings, summarizer)
    again.init_task(memory.goal, memory.subtasks)
    for subtask in memory.done_subtasks:
        again.mark_done(subtask)
    for constraint in memory.pins:
        again.pin(constraint)
    again.summarizer_failures = list(memory.summarizer_failures)
    again.resume(memory.trajectory, len(memory.recent_steps), memory.summary)
    return again


def reads(memory):
    """Everything a working memory shows of itself."""
    return (
        memory.to_prompt_section(),
        memory.trajectory,
        memory.recent_steps,
        memory.summary,
        memory.pins,
        memory.done_subtasks,
        memory.summarizer_failures,
    )


def test_a_resumed_working_memory_is_the_same(memory):
    """W8: a task started again from another's reads and resumed renders and reads the same."""
    memory.pin("do not use MySQL")
    memory.mark_done("fill email")
    for number in range(5):
        memory.add_step(f"step {number}", "ok" if number % 2 else "error: timeout")
    assert reads(resumed(memory)) == reads(memory)


def test_a_task_resumed_under_a_smaller_window_is_folded_down(memory):
    """W8, W2: resumed under a smaller window, the extra recent steps fold into the summary."""
    for number in range(3):
        memory.add_step(f"step {number}", "ok")
    again = resumed(memory, WorkingSettings(window_size=1))
    assert [step.action for step in again.recent_steps] == ["step 2"]
    assert "step 1" in again.summary and again.trajectory == memory.trajectory


@pytest.mark.parametrize(
    "steps, recent, summary",
    [
        ([Step(2, "a", "ok", False)], 1, ""),
        ([("1", "a", "ok", False)], 1, ""),
        ([Step(1, "a", "ok", False)], 5, ""),
        ([Step(1, "a", "ok", False)], 1, 3),
    ],
)
def test_resuming_steps_that_break_a_rule_is_refused(steps, recent, summary):
    """W8: steps out of order, a window longer than the steps or a summary that is no text
    raise an error, not a bad memory."""
    memory = WorkingMemory()
    memory.init_task("g")
    with pytest.raises((ValueError, TypeError)):
        memory.resume(steps, recent, summary)


def test_only_a_task_just_started_can_be_resumed(memory):
    """W8: resume needs a task in progress with no step added yet."""
    memory.add_step("a", "ok")
    with pytest.raises(RuntimeError, match="W8"):
        memory.resume(memory.trajectory, 1, "")
    with pytest.raises(RuntimeError):
        WorkingMemory().resume([], 0, "")


def test_with_no_task_the_section_says_none():
    """W6: before any task, the section is its header and "(none)"."""
    assert WorkingMemory().to_prompt_section() == "## Working memory\n  (none)"


def test_a_pin_that_lengthens_the_section_past_the_budget_folds_the_oldest_steps():
    """W7, W8: pinning past the token budget folds the oldest recent step, as a restore
    under the same settings would, so saving and loading changes nothing."""
    settings = WorkingSettings(window_size=2, max_summary_chars=80, token_budget=58)
    memory = WorkingMemory(settings)
    memory.init_task("0")
    for action in ("0", "0", "0", "0"):
        memory.add_step(action, "")
    memory.add_step("0", "", failed=True)
    before = len(memory.recent_steps)
    memory.pin("a constraint long enough to push the section past its budget")
    assert len(memory.recent_steps) < before
    assert resumed(memory).to_prompt_section() == memory.to_prompt_section()


@pytest.mark.parametrize("summarizer", [None, lambda old, steps: "a summary in prose."])
def test_folded_notes_enter_the_summary_as_note_lines_whatever_the_summarizer(summarizer):
    """W9: `fold_notes` merges notes into the summary as `note:` lines (M5), with the rule-based
    summarizer or a pluggable one, and changes no step."""
    memory = WorkingMemory(WorkingSettings(window_size=1), summarizer=summarizer)
    memory.init_task("ship release 2")
    memory.add_step("build", "ok")
    memory.add_step("test", "ok")
    before = (memory.trajectory, memory.recent_steps)
    memory.fold_notes(["the cache is on host 7", "the token expires at noon"])
    lines = memory.summary.splitlines()
    assert [line for line in lines if line.startswith("note: the")] == [
        "note: the cache is on host 7",
        "note: the token expires at noon",
    ]
    assert (memory.trajectory, memory.recent_steps) == before


def test_notes_folded_past_the_budget_fold_the_oldest_steps_early():
    """W7, W9: notes that lengthen the summary past the token budget fold recent steps early."""
    settings = WorkingSettings(window_size=6, token_budget=92)
    memory = WorkingMemory(settings)
    memory.init_task("import the customer records")
    for number in range(4):
        memory.add_step(f"import batch {number}", "ok: 500 rows")
    memory.fold_notes(["batch 0 had no duplicate rows", "batch 1 had 1 duplicate row"])
    assert [step.index for step in memory.recent_steps] == [3, 4]
    assert estimate_tokens(memory.to_prompt_section()) <= 92
    assert resumed(memory).to_prompt_section() == memory.to_prompt_section()


@pytest.mark.parametrize("note, error", [("", ValueError), ("  ", ValueError), (3, TypeError)])
def test_a_note_that_is_not_text_is_refused_naming_the_rule_and_folds_nothing(memory, note, error):
    """W9: a note that is not non-empty text raises naming the rule; the summary is unchanged."""
    with pytest.raises(error, match="W9"):
        memory.fold_notes(["a good note", note])
    assert memory.summary == ""


def test_w10_a_goal_longer_than_a_step_reaches_every_prompt_whole():
    """W10: a goal far longer than `max_step_chars` is in every prompt the agent's model sees,
    whole."""
    from recuris import EpisodicMemory, ManualClock, RecurisAgent
    from recuris.tour.mock_environment import MockEnvironment
    from recuris.core.mock_llm import ScriptedLLM

    goal = "migrate the billing database " + ", ".join(f"then check table {n}" for n in range(12))
    working = WorkingMemory(WorkingSettings(window_size=3, max_step_chars=40))
    llm = ScriptedLLM([f"copy table {n}" for n in range(6)])
    RecurisAgent(working, EpisodicMemory(), llm, clock=ManualClock(0)).run(
        goal, "migration", MockEnvironment()
    )
    assert len(goal) > 5 * 40 and len(llm.prompts) == 7
    assert all(f"Goal: {goal}\n" in prompt for prompt in llm.prompts)
