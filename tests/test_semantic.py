"""Example tests for recuris.semantic.SemanticMemory (F1-F3)."""

import pytest

from recuris import SemanticMemory


def test_added_fact_keeps_its_sources_and_gets_an_id():
    """F3: a fact keeps the ids of its sources, without repeats, in order."""
    fact = SemanticMemory().add("team language", "Python", ["episode-1", "episode-2", "episode-1"])
    assert (fact.id, fact.source_ids) == ("fact-1", ("episode-1", "episode-2"))


def test_same_statement_twice_is_refused():
    """F2: a (subject, value) already known is refused, whatever its case or spacing."""
    memory = SemanticMemory()
    memory.add("team language", "Python", ["e1"])
    with pytest.raises(ValueError, match="F2"):
        memory.add("Team  Language", "python", ["e2"])
    assert len(memory) == 1


def test_fact_without_sources_is_refused():
    """F3: no sources, no fact; nothing is stored."""
    memory = SemanticMemory()
    with pytest.raises(ValueError, match="R4"):
        memory.add("team language", "Python", [])
    assert len(memory) == 0


def test_new_value_is_appended_and_old_one_kept():
    """F1: a new value about a subject is a new fact; the old fact is still there."""
    memory = SemanticMemory()
    old = memory.add("database", "MySQL", ["e1"])
    new = memory.add("database", "PostgreSQL", ["e2"])
    assert memory.about("database") == [new, old]
    assert memory.facts == (old, new)


def test_knows_is_case_and_space_insensitive():
    """F2: knows() uses the same key as the duplicate check."""
    memory = SemanticMemory()
    memory.add("team language", "Python", ["e1"])
    assert memory.knows(" TEAM language ", "PYTHON") and not memory.knows("team language", "Go")


def test_prompt_section_lists_every_fact():
    """The prompt section renders each fact with its sources."""
    memory = SemanticMemory()
    memory.add("team language", "Python", ["e1"])
    assert "team language: Python (from e1)" in memory.to_prompt_section()
