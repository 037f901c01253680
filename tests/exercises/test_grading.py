"""Example tests for recuris.exercises.grading: skeletons fail, the package passes, planted
bugs are named.

Each check runs the project's tests in a child process (about two seconds), as many at once
as there are cores; these child processes run in the full suite only (marked `slow`), which
grades every exercise.
"""

import ast
import concurrent.futures
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from layout import ROOT

from recuris.exercises import grading
from recuris.exercises.catalog import EXERCISES, find
from recuris.exercises.plugin import RUNNING
from recuris.exercises.skeleton import skeleton


@pytest.fixture(scope="module", autouse=True)
def shared_hypothesis_tables():
    """Checks share the suite's Hypothesis tables instead of building them in a user cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RECURIS_EXERCISES_CACHE", str(ROOT / ".hypothesis"))
        yield


# The off-by-one window: one step more than window_size stays in the window (W2).
WINDOW_BUG = (
    ("if len(self._recent) > self.window_size:", "if len(self._recent) > self.window_size + 1:"),
)


def planted(folder, name, file, *replacements):
    """Write exercise `name`'s reference files into
    folder, with each (old, new) replaced once in `file`."""
    exercise = find(name)
    for module, written in zip(exercise.modules, exercise.files):
        text = exercise.source(module).read_text(encoding="utf-8")
        for old, new in replacements if written == file else ():
            assert text.count(old) == 1, old
            text = text.replace(old, new)
        (folder / written).write_text(text, encoding="utf-8")
    return exercise


def plant(folder, name, file, *replacements):
    """Grade the reference with a bug planted in `file`; return (exit code, output)."""
    exercise = planted(folder, name, file, *replacements)
    lines = []
    return grading.check(exercise, folder, out=lines.append), "\n".join(lines)


def in_parallel(grade, exercises):
    """Grade each exercise with `grade(exercise)`, as many
    at once as there are cores: each is a child process."""
    # CPython 3.11's parser is not safe in two threads at once ("AST constructor recursion
    # depth mismatch"): the skeletons and the grader parse one file at a time.
    parsing = threading.Lock()
    parse = ast.parse

    def parse_alone(*arguments, **options):
        with parsing:
            return parse(*arguments, **options)

    ast.parse = parse_alone
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            return dict(zip((e.name for e in exercises), pool.map(grade, exercises)))
    finally:
        ast.parse = parse


def skeleton_check(exercise, folder):
    """Write exercise's skeletons into folder and grade them; return (exit code, output lines)."""
    folder.mkdir(parents=True, exist_ok=True)
    for module, file in zip(exercise.modules, exercise.files):
        (folder / file).write_text(
            skeleton(exercise.source(module).read_text(encoding="utf-8")), "utf-8"
        )
    lines = []
    return grading.check(exercise, folder, out=lines.append), lines


def assert_skeleton_fails_naming_an_invariant(exercise, folder, code, lines):
    output = "\n".join(lines)
    first = lines[2].split()[0].rstrip(",")
    assert code == 1 and first in exercise.invariants(), output
    assert "is still a TODO" in output and f"raised   in {folder}" in output


@pytest.mark.slow
def test_the_first_skeleton_fails_its_check_naming_an_invariant(tmp_path):
    """GR3: a fresh skeleton (text's, in the quick loop)
    fails, naming an invariant of the module and its TODO."""
    exercise = find("text")
    assert_skeleton_fails_naming_an_invariant(
        exercise, tmp_path, *skeleton_check(exercise, tmp_path)
    )


@pytest.mark.slow
def test_every_skeleton_fails_its_check_naming_an_invariant(tmp_path):
    """GR3: every exercise's fresh skeleton fails,
    naming an invariant of its module and its TODO."""
    results = in_parallel(lambda e: skeleton_check(e, tmp_path / e.name), EXERCISES)
    for exercise in EXERCISES:
        assert_skeleton_fails_naming_an_invariant(
            exercise, tmp_path / exercise.name, *results[exercise.name]
        )


