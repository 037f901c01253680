"""Grading: run the project's own tests against the learner's module, and say what broke.

Document 000 §4 closes with a prototype whose defects each break one rule (see the list
after it in docs/documents.md); the exercises grade a rebuilt module by the same rules. The
package is copied into a temporary folder, the learner's files replace its modules, and
pytest runs the repository's example tests, property tests and state machines for them in
a child process whose working folder is that copy, so `import recuris` finds it first. The
plugin (plugin.py) records each failure; this module prints it in plain words: the
invariant, the failing assertion, and Hypothesis's shrunk input or a state machine's steps.

Invariants:
    GR1 the learner's files are graded only in a temporary copy of the package: the
        repository, its tests and the installed package are never written.
    GR2 the package's own modules, copied as the learner's files, pass their check (exit 0).
    GR3 a failure is printed with its invariant ids and their text from the module's
        docstring, the failing assertion and the input Hypothesis shrank it to (exit 1).
    GR4 a missing test extra (pytest, Hypothesis), missing tests, an invariant no test names
        or missing learner files are said plainly, with what to do, and exit 2 before
        anything runs.
    GR5 a learner's file that does not compile, fails on import, or ends the process itself
        (`sys.exit`, `os._exit`, `exit`, `quit`, `os.abort`) is named with its line (exit 1).
    GR6 a check ends within its timeout: a test still running then is named, with the line
        of the learner's file it was at (exit 1).
    GR7 a check that ends in any way, killed included (SIGINT, SIGTERM, SIGHUP), ends its
        child process and removes its copy: one of these signals that arrives while the child
        starts is held until the check holds the child, then delivered.
"""

import ast
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .catalog import INSTALL_TESTS, PACKAGE, ROOT, Exercise
from .plugin import RUNNING, STACK, ids_named_in

__all__ = ["check", "TIMEOUT", "stop_on_signals"]

# Seconds a check may take (GR6). The slowest reference check, episodic with --thorough,
# took 20 s on a 2-core machine at a load of 5; a minute leaves room, and an endless loop
# is said within it.
TIMEOUT = 60.0
# Calls that end the process from inside a test: pytest could report nothing (GR5).
EXITS = {("sys", "exit"), ("os", "_exit"), ("os", "abort"), (None, "exit"), (None, "quit")}
# The signals that end a check, which must end its child too (GR7).
STOPS = ("SIGINT", "SIGTERM", "SIGHUP")


class _HeldStops:
    """GR7: note the signals that end a check, instead of acting on them, until `release`.

    `release` puts the handlers back and raises each noted signal again, where the caller is
    ready to end what it started; leaving the `with` block releases too. Off the main thread
    nothing is held: Python runs signal handlers in the main thread only.
    """

    def __init__(self) -> None:
        self.noted: list[int] = []
        self._handlers: dict[int, object] = {}

    def __enter__(self) -> "_HeldStops":
        if threading.current_thread() is not threading.main_thread():
            return self
        for name in STOPS:
            number = getattr(signal, name, None)
            # An ignored signal ends nothing, and the child inherits it ignored; a handler set
            # outside Python (None) could not be put back. Either is left alone.
            if number is not None and signal.getsignal(number) not in (None, signal.SIG_IGN):
                self._handlers[number] = signal.signal(number, self._note)
        return self

    def _note(self, number, frame) -> None:
        self.noted.append(number)

    def release(self) -> None:
        """Put the handlers back, then raise each signal noted meanwhile again."""
        for number, handler in self._handlers.items():
            signal.signal(number, handler)
        self._handlers.clear()
        noted = self.noted
        self.noted = []
        for number in noted:
            signal.raise_signal(number)

    def __exit__(self, *raised) -> None:
        self.release()


