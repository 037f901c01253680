"""Example tests for recuris.exercises.catalog and the `list` command (EX1-EX4)."""

import re

import pytest

from recuris.exercises.__main__ import main
from recuris.exercises.catalog import EXERCISES, find
from recuris.exercises.plugin import ids_named_in

from layout import INVARIANT, MODULES, ROOT

CORE_PATH = ["text", "working", "compression", "episodic", "consolidation", "decay", "agent"]


def test_exercises_follow_the_core_path():
    """EX1: the exercises come in the core path's order, with unique names."""
    assert [exercise.name for exercise in EXERCISES] == CORE_PATH


def test_the_core_path_in_the_docs_offers_them_in_the_same_order():
    """EX1: docs/README.md offers each exercise's start
    command after its chapter, in the same order."""
    readme = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    offered = re.findall(r"python -m recuris\.exercises start (\w+) DIR", readme)
    assert list(dict.fromkeys(offered)) == CORE_PATH


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_each_exercise_names_modules_chapters_and_tests_that_exist(exercise):
    """EX2: its modules are the package's, its chapters and its example and property tests exist."""
    assert set(exercise.modules) <= set(MODULES)
    assert all((ROOT / chapter).is_file() for chapter in exercise.chapters)
    assert [test for test in exercise.tests if not (ROOT / test).is_file()] == []
    assert len(exercise.tests) == 2 * len(exercise.modules)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_each_exercise_gives_two_hints(exercise):
    """EX3: exactly two hints, each naming an invariant of the exercise."""
    assert len(exercise.hints) == 2
    assert all(re.search(r"\b[A-Z]{1,2}\d+\b", hint) for hint in exercise.hints)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_the_invariants_are_read_from_the_modules_docstrings(exercise):
    """EX2: an exercise's invariants are exactly those
    its modules' docstrings declare, with their text."""
    declared = [
        i
        for m in exercise.modules
        for i in INVARIANT.findall(exercise.source(m).read_text("utf-8"))
    ]
    texts = exercise.invariants()
    assert list(texts) == declared and all(texts.values())


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_every_invariant_of_an_exercise_is_named_by_the_tests_that_grade_it(exercise):
    """EX5: each invariant its modules declare is named by a test in its graded files."""
    named = set().union(
        *(ids_named_in((ROOT / test).read_text(encoding="utf-8")) for test in exercise.tests)
    )
    assert [invariant for invariant in exercise.invariants() if invariant not in named] == []


def test_list_names_every_chapter_of_each_exercise(capsys):
    """EX2: `list` names each chapter an exercise asks to read, not only the first."""
    main(["list"])
    lines = capsys.readouterr().out.splitlines()
    for line, exercise in zip(lines, EXERCISES):
        assert [chapter for chapter in exercise.chapters if chapter not in line] == []


def test_list_prints_one_line_per_exercise_in_order(capsys):
    """EX1: `list` prints the exercises in order, one line each, with module and chapter."""
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in lines] == CORE_PATH
    assert "recuris/core/working.py" in lines[1] and "docs/core/working-memory.md" in lines[1]


def test_an_unknown_exercise_is_refused_naming_the_ones_there_are(capsys, tmp_path):
    """EX4: an unknown name exits 2 and lists the exercises."""
    with pytest.raises(KeyError, match="working"):
        find("workng")
    assert main(["start", "workng", str(tmp_path)]) == 2
    assert "text, working, compression" in capsys.readouterr().err


def test_the_chapter_shows_the_list_as_the_command_prints_it(capsys):
    """EX1: docs/exercises/catalog.md's listing is the output of `list`, line for line."""
    main(["list"])
    chapter = (ROOT / "docs" / "exercises" / "catalog.md").read_text(encoding="utf-8")
    assert chapter.split("```\n")[1] == capsys.readouterr().out