@pytest.mark.slow
def test_the_packages_own_modules_pass_their_checks(tmp_path):
    """GR2: every exercise's reference solution,
    copied as the learner's files, passes with exit 0."""

    def graded(exercise):
        (tmp_path / exercise.name).mkdir()
        return plant(tmp_path / exercise.name, exercise.name, None)

    results = in_parallel(graded, EXERCISES)
    for exercise in EXERCISES:
        code, output = results[exercise.name]
        assert code == 0, output
        assert (
            output.startswith(f"check {exercise.name}: all ")
            and " hold on every input tried" in output
        )


@pytest.mark.slow
def test_an_off_by_one_window_is_named_W2(tmp_path):
    """GR3: a window one step too long breaks W2;
    the command says so, with the failing assertion."""
    planted(tmp_path, "working", "working.py", *WINDOW_BUG)
    done = subprocess.run(
        [sys.executable, "-m", "recuris.exercises", "check", "working", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "W2 broken: `len(recent_steps) <= window_size`." in done.stdout
    assert "failing  assert [step.action for step in memory.recent_steps]" in done.stdout


@pytest.mark.slow
def test_a_state_machine_failure_is_shown_with_its_shrunk_steps(tmp_path):
    """GR3: an index that keeps removed episodes breaks
    E4 in the state machine; its shrunk steps are shown."""
    code, output = plant(
        tmp_path, "episodic", "episodic.py", ("            self.scorer.remove(episode.id)\n", "")
    )
    assert code == 1 and "\nE4 broken: the indexed `retrieve` returns exactly what" in output, (
        output
    )
    assert "(a state machine, at E4_index_holds_exactly_the_stored_episodes)" in output
    steps = [line.strip() for line in output.split("the machine's steps):\n")[1].splitlines()]
    assert steps[0] == "state = EpisodicMachine()" and any(
        s.startswith("state.remove(") for s in steps
    )
    assert (
        steps[steps.index("state.teardown()") - 1]
        == "state.E4_index_holds_exactly_the_stored_episodes()"
    )


@pytest.mark.slow
def test_a_summary_that_overwrites_instead_of_merging_is_named_M1(tmp_path):
    """GR3: the prototype's defect, a summary started afresh at each fold, breaks M1."""
    code, output = plant(
        tmp_path,
        "compression",
        "compression.py",
        (
            "parts = parse(old_summary)\n        for step in evicted_steps:",
            'parts = parse("")\n        for step in evicted_steps:',
        ),
    )
    assert code == 1 and "\nM1 broken: merging loses no count" in output, output


@pytest.mark.slow
def test_a_threshold_that_excludes_its_boundary_is_named_E2(tmp_path):
    """GR3: `score > threshold` where E2 says `>=` is named E2."""
    code, output = plant(
        tmp_path,
        "episodic",
        "episodic.py",
        ("score > 0.0 and score >= threshold", "score > 0.0 and score > threshold"),
    )
    assert code == 1 and "\nE2 broken: every hit's score is >= `threshold`" in output, output


@pytest.mark.slow
def test_reinforcement_without_a_cap_is_named_D3(tmp_path):
    """GR3: reinforcement that grows with every access, uncapped, is named D3."""
    code, output = plant(
        tmp_path,
        "decay",
        "decay.py",
        (
            "settings.reinforcement_cap, settings.reinforcement_per_access * item.access_count",
            "float('inf'), settings.reinforcement_per_access * item.access_count",
        ),
    )
    assert code == 1 and "\nD3 broken: the reinforcement part never exceeds the cap." in output, (
        output
    )


def test_without_the_test_extra_check_says_how_to_install_it(tmp_path, monkeypatch):
    """GR4: no pytest or Hypothesis: the install command, exit 2, nothing run."""
    monkeypatch.setattr(grading.importlib.util, "find_spec", lambda name: None)
    lines = []
    assert grading.check(find("text"), tmp_path, out=lines.append) == 2
    assert 'python -m pip install -e ".[test]"' in lines[-1]


def test_without_the_repositorys_tests_check_says_so(tmp_path, monkeypatch):
    """GR4: an installed package without its tests/ folder: said plainly, exit 2."""
    monkeypatch.setattr(grading, "ROOT", tmp_path)
    lines = []
    assert grading.check(find("decay"), tmp_path, out=lines.append) == 2
    assert "tests for this exercise are not here: tests/core/test_decay.py" in lines[0]


def test_without_the_learners_file_check_says_how_to_start(tmp_path):
    """GR4: DIR without the module's file: the start command, exit 2."""
    lines = []
    assert grading.check(find("agent"), tmp_path, out=lines.append) == 2
    assert f"python -m recuris.exercises start agent {tmp_path}" in lines[0]


def test_a_syntax_error_is_named_with_its_line_before_anything_runs(tmp_path):
    """GR5: a file that does not compile: its line, exit 1."""
    (tmp_path / "text.py").write_text('"""Text."""\n\ndef tokenize(text:\n', encoding="utf-8")
    lines = []
    assert grading.check(find("text"), tmp_path, out=lines.append) == 1
    assert lines == [
        f"{tmp_path / 'text.py'}, line 3: '(' was never closed; fix it, then check again."
    ]


@pytest.mark.slow
def test_a_module_that_fails_on_import_is_named_with_the_failing_line(tmp_path):
    """GR5: a NameError on import: the import chain into the learner's file, and the error."""
    (tmp_path / "text.py").write_text("CJK = undefined_name\n", encoding="utf-8")
    lines = []
    assert grading.check(find("text"), tmp_path, out=lines.append) == 1
    output = "\n".join(lines)
    assert f"{tmp_path / 'text.py'}, line 1, in <module>: CJK = undefined_name" in output
    assert output.endswith("NameError: name 'undefined_name' is not defined")


@pytest.mark.slow
def test_a_check_writes_nothing_in_the_repository_or_the_package(tmp_path):
    """GR1: the package's and the tests' files are as they were; the learner's file is untouched."""

    def snapshot():
        return {
            p: p.stat().st_mtime_ns
            for folder in ("recuris", "tests")
            for p in (ROOT / folder).rglob("*")
        }

    before = snapshot()
    code, _ = plant(
        tmp_path,
        "consolidation",
        "consolidation.py",
        (
            "if len(sources) < self.settings.min_occurrences:",
            "if len(sources) <= self.settings.min_occurrences:",
        ),
    )
    learner = (tmp_path / "consolidation.py").read_text(encoding="utf-8")
    assert code == 1 and snapshot() == before
    assert "len(sources) <= self.settings.min_occurrences" in learner


def test_an_invariant_no_graded_test_names_stops_the_check(tmp_path, monkeypatch):
    """GR4: an invariant the graded tests never name is said, exit 2, nothing run."""
    exercise = planted(tmp_path, "text", None)
    declared = {**exercise.invariants(), "T9": "an invariant no test names."}
    monkeypatch.setattr(type(exercise), "invariants", lambda self: declared)
    lines = []
    assert grading.check(exercise, tmp_path, out=lines.append) == 2
    assert "names T9: a check would pass without grading it" in lines[0]


@pytest.mark.parametrize("call", ["sys.exit(0)", "os._exit(1)", "exit()", "quit()", "os.abort()"])
def test_a_call_that_ends_the_process_is_named_with_its_line(tmp_path, call):
    """GR5: sys.exit, os._exit, exit, quit or os.abort in the learner's file: its line, exit 1."""
    exercise = planted(tmp_path, "text", None)
    text = (tmp_path / "text.py").read_text(encoding="utf-8")
    body = "    match = _STATEMENT.match(content)\n"
    (tmp_path / "text.py").write_text(text.replace(body, f"    {call}\n{body}"), "utf-8")
    line = text[: text.index(body)].count("\n") + 1
    lines = []
    assert grading.check(exercise, tmp_path, out=lines.append) == 1
    assert lines == [
        f"{tmp_path / 'text.py'}, line {line}: {call.split('(')[0]}() ends the test run itself, "
        "so nothing could be graded; return a value or raise an exception instead."
    ]


LOOP = ("    match = _STATEMENT.match(content)\n", "    while True:\n        pass\n")


# Seconds the check in GR6's test runs. The loop is named only if the tests reached it within
# them: that took 4 to 5 s at a load of 5.6 on 2 cores (starting pytest is most of it), so the
# timeout is a wait for something that must happen, and generous.
HANG = 20.0


@pytest.mark.slow
def test_an_endless_loop_is_stopped_at_the_timeout_naming_the_test_and_the_line(tmp_path):
    """GR6: `--timeout` stops a loop that never ends: the test that hung, the learner's line."""
    planted(tmp_path, "text", "text.py", (LOOP[0], LOOP[1] + LOOP[0]))
    loop = (tmp_path / "text.py").read_text(encoding="utf-8").split("\n").index("    while True:")
    done = subprocess.run(
        [sys.executable, "-m", "recuris.exercises", "check", "text", str(tmp_path)]
        + ["--timeout", f"{HANG:g}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"did not finish within {HANG:g} s (--timeout)" in done.stdout
    hung = "hung in  tests/core/test_text.py::test_statement_splits_subject_and_value"
    assert hung in done.stdout, done.stdout
    at = [f"{tmp_path / 'text.py'}, line {n}, in statement" for n in (loop + 1, loop + 2)]
    assert any(place in done.stdout for place in at), done.stdout


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="reads /proc")
@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
def test_a_killed_check_ends_its_child_and_removes_its_copy(tmp_path, name):
    """GR7: SIGTERM or SIGINT to the check: no process is left in its copy, and the copy is gone."""
    learner = tmp_path / "learner"
    scratch = tmp_path / "scratch"
    learner.mkdir()
    scratch.mkdir()
    planted(learner, "text", "text.py", (LOOP[0], LOOP[1] + LOOP[0]))
    # The check meets SIGINT as it would at a terminal. A process inherits an ignored SIGINT,
    # and a shell starts its background jobs so: a suite run in the background would hand it
    # on, and the check would never hear the signal. A handler is not inherited, SIG_DFL is.
    ignored = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        grader = subprocess.Popen(
            [sys.executable, "-m", "recuris.exercises", "check", "text", str(learner)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(scratch)},
        )
    finally:
        signal.signal(signal.SIGINT, ignored)
    # Signalled once the child runs a test (it writes the test's id down, PG5), so that the
    # signal meets a check at work; one that meets the child's start is the next test's.
    assert until(lambda: list(scratch.glob(f"*/{RUNNING}"))), "the check's child ran no test"
    grader.send_signal(getattr(signal, name))
    grader.wait(timeout=60)
    # Waited for, not slept on: a process killed a moment ago may linger in /proc a while.
    gone = until(lambda: in_folder(scratch) == [] and list(scratch.iterdir()) == [])
    assert gone, (in_folder(scratch), list(scratch.iterdir()))


@pytest.mark.processes
@pytest.mark.skipif(not hasattr(os, "killpg"), reason="ends a process group")
def test_a_sigint_that_arrives_as_the_child_starts_ends_the_child(tmp_path, monkeypatch):
    """GR7: SIGINT in the instant the check's child has started, before the check holds it, is
    held and then delivered: the check stops with KeyboardInterrupt and its child is ended."""
    learner = tmp_path / "learner"
    learner.mkdir()
    exercise = planted(learner, "text", "text.py")
    started = []
    start = subprocess.Popen

    def interrupted_start(command, **options):
        # A child that would outlive the check, then SIGINT at once, as the start returns.
        started.append(start([sys.executable, "-c", "import time; time.sleep(600)"], **options))
        signal.raise_signal(signal.SIGINT)
        return started[0]

    monkeypatch.setattr(grading.subprocess, "Popen", interrupted_start)
    # The handler a terminal's process has: one run in the background inherits SIGINT ignored.
    ignored = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            grading._run(exercise, learner, False, "quick", 60.0)
        assert started and started[0].poll() is not None
    finally:
        signal.signal(signal.SIGINT, ignored)
        for child in started:  # left running by a check that could not end it
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)
                child.communicate()


def until(condition, seconds: float = 60) -> bool:
    """Poll `condition` until it holds or `seconds` pass (a wait for liveness, never a bound)."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)
    return bool(condition())


def in_folder(folder: Path) -> list[str]:
    """The processes whose working folder is inside `folder`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(folder) in os.readlink(entry / "cwd"):
                found.append(entry.name)
        except OSError:
            continue
    return found
