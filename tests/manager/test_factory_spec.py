"""Example tests for recuris.manager.factory_spec: a part named by `package.module:factory`
(FK1, FK2)."""

import pytest

from recuris.manager.factory_spec import factory_of
from recuris.storage.memory_store import InMemoryStore


def test_a_spec_names_an_attribute_of_a_module_imported_and_not_called():
    """FK1: `package.module:factory` is that module's attribute itself, not its result."""
    assert factory_of("recuris.storage.memory_store:InMemoryStore", "--store") is InMemoryStore


@pytest.mark.parametrize("spec", ["recuris.storage.memory_store", ":InMemoryStore", "a:b.c", "a:"])
def test_a_spec_not_of_the_form_is_refused_naming_where_it_was_given_and_the_form(spec):
    """FK2: a spec without a module and an identifier joined by a colon is a ValueError naming
    the rule, where the spec was given, the spec and the expected form."""
    with pytest.raises(ValueError) as refused:
        factory_of(spec, "RECURIS_STORES")
    message = str(refused.value)
    assert message.startswith(f"FK2: RECURIS_STORES={spec!r}: expected package.module:factory")


def test_a_module_that_cannot_be_imported_is_refused_naming_it():
    """FK2: a spec whose module cannot be imported says which module, and where to put it."""
    with pytest.raises(ValueError, match="FK2: --store='no_such_fork.stores:make'") as refused:
        factory_of("no_such_fork.stores:make", "--store")
    assert "cannot import no_such_fork.stores" in str(refused.value)


def test_a_name_the_module_lacks_is_refused_naming_both():
    """FK2: a spec naming an attribute its module lacks says which module lacks which name."""
    with pytest.raises(ValueError, match="recuris.storage.memory_store has no make_store"):
        factory_of("recuris.storage.memory_store:make_store", "--store")