def _refusal(exercise: Exercise, folder: Path) -> str | None:
    """GR4: what stops a check before it starts, in words the learner can act on."""
    missing = [name for name in ("pytest", "hypothesis") if importlib.util.find_spec(name) is None]
    if missing:
        return (
            f"check runs the project's tests, which need {' and '.join(missing)} (the test "
            f"extra).\nInstall it from the repository's root: {INSTALL_TESTS}"
        )
    absent = [test for test in exercise.tests if not (ROOT / test).is_file()]
    if absent:
        return (
            f"The project's tests for this exercise are not here: {', '.join(absent)} under "
            f"{ROOT}.\ncheck needs a clone of the repository (tests/ beside recuris/): "
            f"{INSTALL_TESTS}"
        )
    named = set().union(
        *(ids_named_in((ROOT / test).read_text(encoding="utf-8")) for test in exercise.tests)
    )
    ungraded = [invariant for invariant in exercise.invariants() if invariant not in named]
    if ungraded:
        return (
            f"No test in {', '.join(exercise.tests)} names {', '.join(ungraded)}: a check "
            "would pass without grading it.\nThe project's tests must name every invariant "
            f"(a test whose docstring opens `{ungraded[0]}: ...`); report it, or add that test."
        )
    unwritten = [name for name in exercise.files if not (folder / name).is_file()]
    if unwritten:
        return (
            f"{folder} has no {', '.join(unwritten)}: start with "
            f"`python -m recuris.exercises start {exercise.name} {folder}`"
        )
    return None


def _syntax(folder: Path, exercise: Exercise) -> str | None:
    """GR5: a file that does not compile, or that ends the process itself, with its line."""
    for name in exercise.files:
        try:
            tree = ast.parse((folder / name).read_text(encoding="utf-8"), name)
        except SyntaxError as error:
            return f"{folder / name}, line {error.lineno}: {error.msg}; fix it, then check again."
        for node in ast.walk(tree):
            function = node.func if isinstance(node, ast.Call) else None
            if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
                called = (function.value.id, function.attr)
            elif isinstance(function, ast.Name):
                called = (None, function.id)
            else:
                continue
            if called in EXITS:
                spelled = ".".join(filter(None, called))
                return (
                    f"{folder / name}, line {node.lineno}: {spelled}() ends the test run itself, "
                    "so nothing could be graded; return a value or raise an exception instead."
                )
    return None


def _share_hypothesis_tables(tmp: Path) -> None:
    """Keep Hypothesis's tables (2 s to build) in a user cache and its database in the copy."""
    default = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "recuris-exercises"
    cache = Path(os.environ.get("RECURIS_EXERCISES_CACHE") or default)
    try:
        for name in ("unicode_data", "constants"):
            (cache / name).mkdir(parents=True, exist_ok=True)
            (tmp / ".hypothesis").mkdir(exist_ok=True)
            (tmp / ".hypothesis" / name).symlink_to(cache / name, target_is_directory=True)
    except OSError:  # no home, or no symbolic links: slower, never wrong
        pass


