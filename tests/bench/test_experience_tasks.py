"""Example tests for recuris.bench.experience_tasks: the task file, its checks, its worlds."""

import copy
import json

import pytest
from layout import ROOT

from recuris.bench.experience_tasks import (
    BUILT_IN,
    MAX_SUBTASKS,
    TaskFileError,
    World,
    instances,
    load,
    parse,
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
    assert all(len(set(family.goals)) >= 10 for family in suite.families)
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
