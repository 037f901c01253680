"""Example tests for recuris.core.semantic.SemanticMemory (F1-F4)."""

import pytest

from recuris import ManualClock, SemanticMemory


@pytest.fixture
def memory():
    return SemanticMemory(clock=ManualClock(10))


def test_added_fact_keeps_its_sources_and_gets_an_id(memory):
    """F3: a fact keeps the ids of its sources, without repeats, in order."""
    fact = memory.add("team language", "Python", ["episode-1", "episode-2", "episode-1"])
    assert (fact.id, fact.source_ids, fact.created_at) == ("fact-1", ("episode-1", "episode-2"), 10)


def test_the_valid_statement_cannot_be_added_again(memory):
    """F2: the valid (subject, value) is refused again, whatever its case or spacing."""
    memory.add("team language", "Python", ["e1"])
    with pytest.raises(ValueError, match="F2"):
        memory.add("Team  Language", "python", ["e2"])
    assert len(memory) == 1


def test_fact_without_sources_is_refused(memory):
    """F3: no sources, no fact; nothing is stored."""
    with pytest.raises(ValueError, match="F3"):
        memory.add("team language", "Python", [])
    assert len(memory) == 0


def test_contradiction_supersedes_and_keeps_the_old_fact(memory):
    """F1, F2: a new value closes the old fact (time and successor recorded) and keeps it."""
    old = memory.add("database", "MySQL", ["e1"])
    memory.clock.advance(5)
    new = memory.add("database", "PostgreSQL", ["e2"])
    closed = memory.about("database", include_invalid=True)[1]
    assert (closed.id, closed.value, closed.invalidated_at, closed.superseded_by) == (
        old.id,
        "MySQL",
        15,
        new.id,
    )
    assert memory.about("database") == [new] and memory.current() == (new,)


def test_superseding_never_touches_another_subject(memory):
    """F4: facts about other subjects stay valid and unchanged."""
    other = memory.add("team language", "Python", ["e1"])
    memory.add("database", "MySQL", ["e2"])
    memory.add("database", "PostgreSQL", ["e3"])
    assert memory.about("team language") == [other]


def test_knows_only_the_valid_value(memory):
    """F2: knows() answers for the one valid fact, case- and space-insensitively."""
    memory.add("database", "MySQL", ["e1"])
    memory.add("database", "PostgreSQL", ["e2"])
    assert memory.knows(" DATABASE ", "postgresql") and not memory.knows("database", "MySQL")


def test_prompt_section_lists_the_valid_facts(memory):
    """F2, F3: the prompt section renders each valid
    fact with its sources; superseded ones are left out."""
    memory.add("database", "MySQL", ["e1"])
    memory.add("database", "PostgreSQL", ["e2"])
    section = memory.to_prompt_section()
    assert "database: PostgreSQL (from e2)" in section and "MySQL" not in section


class ListArchive:
    """A naive archive: every fact in a list, and a log of what was closed on load."""

    def __init__(self, facts=(), writable=True):
        self.facts = list(facts)
        self.writable = writable
        self.closed = []

    def load(self):
        return list(self.facts)

    def new_id(self):
        return f"fact-{len(self.facts) + 1}"

    def write(self, fact, closed, reason, importance):
        self.facts = [f for f in self.facts if f.id not in {c.id for c in closed}] + [*closed, fact]

    def close(self, stale, reason):
        self.closed.extend(stale)
        return self.writable


def test_two_valid_facts_of_one_subject_on_load_leave_only_the_newest_valid():
    """F5: loading closes a valid fact that a newer valid
    fact of its subject contradicts, in the archive too."""
    from recuris import Fact

    archive = ListArchive(
        [
            Fact("f1", "database", "MySQL", ("e1",), 10),
            Fact("f2", "Database", "PostgreSQL", ("e2",), 20),
        ]
    )
    memory = SemanticMemory(archive, ManualClock(30))
    assert [fact.value for fact in memory.current()] == ["PostgreSQL"]
    assert [(f.id, f.invalidated_at, f.superseded_by) for f in archive.closed] == [("f1", 20, "f2")]


def test_an_archive_that_cannot_close_on_load_keeps_both_and_the_newest_is_current():
    """F5: when the archive cannot be written, the loaded
    facts stay as they were; the newest still answers."""
    from recuris import Fact

    archive = ListArchive(
        [Fact("f1", "db", "MySQL", ("e1",), 10), Fact("f2", "db", "PostgreSQL", ("e2",), 20)], False
    )
    memory = SemanticMemory(archive, ManualClock(30))
    assert memory.knows("db", "PostgreSQL") and len(memory.current()) == 2


def test_a_fact_record_without_sources_is_refused():
    """F3: the record itself refuses to name no source, however it is built."""
    from recuris import Fact

    with pytest.raises(ValueError, match="F3"):
        Fact("fact-1", "team language", "Python", ())


def test_held_facts_leave_nothing_for_the_garbage_collector_to_walk():
    """F6: facts and the subject index are plain tuples
    and strings, which a collection stops tracking."""
    import gc

    memory = SemanticMemory(None, ManualClock(0))
    for number in range(300):
        memory.add(f"setting {number % 100}", f"value {number}", [f"episode-{number}"])
    gc.collect()
    held = [*memory._facts.values(), memory._newest, memory._older]
    assert len(memory.facts) == 300 and not any(gc.is_tracked(part) for part in held)
