"""Example tests for recuris.bench.experience_tasks: the task file, its checks, its worlds."""

import copy
import dataclasses
import json
import re

import pytest
from layout import ROOT

from recuris.bench.experience_tasks import (
    BUILT_IN,
    KINDS,
    MAX_SUBTASKS,
    TaskFileError,
    World,
    instances,
    load,
    parse,
    part,
    respaced,
)
from recuris.core.text import looks_like_failure


def valid() -> dict:
    return {
        "name": "tiny",
        "days": 30,
        "families": [
            {
                "name": "deploy",
                "task_type": "deployment",
                "goals": ["deploy the shop", "ship the shop live"],
                "plan": [["build"], ["push to registry", "push to mirror"], ["test"]],
                "failing": ["push to registry"],
                "violating": [],
                "constraints": ["do not use the old cluster"],
                "days": [3, 0, 9],
            },
            {
                "name": "backup",
                "task_type": "backup",
                "goals": ["back up the orders database"],
                "plan": [["dump it"], ["copy it"]],
                "days": [0],
            },
        ],
    }


def test_a_valid_file_loads_with_its_defaults():
    """XT1: a valid file loads; absent lists default to empty; days are sorted."""
    suite = parse(valid())
    deploy = suite.families[0]
    assert suite.name == "tiny" and suite.days == 30 and len(suite.families) == 2
    assert deploy.days == (0, 3, 9) and deploy.failing == {"push to registry"}
    assert suite.families[1].failing == frozenset() and suite.families[1].constraints == ()
    assert deploy.subtasks()[1] == "push to registry | push to mirror"


def _broken(path: str, value):
    data = valid()
    *parents, last = path.split(".")
    target = data
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    if value is KeyError:
        del target[int(last) if last.isdigit() else last]
    elif last.isdigit():
        target[int(last)] = value
    else:
        target[last] = value
    return data


REFUSALS = [
    ("days", KeyError, "days: is required"),
    ("days", 0, "days: must be a whole number"),
    ("days", True, "days: must be a whole number"),
    ("families", KeyError, "families: is required"),
    ("families", [], "families: must not be empty"),
    ("families", {}, "families: must be a list"),
    ("colour", "red", "colour: is not a known field"),
    ("name", "", "name: must be non-empty text"),
    ("families.0", [], "families[0]: must be an object"),
    ("families.0.name", KeyError, "families[0].name: is required"),
    ("families.0.name", 3, "families[0].name: must be non-empty text"),
    ("families.1.name", "deploy", "families[1].name: 'deploy' already names families[0]"),
    ("families.0.task_type", KeyError, "families[0].task_type: is required"),
    ("families.0.task_type", "  ", "families[0].task_type: must be non-empty text"),
    ("families.0.goals", KeyError, "families[0].goals: is required"),
    ("families.0.goals", [], "families[0].goals: must not be empty"),
    ("families.0.goals", ["ok", None], "families[0].goals[1]: must be non-empty text"),
    ("families.0.goals", ["bad \ud800"], "families[0].goals[0]: must be valid Unicode"),
    ("families.0.plan", KeyError, "families[0].plan: is required"),
    ("families.0.plan", [], "families[0].plan: must not be empty"),
    ("families.0.plan", [["a"], []], "families[0].plan[1]: must not be empty"),
    ("families.0.plan", [["a"], "b"], "families[0].plan[1]: must be a list"),
    ("families.0.plan", [["a | b"]], "families[0].plan[0][0]: must not hold '|'"),
    ("families.0.plan", [["finish"]], "families[0].plan[0][0]: FINISH is the model's reply"),
    ("families.0.plan", [["a"], ["b", "A"]], "families[0].plan[1][1]: 'A' is already an option"),
    ("families.0.plan", [[f"s{n}"] for n in range(MAX_SUBTASKS + 1)], "families[0].plan: has"),
    ("families.0.failing", ["nope"], "families[0].failing[0]: 'nope' is no option of the plan"),
    ("families.0.failing", "build", "families[0].failing: must be a list"),
    ("families.0.failing", ["build"], "families[0].plan[0]: every option fails"),
    ("families.0.violating", ["nope"], "families[0].violating[0]: 'nope' is no option"),
    ("families.0.violating", ["test"], "families[0].plan[2]: every option fails or breaks"),
    ("families.0.constraints", "pin", "families[0].constraints: must be a list"),
    ("families.0.constraints", [""], "families[0].constraints[0]: must be non-empty text"),
    ("families.0.days", KeyError, "families[0].days: is required"),
    ("families.0.days", [], "families[0].days: must not be empty"),
    ("families.0.days", [1, 30], "families[0].days[1]: must lie in [0, 30)"),
    ("families.0.days", [1.5], "families[0].days[0]: must be a whole number of days"),
    ("families.0.days", [False], "families[0].days[0]: must be a whole number of days"),
    ("families.0.extra", 1, "families[0].extra: is not a known field"),
]


