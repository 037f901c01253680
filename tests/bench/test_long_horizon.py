"""Example tests for recuris.bench.long_horizon: the A/B suite and its traps (LH1-LH4)."""

import pytest

from recuris import WorkingSettings
from recuris.bench.long_horizon import (
    CONDITIONS,
    CONTEXT_LIMITS,
    FIRST_LOGGED_TASK,
    FULL_HISTORY,
    ContextLimitedHistory,
    SlidingWindowMemory,
    Task,
    run_suite,
    suite,
)
from recuris.core.prompt import build_prompt
from recuris.core.text import estimate_tokens

RECURIS = "recuris (window 6 + summary + pins)"
CUT = {limit: f"full history cut to {limit:,} tokens" for limit in CONTEXT_LIMITS}


@pytest.fixture(scope="module")
def first_value_wins():
    return run_suite()


@pytest.fixture(scope="module")
def last_value_wins():
    return run_suite(latest_wins=True)


def prompt_of(memory: ContextLimitedHistory) -> str:
    return build_prompt(memory.to_prompt_section(), ())


def test_the_suite_has_at_least_twenty_tasks_of_ten_to_sixty_steps_with_every_trap():
    """LH1: at least twenty deterministic tasks; each trap appears in several of them."""
    tasks = suite()
    assert len(tasks) >= 20 and all(10 <= len(t.plan) <= 60 for t in tasks)
    assert sum(bool(t.failing) for t in tasks) >= 5 and sum(bool(t.constraints) for t in tasks) >= 5
    assert sum(bool(t.notes) for t in tasks) >= 5
    assert [t.plan for t in suite()] == [t.plan for t in tasks]
    assert [t.output for t in suite()] == [t.output for t in tasks]


def test_a_third_of_the_tasks_print_a_log_long_enough_to_outgrow_the_limits():
    """LH4: from FIRST_LOGGED_TASK on, every done step prints about 120 tokens of log: enough
    for full history to outgrow 2,048 tokens on a task of 20 steps."""
    tasks = suite()
    logged = tasks[FIRST_LOGGED_TASK:]
    assert not any(t.output for t in tasks[:FIRST_LOGGED_TASK])
    assert len(logged) >= len(tasks) // 3
    assert all(90 <= estimate_tokens(t.output) <= 130 for t in logged)
    assert all(t.act(t.plan[0]).endswith(t.output) for t in logged)


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
    settings = WorkingSettings(window_size=3, token_budget=None)
    memory = SlidingWindowMemory(settings)
    memory.init_task("the goal", ["a", "b"])
    memory.add_step("a", "ok")
    assert "Goal: the goal" in memory.to_prompt_section()
    # As many steps again as the window holds: the statement scrolls out first, the earliest
    # step after it; the latest step stays.
    for n in range(settings.window_size):
        memory.add_step(f"later {n}", "ok")
    section = memory.to_prompt_section()
    assert "Goal:" not in section
    assert "a -> ok" not in section and f"later {settings.window_size - 1} -> ok" in section


def test_recuris_succeeds_where_the_baselines_fail_under_the_first_value_rule(first_value_wins):
    """LH1, LH2, first value wins: recuris succeeds on
    every task; full history fails only on stale values."""
    results = first_value_wins
    ours = results[RECURIS]
    full = results["full history"]
    window = results["sliding window (12 messages)"]
    assert set(results) == set(CONDITIONS) and ours.runs == full.runs == len(suite())
    assert ours.success_rate == 1.0 and ours.success_rate > full.success_rate > window.success_rate
    assert ours.pollution == 0.0 < full.pollution
    assert [why for why, _ in full.failures] == ["stale value used"]
    assert ours.tokens_per_step < full.tokens_per_step


def test_under_the_last_value_rule_uncut_full_history_ties_and_only_the_window_fails(
    last_value_wins,
):
    """LH2, last value wins: full history succeeds too, if nothing cuts it;
    the window fails only by leaving its plan undone."""
    results = last_value_wins
    ours = results[RECURIS]
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


def test_a_history_under_its_context_limit_is_shown_whole():
    """LH4: while the prompt fits the limit, nothing is dropped: the statement and every step."""
    memory = ContextLimitedHistory(4_096, FULL_HISTORY)
    memory.init_task("the goal", ["a", "b"])
    memory.pin("do not use MySQL")
    for action in ["a", "b"]:
        memory.add_step(action, "ok")
    section = memory.to_prompt_section()
    assert "Goal: the goal" in section and "- do not use MySQL" in section
    assert "a -> ok" in section and "b -> ok" in section


