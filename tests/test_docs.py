"""The documentation cannot drift: its examples run,
and each chapter names its module's invariants."""

import ast
import doctest
import importlib
import re
import shlex
import subprocess
import sys

import pytest

from layout import CHAPTERS, INVARIANT, MEASURES, MODULES, ROOT, chapter_modules

MODULE_CHAPTERS = [p for p in CHAPTERS if chapter_modules(p)]


def declared(module: str) -> list[str]:
    return INVARIANT.findall(importlib.import_module(f"recuris.{module}").__doc__ or "")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: str(p.relative_to(ROOT / "docs")))
def test_examples_in_the_docs_run_as_written(path):
    """Every >>> example in docs/ produces the output the chapter shows."""
    result = doctest.testfile(
        str(path),
        module_relative=False,
        encoding="utf-8",
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert result.failed == 0


def test_every_module_has_a_chapter():
    """Each module of recuris is told by a chapter in the docs folder of its part."""
    told = [module for path in MODULE_CHAPTERS for module in chapter_modules(path)]
    assert sorted(told) == sorted(MODULES)
    for path in MODULE_CHAPTERS:
        assert {module.split(".")[0] for module in chapter_modules(path)} == {path.parent.name}, (
            path
        )


@pytest.mark.parametrize("path", MODULE_CHAPTERS, ids=lambda p: p.name)
def test_chapter_names_every_invariant_of_its_module(path):
    """A chapter states each invariant its modules declare, by number."""
    text = path.read_text(encoding="utf-8")
    for module in chapter_modules(path):
        assert declared(module) and [i for i in declared(module) if f"**{i}**" not in text] == []


@pytest.mark.parametrize("name", MEASURES)
def test_every_measure_beside_the_package_has_a_chapter_naming_its_invariants(name):
    """Each module of benchmarks/ that declares invariants is told by a chapter of
    docs/benchmarks/, whose `Module:` line names it and which states each invariant by number."""
    path = MEASURES[name]
    told = [
        chapter
        for chapter in sorted((ROOT / "docs" / "benchmarks").glob("*.md"))
        if f"Module: `benchmarks/{path.stem}.py`" in chapter.read_text(encoding="utf-8")
    ]
    assert len(told) == 1, told
    invariants = INVARIANT.findall(ast.get_docstring(ast.parse(path.read_text("utf-8"))))
    text = told[0].read_text(encoding="utf-8")
    assert invariants and [i for i in invariants if f"**{i}**" not in text] == []


def test_each_module_has_its_own_invariant_prefix():
    """An invariant prefix (the letters of W3) belongs to one module, in the package or beside
    it in benchmarks/: an id means one thing."""
    owner = {}
    beside = {
        name: INVARIANT.findall(ast.get_docstring(ast.parse(path.read_text("utf-8"))))
        for name, path in MEASURES.items()
    }
    for module, invariants in [*((m, declared(m)) for m in MODULES), *beside.items()]:
        for prefix in {re.match(r"[A-Z]+", invariant).group(0) for invariant in invariants}:
            assert owner.setdefault(prefix, module) == module, (prefix, owner[prefix], module)


def test_readme_excerpt_is_real_demo_output():
    """Each line of the README's demo excerpt appears in the saved demo output."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    excerpt = readme.split("## What the demo shows")[1].split("```")[1]
    golden = (ROOT / "tests" / "golden" / "agent_demo.txt").read_text(encoding="utf-8")
    lines = [line for line in excerpt.splitlines() if line.strip() and line.strip() != "..."]
    assert lines and [line for line in lines if line not in golden] == []


def python_blocks():
    for path in CHAPTERS:
        for number, block in enumerate(
            re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
        ):
            yield pytest.param(block, id=f"{path.relative_to(ROOT / 'docs')}-{number}")


@pytest.mark.parametrize("block", list(python_blocks()))
def test_python_blocks_in_the_docs_run(block):
    """Every ```python block in docs/ runs against
    the current code (the sketches define, not call)."""
    exec(compile(block, "<docs>", "exec"), {})


@pytest.mark.parametrize("path", MODULE_CHAPTERS, ids=lambda p: p.name)
def test_each_chapter_states_design_invariants_defects_and_trade_offs(path):
    """A module's chapter has the four parts the style asks for."""
    text = path.read_text(encoding="utf-8")
    parts = ("## Design", "## Invariants", "## Defects fixed", "## Trade-offs")
    assert [part for part in parts if part not in text] == []


def test_readme_module_map_names_every_module():
    """The README's module map lists each module of recuris
    by its part, so a reader sees the whole design."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = {name: f"`{path.parent.name}/{path.name}`" for name, path in MODULES.items()}
    assert [name for name in MODULES if named[name] not in readme] == []


def test_every_chapter_links_its_documents_to_the_page_that_tells_them():
    """Each chapter's opening names the sections it
    implements as links to anchors of docs/documents.md."""
    anchors = set(
        re.findall(r'id="([^"]+)"', (ROOT / "docs" / "documents.md").read_text(encoding="utf-8"))
    )
    for path in MODULE_CHAPTERS:
        opening = re.search(
            r"^Modules?: .*?(?=\n\n)", path.read_text(encoding="utf-8"), re.S | re.M
        ).group(0)
        links = re.findall(r"\(\.\./documents\.md#([^)]+)\)", opening)
        assert links and set(links) <= anchors, path.name


def test_the_chapter_table_lists_every_invariant_of_each_module():
    """docs/README.md's table names, for each module, every invariant its docstring declares."""
    table = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \[.*?\]\(.*?\) \| `recuris/(\w+)/(\w+)\.py` \| (.*?) \|$", table, re.M)
    assert sorted(f"{group}.{module}" for group, module, _ in rows) == sorted(MODULES)
    for group, module, listed in rows:
        named = set()
        for part in listed.split(","):
            ids = re.findall(r"([A-Z]+)(\d+)", part)
            if "-" in part and len(ids) == 2:
                named |= {f"{ids[0][0]}{n}" for n in range(int(ids[0][1]), int(ids[1][1]) + 1)}
            else:
                named |= {f"{letter}{number}" for letter, number in ids}
        assert set(declared(f"{group}.{module}")) <= named, (
            module,
            sorted(set(declared(f"{group}.{module}")) - named),
        )


def test_every_link_and_named_file_in_the_docs_exists():
    """Every relative link in docs/ and README.md resolves,
    and every `recuris/...py` or `tests/...py` named exists."""
    broken = []
    for path in [*CHAPTERS, ROOT / "README.md"]:
        text = path.read_text(encoding="utf-8")
        for target in re.findall(r"\]\((?!https?:|#)([^)#\s]+)(?:#[^)]*)?\)", text):
            if not (path.parent / target).exists():
                broken.append(f"{path.relative_to(ROOT)} links {target}")
        for named in re.findall(r"`((?:recuris|tests)/[\w/]+\.py)", text):
            if not (ROOT / named).exists():
                broken.append(f"{path.relative_to(ROOT)} names {named}")
    assert broken == []


def test_the_readmes_quick_loop_prints_how_many_tests_passed():
    """The README's quick loop ends with pytest's summary ("N passed"): its `-q` is not doubled."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = re.search(r"`(python -m pytest -x[^`]*)`", readme).group(1)
    arguments = shlex.split(command)[3:]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *arguments,
            "-p",
            "no:cacheprovider",
            "tests/core/test_clock.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^\d+ passed in ", done.stdout, re.M), done.stdout


def test_the_folders_the_readme_suggests_are_ignored_by_git():
    """The exercises' folder and the trace the README suggests are in .gitignore."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    folder = re.search(r"python -m recuris\.exercises start text (\S+?)/?`", readme).group(1)
    trace = re.search(r"python agent_demo\.py --html (\S+)`", readme).group(1)
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert [name for name in (f"{folder}/", trace) if name not in ignored] == []


def prose_paragraphs(text: str) -> list[tuple[str, str]]:
    """Each paragraph of prose in a chapter, with the block after it; code, tables, lists,
    headings, examples and indented blocks are not prose."""
    blocks = re.split(r"\n\s*\n", re.sub(r"```.*?```", "", text, flags=re.S))
    found = []
    for block, after in zip(blocks, [*blocks[1:], ""]):
        opening = block.lstrip("\n")
        if opening and not re.match(r"(#|\||>>>|\.\.\.|<|[-*] |\d+\. |\s|---)", opening):
            found.append((block, after))
    return found


@pytest.mark.parametrize("path", [*CHAPTERS, ROOT / "README.md"], ids=lambda p: p.name)
def test_every_paragraph_of_prose_ends_a_sentence(path):
    """A paragraph ends in ".", ":", "?", "!" or a closing parenthesis, unless an indented
    block (a formula) continues it: a paragraph cut or spliced mid-sentence shows."""
    unfinished = [
        block.strip()[-60:]
        for block, after in prose_paragraphs(path.read_text(encoding="utf-8"))
        if not re.search(r"[.:?!)]$", block.strip()) and not after.startswith("    ")
    ]
    assert unfinished == []
