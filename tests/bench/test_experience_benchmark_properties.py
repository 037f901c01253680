"""Property tests for recuris.bench.experience: any valid task file runs, and every figure is a
count of the event log (XP1, XP2, XP7, XP8, XT1)."""

from collections import defaultdict

from hypothesis import given
from hypothesis import strategies as st

from recuris.bench.experience_benchmark import CONDITIONS, run_condition
from recuris.bench.experience_tasks import KINDS, parse
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
        # A change of world names the options that fail from its day on, one a subtask at most.
        changes = [
            {"day": day, "failing": [draw(st.sampled_from(o[:-1])) for o in plan if len(o) > 1]}
            for day in sorted(draw(st.sets(st.integers(1, days - 1), max_size=2)))
        ]
        families.append(
            {
                "changes": changes,
                "kinds": draw(st.lists(st.sampled_from(KINDS), max_size=2)),
                "name": f"family {number}",
                "task_type": draw(st.sampled_from(["deployment", "backup", "发货"])),
                "goals": goals,
                "plan": plan,
                "failing": failing,
                "days": draw(st.lists(st.integers(0, days - 1), min_size=1, max_size=5)),
            }
        )
    return {"days": days, "seed": draw(st.integers(0, 99)), "families": families}


def recount(log: list[dict], kinds: dict[str, list[str]], memory: bool) -> dict:
    """Count the figures again from the log's primitive events alone, naively; without
    memory (a fresh manager per task) no episode is stored when a task starts."""
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
    counts = defaultdict(int)
    # Episodes written by a trap, less those a later cycle forgot or merged away (XP7).
    forgotten_by = defaultdict(set)
    for event in log:
        if event["event"] in ("forgotten", "merged"):
            forgotten_by[event["day"]].add(event["episode"])
    trap_episodes = defaultdict(list)
    for number in order:
        task = tasks[number]
        family = task["family"]
        errors = [a["action"] for a in task["acts"] if looks_like_failure(a["result"])]
        at_risk = bool(met[family])
        gone = set().union(*(ids for day, ids in forgotten_by.items() if day < task["day"]))
        stored = [key for key in trap_episodes[family] if key not in gone and memory]
        assert task["warnings"] == stored
        counts["warned"] += at_risk and bool(stored)
        counts["tasks"] += 1
        counts["success"] += task["end"]["success"]
        if errors:
            repeat = errors[0] in met[family]
            counts["repeat" if repeat else "first"] += 1
            counts["repeat_at_risk"] += repeat and at_risk
            counts["repeat_warned"] += repeat and at_risk and bool(stored)
            for kind in kinds[family]:
                counts[f"repeat {kind}"] += repeat
            met[family].add(errors[0])
            trap_episodes[family].append(task["end"]["episode"])
        counts["at_risk"] += at_risk
        for kind in kinds[family]:
            counts[f"at risk {kind}"] += at_risk
        negative = any(
            s["event"] == "avoid" and s["works_here"] and s["family"] != family
            for s in task["steers"]
        )
        counts["negative"] += negative
        for kind in kinds[family]:
            counts[f"negative {kind}"] += negative
        counts["retrieved"] += len(task["shown"])
        counts["relevant"] += sum(origin == family for _, origin in task["shown"])
    return counts


@given(task_files(), st.sampled_from(CONDITIONS))
def test_any_valid_file_loads_runs_and_its_figures_are_the_logs_counts(data, condition):
    """XT1, XP2: a generated valid file loads and runs; a naive recount gives every figure."""
    suite = parse(data)
    result = run_condition(suite, condition)
    figures = result.summary()
    counts = recount(result.log, {f.name: f.kinds for f in suite.families}, condition.memory)
    assert figures["tasks"] == counts["tasks"] == sum(len(f.days) for f in suite.families)
    assert figures["first_encounter_failures"] == counts["first"]
    assert figures["repeat_failures"] == counts["repeat"] == counts["repeat_at_risk"]
    assert figures["at_risk"] == counts["at_risk"]
    assert figures["at_risk_warned"] == counts["warned"]
    assert figures["at_risk_unwarned"] == counts["at_risk"] - counts["warned"]
    assert figures["negative_transfers"] == counts["negative"]
    assert figures["episodes_retrieved"] == counts["retrieved"]
    assert result.relevant == counts["relevant"]
    assert sum(o.success for o in result.outcomes) == counts["success"]
    if counts["warned"]:
        assert figures["repeat_failure_rate_warned"] == round(
            counts["repeat_warned"] / counts["warned"], 4
        )
    for kind, by_kind in figures["kinds"].items():
        assert by_kind["at_risk"] == counts[f"at risk {kind}"]
        assert by_kind["repeat_failures"] == counts[f"repeat {kind}"]
        assert by_kind["negative_transfers"] == counts[f"negative {kind}"]


@given(task_files())
def test_a_run_is_the_same_twice(data):
    """XP1: the same file and condition give the same log."""
    suite = parse(data)
    assert run_condition(suite, CONDITIONS[1]).log == run_condition(suite, CONDITIONS[1]).log
