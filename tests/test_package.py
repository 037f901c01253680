"""Package-wide rules: standard library only, a small public API, quiet imports, cited invariants."""

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import recuris

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted(p.stem for p in (ROOT / "recuris").glob("[!_]*.py"))


def imported_roots(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module.split(".")[0]


@pytest.mark.parametrize(
    "path", sorted((ROOT / "recuris").glob("*.py")) + [ROOT / "agent_demo.py"], ids=lambda p: p.name
)
def test_only_the_standard_library_is_imported(path):
    """Runtime dependencies: none; every import is stdlib or recuris itself."""
    outside = {
        name for name in imported_roots(path) if name != "recuris" and name not in sys.stdlib_module_names
    }
    assert outside == set()


def test_importing_recuris_prints_nothing():
    """Importing any module has no visible side effect."""
    code = "import recuris, " + ", ".join(f"recuris.{m}" for m in MODULES)
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert completed.stdout == completed.stderr == ""


def test_public_api_is_exported():
    """Every name in recuris.__all__ exists, and the contract's names are there."""
    assert all(hasattr(recuris, name) for name in recuris.__all__)
    promised = {"ReflectionCallback", "search_memory_tool", "MemoryManager", "MemoryItem", "SQLiteStore"}
    assert promised <= set(recuris.__all__)
    assert {
        "WorkingMemory",
        "EpisodicMemory",
        "Episode",
        "SemanticMemory",
        "Consolidator",
        "DecayManager",
        "RecurisAgent",
    } <= set(recuris.__all__)


@pytest.mark.parametrize("name", MODULES)
def test_module_docstring_lists_numbered_invariants(name):
    """Each module opens with its document section and a numbered list of invariants."""
    doc = importlib.import_module(f"recuris.{name}").__doc__
    assert re.search(r"[Dd]ocument \d{3}", doc) or name in {"clock"}, "no document section named"
    assert re.search(r"^\s+[A-Z]\d+\s", doc, re.MULTILINE), "no numbered invariants"


@pytest.mark.parametrize("name", MODULES)
def test_modules_stay_short(name):
    """One concept per module, short enough to read in one sitting: aim for 200 lines, never past 210."""
    assert len((ROOT / "recuris" / f"{name}.py").read_text(encoding="utf-8").splitlines()) <= 210
