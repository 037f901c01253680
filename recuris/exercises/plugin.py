"""The pytest plugin a check loads: each failing test, read back as the invariant it checks.

Document 000 §4 lists its prototype's defects by the rule each breaks; a learner's module
should be told the same way. `python -m recuris.exercises check` runs the project's tests
in a child process with `-p recuris.exercises.plugin`; this module, loaded from the patched
copy, records for each failure the invariant ids, the failing assertion, where the learner's
code raised, and Hypothesis's shrunk falsifying example, and writes them as JSON for the
parent to print. It imports neither pytest nor Hypothesis: pytest finds its hooks by name.

Invariants:
    PG1 each failure is named by the invariant ids the tests give it, most precise first:
        the `# ID` comment on the failing line, else the failing state machine method
        (`W3_...`), else the test docstring's first line, else the test's name.
    PG2 Hypothesis's falsifying example, with a state machine's steps, is recorded as
        Hypothesis prints it, without its advice on reproducing it.
    PG3 a run whose `recuris` is not the patched copy grades nothing: it stops before any test.
    PG4 the tests that name an invariant run first, each file's in order, so the first
        failure a check stops at (`-x`) names the invariant it breaks.
    PG5 each test's id is written down (RUNNING) as it starts, and SIGUSR1 writes every
        thread's stack beside it (STACK), so a check out of time names the test that hung
        and the line it was at.
"""

import ast
import faulthandler
import json
import os
import re
import signal
import traceback
from pathlib import Path

__all__ = ["ids_in", "ids_named_in", "invariant_ids", "falsifying_example", "RUNNING", "STACK"]

HERE = Path(__file__).resolve().parent.parent  # the recuris package this plugin was loaded from
REPORT = os.environ.get("RECURIS_EXERCISE_REPORT")
COPY = os.environ.get("RECURIS_EXERCISE_COPY")
LEARNER = [name for name in os.environ.get("RECURIS_EXERCISE_FILES", "").split(os.pathsep) if name]
ID = r"[A-Z]{1,2}\d+"
_RANGE = re.compile(rf"\b({ID})\s*-\s*({ID})\b")
_COMMENT = re.compile(rf"#\s*({ID}(?:\s*[,-]\s*{ID})*)\b")
_METHOD = re.compile(rf"^((?:{ID}_)+)")
_state = {"passed": 0, "failures": [], "errors": []}
# Beside the report: the test that started last, and the stacks SIGUSR1 dumps (PG5)
RUNNING = "running.txt"
STACK = "stack.txt"
_stack_file = []  # kept open for faulthandler, which writes to its descriptor


def _spell(match: re.Match) -> str:
    (first, low), (last, high) = (
        re.match(r"([A-Z]+)(\d+)", part).groups() for part in match.groups()
    )
    if first != last:
        return match.group(0)
    return ", ".join(f"{first}{n}" for n in range(int(low), int(high) + 1))


def ids_in(text: str) -> list[str]:
    """The invariant ids a line names, ranges such as "E1-E4" spelled out, in order, once each."""
    return list(dict.fromkeys(re.findall(rf"\b{ID}\b", _RANGE.sub(_spell, text))))


def ids_named_in(source: str) -> set[str]:
    """Every invariant id a test file names: in docstrings, test and method names, and comments."""
    found = re.findall(r'"""(.*)|def (\w+)|#(.*)', source)
    return {invariant for parts in found for invariant in ids_in(" ".join(parts).replace("_", " "))}


def invariant_ids(
    comment_line: str, methods: list[str], docstring: str, test_name: str
) -> tuple[list, str]:
    """Return (ids, how they were found) for one failure, most precise source first (PG1)."""
    if match := _COMMENT.search(comment_line):
        return ids_in(match.group(1)), "the failing line's comment"
    for method in reversed(methods):  # the innermost state machine method named after an invariant
        if match := _METHOD.match(method):
            return ids_in(match.group(1).replace("_", " ")), f"the state machine's {method}"
    first_line = (docstring or "").strip().splitlines()[0] if (docstring or "").strip() else ""
    ids = ids_in(first_line)
    if ids:
        return ids, "the test's docstring"
    return [part for part in test_name.split("_") if re.fullmatch(ID, part)], "the test's name"


def falsifying_example(error: BaseException) -> list[str]:
    """Hypothesis's notes from the falsifying example on, without its advice to reproduce (PG2)."""
    notes = [str(note) for note in getattr(error, "__notes__", None) or []]
    # Hypothesis heads the example "Falsifying example:
    # ..." or, since 6.16x, "Failing test case: ...".
    start = next(
        (i for i, note in enumerate(notes) if note.startswith(("Falsifying", "Failing test case"))),
        len(notes),
    )
    notes = [note for note in notes[start:] if note != "Failing test case: <state machine>"]
    return [line for note in notes if "reproduce_failure" not in note for line in note.splitlines()]


