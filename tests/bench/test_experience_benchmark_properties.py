"""Property tests for recuris.bench.experience: any valid task file runs, and every figure is a
count of the event log (XP1, XP2, XT1)."""

from collections import defaultdict

from hypothesis import given
from hypothesis import strategies as st

from recuris.bench.experience_benchmark import CONDITIONS, forgetting_horizon, run_condition
from recuris.bench.experience_tasks import parse
from recuris.core.text import looks_like_failure

WORDS = ["deploy", "shop", "eu", "us", "backup", "orders", "ship", "the", "发货", "订单"]


@st.composite
def task_files(draw) -> dict:
    """A valid task file: a few families, plans whose subtasks keep one working option."""
    days = draw(st.integers(5, 40))
    families = []
    for number in range(draw(st.integers(1, 3))):
        plan = []
        failing = []
        for step in range(draw(st.integers(1, 3))):
            count = draw(st.integers(1, 3))
            options = [
                f"step {step} way {way} of f{draw(st.integers(0, 1))}" for way in range(count)
            ]
            options = list(dict.fromkeys(options))
            plan.append(options)
            if len(options) > 1:
                failing += draw(st.lists(st.sampled_from(options[:-1]), max_size=1))
        goals = draw(
            st.lists(
                st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
                min_size=1,
                max_size=3,
            )
        )
        families.append(
            {
                "name": f"family {number}",
                "task_type": draw(st.sampled_from(["deployment", "backup", "发货"])),
                "goals": goals,
                "plan": plan,
                "failing": failing,
                "days": draw(st.lists(st.integers(0, days - 1), min_size=1, max_size=5)),
            }
        )
    return {"days": days, "families": families}


def recount(log: list[dict], horizon: float) -> dict:
    """Count the figures again from the log's primitive events alone, naively."""
    tasks = {}
    order = []
    for event in log:
        if event["event"] == "task":
            tasks[event["task"]] = {**event, "acts": [], "steers": [], "shown": set()}
            order.append(event["task"])
        elif event["event"] == "act":
            tasks[event["task"]]["acts"].append(event)
        elif event["event"] in ("avoid", "follow"):
            tasks[event["task"]]["steers"].append(event)
        elif event["event"] == "retrieve":
            tasks[event["task"]]["shown"].update(tuple(pair) for pair in event["episodes"])
        elif event["event"] == "end":
            tasks[event["task"]]["end"] = event
    met = defaultdict(set)
    seen_on = {}
    counts = defaultdict(int)
    for number in order:
        task = tasks[number]
        family = task["family"]
        errors = [a["action"] for a in task["acts"] if looks_like_failure(a["result"])]
        at_risk = bool(met[family])
        silent = task["day"] - seen_on[family] if family in seen_on else None
        seen_on[family] = task["day"]
        counts["tasks"] += 1
        counts["success"] += task["end"]["success"]
        if errors:
            repeat = errors[0] in met[family]
            counts["repeat" if repeat else "first"] += 1
            counts["repeat_at_risk"] += repeat and at_risk
            counts["repeat_within"] += (
                repeat and at_risk and silent is not None and silent <= horizon
            )
            met[family].add(errors[0])
        counts["at_risk"] += at_risk
        counts["within"] += at_risk and silent is not None and silent <= horizon
        counts["negative"] += any(
            s["event"] == "avoid" and s["works_here"] and s["family"] != family
            for s in task["steers"]
        )
        counts["retrieved"] += len(task["shown"])
        counts["relevant"] += sum(origin == family for _, origin in task["shown"])
    return counts


@given(task_files(), st.sampled_from(CONDITIONS))
def test_any_valid_file_loads_runs_and_its_figures_are_the_logs_counts(data, condition):
    """XT1, XP2: a generated valid file loads and runs; a naive recount gives every figure."""
    suite = parse(data)
    result = run_condition(suite, condition)
    horizon = forgetting_horizon()
    figures = result.summary(horizon)
    counts = recount(result.log, horizon)
    assert figures["tasks"] == counts["tasks"] == sum(len(f.days) for f in suite.families)
    assert figures["first_encounter_failures"] == counts["first"]
    assert figures["repeat_failures"] == counts["repeat"] == counts["repeat_at_risk"]
    assert figures["at_risk"] == counts["at_risk"]
    assert figures["within_horizon"] == counts["within"]
    assert figures["negative_transfers"] == counts["negative"]
    assert figures["episodes_retrieved"] == counts["retrieved"]
    assert result.relevant == counts["relevant"]
    assert sum(o.success for o in result.outcomes) == counts["success"]
    if counts["within"]:
        assert figures["repeat_failure_rate_within_horizon"] == round(
            counts["repeat_within"] / counts["within"], 4
        )


@given(task_files())
def test_a_run_is_the_same_twice(data):
    """XP1: the same file and condition give the same log."""
    suite = parse(data)
    assert run_condition(suite, CONDITIONS[1]).log == run_condition(suite, CONDITIONS[1]).log
