"""Example tests for recuris.bench.experience: the runner, its log, its figures (XP1-XP5)."""

import io
import json
import xml.etree.ElementTree as ElementTree
from contextlib import redirect_stdout

import pytest
from power_law import PowerLaw

from recuris.bench import experience_benchmark
from recuris.bench.command import main as bench_main
from recuris.bench.experience_benchmark import (
    CONDITIONS,
    Condition,
    forgetting_horizon,
    main,
    run,
    run_condition,
    svg,
    SHARED_TASK_TYPE,
)
from recuris.bench.experience_tasks import parse, respaced
from recuris.core.clock import DAY
from recuris.core.decay import DecayManager, DecaySettings, Exponential
from recuris.core.records import Episode

KEYS = (
    "success_rate",
    "first_encounter_failure_rate",
    "repeat_failure_rate",
    "negative_transfer_rate",
    "retrieval_precision",
    "prompt_tokens_per_step",
)


def twins() -> dict:
    """Two families alike in words whose worlds disagree, and one quiet family.

    Seed 39 orders the options so: the EU instances put the registry first but the last, the
    US instances put it first, and both backups put the stream tool first.
    """
    plan = [["build the image"], ["push to the registry", "push to the mirror"], ["run tests"]]
    return {
        "days": 60,
        "seed": 39,
        "families": [
            {
                "name": "eu",
                "task_type": "deployment",
                "goals": ["deploy the shop to the EU cluster", "roll out the shop on EU prod"],
                "plan": plan,
                "failing": ["push to the registry"],
                "days": [0, 2, 4, 6],
            },
            {
                "name": "us",
                "task_type": "deployment",
                "goals": ["deploy the shop to the US cluster"],
                "plan": plan,
                "failing": ["push to the mirror"],
                "days": [1, 5],
            },
            {
                "name": "backup",
                "task_type": "backup",
                "goals": ["back up the orders database"],
                "plan": [["dump with the stream tool", "dump with the snapshot tool"]],
                "failing": ["dump with the stream tool"],
                "days": [0, 50],
            },
        ],
    }


def _json(*arguments: str) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main([*arguments, "--json"]) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def everything() -> dict:
    return _json("--quick")


@pytest.fixture(scope="module")
def quick(everything) -> dict:
    """The figures of the test part."""
    return everything["parts"]["test"]


def test_the_quick_run_is_the_same_twice(everything):
    """XP1: the same suite and model give the same figures, every one."""
    assert _json("--quick") == everything


def test_the_test_part_comes_first_and_the_seed_is_said(everything):
    """XP1, XT8: both parts are run, the test part first, and the output names the seed."""
    assert list(everything["parts"]) == ["test", "tuning"]
    assert everything["seed"] == 2026


def test_json_gives_each_condition_the_named_figures(quick):
    """XP2: --json prints one object; each condition has the figures the chapter names."""
    assert list(quick["conditions"]) == [condition.name for condition in CONDITIONS]
    for figures in quick["conditions"].values():
        assert set(KEYS) <= set(figures)


def test_the_store_size_is_given_for_every_day_and_ends_at_the_final_size(quick):
    """XP5: each condition's store size over time has one entry a simulated day, its last
    the final size; without forgetting it never shrinks."""
    for name, series in quick["store_size_by_day"].items():
        assert [day for day, _ in series] == list(range(len(series)))
        assert series[-1][1] == quick["conditions"][name]["store_size_final"]
    kept = [size for _, size in quick["store_size_by_day"]["default, no forgetting cycles"]]
    assert kept == sorted(kept)


def test_without_memory_a_trap_is_met_again_only_where_the_order_puts_it_first(everything):
    """XP4, XP5, XT6: with a fresh manager per task and shuffled options, some tasks at risk
    repeat their trap and some do not; no task is warned and none is steered."""
    for figures in everything["parts"].values():
        floor = figures["conditions"]["no episodic memory"]
        assert 0 < floor["repeat_failure_rate"] < 1 and floor["negative_transfer_rate"] == 0.0
        assert floor["retrieval_precision"] is None and floor["store_size_max"] == 0
        assert floor["at_risk_warned"] == 0 and floor["at_risk_unwarned"] == floor["at_risk"]