@pytest.mark.parametrize(("path", "value", "message"), REFUSALS, ids=[r[2][:40] for r in REFUSALS])
def test_an_invalid_file_is_refused_naming_the_field(path, value, message):
    """XT1, XT2: each invalid field is refused, the message opening with the field's path."""
    with pytest.raises(TaskFileError) as refused:
        parse(_broken(path, value))
    assert str(refused.value).startswith(message)


def test_a_file_that_is_not_json_is_refused(tmp_path):
    """XT1: text that is not JSON is refused as such, not with a traceback."""
    path = tmp_path / "tasks.json"
    path.write_text("{families: }", encoding="utf-8")
    with pytest.raises(TaskFileError, match="not JSON"):
        load(path)


def test_instances_are_ordered_by_day_family_and_number_with_phrasings_in_turn():
    """XT3: one instance per scheduled day, by day then file order; phrasing n mod count."""
    stream = instances(parse(valid()))
    assert [(task.day, task.family.name, task.number) for task in stream] == [
        (0, "deploy", 0),
        (0, "backup", 0),
        (3, "deploy", 1),
        (9, "deploy", 2),
    ]
    assert [task.goal for task in stream if task.family.name == "deploy"] == [
        "deploy the shop",
        "ship the shop live",
        "deploy the shop",
    ]


def test_a_world_answers_by_its_family_rules():
    """XT4: a failing option errs, a violating one is recorded, an unknown action is nothing."""
    data = valid()
    data["families"][0]["violating"] = ["push to mirror"]
    data["families"][0]["plan"][1].append("push by hand")
    world = World(parse(data).families[0])
    assert looks_like_failure(world("push to registry"))
    assert not looks_like_failure(world("Push to Mirror"))
    assert world.violations == ["push to mirror"] and world.errors == ["push to registry"]
    assert not looks_like_failure(world("sing a song")) and world.done() == [False, False, False]


def test_a_run_succeeds_iff_the_plan_is_done_without_error_or_violation():
    """XT5: every subtask by a working option, no failing option run, no constraint broken."""
    family = parse(valid()).families[0]
    clean = World(family)
    for action in ("build", "push to mirror", "test"):
        clean(action)
    assert clean.succeeded()
    erred = World(family)
    for action in ("build", "push to registry", "push to mirror", "test"):
        erred(action)
    assert all(erred.done()) and not erred.succeeded()
    short = World(family)
    short("build")
    assert not short.succeeded()


def test_the_built_in_suite_provokes_every_case():
    """XT1: the shipped suite loads: 20+ families of 10+ instances over a year, CJK, twins."""
    suite = load(BUILT_IN)
    assert len(suite.families) >= 20 and suite.days == 365
    assert all(len(family.days) >= 10 for family in suite.families)
    # The test part's goals are fewer and far apart in words; the tuning part holds both that
    # kind, its paraphrased families, and families of many alike goals.
    assert all(len(set(family.goals)) >= 4 for family in suite.families)
    tuning = part(suite, "tuning").families
    assert sum(len(set(family.goals)) >= 10 for family in tuning) >= 20
    assert any("paraphrased" in family.kinds for family in tuning)
    assert max(day for family in suite.families for day in family.days) > 300
    assert sum(not family.task_type.isascii() for family in suite.families) >= 3
    twins = [
        (one.name, other.name)
        for one in suite.families
        for other in suite.families
        if one is not other
        and one.plan == other.plan
        and any(other.works(action) for action in one.failing)
    ]
    assert len(twins) >= 4
    silences = [
        max(b - a for a, b in zip(f.days[:-1], f.days[1:], strict=True)) for f in suite.families
    ]
    assert sum(gap >= 90 for gap in silences) >= 3


def test_the_built_in_suite_is_shipped_with_the_package():
    """XT1: pyproject's package data names the suite's file, so an install can load it."""
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '[tool.setuptools.package-data]\n"recuris.bench" = ["data/*.json"]' in project
    assert json.loads(BUILT_IN.read_text(encoding="utf-8"))["families"]


def test_parse_does_not_change_its_input():
    """XT1: checking a file reads it only."""
    data = valid()
    before = copy.deepcopy(data)
    parse(data)
    assert data == before


def test_each_instance_shuffles_its_options_by_the_seed_alone():
    """XT6: an instance's order is its family's options shuffled, the same for the same seed
    whatever other families the file holds; another seed gives another order somewhere."""
    data = valid()
    data["families"][0]["plan"][1] += ["push by hand", "push by ftp"]
    stream = instances(parse(data))
    again = copy.deepcopy(data)
    again["families"].pop()
    alone = [task.plan for task in instances(parse(again))]
    assert [task.plan for task in stream if task.family.name == "deploy"] == alone
    options = sorted(data["families"][0]["plan"][1])
    assert all(sorted(task.plan[1]) == options for task in stream if task.family.name == "deploy")
    other = parse({**data, "seed": 7})
    assert [task.plan for task in instances(other)] != [task.plan for task in stream]
    assert stream[0].subtasks()[1] == " | ".join(stream[0].plan[1])


