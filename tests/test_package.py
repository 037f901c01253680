"""Package-wide rules: standard library only, a small public API, quiet imports, cited
invariants, one test file per module, one order of the parts for imports and reading, and
the plain style (short lines, one statement a line).
"""

import ast
import functools
import importlib
import json
import re
import subprocess
import sys
import textwrap
import tokenize
from pathlib import Path

import pytest

import recuris

from layout import GROUPS, INVARIANT, MEASURES, MODULES, PARTS, ROOT


def imported_roots(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module.split(".")[0]


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "recuris").rglob("*.py")) + [ROOT / "agent_demo.py"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_only_the_standard_library_is_imported(path):
    """Runtime dependencies: none; every import is stdlib or recuris itself."""
    outside = {
        name
        for name in imported_roots(path)
        if name != "recuris" and name not in sys.stdlib_module_names
    }
    assert outside == set()


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "recuris").rglob("*.py")) + sorted((ROOT / "tests").rglob("*.py")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_neither_the_package_nor_its_tests_import_the_benchmarks(path):
    """benchmarks/ runs from a clone and is not installed: nothing in recuris/ or tests/
    imports it, at any level, functions' bodies included."""
    assert "benchmarks" not in set(imported_roots(path))


# What measuring speed and size reads: the package itself never times or weighs its own work.
MEASURING = {"perf_counter", "perf_counter_ns", "process_time", "getloadavg", "getrusage"}
MEASURING_MODULES = {"tracemalloc", "resource"}


@pytest.mark.parametrize("path", sorted((ROOT / "recuris").rglob("*.py")), ids=lambda p: p.name)
def test_no_module_of_the_package_measures_speed_or_size(path):
    """Speed and scale measurement lives in benchmarks/, beside the package: no module of
    recuris reads a timer, the load or the memory it takes, at any level."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    read = {
        node.attr if isinstance(node, ast.Attribute) else node.id
        for node in ast.walk(tree)
        if isinstance(node, (ast.Attribute, ast.Name))
    }
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    assert (read | imported) & MEASURING == set()
    assert set(imported_roots(path)) & MEASURING_MODULES == set()


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
    promised = {
        "ReflectionCallback",
        "search_memory_tool",
        "MemoryManager",
        "MemoryItem",
        "SQLiteStore",
    }
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


def test_every_public_name_is_the_object_its_defining_module_holds():
    """`from recuris import X` gives, for each public name, what its DEFINED_IN module defines."""
    assert recuris.__all__ == list(recuris.DEFINED_IN)
    for name, module in recuris.DEFINED_IN.items():
        home = importlib.import_module(f"recuris.{module}")
        namespace = {}
        exec(f"from recuris import {name}", namespace)
        assert namespace[name] is getattr(home, name), name
        assert namespace[name].__module__ == home.__name__, f"{name} is defined elsewhere"


def test_dir_of_the_package_lists_every_public_name():
    """`dir(recuris)` lists every name of `__all__`, imported yet or not."""
    assert set(recuris.__all__) <= set(dir(recuris))


def test_an_unknown_name_of_the_package_is_an_attribute_error_naming_it():
    """Asking the package for a name it does not export raises AttributeError naming the name."""
    with pytest.raises(AttributeError, match="'NoSuchName'"):
        recuris.NoSuchName  # noqa: B018
    with pytest.raises(ImportError, match="NoSuchName"):
        exec("from recuris import NoSuchName", {})


def test_a_type_checker_reads_the_names_defined_in_names():
    """The package's `if TYPE_CHECKING:` imports name each public name from its DEFINED_IN module.

    A type checker reads these; the interpreter reads DEFINED_IN: a test keeps them one list.
    """
    tree = ast.parse((ROOT / "recuris" / "__init__.py").read_text(encoding="utf-8"))
    [block] = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    imported = {
        alias.name: statement.module
        for statement in block.body
        for alias in statement.names
    }
    assert imported == recuris.DEFINED_IN


def loaded_by(code: str) -> tuple[list[str], bool]:
    """Run `code` in a fresh interpreter at the root; return the recuris modules it loaded (the
    packages' `__init__` included) and whether it loaded sqlite3."""
    probe = "\n".join(
        [
            "import json, sys",
            "try:",
            textwrap.indent(code, "    "),
            "finally:",
            "    names = sorted(name for name in sys.modules if name.split('.')[0] == 'recuris')",
            "    print(json.dumps([names, 'sqlite3' in sys.modules]))",
        ]
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    names, sqlite = json.loads(completed.stdout.splitlines()[-1])
    return names, sqlite


def test_importing_the_package_loads_none_of_its_modules():
    """`import recuris` loads the package alone: no module of it and no sqlite3."""
    assert loaded_by("import recuris") == (["recuris"], False)


@pytest.mark.parametrize("part", GROUPS)
def test_importing_a_part_loads_none_of_its_modules(part):
    """`import recuris.PART` loads that part's package alone; its names are imported when used."""
    assert loaded_by(f"import recuris.{part}") == (["recuris", f"recuris.{part}"], False)


def test_the_benchmarks_command_is_imported_from_its_part_on_first_use():
    """`from recuris.bench import main` is the benchmarks' command, imported from command.py."""
    from recuris import bench
    from recuris.bench import command, main

    assert main is command.main is bench.main


@pytest.mark.parametrize("name", [name for name in MODULES if name.startswith("core.")])
def test_a_module_of_the_core_loads_the_core_alone(name):
    """Importing a module of recuris/core loads nothing of recuris outside the core, nor sqlite3."""
    names, sqlite = loaded_by(f"import recuris.{name}")
    the_core = {"recuris", "recuris.core"}
    outside = [loaded for loaded in names if ".".join(loaded.split(".")[:2]) not in the_core]
    assert (outside, sqlite) == ([], False)


# What the docs say each entry loads, and the code that loads it in a fresh interpreter.
# `agent_demo.py` alone is the demo's own imports, before its first part runs.
ENTRIES = {
    "`import recuris`": "import recuris",
    "`import recuris.core.decay`": "import recuris.core.decay",
    "`agent_demo.py`": "import runpy\nrunpy.run_path('agent_demo.py')",
    "`python agent_demo.py`": "import runpy\n"
    "sys.argv = ['agent_demo.py']\n"
    "runpy.run_path('agent_demo.py', run_name='__main__')",
    "`python agent_demo.py --html FILE`": "import os, runpy, tempfile\n"
    "sys.argv = ['agent_demo.py', '--html', os.path.join(tempfile.mkdtemp(), 'tour.html')]\n"
    "runpy.run_path('agent_demo.py', run_name='__main__')",
}


@functools.cache
def counted_loads() -> dict[str, int]:
    """Return how many modules of recuris each entry of ENTRIES loads, counted once a run."""
    return {entry: len(loaded_by(code)[0]) for entry, code in ENTRIES.items()}


def stated_loads(text: str) -> dict[str, int]:
    """Return each "`ENTRY` loads N" a text states, as {ENTRY: N}."""
    text = " ".join(text.split())
    return {entry: int(count) for entry, count in re.findall(r"(`[^`]+`) loads (\d+)", text)}


def test_the_guide_says_how_many_modules_each_entry_loads():
    """docs/README.md's counts of the modules each entry of ENTRIES loads (`import recuris`, a
    module of the core, the demo's imports, the demo, the demo with its trace), out of the
    package's, are the ones counted here."""
    guide = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    [total] = re.findall(r"Of recuris's (\d+) modules", " ".join(guide.split()))
    assert stated_loads(guide) == counted_loads()
    assert int(total) == len(PACKAGE_SOURCES)


def test_the_tours_chapter_says_how_many_modules_the_demo_loads():
    """docs/tour/recorder.md states what the demo loads, by the same counts as the guide."""
    chapter = (ROOT / "docs" / "tour" / "recorder.md").read_text(encoding="utf-8")
    stated = stated_loads(chapter)
    assert "`python agent_demo.py`" in stated
    assert stated == {entry: counted_loads()[entry] for entry in stated}


@pytest.mark.parametrize("name", MODULES)
def test_module_docstring_lists_numbered_invariants(name):
    """Each module opens with its document section and a numbered list of invariants."""
    doc = importlib.import_module(f"recuris.{name}").__doc__
    assert re.search(r"[Dd]ocument \d{3}", doc) or name in {"core.clock"}, (
        "no document section named"
    )
    assert INVARIANT.search(doc), "no numbered invariants"


def test_the_package_lists_the_parts_of_the_design():
    """recuris/ holds one folder per part of the design, and at its top only the entry points."""
    folders = {
        path.name
        for path in (ROOT / "recuris").iterdir()
        if path.is_dir() and path.name != "__pycache__"
    }
    top = {path.name for path in (ROOT / "recuris").glob("*.py")}
    assert folders == set(GROUPS)
    assert top == {"__init__.py", "__main__.py", "simulation.py"}


def test_the_readme_heads_each_part_with_what_it_is_for():
    """The README's module map opens each part with its folder and its purpose."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [
        group for group, purpose in PARTS.items() if f"| **`{group}/`: {purpose}" not in readme
    ] == []


def test_the_core_stands_alone():
    """Nothing in recuris/core imports another part of recuris: the loop reads without them."""
    for path in sorted((ROOT / "recuris" / "core").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        upward = [
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            and (node.level > 1 or (node.module or "").startswith("recuris"))
        ]
        assert upward == [], path.name


def imported_parts(path: Path) -> set[str]:
    """Return the parts of recuris a module imports, by relative or absolute name."""
    parts = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module:
            parts.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            parts.add(path.parent.name)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("recuris."):
            parts.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            parts.update(
                alias.name.split(".")[1]
                for alias in node.names
                if alias.name.startswith("recuris.")
            )
    return parts & set(GROUPS)


def test_the_parts_import_downward_only():
    """Each part imports only itself and the parts before it in layout.PARTS: bottom up."""
    order = {group: rank for rank, group in enumerate(GROUPS)}
    upward = []
    for group in GROUPS:
        for path in sorted((ROOT / "recuris" / group).glob("*.py")):
            for target in sorted(imported_parts(path)):
                if order[target] > order[group]:
                    upward.append(f"{group}/{path.name} imports {target}")
    assert upward == []


def test_the_exercises_import_nothing_of_recuris():
    """The exercises read the modules as files, so that a broken one can still be graded."""
    imported = {
        path.name: imported_parts(path) - {"exercises"}
        for path in sorted((ROOT / "recuris" / "exercises").glob("*.py"))
    }
    assert {name: parts for name, parts in imported.items() if parts} == {}


def reading_order(text: str, row: str) -> list[str]:
    """Return the "part/module" names a markdown table lists, in order, by the row pattern given."""
    return re.findall(row, text, re.MULTILINE)


def test_the_reading_order_follows_the_layering():
    """docs/README.md's table, its map of the whole and the README's module map list the parts in
    layout.PARTS order, and the two tables list the modules of each part in the same order."""
    guide = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = reading_order(guide, r"^\| \[.*?\]\(.*?\) \| `recuris/(\w+/\w+)\.py` \|")
    module_map = reading_order(readme, r"^\| `(\w+/\w+)\.py` \|")
    shape = reading_order(guide, r"^recuris/(\w+)/ ")
    parts_of_the_table = list(dict.fromkeys(name.split("/")[0] for name in table))
    assert parts_of_the_table == list(GROUPS)
    assert shape == list(GROUPS)
    assert list(dict.fromkeys(table)) == module_map


def test_every_measure_beside_the_package_has_a_test_file_named_after_it():
    """Each module of benchmarks/ that declares invariants has benchmarks/tests/test_<module>.py."""
    missing = [
        name
        for name, path in MEASURES.items()
        if not (ROOT / "benchmarks" / "tests" / f"test_{path.stem}.py").exists()
    ]
    assert MEASURES and missing == []


def test_every_module_has_a_test_file_named_after_it():
    """Each module of the design has tests/<part>/test_<module>.py, where its rules are tested."""
    missing = set()
    for name in MODULES:
        part, module = name.split(".")
        if not (ROOT / "tests" / part / f"test_{module}.py").exists():
            missing.add(name)
    assert missing == set()


@pytest.mark.parametrize(
    "path", sorted((ROOT / "recuris").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT))
)
def test_no_method_is_generated_or_patched_in(path):
    """TS1: every method is a `def` in its class: none made by a call, set on a class, patched."""
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def made_by_a_call(statement) -> bool:
        value = getattr(statement, "value", None)
        if isinstance(value, ast.Lambda):
            return True
        # A dataclass's `field(...)` is a record's field, not a method.
        return isinstance(value, ast.Call) and ast.unparse(value.func) != "field"

    made = [
        f"{node.name} line {statement.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for statement in node.body
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and made_by_a_call(statement)
    ]
    patched = [
        ast.unparse(statement)
        for statement in tree.body
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
    ]
    set_on_objects = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("setattr", "functools.wraps")
    ]
    assert (made, patched, set_on_objects) == ([], [], [])


# The Python the project keeps: the package, its tests, the demo, the examples, the benchmarks.
SOURCES = sorted(
    [ROOT / "agent_demo.py"]
    + [
        path
        for folder in ("recuris", "tests", "examples", "benchmarks")
        for path in (ROOT / folder).rglob("*.py")
    ]
)
PACKAGE_SOURCES = sorted((ROOT / "recuris").rglob("*.py"))


def test_every_line_is_at_most_100_characters():
    """Every line of the project's Python is at most 100 characters long."""
    long = [
        f"{path.relative_to(ROOT)}:{number} ({len(line)})"
        for path in SOURCES
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if len(line) > 100
    ]
    assert long == []


def pairs_values(node: ast.AST) -> bool:
    """Tell whether `node` assigns a tuple of values to a tuple of names (`a, b = x, y`)."""
    if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Tuple):
        return False
    names = [target for target in node.targets if isinstance(target, ast.Tuple)]
    # A swap (`a, b = b, a`) moves values between the same names: one idea, kept.
    return any(
        sorted(map(ast.unparse, target.elts)) != sorted(map(ast.unparse, node.value.elts))
        for target in names
    )


def test_no_tuple_of_values_is_assigned_to_a_tuple_of_names_in_the_package():
    """One statement per line: no `a, b = x, y` in recuris; a returned tuple may be unpacked."""
    paired = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in PACKAGE_SOURCES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if pairs_values(node)
    ]
    assert paired == []


def test_no_semicolon_separates_statements_in_the_package():
    """One statement per line: no `;` between statements in recuris (a `;` in a string is text)."""
    separators = []
    for path in PACKAGE_SOURCES:
        with path.open("rb") as source:
            separators += [
                f"{path.relative_to(ROOT)}:{token.start[0]}"
                for token in tokenize.tokenize(source.readline)
                if token.type == tokenize.OP and token.string == ";"
            ]
    assert separators == []


# Each settings record of the design, by module: its defaults are the package's.
SETTINGS_RECORDS = {
    "core/episodic.py": "RetrievalSettings",
    "core/decay.py": "DecaySettings",
    "core/agent.py": "AgentSettings",
    "core/working.py": "WorkingSettings",
    "retrieval/bm25.py": "BM25Settings",
    "core/consolidation.py": "ConsolidationSettings",
    "manager/recall.py": "Weights",
    "manager/manager.py": "ManagerSettings",
}


def written_defaults(tree: ast.AST):
    """Yield (name, value as written) for every default and keyword value in a module."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            positional = [*node.args.posonlyargs, *node.args.args]
            with_defaults = positional[len(positional) - len(node.args.defaults) :]
            for argument, default in zip(with_defaults, node.args.defaults):
                yield argument.arg, ast.unparse(default)
            for argument, default in zip(node.args.kwonlyargs, node.args.kw_defaults):
                if default is not None:
                    yield argument.arg, ast.unparse(default)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            yield node.target.id, ast.unparse(node.value)
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg, ast.unparse(node.value)


def test_each_default_of_a_settings_record_is_written_once():
    """Defaults are written once: no other default or argument restates a record's value.

    The benchmarks are left out: a reference row passes the settings its label names. A default
    that names a constant may be named again: the value is written once, in the constant.
    """
    trees = {
        path: ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted((ROOT / "recuris").rglob("*.py"))
        if "bench" not in path.parts
    }
    written = [
        (name, value, path)
        for path, tree in trees.items()
        for name, value in written_defaults(tree)
    ]
    repeated = []
    for module, record in SETTINGS_RECORDS.items():
        tree = trees[ROOT / "recuris" / module]
        [body] = [node.body for node in ast.walk(tree) if getattr(node, "name", "") == record]
        for field in body:
            if not isinstance(field, ast.AnnAssign) or field.value is None:
                continue
            name = field.target.id
            value = ast.unparse(field.value)
            if not re.search(r"\d", value):
                continue  # a named constant: its value is written where it is named
            places = [path for other, text, path in written if (other, text) == (name, value)]
            if len(places) > 1:
                repeated.append(f"{record}.{name} = {value}: {len(places)} places")
    assert repeated == []


def test_there_is_one_working_memory():
    """One working memory: a single class keeps a task's window of steps, the core's."""
    keepers = []
    for path in sorted((ROOT / "recuris").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and "Working" in node.name:
                keepers.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert keepers == [
        "recuris/core/working.py:WorkingSettings",
        "recuris/core/working.py:WorkingMemory",
    ]
    assert not (ROOT / "recuris" / "manager" / "budget.py").exists()


# How a test docstring names invariants: "W3: ...", "BD3, N3, U1: ...", "E1-E4: ..."
IDS = re.compile(r"[A-Z]{1,2}\d+(?:\s*[,-]\s*[A-Z]{1,2}\d+)*")


def test_every_invariant_a_test_names_is_declared_by_a_module():
    """An id a test's docstring opens with (W3 in "W3: ...") is declared by a module's docstring,
    in the package or beside it in benchmarks/: a test keeps the ids of the module it checks,
    never an old or a mistyped one."""
    declared = {
        invariant
        for path in [*MODULES.values(), *MEASURES.values()]
        for invariant in INVARIANT.findall(ast.get_docstring(ast.parse(path.read_text("utf-8"))))
    }
    stale = []
    tests = [*(ROOT / "tests").rglob("test_*.py"), *(ROOT / "benchmarks").rglob("test_*.py")]
    for path in sorted(tests):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                opening = (ast.get_docstring(node) or "").partition(":")[0]
                named = re.findall(r"[A-Z]{1,2}\d+", opening) * bool(IDS.fullmatch(opening))
                stale += [f"{path.name}::{node.name} {i}" for i in named if i not in declared]
    assert stale == []


def docstring_lines(tree: ast.Module) -> tuple[set[int], int]:
    """Return the line numbers the module's docstrings span and the words they hold."""
    lines = set()
    words = 0
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = node.body[0] if node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            if isinstance(first.value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
                words += len(first.value.value.split())
    return lines, words


def reference_path_size() -> dict[str, int]:
    """Count the reference path: its modules, their lines of code (neither blank, comment nor
    docstring), the words of their docstrings, and the words of its chapters (docs/core/)."""
    size = {"modules": 0, "lines": 0, "docstring words": 0, "chapter words": 0}
    for path in sorted((ROOT / "recuris" / "core").glob("[!_]*.py")):
        source = path.read_text(encoding="utf-8")
        documented, words = docstring_lines(ast.parse(source))
        size["modules"] += 1
        size["docstring words"] += words
        for number, line in enumerate(source.splitlines(), start=1):
            code = line.strip()
            if code and not code.startswith("#") and number not in documented:
                size["lines"] += 1
    for chapter in sorted((ROOT / "docs" / "core").glob("*.md")):
        size["chapter words"] += len(chapter.read_text(encoding="utf-8").split())
    return size


PATH_SIZE = re.compile(
    r"reference path, counted by `[^`]+`: ([\d,]+) modules, about ([\d,]+) lines of code, "
    r"about ([\d,]+) words of docstrings and about ([\d,]+) words of chapters"
)
# The sizes other than the modules are stated to within this share of the count: a change to
# one module of the path (a new forgetting curve) then needs no edit of the guides.
SIZE_TOLERANCE = 0.1


def within_the_tolerance(stated: int, counted: int) -> bool:
    """Tell whether a stated size is within SIZE_TOLERANCE of the counted one."""
    return abs(stated - counted) <= SIZE_TOLERANCE * counted


@pytest.mark.parametrize("page", ["README.md", "docs/README.md"])
def test_the_guides_state_the_size_of_the_reference_path(page):
    """README.md and docs/README.md state the reference path's modules exactly, and its lines
    of code, words of docstrings and words of chapters to within 10% of the counts here."""
    text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
    [stated] = PATH_SIZE.findall(text)
    modules, *sizes = [int(number.replace(",", "")) for number in stated]
    counted = reference_path_size()
    assert modules == counted.pop("modules")
    assert [
        name
        for name, size in zip(counted, sizes)
        if not within_the_tolerance(size, counted[name])
    ] == []


def test_a_size_off_by_more_than_the_tolerance_is_refused():
    """A stated size 11% away from the count is refused, 9% away accepted."""
    assert not within_the_tolerance(1_110, 1_000) and within_the_tolerance(1_090, 1_000)