def test_each_trap_is_a_first_encounter_once_and_a_repeat_after():
    """XP4: in every condition each (family, trap) is first met once, and only then repeats;
    first encounters differ between conditions, since a shuffled order puts a trap first on
    different instances and memory may steer a task past it."""
    for condition in CONDITIONS:
        result = run_condition(parse(twins()), condition)
        families = {e["task"]: e["family"] for e in result.log if e["event"] == "task"}
        met = set()
        for end in (e for e in result.log if e["event"] == "end" and e["trap"]):
            trap = (families[end["task"]], end["trap"])
            assert end["encounter"] == ("repeat" if trap in met else "first")
            met.add(trap)


def test_the_nightly_cycle_forgets_and_without_it_every_episode_stays(quick):
    """XP5: forgetting keeps the store below the tasks run; no cycle keeps every episode."""
    default = quick["conditions"]["default product"]
    kept = quick["conditions"]["default, no forgetting cycles"]
    assert kept["store_size_final"] == kept["tasks"]
    assert 0 < default["store_size_final"] < default["tasks"]


def test_an_avoidance_names_the_episode_and_family_behind_it():
    """XP3: the US task avoids the action the EU episode failed at, and the log says so."""
    result = run_condition(parse(twins()), CONDITIONS[1])
    avoid = [event for event in result.log if event["event"] == "avoid"]
    first = avoid[0]
    assert first["family"] == "eu" and first["option"] == "push to the registry"
    assert first["works_here"]
    assert first["episode"].startswith("episode-")
    task = next(e for e in result.log if e["event"] == "task" and e["task"] == first["task"])
    assert task["family"] == "us" and first["works_here"]
    assert result.outcomes[first["task"]].negative


def test_a_repeat_needs_the_same_trap_met_before_by_the_family():
    """XP4: the first trap of a family is a first encounter, the same trap again a repeat."""
    result = run_condition(parse(twins()), CONDITIONS[0])
    encounters = [(e["task"], e["encounter"]) for e in result.log if e["event"] == "end"]
    families = [e["family"] for e in result.log if e["event"] == "task"]
    eu = [
        encounter
        for (_, encounter), family in zip(encounters, families, strict=True)
        if family == "eu"
    ]
    assert eu == ["first", "repeat", "repeat", None]  # the last puts the mirror first
    us = [
        encounter
        for (_, encounter), family in zip(encounters, families, strict=True)
        if family == "us"
    ]
    assert us == [None, None]  # the registry works in the US


def test_a_quiet_family_returns_past_the_horizon_without_its_episode():
    """XP5: the quiet family's failure, unused for 50 days, is forgotten, then met again."""
    alone = twins()
    alone["families"] = alone["families"][2:]
    results = run(parse(alone), [CONDITIONS[1], CONDITIONS[3]])
    forgotten = results["default product"].outcomes[-1]
    kept = results["default, no forgetting cycles"].outcomes[-1]
    assert forgotten.silent == 50 and forgotten.encounter == "repeat" and not forgotten.warned
    assert kept.encounter is None and kept.success and kept.warned


def test_the_forgetting_horizon_is_where_an_unused_episode_weighs_the_threshold():
    """XP6: at the horizon an unused episode of importance 1 weighs the retention threshold."""
    settings = DecaySettings()
    horizon = forgetting_horizon(settings)
    unused = Episode(task_type="t", goal="g", status="success", importance=1.0, last_access_at=0.0)
    weight = DecayManager(settings).weight(unused, horizon * DAY)
    assert weight == pytest.approx(settings.retention_threshold)


