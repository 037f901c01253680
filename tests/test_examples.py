"""The examples ladder: every rung runs offline, quickly, and shows what it says it shows."""

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
}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_each_example_runs_offline_and_shows_its_point(path, tmp_path):
    """Each example exits 0 without network and prints the line that is its point; each is short."""
    environment = {"PATH": "", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    completed = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True,
                               encoding="utf-8", env=environment, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert EXPECTED[path.name] in completed.stdout
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 60


def test_the_ladder_has_the_five_rungs():
    """Working memory, episodic retrieval, consolidation and decay, the manager, a real endpoint."""
    assert [p.name for p in EXAMPLES] == sorted(EXPECTED)
