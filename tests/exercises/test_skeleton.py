"""Example tests for recuris.exercises.skeleton and the `start` command (SK1-SK3)."""

import ast

import pytest

from recuris.exercises.__main__ import main
from recuris.exercises.catalog import EXERCISES, find
from recuris.exercises.skeleton import skeleton, start

MODULES = [(exercise, module) for exercise in EXERCISES for module in exercise.modules]


def names(tree: ast.AST, prefix: str = "") -> set[str]:
    """Every name defined at module level and in classes, with each function's signature."""
    found = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found |= {prefix + node.name} | names(node, f"{prefix}{node.name}.")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decorators = [ast.unparse(d) for d in node.decorator_list]
            found.add(
                f"{prefix}{node.name}({ast.unparse(node.args)}) {decorators} "
                f"{ast.get_docstring(node)}"
            )
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            found.add(prefix + ast.unparse(node))
    return found


def cut(exercise, module) -> str:
    return skeleton(exercise.source(module).read_text(encoding="utf-8"))


@pytest.mark.parametrize(("exercise", "module"), MODULES, ids=[m for _, m in MODULES])
def test_a_skeleton_keeps_every_name_signature_and_docstring(exercise, module):
    """SK1: the same names, signatures, decorators,
    fields, constants and docstrings as the reference."""
    reference = ast.parse(exercise.source(module).read_text(encoding="utf-8"))
    skeleton_tree = ast.parse(cut(exercise, module))
    assert names(skeleton_tree) == names(reference)
    assert ast.get_docstring(skeleton_tree) == ast.get_docstring(reference)


@pytest.mark.parametrize(("exercise", "module"), MODULES, ids=[m for _, m in MODULES])
def test_every_body_raises_a_todo_naming_its_function(exercise, module):
    """SK2: each body is its docstring and `raise NotImplementedError("TODO <qualified name>")`."""

    def bodies(node, prefix=""):
        for child in node.body:
            if isinstance(child, ast.ClassDef):
                yield from bodies(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef):
                yield prefix + child.name, [s for s in child.body if not isinstance(s, ast.Expr)]

    for name, body in bodies(ast.parse(cut(exercise, module))):
        assert [ast.unparse(s) for s in body] in ([f"raise NotImplementedError('TODO {name}')"], [])


def test_a_protocol_stub_is_kept_as_it_is():
    """SK2: a protocol's `...` methods are not turned into TODOs."""
    text = cut(find("episodic"), "core.similarity")
    assert "def analyzer(self, text: str) -> Sequence: ..." in text
    assert 'raise NotImplementedError("TODO JaccardScorer.score_candidates")' in text


def test_start_writes_the_skeleton_and_a_readme_with_chapter_and_hints(tmp_path):
    """SK3, EX3: start writes <module>.py and a README:
    the chapter, the two hints, the check command."""
    exercise = find("working")
    written = start(exercise, tmp_path, 2, 7)
    assert sorted(path.name for path in written) == ["README-working.md", "working.py"]
    readme = (tmp_path / "README-working.md").read_text(encoding="utf-8")
    assert "docs/core/working-memory.md" in readme and exercise.hints[1] in readme
    assert f"python -m recuris.exercises check working {tmp_path}" in readme


def test_start_never_overwrites_a_file_unless_forced(tmp_path):
    """SK3: with one file already there, start writes nothing; --force replaces both."""
    (tmp_path / "README-text.md").write_text("my notes", encoding="utf-8")
    with pytest.raises(FileExistsError, match="README-text.md"):
        start(find("text"), tmp_path, 1, 7)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README-text.md"]
    assert main(["start", "text", str(tmp_path), "--force"]) == 0
    assert "def tokenize" in (tmp_path / "text.py").read_text(encoding="utf-8")


def test_start_refuses_on_the_command_line_with_exit_2(tmp_path, capsys):
    """SK3: the command says which files it would overwrite and exits 2."""
    assert main(["start", "decay", str(tmp_path)]) == 0
    assert main(["start", "decay", str(tmp_path)]) == 2
    assert "use --force" in capsys.readouterr().err


def test_a_second_exercise_starts_in_the_same_folder_without_force(tmp_path):
    """SK3: each exercise writes its own README, so two start in one folder, neither replaced."""
    assert main(["start", "text", str(tmp_path)]) == 0
    assert main(["start", "working", str(tmp_path)]) == 0
    readmes = sorted(path.name for path in tmp_path.glob("README*.md"))
    assert readmes == ["README-text.md", "README-working.md"]
    assert "Exercise 1 of 7" in (tmp_path / "README-text.md").read_text(encoding="utf-8")