def test_another_forgetting_curve_moves_the_horizon():
    """XP6: under a power law the horizon moves: 26.7 days, where the exponential gives 19.2."""
    settings = DecaySettings(curve=PowerLaw(exponent=2.0))
    unused = Episode(task_type="t", goal="g", status="success", importance=1.0, last_access_at=0.0)
    horizon = forgetting_horizon(settings)
    exponential = forgetting_horizon(DecaySettings(curve=Exponential()))
    assert (round(exponential, 1), round(horizon, 1)) == (19.2, 26.7)
    weight = DecayManager(settings).weight(unused, horizon * DAY)
    assert weight == pytest.approx(settings.retention_threshold)


def test_the_svg_holds_both_plots_in_one_document(everything, tmp_path):
    """XP2: --svg writes one well-formed SVG with the learning curve and forgetting's cost."""
    text = svg(everything)
    root = ElementTree.fromstring(text)
    titles = [element.text for element in root.iter("{http://www.w3.org/2000/svg}title")]
    assert titles == ["Success by instance number", "Repeat failures by days of silence"]


def test_the_command_is_registered_and_refuses_a_bad_file(tmp_path, capsys):
    """XP1: `python -m recuris.bench experience FILE` exits 1 naming the field of a bad file."""
    path = tmp_path / "tasks.json"
    data = twins()
    data["families"][1]["plan"] = []
    path.write_text(json.dumps(data), encoding="utf-8")
    assert bench_main(["experience", str(path)]) == 1
    assert "families[1].plan: must not be empty" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["missing/out.svg", ".", "/proc/plot.svg"])
def test_an_svg_that_cannot_be_written_is_refused_before_the_stream_runs(
    tmp_path, capsys, monkeypatch, where
):
    """VA6: `experience --svg` into a missing folder, onto a folder or where no file can be
    made (/proc) exits 2, running nothing."""
    ran = []
    monkeypatch.setattr(experience_benchmark, "run", lambda *arguments: ran.append(arguments))
    with pytest.raises(SystemExit) as exit:
        bench_main(["experience", "--quick", "--svg", str(tmp_path / where)])
    assert exit.value.code == 2 and ran == []
    assert "VA6" in capsys.readouterr().err


