"""Skeletons: a module cut back to its signatures, docstrings and invariants, for the learner.

Document 000 §4 ends with a prototype; the exercises ask the learner to write one again from
the design alone. A skeleton is cut from the reference module with `ast`, on the source
text, so that comments and layout between the definitions survive: the module docstring
with its invariants, the imports and module-level assignments (other modules import
constants such as compression.MIN_CHARS), class docstrings, fields and decorators are kept;
every function and method body becomes its docstring plus `raise NotImplementedError`.

Invariants:
    SK1 a skeleton compiles and defines every name its reference module defines at module
        level and in each class, with the same signatures, decorators and docstrings.
    SK2 every function or method body is replaced by `raise NotImplementedError("TODO
        <qualified name>")` after its docstring; a protocol's stub (`...`) is kept as it is.
    SK3 `start` writes every file of an exercise or none: an existing file is never
        overwritten unless `force` is given. No two exercises write a file of the same name
        (each its own README-<name>.md), so they can share a folder.
"""

import ast
from pathlib import Path

from .catalog import Exercise

__all__ = ["skeleton", "readme", "readme_name", "start"]

# Statements kept whole at module level: what other modules import, or what a signature names.
KEPT = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.If, ast.Try)


def _is_stub(statements: list[ast.stmt]) -> bool:
    """A protocol's method: nothing but `...` or `pass` after the docstring."""
    return all(
        isinstance(s, ast.Pass)
        or (isinstance(s, ast.Expr) and getattr(s.value, "value", None) is Ellipsis)
        for s in statements
    )


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(getattr(node.value, "value", None), str)


def _body_cut(
    node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str], name: str
) -> tuple | None:
    """Return (first line, last line, new text) replacing the body after its docstring (SK2)."""
    documented = _is_docstring(node.body[0])
    rest = node.body[1:] if documented else node.body
    if not rest or _is_stub(rest):
        return None
    raise_line = f'raise NotImplementedError("TODO {name}")'
    first = rest[0]
    if documented:
        indent = " " * node.body[0].col_offset
        return node.body[0].end_lineno + 1, node.end_lineno, f"{indent}{raise_line}\n"
    before = lines[first.lineno - 1][: first.col_offset]
    if before.strip():  # a one-line definition: `def f(self): return 1`
        indent = " " * (node.col_offset + 4)
        return first.lineno, node.end_lineno, f"{before.rstrip()}\n{indent}{raise_line}\n"
    start = first.lineno
    while start - 1 > node.lineno and lines[start - 2].strip()[:1] in ("", "#"):
        start -= 1  # comments opening the body belong to the implementation
    return start, node.end_lineno, f"{' ' * first.col_offset}{raise_line}\n"


def _cuts(body: list[ast.stmt], lines: list[str], prefix: str, top: bool) -> list[tuple]:
    cuts = []
    for index, node in enumerate(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            cut = _body_cut(node, lines, prefix + node.name)
            cuts += [cut] if cut else []
        elif isinstance(node, ast.ClassDef):
            cuts += _cuts(node.body, lines, f"{prefix}{node.name}.", top=False)
        elif top and not isinstance(node, KEPT) and not (index == 0 and _is_docstring(node)):
            # Module-level code that would run on import
            cuts.append((node.lineno, node.end_lineno, ""))
    return cuts


def skeleton(source: str, header: str = "") -> str:
    """Return the skeleton of a module's source (SK1, SK2), after `header` comment lines."""
    lines = source.splitlines(keepends=True)
    for first, last, text in sorted(
        _cuts(ast.parse(source).body, lines, "", top=True), reverse=True
    ):
        lines[first - 1 : last] = [text] if text else []
    text = "".join(lines)
    ast.parse(text)  # SK1: what is handed out always compiles
    return header + text


def readme_name(exercise: Exercise) -> str:
    """The name of the exercise's README: its own, so that exercises can share a folder (SK3)."""
    return f"README-{exercise.name}.md"


def readme(exercise: Exercise, number: int, total: int, folder: str) -> str:
    """The exercise's README: what to rebuild, the chapter to read, two hints, how to check."""
    sources = ", ".join(f"`recuris/{m.replace('.', '/')}.py`" for m in exercise.modules)
    files = ", ".join(f"`{name}`" for name in exercise.files)
    chapters = "\n".join(f"- `{chapter}`" for chapter in exercise.chapters)
    hints = "\n".join(f"{i}. {hint}" for i, hint in enumerate(exercise.hints, 1))
    return (
        f"# Exercise {number} of {total}: {exercise.title}\n\nRebuild {sources} in {files}, here. "
        "Each skeleton keeps the module's docstring with its\nnumbered invariants, its imports, "
        "constants and signatures; every `TODO` body raises\nNotImplementedError until you write "
        f"it.\n\n## Read first\n\n{chapters}\n\n## Hints\n\n{hints}\n\n## Check\n\n    python -m "
        f"recuris.exercises check {exercise.name} {folder}\n\nThe project's own example tests, "
        "property tests and state machines run against your\nmodule; the first broken invariant is "
        "named with the input that breaks it (`--all`\nnames every one). The reference solution is "
        "the package's module: read it when yours passes.\n"
    )


def start(
    exercise: Exercise, folder: Path, number: int, total: int, force: bool = False
) -> list[Path]:
    """Write the exercise's skeletons and README into `folder`; return the paths written (SK3).

    Raises FileExistsError naming the files already there, and writes nothing, unless `force`.
    """
    folder = Path(folder)
    header = (
        f"# Exercise {number} of {total}: {exercise.title}. Fill in every TODO, then run\n"
        f"#     python -m recuris.exercises check {exercise.name} {folder}\n"
    )
    texts = {
        folder / name: skeleton(exercise.source(module).read_text(encoding="utf-8"), header)
        for module, name in zip(exercise.modules, exercise.files)
    }
    texts[folder / readme_name(exercise)] = readme(exercise, number, total, str(folder))
    existing = [str(path) for path in texts if path.exists()]
    if existing and not force:
        raise FileExistsError(f"not overwriting {', '.join(existing)} (use --force to replace)")
    folder.mkdir(parents=True, exist_ok=True)
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")
    return list(texts)