def test_a_world_changes_on_its_days_and_changes_back():
    """XT7: the failing options are the last change's on or before the day."""
    data = valid()
    data["families"][0]["changes"] = [
        {"day": 5, "failing": ["push to mirror"]},
        {"day": 8, "failing": ["push to registry"]},
    ]
    family = parse(data).families[0]
    assert [sorted(family.failing_on(day)) for day in (0, 4, 5, 7, 8, 29)] == [
        ["push to registry"],
        ["push to registry"],
        ["push to mirror"],
        ["push to mirror"],
        ["push to registry"],
        ["push to registry"],
    ]
    assert looks_like_failure(World(family, 6)("push to mirror"))
    assert family.works("push to registry", 6) and not family.works("push to registry", 8)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"day": 5, "failing": ["push to registry", "push to mirror"]}, "every option fails"),
        ({"day": 5, "failing": ["push by hand"]}, "is no option of the plan"),
        ({"day": 40, "failing": []}, "must lie in [0, 30)"),
        ({"day": 5}, "changes[0].failing: is required"),
    ],
)
def test_a_change_of_world_is_checked_like_the_first_world(change, message):
    """XT1, XT7: a change must name options of the plan and keep a working one each step."""
    data = valid()
    data["families"][0]["changes"] = [change]
    with pytest.raises(TaskFileError, match=re.escape(message)):
        parse(data)


def test_changes_must_come_in_order_of_day():
    """XT1, XT7: a change on or before the change before it is refused, naming its day."""
    data = valid()
    data["families"][0]["changes"] = [{"day": 5, "failing": []}, {"day": 5, "failing": []}]
    with pytest.raises(TaskFileError, match=r"changes\[1\]\.day: must come after"):
        parse(data)


def test_a_family_lies_in_one_known_part_with_known_kinds():
    """XT8: part defaults to test; an unknown part or kind is refused; `part` keeps order."""
    data = valid()
    data["families"][1]["part"] = "tuning"
    data["families"][1]["kinds"] = ["no twin", "paraphrased"]
    suite = parse(data)
    assert [family.part for family in suite.families] == ["test", "tuning"]
    assert [f.name for f in part(suite, "tuning").families] == ["backup"]
    assert part(suite, "test").seed == suite.seed
    for field, value in (("part", "holdout"), ("kinds", ["near twin"])):
        broken = valid()
        broken["families"][0][field] = value
        with pytest.raises(TaskFileError, match=f"families\\[0\\].{field}"):
            parse(broken)


def test_the_built_in_split_has_every_kind_in_its_test_part():
    """XT8: the built-in suite's test part holds every kind, at least 30 instances of each,
    twins sharing no telling word, twins failing on both sides, worlds that change back."""
    suite = load(BUILT_IN)
    test = part(suite, "test").families
    assert suite.seed == 2026 and part(suite, "tuning").families
    for kind in KINDS:
        assert sum(len(f.days) for f in test if kind in f.kinds) >= 30, kind
    twins = [f for f in test if "twins" in f.kinds]
    assert all(f.failing for f in twins) and len(twins) >= 6
    assert sum(len(f.changes) >= 2 for f in test) >= 4
    gaps = [b - a for f in test for a, b in zip(f.days, f.days[1:], strict=False)]
    assert min(gaps) <= 3 and any(14 <= gap <= 30 for gap in gaps) and max(gaps) >= 90


def test_respaced_families_come_back_within_the_gaps_the_first_before_the_shortest():
    """XT9: every gap from shortest to longest, the first day before shortest, as many as the
    suite's days hold; the same suite gives the same days."""
    suite = load(BUILT_IN)
    again = respaced(suite, 20, 45)
    assert again == respaced(suite, 20, 45) and again.seed == suite.seed
    for family in again.families:
        gaps = [b - a for a, b in zip(family.days, family.days[1:], strict=False)]
        assert family.days[0] < 20 and all(20 <= gap <= 45 for gap in gaps)
        assert family.days[-1] + 45 >= suite.days > family.days[-1]


def test_respacing_leaves_out_worlds_that_change_and_keeps_the_rest_in_order():
    """XT9: a family whose world changes on given days is left out; the others keep their
    order and everything but their days."""
    data = valid()
    data["families"][1]["changes"] = [{"day": 5, "failing": []}]
    suite = parse(data)
    [family] = respaced(suite, 2, 3).families
    assert family == dataclasses.replace(suite.families[0], days=family.days)


def test_respacing_draws_each_family_by_its_name_alone():
    """XT9: adding a family before another moves none of the other's days."""
    data = valid()
    alone = respaced(parse({**data, "families": data["families"][1:]}), 2, 5)
    both = respaced(parse(data), 2, 5)
    assert both.families[1].days == alone.families[0].days


@pytest.mark.parametrize("gaps", [(0, 5), (6, 5), (-1, 2)])
def test_gaps_that_cannot_be_kept_are_refused_naming_the_rule(gaps):
    """XT9: 1 <= shortest <= longest."""
    with pytest.raises(ValueError, match="XT9"):
        respaced(parse(valid()), *gaps)
