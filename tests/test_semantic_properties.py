"""SemanticMemory checked against a naive model: a list of (subject, value, sources) (F1-F3)."""

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from recuris import SemanticMemory

subjects = st.sampled_from(["team language", "Team Language", "database", "数据库"])
values = st.sampled_from(["Python", "python ", "PostgreSQL", "MySQL", "Go"])
sources = st.lists(st.sampled_from(["e1", "e2", "e3"]), max_size=3)


def key(text):
    return " ".join(text.casefold().split())


class SemanticMachine(RuleBasedStateMachine):
    """Adds, accepted or refused, on the real memory next to a plain list of accepted facts."""

    def __init__(self):
        super().__init__()
        self.memory = SemanticMemory()
        self.model = []
        self.seen_before = []

    @rule(subject=subjects, value=values, source_ids=sources)
    def add(self, subject, value, source_ids):
        self.seen_before = list(self.memory.facts)
        known = any((key(s), key(v)) == (key(subject), key(value)) for s, v, _ in self.model)
        try:
            self.memory.add(subject, value, source_ids)
        except ValueError:
            assert known or not source_ids
            return
        assert not known and source_ids
        self.model.append((subject, value, tuple(dict.fromkeys(source_ids))))

    @invariant()
    def F1_facts_are_only_appended(self):
        assert list(self.memory.facts[: len(self.seen_before)]) == self.seen_before
        assert [(f.subject, f.value, f.source_ids) for f in self.memory.facts] == self.model

    @invariant()
    def F2_no_two_facts_state_the_same_thing(self):
        keys = [(key(f.subject), key(f.value)) for f in self.memory.facts]
        assert len(keys) == len(set(keys))

    @invariant()
    def F3_every_fact_names_a_source(self):
        assert all(fact.source_ids for fact in self.memory.facts)


TestSemanticMachine = SemanticMachine.TestCase
