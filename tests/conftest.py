"""Shared test settings: Hypothesis profiles for a 2-core CI machine, temporary files in memory.

Temporary files go to /dev/shm when the machine has it with room to spare. Most of the
suite's time on disk was SQLite's fsync at each commit; no test simulates a power cut
(the crash tests kill a process, and a killed process loses nothing the page cache holds,
on disk or in memory), so an in-memory file system keeps every check and drops only that
wait. Elsewhere the system's temporary folder is used as before.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# No profile times Hypothesis: a deadline per example, or the health check of slow drawing,
# fails a property that holds whenever the machine is busy enough (its load, not the code).
UNTIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", max_examples=60, **UNTIMED)
settings.register_profile("dev", max_examples=100, **UNTIMED)
# The edit-test loop (README): `--hypothesis-profile quick` tries each property on a few
# examples; the full run, and CI, try each on 100 (60 on CI).
settings.register_profile("quick", max_examples=10, **UNTIMED)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

MEMORY_FOLDER = "/dev/shm"
# At least 1 GiB free: a container's default 64 MB /dev/shm is too small to use.
ROOM = 1 << 30


def _in_memory_folder() -> str | None:
    try:
        status = os.statvfs(MEMORY_FOLDER)
    except (AttributeError, OSError):  # no statvfs (Windows) or no such folder (macOS)
        return None
    fits = status.f_bavail * status.f_frsize >= ROOM and os.access(MEMORY_FOLDER, os.W_OK)
    return MEMORY_FOLDER if fits else None


if "TMPDIR" not in os.environ and (folder := _in_memory_folder()):
    # Read by tempfile here and by pytest's tmp_path, and inherited by every child process.
    os.environ["TMPDIR"] = tempfile.tempdir = folder


@pytest.fixture(scope="session")
def demo_trace(tmp_path_factory) -> tuple[str, Path]:
    """Run `python agent_demo.py --html FILE` once for the whole run: (its output, FILE)."""
    path = tmp_path_factory.mktemp("trace") / "trace.html"
    completed = subprocess.run(
        [sys.executable, "agent_demo.py", "--html", str(path)],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
        timeout=120,
    )
    return completed.stdout, path