def _run(exercise: Exercise, folder: Path, every: bool, profile: str, timeout: float) -> dict:
    """Grade in a temporary copy (GR1); return the plugin's report, or {"crash": why}."""
    with tempfile.TemporaryDirectory(prefix="recuris-check-") as tmp:
        copy = Path(tmp) / "recuris"
        report = Path(tmp) / "report.json"
        shutil.copytree(PACKAGE, copy)  # with its bytecode: only the replaced modules compile again
        groups = [module.split(".")[0] for module in exercise.modules]
        targets = [copy / group / name for group, name in zip(groups, exercise.files)]
        mine = [str(folder / name) for name in exercise.files]
        for target, learner in zip(targets, mine):
            shutil.copyfile(learner, target)
            for stale in (target.parent / "__pycache__").glob(f"{target.stem}.*.pyc"):
                stale.unlink()
        _share_hypothesis_tables(Path(tmp))
        # A grade must not depend on where it runs: CI=...
        # changes Hypothesis's and pytest's reports.
        env = {
            **{k: v for k, v in os.environ.items() if k != "CI"},
            "PYTHONDONTWRITEBYTECODE": "1",
            "RECURIS_EXERCISE_REPORT": str(report),
            "RECURIS_EXERCISE_COPY": str(copy),
            "RECURIS_EXERCISE_FILES": os.pathsep.join(map(str, targets)),
            "PYTHONPATH": os.pathsep.join([tmp, *filter(None, [os.environ.get("PYTHONPATH")])]),
        }
        command = [
            sys.executable,
            "-m",
            "pytest",
            *(str(ROOT / test) for test in exercise.tests),
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(ROOT),
            "-p",
            "no:cacheprovider",
            "-p",
            "recuris.exercises.plugin",
            "--hypothesis-profile",
            profile,
            "-q",
            "--tb=no",
        ]
        # A signal that ends the check while the child starts waits until the `try` that
        # ends the child holds it: acted on at once, it would leave the child running (GR7).
        with _HeldStops() as held:
            # A session of its own: the whole group is ended with the check, however it ends
            process = subprocess.Popen(
                command + ([] if every else ["-x"]),
                cwd=tmp,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            try:
                held.release()
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                hung = _hung(process, Path(tmp), timeout)
                for target, learner in zip(targets, mine):
                    hung = hung.replace(str(target), learner)
                return {"crash": hung}
            finally:
                _end(process)
        text = report.read_text(encoding="utf-8") if report.is_file() else stderr or stdout
        crashed = not report.is_file()
        # pytest stopped early, or could not import a test file: Python's own traceback of
        # importing the learner's modules names the lines (importing `recuris` alone imports
        # none of them: the package is lazy).
        if crashed or json.loads(text)["errors"]:
            modules = ", ".join(f"recuris.{module}" for module in exercise.modules)
            probe = subprocess.run(
                [sys.executable, "-c", f"import {modules}"],
                cwd=tmp,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            crashed = crashed or probe.returncode != 0
            text = probe.stderr if probe.returncode else text
        for target, learner in zip(targets, mine):  # the learner's files by the learner's names
            text = text.replace(str(target), learner)
        text = text.replace(str(copy), "recuris")
        return {"crash": _crash(text, mine)} if crashed else json.loads(text)


def _end(process: subprocess.Popen) -> None:
    """GR7: end the child and whatever it started, unless it has ended by itself."""
    if process.poll() is not None:
        return
    if hasattr(os, "killpg"):
        os.killpg(process.pid, signal.SIGKILL)
    else:  # Windows: no process groups to signal
        process.kill()
    process.communicate()


def _hung(process: subprocess.Popen, tmp: Path, timeout: float) -> str:
    """GR6: the test that was running when the time ran out, and where in the package it was."""
    stack = tmp / STACK
    if hasattr(signal, "SIGUSR1") and stack.is_file():  # the plugin dumps the stacks (PG5)
        process.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 5
        while not stack.read_text(encoding="utf-8") and time.monotonic() < deadline:
            time.sleep(0.05)
    test = _text(tmp / RUNNING) or "no test yet"
    copy = str(tmp / "recuris")
    frames = re.findall(r'File "([^"]+)", line (\d+) in (\S+)', _text(stack))
    inside = [frame for frame in frames if frame[0].startswith(copy)][:1]
    where = "".join(f"\n  at       {path}, line {n}, in {name}" for path, n, name in inside)
    return (
        f"the tests did not finish within {timeout:g} s (--timeout): does a loop never end?\n"
        f"  hung in  {test}{where}"
    )


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def stop_on_signals() -> None:
    """GR7: end on SIGTERM or SIGHUP as on Ctrl-C, so the child is ended and the copy removed."""

    def stop(number, frame):
        raise SystemExit(128 + number)

    # SIGINT raises KeyboardInterrupt already.
    for name in (name for name in STOPS if name != "SIGINT"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), stop)


def _crash(output: str, mine: list[str]) -> str:
    """Why pytest stopped before any test: the frames in the package or your files, the error."""
    # A frame's source line is indented four spaces; `python -c`'s frame has none, and the
    # next frame's line (indented two) is not taken for it.
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)\n {4}(\S.*)', output)
    lines = [
        f"  {path}, line {n}, in {name}: {code}"
        for path, n, name, code in frames
        if path.startswith("recuris/") or path in mine
    ]
    last = output.strip().splitlines()[-1] if output.strip() else "pytest stopped without a word"
    return "\n".join(["importing recuris failed:", *lines, last] if lines else [last])


def _steps(example: list[str]) -> list[str]:
    """A state machine's steps without the invariant checks listed after each but the last."""
    checks = [
        i for i, line in enumerate(example) if re.match(r"state\.[A-Z]{1,2}\d+_\w*\(\)$", line)
    ]
    kept = [line for i, line in enumerate(example) if i not in checks[:-1]]
    return [
        line.removeprefix("Falsifying example: ") for line in kept if line != "Falsifying example:"
    ]