def test_a_url_the_client_refuses_exits_2_before_the_stream_runs(capsys, monkeypatch):
    """LM3: `experience --llm` with a URL that is not one exits 2, one line, running nothing."""
    ran = []
    monkeypatch.setattr(experience_benchmark, "run", lambda *arguments: ran.append(arguments))
    assert bench_main(["experience", "--quick", "--llm", "notaurl", "--model", "m"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert ran == [] and line.startswith("error: --llm notaurl: LM3:")


def test_the_command_prints_the_table_for_a_task_file(tmp_path, capsys):
    """XP2: the table has a row per condition, then repeat failures by silence."""
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(twins()), encoding="utf-8")
    assert bench_main(["experience", str(path), "--svg", str(tmp_path / "out.svg")]) == 0
    out = capsys.readouterr().out
    assert all(f"| {condition.name} |" in out for condition in CONDITIONS)
    assert "by days since the family was last seen" in out
    assert (tmp_path / "out.svg").read_text(encoding="utf-8").startswith("<svg")


def test_a_condition_can_change_the_agent_settings():
    """XP1: a condition's settings reach the agent: a threshold of 1 retrieves less."""
    from recuris.core.agent import AgentSettings
    from recuris.core.episodic import RetrievalSettings

    strict = Condition("strict", settings=AgentSettings(retrieval=RetrievalSettings(threshold=1.0)))
    result = run_condition(parse(twins()), strict)
    assert result.retrieved < run_condition(parse(twins()), CONDITIONS[1]).retrieved


def test_a_task_is_warned_iff_its_family_s_trap_episode_is_still_stored():
    """XP7: the log's warnings are the family's trap episodes the store holds at the start."""
    alone = twins()
    alone["families"] = alone["families"][2:]
    result = run_condition(parse(alone), CONDITIONS[1])
    starts = [event for event in result.log if event["event"] == "task"]
    ends = [event for event in result.log if event["event"] == "end"]
    forgotten = {event["episode"] for event in result.log if event["event"] == "forgotten"}
    assert starts[0]["warnings"] == [] and ends[0]["trap"] is not None
    assert ends[0]["episode"] in forgotten and starts[1]["warnings"] == []


def test_the_shared_task_type_condition_gives_every_family_one_type():
    """XP1: under the shared condition every episode is written with the one task type."""
    shared = CONDITIONS[-1]
    assert shared.task_type == SHARED_TASK_TYPE
    result = run_condition(parse(twins()), shared)
    episodes = [event["episode"] for event in result.log if event["event"] == "end"]
    assert len(episodes) == len(result.outcomes)
    default = run_condition(parse(twins()), CONDITIONS[1])
    assert result.log != default.log


def test_the_figures_by_kind_count_each_family_in_each_of_its_kinds():
    """XP8: a family of two kinds counts in both; a kind nobody has counts no task."""
    data = twins()
    data["families"][0]["kinds"] = ["twins", "paraphrased"]
    data["families"][1]["kinds"] = ["twins"]
    figures = run_condition(parse(data), CONDITIONS[0]).summary()["kinds"]
    assert figures["twins"]["tasks"] == 6 and figures["paraphrased"]["tasks"] == 4
    assert figures["changes back"]["tasks"] == 0
    assert figures["twins"]["repeat_failures"] == 2


def test_the_printed_tables_give_both_parts_and_every_kind(tmp_path, capsys):
    """XP2, XT8: a file with both parts prints the test part's tables, then the tuning part's."""
    data = twins()
    data["families"][2]["part"] = "tuning"
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert bench_main(["experience", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.index("## The test part: 2 families") < out.index("## The tuning part: 1 famil")
    assert "seed 39" in out and "| twins | no twin | paraphrased |" in out


def test_part_runs_the_named_part_of_the_split_alone(tmp_path, capsys):
    """XT8: `experience --part tuning` prints the tuning part's tables and none of the test's."""
    data = twins()
    data["families"][2]["part"] = "tuning"
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert bench_main(["experience", str(path), "--part", "tuning"]) == 0
    out = capsys.readouterr().out
    assert "## The tuning part: 1 famil" in out and "## The test part" not in out
    assert bench_main(["experience", str(path), "--part", "test"]) == 0
    out = capsys.readouterr().out
    assert "## The test part: 2 families" in out and "## The tuning part" not in out


def test_respace_runs_the_families_on_their_new_days(tmp_path, capsys, monkeypatch):
    """XT9: `experience --respace 2 3` runs the suite `respaced` returns; gaps it refuses exit
    2, one line naming XT9, running nothing."""
    ran = []
    monkeypatch.setattr(experience_benchmark, "run", lambda suite, *rest: ran.append(suite))
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(twins()), encoding="utf-8")
    assert bench_main(["experience", str(path), "--respace", "3", "2"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert ran == [] and line.startswith("error: --respace: XT9:")
    monkeypatch.setattr(experience_benchmark, "report", lambda *arguments: {})
    monkeypatch.setattr(experience_benchmark, "print_tables", lambda figures: None)
    assert bench_main(["experience", str(path), "--respace", "2", "3"]) == 0
    assert [suite.families for suite in ran] == [respaced(parse(twins()), 2, 3).families]


def test_respace_refuses_a_suite_whose_every_world_changes(tmp_path, capsys, monkeypatch):
    """XT9: `--respace` on a suite whose every family's world changes exits 2, one line,
    running nothing, where it would print empty tables."""
    ran = []
    monkeypatch.setattr(experience_benchmark, "run", lambda suite, *rest: ran.append(suite))
    data = twins()
    for family in data["families"]:
        family["changes"] = [{"day": 5, "failing": []}]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert bench_main(["experience", str(path), "--respace", "2", "3"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert ran == [] and line == "error: --respace: XT9: every family's world changes"
