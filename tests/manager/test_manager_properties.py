"""MemoryManager on every store against a naive model of what each user wrote (SQ1, MG1-MG3, Q1).

The machine runs on each store the suite knows, a fork's included (tests/factories.py). Its
"reopen" closes a store that persists and opens it again from its folder; any other store
gets a new manager on the same store object, so nothing the old manager cached survives.
"""

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from recuris import ManualClock, MemoryManager
from recuris.core.text import estimate_tokens

from factories import shared_examples, store_factories

pytestmark = pytest.mark.slow  # a SQLite file reopened at every step: the full run has it
STORES = store_factories()

users = st.sampled_from(["ana", "bob", "陈"])
subjects = st.sampled_from(["database", "language"])
values = st.sampled_from(["MySQL", "PostgreSQL", "Python", "Go"])
events = st.sampled_from(
    [
        "deploy failed on step 3",
        "user asked for a refund",
        "注册成功了",
        "x'); DROP TABLE items;--",
    ]
)
queries = st.sampled_from(
    ["database", "deploy", "refund", "language Python", "注册", "nothing matches"]
)


class ManagerMachine(RuleBasedStateMachine):
    """Writes, recalls, forgets and reopens on a manager; a dict of lists is the model."""

    def __init__(self, name):
        super().__init__()
        self.make_store = STORES[name]
        self.folder = Path(tempfile.mkdtemp())
        self.clock = ManualClock(1_000_000)
        self.store = self.make_store(self.folder)
        self.manager = MemoryManager(self.store, clock=self.clock)
        self.events = {}  # user -> event texts written
        self.facts = {}  # user -> [(subject, value)] in order written
        self.forgotten = set()

    def teardown(self):
        self.store.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    @rule(user=users, text=events)
    def write_event(self, user, text):
        self.clock.advance(60)
        self.manager.write(text, user)
        self.events.setdefault(user, []).append(text)
        self.forgotten.discard(user)

    @rule(user=users, subject=subjects, value=values)
    def write_fact(self, user, subject, value):
        self.clock.advance(60)
        current = [v for s, v in self.facts.get(user, []) if s == subject][-1:]
        try:
            self.manager.write(f"{subject}: {value}", user, level="semantic")
        except ValueError:
            assert current == [value]  # F2: only the valid statement itself is refused
            return
        assert current != [value]
        self.facts.setdefault(user, []).append((subject, value))
        self.forgotten.discard(user)

    @rule(user=users, query=queries, budget=st.none() | st.integers(0, 60))
    def recall(self, user, query, budget):
        result = self.manager.recall(query, user, top_k=4, token_budget=budget)
        totals = [r.total for r in result.results]
        weights = self.manager.policy.weights
        assert totals == sorted(totals, reverse=True)  # Q1
        for r in result.results:
            assert r.item.user_id == user  # MG1
            assert r.total == sum(getattr(weights, name) * r.parts[name] for name in r.parts)
        assert budget is None or estimate_tokens(result.text) <= budget  # Q1

    @rule(user=users)
    def forget(self, user):
        self.manager.forget_user(user)
        self.events.pop(user, None)
        self.facts.pop(user, None)
        self.forgotten.add(user)

    @precondition(lambda self: True)
    @rule()
    def reopen(self):
        if getattr(self.make_store, "reopens", False):
            self.store.close()
            self.store = self.make_store(self.folder)
        self.manager = MemoryManager(self.store, clock=self.clock)

    @invariant()
    def SQ1_MG1_each_user_holds_exactly_what_they_wrote(self):
        for user in ["ana", "bob", "陈"]:
            items = self.manager.list(user)
            assert all(item.user_id == user for item in items)
            assert [i.content for i in items if i.level == "episodic"] == self.events.get(user, [])
            assert [i.content for i in items if i.level == "semantic"] == [
                f"{s}: {v}" for s, v in self.facts.get(user, [])
            ]

    @invariant()
    def MG2_facts_are_superseded_never_rewritten(self):
        for user, written in self.facts.items():
            facts = self.manager.users.get(user).semantic.facts
            for subject in {s for s, _ in written}:
                about = [f for f in facts if f.subject == subject]
                assert [f.is_valid for f in about] == [False] * (len(about) - 1) + [True]
                assert all(
                    old.superseded_by == new.id for old, new in zip(about, about[1:], strict=False)
                )

    @invariant()
    def MG3_forgotten_users_leave_no_text_behind(self):
        for user in self.forgotten:
            assert self.manager.list(user) == []
            assert all(
                r.reason == "" or r.operation == "forget-user" for r in self.manager.history(user)
            )


@pytest.mark.parametrize("name", list(STORES))
def test_MG1_MG3_the_manager_follows_what_each_user_wrote_on_every_store(name):
    """MG1-MG3, Q1, SQ1: on any store, through reopening, a user holds exactly what they wrote."""
    run_state_machine_as_test(lambda: ManagerMachine(name), settings=shared_examples(len(STORES)))
