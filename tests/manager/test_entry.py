"""Entry points: Ctrl-C ends every command in one line, while it loads as while it works (EN1, EN2).

Ctrl-C while a command's modules load is sent by a finder the child runs first (tests/
interrupted.py): it signals its own process as the command first imports `sqlite3`, which
every command loads, so the interrupt falls inside the imports on every run, at any speed.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from interrupted import interrupted_importing

from recuris.manager.entry import run_piped

ROOT = Path(__file__).resolve().parents[2]


def test_a_command_returns_its_own_exit_status_and_none_is_0():
    """EN1: `run_piped` returns the status the command returns, 0 for None."""
    assert run_piped(lambda: 3) == 3
    assert run_piped(lambda: None) == 0


def test_ctrl_c_in_a_command_is_one_line_and_130(capsys):
    """EN1: a KeyboardInterrupt from the command is one line on standard error and 130."""

    def interrupted() -> int:
        raise KeyboardInterrupt

    assert run_piped(interrupted) == 130
    assert capsys.readouterr() == ("", "interrupted (Ctrl-C)\n")


def test_ctrl_c_while_a_command_imports_its_modules_is_one_line_and_130(capsys):
    """EN2: a command imported inside `run_piped` is interrupted in its imports as in its work."""

    def loading() -> int:
        from recuris.manager.cli import main  # noqa: F401

        raise KeyboardInterrupt  # where an import that Ctrl-C stops raises it

    assert run_piped(loading) == 130
    assert capsys.readouterr().err == "interrupted (Ctrl-C)\n"


def test_the_entry_module_loads_nothing_the_package_has_not_loaded():
    """EN2: after `import recuris`, importing entry.py loads itself and its part, nothing else:
    it is in place before any module of a command starts to load."""
    code = (
        "import sys, recuris\n"
        "before = set(sys.modules)\n"
        "import recuris.manager.entry\n"
        "print(sorted(set(sys.modules) - before))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout
    assert loaded.split() == ["['recuris.manager',", "'recuris.manager.entry']"]


@pytest.mark.processes
@pytest.mark.parametrize(
    "command",
    [
        ["agent_demo.py"],
        ["-m", "recuris", "stats", "--db", "never-opened.db"],
        ["-m", "recuris.bench", "experience", "--quick"],
        ["-m", "recuris.simulation"],
        ["-m", "recuris.mcp", "--db", "never-opened.db", "--user", "ana"],
    ],
    ids=" ".join,
)
def test_ctrl_c_while_an_entry_point_loads_its_modules_is_one_line_and_130(command):
    """EN2, V18: Ctrl-C while the demo, the command line, the benchmarks, the simulation or the
    MCP server import their modules ends them with one line and status 130, no traceback."""
    status, out, err = interrupted_importing("sqlite3", *command)
    assert (status, out, err) == (130, "", "interrupted (Ctrl-C)\n")
