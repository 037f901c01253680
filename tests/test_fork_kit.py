"""The fork kit: a fork's own store, scorer and summarizer run the shared tests through factories.

Each check runs pytest in a child process, as a fork would, with the parts named in the
environment (tests/factories.py) and the quick Hypothesis profile; `-k` keeps the tests
parametrized by the fork's parts (and the store machine, which holds every store at once).
The last check runs the command line on the fork's store, as docs/fork-as-a-starter.md §5 shows.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recuris import MemoryItem

ROOT = Path(__file__).resolve().parent.parent
STORE_TESTS = ["tests/storage/test_store.py", "tests/storage/test_store_properties.py"]
SCORER_TESTS = ["tests/retrieval/test_scorer_contract.py", "tests/core/test_episodic_properties.py"]
SUMMARIZER_TESTS = ["tests/core/test_working_properties.py"]
MANAGER_TESTS = ["tests/manager/test_manager_properties.py"]
PARTS = {
    "RECURIS_STORES": "fork_store:make_store",
    "RECURIS_SCORERS": "fork_parts:make_scorer",
    "RECURIS_SUMMARIZERS": "fork_parts:make_summarizer",
}


def run_shared_tests_on(parts: dict[str, str], paths: list[str]) -> subprocess.CompletedProcess:
    """Run the shared tests in `paths` with the fork's parts named in the environment, verbosely."""
    environment = {**os.environ, **parts, "PYTHONPATH": str(ROOT / "tests")}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-o",
        "addopts=",
        "-v",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:warnings",
        "--hypothesis-profile",
        "quick",
        "-k",
        "fork_ or StoresAgainstAList",
        *paths,
    ]
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, env=environment, timeout=300
    )


@pytest.mark.slow
def test_a_forks_store_scorer_and_summarizer_named_by_factories_run_the_shared_tests_and_pass():
    """S1-S11, SR1, SM2, SM3, E1-E5, W1-W5, MG1-MG3: a
    faithful fork store, scorer and summarizer pass."""
    paths = STORE_TESTS + SCORER_TESTS + SUMMARIZER_TESTS + MANAGER_TESTS
    completed = run_shared_tests_on(PARTS, paths)
    assert completed.returncode == 0, completed.stdout[-3000:]
    ran = [line for line in completed.stdout.splitlines() if " PASSED" in line]
    assert [path for path in paths if not any(line.startswith(f"{path}::") for line in ran)] == []
    for spec in PARTS.values():
        assert any(f"[{spec}]" in line for line in ran), spec


@pytest.fixture(scope="module")
def broken_parts_run() -> subprocess.CompletedProcess:
    """One run of the store and scorer contracts on a
    broken store and a broken scorer: one child, not two."""
    broken = {
        "RECURIS_STORES": "fork_store:make_broken_store",
        "RECURIS_SCORERS": "fork_parts:make_broken_scorer",
    }
    return run_shared_tests_on(broken, STORE_TESTS + SCORER_TESTS[:1])


def failed_tests(completed: subprocess.CompletedProcess) -> list[str]:
    return [line for line in completed.stdout.splitlines() if line.startswith("FAILED")]


@pytest.mark.slow
def test_a_broken_forks_store_fails_the_shared_tests_naming_the_invariant(broken_parts_run):
    """A fork store whose matching finds nothing fails, and the failure names S7."""
    assert broken_parts_run.returncode == 1 and "S7" in broken_parts_run.stdout
    assert any("fork_store:make_broken_store" in line for line in failed_tests(broken_parts_run))


@pytest.mark.slow
def test_a_broken_forks_scorer_fails_the_shared_tests_naming_the_invariant(broken_parts_run):
    """A fork scorer whose score_candidates drops a document fails, and the failure names SM2."""
    assert broken_parts_run.returncode == 1
    failed = failed_tests(broken_parts_run)
    assert any("SM2" in line and "fork_parts:make_broken_scorer" in line for line in failed)


@pytest.mark.slow
def test_the_command_line_runs_on_a_forks_store_opened_through_the_lines_the_guide_shows(tmp_path):
    """V2: its store name bound to a fork's opener, the
    command line imports, lists and checks: exit 0."""
    lines = [
        MemoryItem(id=f"item-{n}", user_id="ana", content=text, level="semantic").to_dict()
        for n, text in enumerate(["database: PostgreSQL", "language: Python"], 1)
    ]
    (tmp_path / "ana.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    # This checkout's recuris, not an installed one: a
    # script's folder, not the root, starts sys.path.
    folders = os.pathsep.join([str(ROOT), str(ROOT / "tests")])
    database = str(tmp_path / "fork.db")
    environment = {**os.environ, "PYTHONPATH": folders}

    def fork_cli(*arguments):
        return subprocess.run(
            [sys.executable, "tests/fork_cli.py", *arguments, "--db", database],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=environment,
            timeout=60,
        )

    runs = [
        fork_cli("import", str(tmp_path / "ana.jsonl")),
        fork_cli("list", "--user", "ana"),
        fork_cli("stats"),
    ]
    assert [run.returncode for run in runs] == [0, 0, 0], [run.stderr for run in runs]
    assert all(f"opened {database} as a ForkStore" in run.stderr for run in runs)
    assert "database: PostgreSQL" in runs[1].stdout and "integrity: ok" in runs[2].stdout


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("fork_store", "expected package.module:factory"),
        ("fork_store:", "expected package.module:factory"),
        (":make_store", "expected package.module:factory"),
        ("fork_store:no_such_factory", "fork_store has no no_such_factory"),
        ("no_such_fork.stores:make_store", "cannot import no_such_fork.stores"),
    ],
)
def test_a_malformed_factory_spec_is_refused_naming_the_expected_form(monkeypatch, spec, says):
    """A spec that names no factory is a ValueError naming the variable, the spec and what to
    write, never an AttributeError on an empty name."""
    import factories

    monkeypatch.setenv("RECURIS_STORES", spec)
    with pytest.raises(ValueError) as refused:
        factories.store_factories()
    assert f"RECURIS_STORES={spec!r}" in str(refused.value) and says in str(refused.value)
