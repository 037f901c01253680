"""Example tests for benchmarks/speed.py at small sizes: the benchmarks run and self-check
(SP1); the command runs from a clone's root (SP2)."""

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import speed

CLONE = Path(__file__).resolve().parents[2]


def test_retrieval_timing_checks_index_against_scan():
    """SP1: the retrieval benchmark checks indexed against scanned top-5 on every query."""
    timing = speed.retrieval(300, queries=5)
    assert set(timing) == {"indexed", "scan"} and all(p50 <= p95 for p50, p95 in timing.values())


def test_prompt_growth_is_flat_for_recuris_and_linear_for_full_history():
    """W4, measured: the prompt at step 120 is within 1.1x of step 50; full history grows."""
    growth = speed.prompt_growth(120, marks=(10, 50, 120))
    assert growth["recuris"][120] <= 1.1 * growth["recuris"][50]
    assert growth["full history"][120] > 2 * growth["full history"][50]


def test_decay_cycle_and_sqlite_report_their_figures():
    """The cycle forgets some of 2,000 stale items; SQLite writes, reopens and recalls."""
    cycle = speed.decay_cycle(2000)
    assert 0 < cycle["forgotten"] < 2000 and cycle["after"] <= 2000 - cycle["forgotten"]
    store = speed.sqlite(2000, batch=500)
    assert store["items_per_s"] > 0 and store["reopen_ms"] >= 0 and store["recall"][0] >= 0



@pytest.mark.processes
def test_SP2_the_command_runs_as_a_module_from_a_clones_root_without_an_install():
    """SP2: `python -m benchmarks.speed` runs from a clone's root, nothing on the path but the
    root itself (the package beside it is not installed), and offers its three options."""
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.speed", "--help"],
        cwd=CLONE,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    assert all(option in completed.stdout for option in ("--quick", "--large", "--quiet"))