def _statement(path: str, line: int) -> str:
    """The whole statement (an assert over several lines, say) at `line` of a test file."""
    try:
        source = Path(path).read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError):
        return ""
    compound = (ast.FunctionDef, ast.ClassDef, ast.With, ast.For, ast.While, ast.If, ast.Try)
    spans = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt)
        and not isinstance(node, compound)
        and node.lineno <= line <= node.end_lineno
    ]
    node = min(spans, key=lambda node: node.end_lineno - node.lineno, default=None)
    return "\n".join(source.splitlines()[node.lineno - 1 : node.end_lineno]) if node else ""


def _describe(error: BaseException, node, when: str) -> dict:
    frames = traceback.extract_tb(error.__traceback__)
    tests = [f for f in frames if f.filename == str(node.path)]
    mine = [f for f in frames if f.filename in LEARNER]
    statement = _statement(tests[-1].filename, tests[-1].lineno) if tests else ""
    obj = getattr(node, "obj", None)
    docstring = getattr(obj, "__doc__", "") or ""
    ids, found_by = invariant_ids(
        statement, [f.name for f in tests], docstring, getattr(node, "name", "")
    )
    module_doc = ast.get_docstring(ast.parse(Path(node.path).read_text(encoding="utf-8"))) or ""
    message = str(error).strip()
    return {
        "test": node.nodeid,
        "when": when,
        "ids": ids,
        "found_by": found_by,
        "rule": docstring.strip().splitlines()[0] if docstring.strip() else "",
        "checks": ids_in(module_doc.splitlines()[0] if module_doc else ""),
        "step": tests[-1].name if tests else "",
        "statement": statement.strip(),
        "error": f"{type(error).__name__}: {message}" if message else type(error).__name__,
        "raised_at": [f"{f.filename}:{f.lineno}:{f.name}" for f in mine[-1:]],
        "example": falsifying_example(error),
    }


def _leaves(error: BaseException) -> list[BaseException]:
    """Hypothesis reports several distinct bugs as an exception group: one record each."""
    inner = getattr(error, "exceptions", None)
    return [leaf for e in inner for leaf in _leaves(e)] if isinstance(inner, tuple) else [error]


def pytest_configure(config):
    """PG3: stop at once unless this plugin, and so `recuris`, is the patched copy."""
    if COPY and HERE != Path(COPY).resolve():
        _state["errors"].append(
            f"the tests imported recuris from {HERE}, not from the copy at {COPY}"
        )
        _write()
        os._exit(3)
    if REPORT and hasattr(signal, "SIGUSR1"):  # PG5; Windows has no SIGUSR1
        _stack_file.append(Path(REPORT).with_name(STACK).open("w", encoding="utf-8"))
        faulthandler.register(signal.SIGUSR1, file=_stack_file[0], all_threads=True)


def _names_invariant(item) -> bool:
    doc = (getattr(getattr(item, "obj", None), "__doc__", None) or "").strip()
    machine = item.name == "runTest"  # a state machine: its invariants are its methods
    return machine or bool(invariant_ids("", [], doc, item.name)[0])


def pytest_collection_modifyitems(session, config, items):
    """PG4: a stable sort, named tests first."""
    items.sort(key=lambda item: not _names_invariant(item))


def pytest_exception_interact(node, call, report):
    if not hasattr(node, "runtest"):  # a test file that could not be imported
        text = str(call.excinfo.value)
        lines = [line[4:] for line in text.splitlines() if line.startswith("E   ")]
        lines = lines or text.strip().splitlines()[-1:]
        _state["errors"].append(f"{node.nodeid} could not import what it needs: {' '.join(lines)}")
        return
    for leaf in _leaves(call.excinfo.value):
        _state["failures"].append(_describe(leaf, node, report.when))


def pytest_runtest_logstart(nodeid, location):
    """PG5: write down the test about to run."""
    if REPORT:
        Path(REPORT).with_name(RUNNING).write_text(nodeid, encoding="utf-8")


def pytest_runtest_logreport(report):
    if report.when == "call" and report.passed:
        _state["passed"] += 1


def pytest_sessionfinish(session, exitstatus):
    _write()


def _write():
    if REPORT:
        Path(REPORT).write_text(json.dumps(_state, indent=1), encoding="utf-8")
