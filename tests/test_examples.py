"""The examples ladder: every rung runs as its header says, offline and quickly, and shows what it
says it shows.

A user runs an example from the repository root with the package installed (the README's
set-up), so the tests do the same: `python examples/NAME.py` in the root, no PYTHONPATH.
CI installs the package before it runs the tests (.ci/run); a checkout without that set-up
fails here exactly as it would for the user.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
EXPECTED = {
    "01_working_memory.py": "changing the goal is refused: W1",
    "02_episodic_retrieval.py": "second task: success=True",
    "03_consolidation_and_decay.py": "left: ['ship the weekly release']",
    "04_manager_with_sqlite.py": "bob sees: []",
    "05_real_endpoint.py": "No endpoint configured",
    "06_custom_parts.py": "the manager finds: ['deploy the billing service (0.36)']",
}
SET_UP = 'python -m pip install -e ".[test]"'
HEADER = re.compile(
    r"Run from the repository root after the README's set-up, `"
    + re.escape(SET_UP)
    + r"`:\n    (python examples/\S+\.py)"
)


def run_as_written(path: Path, home: Path, *arguments: str) -> subprocess.CompletedProcess:
    """Run the command of the example's header in the repository root, with no PYTHONPATH."""
    command = HEADER.search(path.read_text(encoding="utf-8")).group(1).split()
    # HOME and the temporary folder point at a fresh folder; SYSTEMROOT lets Windows start Python.
    environment = {
        "PATH": "",
        "HOME": str(home),
        "TMPDIR": str(home),
        "TEMP": str(home),
        "TMP": str(home),
        "SYSTEMROOT": os.environ.get("SYSTEMROOT", ""),
    }
    return subprocess.run(
        [sys.executable, *command[1:], *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=environment,
        timeout=60,
    )


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_each_example_header_says_how_to_run_it_after_the_readme_set_up(path):
    """Each header names the README's set-up and the exact command, run from the repository root."""
    found = HEADER.search(path.read_text(encoding="utf-8"))
    assert found and found.group(1) == f"python examples/{path.name}"
    assert SET_UP in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_each_example_runs_as_its_header_says_and_shows_its_point(path, tmp_path):
    """Each example, run as its header says, exits 0
    offline and prints the line that is its point."""
    completed = run_as_written(path, tmp_path)
    assert completed.returncode == 0, f"is recuris installed (README set-up)?\n{completed.stderr}"
    assert EXPECTED[path.name] in completed.stdout


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_no_example_prints_a_bare_none(path, tmp_path):
    """Each line an example prints says what it shows: none is a bare `None`."""
    completed = run_as_written(path, tmp_path)
    assert completed.returncode == 0 and "None" not in completed.stdout.splitlines()


def test_the_sqlite_example_leaves_no_file_behind(tmp_path):
    """Example 04 without a path removes its database:
    the root and the temporary folder gain nothing."""
    before = sorted(ROOT.iterdir())
    completed = run_as_written(ROOT / "examples" / "04_manager_with_sqlite.py", tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert sorted(ROOT.iterdir()) == before and list(tmp_path.iterdir()) == []


def test_the_sqlite_example_keeps_a_database_at_the_path_it_is_given(tmp_path):
    """Example 04 with a path keeps the database there
    and says how to inspect it with the command line."""
    example = ROOT / "examples" / "04_manager_with_sqlite.py"
    completed = run_as_written(example, tmp_path, str(tmp_path / "m.db"))
    assert completed.returncode == 0 and (tmp_path / "m.db").is_file()
    assert "python -m recuris search database" in completed.stdout


def test_the_ladder_has_the_six_rungs():
    """Working memory, episodic memory, consolidation
    and decay, the manager, a real endpoint, your parts."""
    assert [p.name for p in EXAMPLES] == sorted(EXPECTED)