def _describe(failure: dict, texts: dict[str, str], out) -> None:
    """GR3: one failure in plain words: the invariant, the test, what failed, and on what input."""
    ids = failure["ids"]
    error = failure["error"]
    rule = failure["rule"]
    todo = error.startswith("NotImplementedError: TODO")
    machine = any(line.startswith("state = ") for line in failure["example"])
    other = "(an invariant of another module)"
    if todo:
        out(
            f"{', '.join(ids) or 'A rule'} not met yet: {error.split('TODO ', 1)[1]} is still a "
            "TODO."
        )
    elif len(ids) == 1:
        out(f"{ids[0]} broken: {texts.get(ids[0], other)}")
    else:
        out(
            f"{', '.join(ids)} broken (the test checks them together):"
            if ids
            else f"Broken: {rule}"
        )
    for invariant in ids if todo or len(ids) > 1 else ():
        out(f"  {invariant:<4} {texts.get(invariant, other)}")
    out(
        f"  test     {failure['test']}"
        + (f" (a state machine, at {failure['step']})" if machine else "")
    )
    if rule and ids or machine and not ids and failure["checks"]:
        out(f"           {rule or 'it checks ' + ', '.join(failure['checks'])}")
    setup = "   (setting up the test)" if failure["when"] == "setup" else ""
    for label, line in zip(["failing"] + [""] * 5, failure["statement"].splitlines()[:6]):
        out(f"  {label:<8} {line.strip()}{setup}")
    # pytest's explanation of an assert: its diff lines, else its "where" lines; object ids dropped.
    lines = [
        re.sub(r" at 0x[0-9a-f]+", "", line).strip() for line in error.splitlines() if line.strip()
    ]
    first, *more = lines
    shown = [line for line in more if not line.startswith(("+", "Use -v"))]
    shown = shown or (more if re.fullmatch(r"\w+: assert \(?(False|True|None)\)?", first) else [])
    for label, line in zip(["got", "", "", ""], [] if todo else [first, *shown][:4]):
        out(f"  {label:<8} {line[:200]}")
    for place in failure["raised_at"]:
        name, line, function = place.rsplit(":", 2)
        out(f"  raised   in {name}, line {line}, in {function}")
    if failure["example"]:
        steps = ", the machine's steps" if machine else ""
        out(f"  on input (Hypothesis's shrunk falsifying example{steps}):")
        out("\n".join(f"    {line}" for line in _steps(failure["example"])))
    elif not todo:
        out("  on input: the test's own example (read it in the test file)")


def check(
    exercise: Exercise,
    folder: Path,
    every: bool = False,
    thorough: bool = False,
    timeout: float = TIMEOUT,
    out=print,
) -> int:
    """Grade the learner's files in `folder`; print what holds or broke; return the exit code."""
    folder = Path(folder).resolve()
    refusal = _refusal(exercise, folder)
    if refusal:
        out(refusal)
        return 2
    error = _syntax(folder, exercise)
    if error:
        out(error)
        return 1
    report = _run(exercise, folder, every, "dev" if thorough else "quick", timeout)
    if "crash" in report or report["errors"]:
        problem = report.get("crash") or "\n".join(report["errors"])
        advice = "\nKeep every name the skeleton defines: the tests import them." * (
            "import name" in problem
        )
        out(f"The tests could not run against your {', '.join(exercise.files)}:\n{problem}{advice}")
        return 1
    texts = exercise.invariants()
    failures = report["failures"]
    passed = report["passed"]
    if not failures:
        tried = (
            "100 inputs per property"
            if thorough
            else "10 inputs per property; --thorough tries 100"
        )
        out(
            f"check {exercise.name}: all {passed} tests pass (examples, properties, state "
            f"machines): {', '.join(texts)} hold on every input tried ({tried})."
        )
        return 0
    out(
        f"check {exercise.name}: {passed} passed, {len(failures)} failed"
        + ("." if every else " (stopped at the first; --all runs every test).")
    )
    groups = {}  # one paragraph per invariant (or unnamed rule), in the order they failed
    for failure in failures:
        groups.setdefault(tuple(failure["ids"]) or failure["rule"] or failure["test"], []).append(
            failure
        )
    for first, *others in groups.values():
        out("")
        _describe(first, texts, out)
        for other in others:
            out(f"  (also broke in {other['test']})")
        shrunk = [other for other in others if other["example"]]
        if (
            shrunk and not first["example"]
        ):  # and the input Hypothesis found, if an example test failed first
            _describe(shrunk[0], texts, lambda line: out(line) if line.startswith(" ") else None)
    return 1
