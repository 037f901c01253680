"""Where recuris's modules and chapters live, for the tests that check the layout."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The parts of the design, each as the README's module map heads it, in the one order that
# the import layering, docs/README.md's reading order and the README's module map all follow
# (tests/test_package.py checks each against it): bottom up, each part importing only the
# parts before it. `core` is document 000's loop and stands alone; `exercises` rebuilds it,
# graded by its own tests, and imports nothing of recuris.
PARTS = {
    "core": "document 000's loop, standing alone",
    "retrieval": "search, below the stores",
    "storage": "where memories persist",
    "evolution": "memory that changes over time",
    "experience": "the experience layer above the core",
    "manager": "one write and one recall for many users",
    "llm": "a real model",
    "mcp": "memory any agent can use",
    "tour": "showing it",
    "bench": "measuring it",
    "exercises": "learning it",
}
GROUPS = tuple(PARTS)
# "group.module" -> path, for every module of the design (the package's entry shims aside).
MODULES = {
    f"{group}.{path.stem}": path
    for group in GROUPS
    for path in sorted((ROOT / "recuris" / group).glob("[!_]*.py"))
}
# The measurements beside the package (benchmarks/, run from a clone, never installed) that
# declare invariants, "benchmarks.module" -> path: each has its chapter in docs/benchmarks/ and
# its tests in benchmarks/tests/, as a module of the package has.
MEASURES = {
    f"benchmarks.{path.stem}": path
    for path in sorted((ROOT / "benchmarks").glob("[!_]*.py"))
    if "\nInvariants:\n" in path.read_text(encoding="utf-8")
}
CHAPTERS = sorted((ROOT / "docs").rglob("*.md"))
INVARIANT = re.compile(r"^\s+([A-Z]{1,2}\d+)\s", re.MULTILINE)


def chapter_modules(path: Path) -> list[str]:
    """The modules a chapter's opening `Module:` (or `Modules:`) line names, as "group.module"."""
    line = re.search(r"^Modules?: (.*)$", path.read_text(encoding="utf-8"), re.MULTILINE)
    names = re.findall(r"`recuris/(\w+)/(\w+)\.py`", line.group(1)) if line else []
    return [f"{group}.{module}" for group, module in names]
