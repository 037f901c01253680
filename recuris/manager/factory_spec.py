"""Factory specs: a fork's store, scorer or summarizer named as `package.module:factory`.

Document 003 §7.2 keeps storage minimal and replaceable, and document 000 §3.2 leaves the
similarity to whatever fits; a fork replaces them by naming its own factory, in the
environment for the shared tests (tests/factories.py, the fork kit) or in `--store` for
`python -m recuris.bench locomo`. This module reads such a name, once for both.

Invariants:
    FK1 a spec is a module path and an attribute name joined by one colon,
        `package.module:factory`; the factory is the attribute of the module, imported where
        the command runs, and nothing is called.
    FK2 a spec that names no factory (not of the form, a module that cannot be imported, a
        name the module lacks) is a ValueError naming where the spec was given, the spec and
        what was expected.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

__all__ = ["factory_of"]


def factory_of(spec: str, named_by: str) -> Callable:
    """Return the factory `spec` names, imported (FK1).

    Raises ValueError naming `named_by`, the spec and the expected form when it names none (FK2).
    """
    module, _, name = spec.partition(":")
    if not (module and name.isidentifier()):
        raise ValueError(
            f"FK2: {named_by}={spec!r}: expected package.module:factory, such as "
            "my_fork.stores:make_store"
        )
    try:
        imported = importlib.import_module(module)
    except ModuleNotFoundError as error:
        raise ValueError(
            f"FK2: {named_by}={spec!r}: cannot import {module} ({error}); the module must be "
            "importable where the command runs: in the working folder, installed "
            "(`pip install -e` your fork), or in a folder on PYTHONPATH"
        ) from error
    if not hasattr(imported, name):
        raise ValueError(f"FK2: {named_by}={spec!r}: {module} has no {name}")
    return getattr(imported, name)