def test_the_cut_drops_the_task_statement_first_and_keeps_the_newest_steps():
    """LH4: over the limit, the task statement (goal, pins, plan) goes before any step."""
    memory = ContextLimitedHistory(100, FULL_HISTORY)
    memory.init_task("the goal", [f"step {n}" for n in range(6)])
    memory.pin("do not use MySQL")
    for n in range(6):
        memory.add_step(f"step {n}", "ok: done")
    section = memory.to_prompt_section()
    assert estimate_tokens(prompt_of(memory)) <= 100
    assert "Goal:" not in section and "MySQL" not in section and "[ ]" not in section
    assert "step 0 -> ok: done" in section and "step 5 -> ok: done" in section


def test_the_cut_drops_the_oldest_steps_whole_and_every_prompt_fits_the_limit():
    """LH4: past the statement, the oldest steps go one by one, each whole; the prompt fits."""
    memory = ContextLimitedHistory(200, FULL_HISTORY)
    memory.init_task("the goal", ["a"])
    for n in range(1, 30):
        memory.add_step(f"action {n}", f"result {n} " + "x" * 40)
        shown = [n for n in range(1, 30) if f"action {n} -> result {n} " in prompt_of(memory)]
        assert estimate_tokens(prompt_of(memory)) <= 200
        assert shown == list(range(shown[0], n + 1))  # the newest steps, none cut in half
    assert shown[0] > 1 and "Goal:" not in prompt_of(memory)


def test_a_kept_statement_survives_the_cut_and_the_failed_step_goes_instead():
    """LH4, keep_statement: the statement stays (the system message holds it); the oldest
    steps, a failed one among them, are dropped."""
    memory = ContextLimitedHistory(120, FULL_HISTORY, keep_statement=True)
    memory.init_task("the goal", ["a", "b"])
    memory.pin("do not use MySQL")
    memory.add_step("connect to the replica", "error: the connection timed out")
    for n in range(10):
        memory.add_step(f"action {n}", "ok: done")
    section = memory.to_prompt_section()
    assert "Goal: the goal" in section and "- do not use MySQL" in section
    assert "[failed]" not in section and "action 9 -> ok: done" in section
    assert estimate_tokens(prompt_of(memory)) <= 120


def test_the_context_limit_must_be_a_positive_count():
    """LH4: a context limit below 1 token is refused, naming the rule."""
    with pytest.raises(ValueError, match="LH4: context_limit"):
        ContextLimitedHistory(0)


def test_under_a_context_limit_full_history_loses_the_goal_on_the_logged_tasks(last_value_wins):
    """LH2, LH4, last value wins: uncut full history succeeds on every task; cut to 4,096 or
    2,048 tokens it stops early on logged tasks (the statement dropped), more at 2,048."""
    results = last_value_wins
    tight = results[CUT[2_048]]
    loose = results[CUT[4_096]]
    assert results["full history"].success_rate == results[RECURIS].success_rate == 1.0
    assert results["full history"].largest_prompt > 4_096
    assert 1.0 > loose.success_rate > tight.success_rate
    assert (
        [why for why, _ in tight.failures]
        == [why for why, _ in loose.failures]
        == ["plan unfinished"]
    )
    assert dict(tight.failures)["plan unfinished"] <= len(suite()) - FIRST_LOGGED_TASK
    assert loose.largest_prompt <= 4_096 and tight.largest_prompt <= 2_048


def test_recuris_prompt_stays_under_the_tighter_limit_on_every_task(first_value_wins):
    """LH4: recuris's largest prompt fits 2,048 tokens, where full history's does not: a
    client with either limit would never cut it."""
    results = first_value_wins
    assert results[RECURIS].largest_prompt < 2_048 < results["full history"].largest_prompt


def test_with_the_statement_kept_the_cut_removes_the_failed_path_instead():
    """LH2, LH4: with the task statement in the system message, the cut drops the early
    failed step, and the mock retries the failed path on logged tasks."""
    kept = {"kept": lambda: ContextLimitedHistory(2_048, FULL_HISTORY, keep_statement=True)}
    results = run_suite(lambda: suite()[FIRST_LOGGED_TASK:], latest_wins=True, conditions=kept)
    assert "failed path retried" in dict(results["kept"].failures)


def test_a_plan_step_with_a_slot_is_done_by_the_action_that_fills_it(first_value_wins):
    """LH2: recuris's agent ticks "smoke-test the api on port {api port}" when the action gives
    the port, so each task smoke-tests once: as many uses of the slot as tasks that reach it."""
    ours = first_value_wins[RECURIS]
    reaching = [task for task in suite() if any("{" in step for step in task.plan)]
    assert ours.value_uses == len(reaching)
