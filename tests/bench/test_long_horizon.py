"""Example tests for recuris.bench.long_horizon: the A/B suite and its traps (LH1-LH3)."""

from recuris import WorkingSettings
from recuris.bench.long_horizon import CONDITIONS, SlidingWindowMemory, Task, run_suite, suite


def test_the_suite_has_at_least_twenty_tasks_of_ten_to_sixty_steps_with_every_trap():
    """LH1: 24 deterministic tasks; each trap appears in several of them."""
    tasks = suite()
    assert len(tasks) >= 20 and all(10 <= len(t.plan) <= 60 for t in tasks)
    assert sum(bool(t.failing) for t in tasks) >= 5 and sum(bool(t.constraints) for t in tasks) >= 5
    assert sum(bool(t.notes) for t in tasks) >= 5
    assert [t.plan for t in suite()] == [t.plan for t in tasks]


def test_success_requires_the_plan_done_without_violation_or_stale_value():
    """LH2: the judge counts done steps, constraint breaks, stale values and errors."""
    task = Task(goal="g", plan=["a", "b | c"], failing={"b"}, forbidden="MySQL", stale={"c"})
    for action in ["a", "b", "b"]:
        task.act(action)
    assert not task.succeeded()  # two errors and "b | c" never done
    clean = Task(goal="g", plan=["a", "b | c"], failing={"b"})
    for action in ["a", "b", "c"]:
        clean.act(action)
    assert clean.succeeded()


def test_the_sliding_window_loses_the_task_statement():
    """LH3: the baseline shows the goal only while the first message is in the window."""
    memory = SlidingWindowMemory(WorkingSettings(window_size=3, token_budget=None))
    memory.init_task("the goal", ["a", "b"])
    memory.add_step("a", "ok")
    assert "Goal: the goal" in memory.to_prompt_section()
    for action in ["x", "y", "z"]:
        memory.add_step(action, "ok")
    section = memory.to_prompt_section()
    assert "Goal:" not in section and section.count("->") == 2


def test_recuris_succeeds_where_the_baselines_fail_under_the_first_value_rule():
    """LH1, LH2, first value wins: recuris succeeds on
    every task; full history fails only on stale values."""
    results = run_suite()
    ours = results["recuris (window 6 + summary + pins)"]
    full = results["full history"]
    window = results["sliding window (12 messages)"]
    assert set(results) == set(CONDITIONS) and ours.runs == full.runs == 24
    assert ours.success_rate == 1.0 and ours.success_rate > full.success_rate > window.success_rate
    assert ours.pollution == 0.0 < full.pollution
    assert [why for why, _ in full.failures] == ["stale value used"]
    assert ours.tokens_per_step < full.tokens_per_step


def test_under_the_last_value_rule_full_history_ties_and_only_the_window_fails():
    """LH2, last value wins: full history succeeds too;
    the window fails only by leaving its plan undone."""
    results = run_suite(latest_wins=True)
    ours = results["recuris (window 6 + summary + pins)"]
    full = results["full history"]
    assert ours.success_rate == full.success_rate == 1.0 and full.pollution == 0.0
    assert [why for why, _ in results["sliding window (12 messages)"].failures] == [
        "plan unfinished"
    ]
    assert ours.tokens_per_step < full.tokens_per_step


def test_each_failure_names_the_rule_it_broke():
    """LH2: a run reports the first rule it broke, or nothing when it succeeded."""
    task = Task(goal="g", plan=["a", "b"], failing={"b"}, forbidden="MySQL", stale={"c"})
    assert task.failure() == "plan unfinished"
    task.act("b")
    task.act("b")
    assert task.failure() == "failed path retried"
    task.act("c")
    assert task.failure() == "stale value used"
    task.act("use MySQL")
    assert task.failure() == "constraint broken"
