"""Example tests for recuris.exercises.plugin: how
a failure is read back as an invariant (PG1-PG4)."""

import json
import os
import subprocess
import sys
from types import SimpleNamespace

from recuris.exercises.plugin import falsifying_example, ids_in, ids_named_in, invariant_ids
from recuris.exercises.plugin import pytest_collection_modifyitems

from layout import ROOT


def test_ranges_are_spelled_out_and_each_id_named_once():
    """PG1: "E1-E4" is E1, E2, E3, E4; ids come in order, once each."""
    assert ids_in("E1-E4: and E2 again, SM1") == ["E1", "E2", "E3", "E4", "SM1"]


def test_the_failing_lines_comment_names_the_invariant_first():
    """PG1: a `# E4` comment on the failing line beats the method, the docstring and the name."""
    ids, _ = invariant_ids(
        "assert hits == scan  # E4", ["E5_ids_are_unique"], "E1-E3: all", "test_E2_x"
    )
    assert ids == ["E4"]


def test_a_state_machine_failure_is_named_by_its_innermost_invariant_method():
    """PG1: a failing @invariant method `W3_...` names W3."""
    ids, found_by = invariant_ids(
        "assert x", ["runTest", "W2_window", "W3_trajectory"], "", "runTest"
    )
    assert ids == ["W3"] and "W3_trajectory" in found_by


def test_the_docstring_then_the_test_name_name_it_when_nothing_closer_does():
    """PG1: the docstring's first line names the ids; without any, the test's name does."""
    assert invariant_ids("assert x", ["helper"], "M1, M2: merging\nE9 later", "test_x")[0] == [
        "M1",
        "M2",
    ]
    assert invariant_ids("assert x", [], "No id here.", "test_M1_M2_merging")[0] == ["M1", "M2"]
    assert invariant_ids("assert x", [], "No id here.", "test_plain")[0] == []


def test_a_test_file_names_the_ids_of_its_docstrings_names_and_comments():
    """PG1: the ids a test file names, however it names them."""
    source = 'def W3_x(self):\n    """A1: y"""\n    assert z  # E4\n\ndef test_M2_q(): pass\n'
    assert ids_named_in(source) == {"W3", "A1", "E4", "M2"}


def test_the_falsifying_example_is_kept_without_the_advice_to_reproduce_it():
    """PG2: the example and a machine's steps are recorded; `@reproduce_failure` advice is not."""
    error = AssertionError("assert 2 <= 1")
    error.__notes__ = [
        "Falsifying example:\nstate = Machine()\nstate.add(x=1)\nstate.teardown()",
        "You can reproduce this example by temporarily adding @reproduce_failure('6.1', b'AA') as "
        "a decorator",
    ]
    assert falsifying_example(error) == [
        "Falsifying example:",
        "state = Machine()",
        "state.add(x=1)",
        "state.teardown()",
    ]
    assert falsifying_example(AssertionError("no notes")) == []


def test_tests_that_name_an_invariant_run_first_in_file_order():
    """PG4: a stable sort puts the named tests (and state machines) before the others."""

    def item(name, doc):
        return SimpleNamespace(name=name, obj=SimpleNamespace(__doc__=doc))

    items = [
        item("test_a", "Plain."),
        item("test_b", "W2: b"),
        item("runTest", None),
        item("test_W1_c", ""),
    ]
    pytest_collection_modifyitems(None, None, items)
    assert [i.name for i in items] == ["test_b", "runTest", "test_W1_c", "test_a"]


def test_a_run_on_another_recuris_grades_nothing(tmp_path):
    """PG3: loaded from a recuris that is not the patched copy, the plugin stops and says why."""
    report = tmp_path / "report.json"
    env = {
        **os.environ,
        "RECURIS_EXERCISE_REPORT": str(report),
        "RECURIS_EXERCISE_COPY": str(tmp_path),
    }
    code = "import recuris.exercises.plugin as p; p.pytest_configure(None)"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 3
    assert "not from the copy" in json.loads(report.read_text(encoding="utf-8"))["errors"][0]
