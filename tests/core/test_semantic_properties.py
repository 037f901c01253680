"""SemanticMemory checked against a naive model: a list of facts with validity (F1-F5)."""

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from recuris import InMemoryStore, ManualClock, SemanticMemory
from recuris.evolution.stored_facts import StoredFacts

subjects = st.sampled_from(["team language", "Team Language", "database", "数据库"])
values = st.sampled_from(["Python", "python ", "PostgreSQL", "MySQL", "Go"])
sources = st.lists(st.sampled_from(["e1", "e2", "e3"]), max_size=3)


def key(text):
    return " ".join(text.casefold().split())


class SemanticMachine(RuleBasedStateMachine):
    """Adds, accepted or refused, on the real memory next to a plain list of facts."""

    def __init__(self):
        super().__init__()
        self.clock = ManualClock(0)
        self.memory = SemanticMemory(StoredFacts(InMemoryStore(), "default"), clock=self.clock)
        self.model = []  # [subject, value, sources, valid]
        self.before = ()

    @rule(subject=subjects, value=values, source_ids=sources)
    def add(self, subject, value, source_ids):
        self.clock.advance(1)
        self.before = self.memory.facts
        valid = [row for row in self.model if row[3] and key(row[0]) == key(subject)]
        duplicate = bool(valid) and key(valid[0][1]) == key(value)
        try:
            self.memory.add(subject, value, source_ids)
        except ValueError:
            assert duplicate or not source_ids
            return
        assert not duplicate and source_ids
        for row in valid:
            row[3] = False
        self.model.append([subject, value, tuple(dict.fromkeys(source_ids)), True])

    @invariant()
    def F1_statements_never_change_only_validity_closes(self):
        now = self.memory.facts
        for old, new in zip(self.before, now, strict=False):
            assert (old.id, old.subject, old.value, old.source_ids) == (
                new.id,
                new.subject,
                new.value,
                new.source_ids,
            )
            assert old.is_valid or old == new  # a closed fact never changes again
        assert [(f.subject, f.value, f.source_ids, f.is_valid) for f in now] == [
            tuple(r) for r in self.model
        ]

    @invariant()
    def F2_at_most_one_valid_fact_per_subject(self):
        valid = [key(f.subject) for f in self.memory.current()]
        assert len(valid) == len(set(valid))

    @invariant()
    def F3_every_fact_names_a_source(self):
        assert all(fact.source_ids for fact in self.memory.facts)

    @invariant()
    def F4_a_closed_fact_names_a_successor_about_the_same_subject(self):
        by_id = {fact.id: fact for fact in self.memory.facts}
        for fact in self.memory.facts:
            if not fact.is_valid:
                assert key(by_id[fact.superseded_by].subject) == key(fact.subject)

    @invariant()
    def F5_the_subject_index_answers_as_a_scan_of_every_fact(self):
        reloaded = SemanticMemory(self.memory.archive, self.clock)
        for subject in ("team language", "database", "数据库", "unknown"):
            scan = [f for f in reversed(self.memory.facts) if key(f.subject) == key(subject)]
            assert self.memory.about(subject, include_invalid=True) == scan
            assert reloaded.about(subject, include_invalid=True) == scan
            assert self.memory.about(subject) == [f for f in scan if f.is_valid]


TestSemanticMachine = SemanticMachine.TestCase
