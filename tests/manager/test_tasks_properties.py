"""Tasks checked against a naive model: each user's task as a goal and a list of steps (N1, N2, N5,
N7).

The machine drives a manager's task lifecycle for two users and, at any point, opens a new
manager on the same store, as a restarted process would: the task in progress must come back
whole, and finishing it must settle every step recorded under any of the managers.
"""

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from recuris import InMemoryStore, ManagerSettings, ManualClock, MemoryManager, SQLiteStore
from recuris import WorkingSettings
from recuris.core.text import estimate_tokens

from factories import shared_examples

USERS = ["ana", "ben"]
texts = st.text(min_size=1, max_size=80).filter(str.strip)
# Past U1's minimum, so that each is stored; long enough that a few pass any budget drawn.
notes = st.text(min_size=3, max_size=400).filter(lambda text: len(text.strip()) >= 3)


class TasksMachine(RuleBasedStateMachine):
    """A manager's tasks beside a dict of user -> (goal, steps) for the task in progress."""

    def __init__(self, make_store):
        super().__init__()
        self.make_store = make_store

    @initialize(budget=st.none() | st.integers(1, 300))
    def open(self, budget):
        self.budget = budget
        self.store = self.make_store()
        settings = ManagerSettings(working=WorkingSettings(token_budget=budget))
        self.manager = MemoryManager(self.store, clock=ManualClock(1_000), settings=settings)
        self.model: dict[str, tuple[str, list[tuple[str, str]]]] = {}
        self.episodes: dict[str, list] = {user: [] for user in USERS}

    @rule(user=st.sampled_from(USERS), goal=texts)
    def start(self, user, goal):
        if user in self.model:
            with pytest.raises(ValueError, match="N1"):
                self.manager.start_task(user, goal)
            return
        self.manager.start_task(user, goal)
        self.model[user] = (goal, [])

    @rule(user=st.sampled_from(USERS), action=texts, result=st.text(max_size=80))
    def record(self, user, action, result):
        if user not in self.model:
            with pytest.raises(ValueError, match="N1"):
                self.manager.record_step(user, action, result)
            return
        self.manager.record_step(user, action, result)
        self.model[user][1].append((action, result))

    @rule(user=st.sampled_from(USERS), written=st.lists(notes, min_size=1, max_size=4))
    def note(self, user, written):
        """N7: notes at the working level, given or routed by their tag, in a task or not."""
        for number, note in enumerate(written):
            if number % 2:
                self.manager.write(note, user, tags=["state"])
            else:
                self.manager.write(note, user, level="working")

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def finish(self, data):
        user = data.draw(st.sampled_from(sorted(self.model)))
        goal, steps = self.model.pop(user)
        episode = self.manager.finish_task(user).episode
        assert episode.goal == goal
        assert [(step.action, step.result) for step in episode.trajectory] == steps

    @rule()
    def reopen(self):
        """N5: a new manager on the same store finds every task in progress as it was."""
        settings = ManagerSettings(working=WorkingSettings(token_budget=self.budget))
        self.manager = MemoryManager(self.store, clock=ManualClock(2_000), settings=settings)

    @invariant()
    def N1_each_user_has_the_task_the_model_says(self):
        for user in USERS:
            task = self.manager.tasks.get(user)
            if user not in self.model:
                assert task is None
                continue
            goal, steps = self.model[user]
            assert task.goal == goal
            assert [(step.action, step.result) for step in task.steps] == steps

    @invariant()
    def N1_one_task_item_per_task_in_progress(self):
        for user in USERS:
            held = [
                item
                for item in self.store.list(user, "working")
                if item.metadata.get("kind") == "task"
            ]
            assert len(held) == (1 if user in self.model else 0)

    @invariant()
    def N7_each_tasks_section_and_notes_fit_the_budget_or_one_note_is_left(self):
        for user in self.model:
            task = self.manager.tasks.get(user)
            notes = [
                item.content
                for item in self.store.list(user, "working", task.id)
                if item.metadata.get("kind") != "task"
            ]
            section = estimate_tokens(task.working.to_prompt_section())
            tier = section + sum(estimate_tokens(note) for note in notes)
            assert self.budget is None or len(notes) <= 1 or tier <= self.budget

    def teardown(self):
        close = getattr(self.store, "close", None)
        if close is not None:
            close()


STORES = {"memory": InMemoryStore, "sqlite": lambda: SQLiteStore(":memory:")}


@pytest.mark.parametrize("name", list(STORES))
def test_N1_N2_N5_N7_tasks_follow_a_dict_of_goals_and_steps_across_managers(name):
    """N1, N2, N5, N7: tasks started, continued, noted, finished and reopened behave as the
    model says."""
    run_state_machine_as_test(
        lambda: TasksMachine(STORES[name]), settings=shared_examples(len(STORES))
    )
