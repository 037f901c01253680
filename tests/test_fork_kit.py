"""The fork kit: a fork's own store runs the shared contract and state machine through a factory."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ["tests/storage/test_store.py", "tests/storage/test_store_properties.py"]


def run_shared_tests_on(factory: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "RECURIS_STORES": factory, "PYTHONPATH": str(ROOT / "tests")}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:warnings",
               "--hypothesis-profile", "quick", "-k", "fork_store or StoresAgainstAList", *SHARED]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=environment, timeout=300)


@pytest.mark.slow
def test_a_forks_store_named_by_a_factory_runs_the_shared_tests_and_passes():
    """A faithful fork store, named in RECURIS_STORES, is put through the contract and the state machine."""
    completed = run_shared_tests_on("fork_store:make_store")
    assert completed.returncode == 0, completed.stdout[-2000:]
    assert " passed" in completed.stdout and " 0 passed" not in completed.stdout


@pytest.mark.slow
def test_a_broken_forks_store_fails_the_shared_tests_naming_the_invariant():
    """A fork store whose matching finds nothing fails, and the failure names S7."""
    completed = run_shared_tests_on("fork_store:make_broken_store")
    assert completed.returncode == 1 and "S7" in completed.stdout
