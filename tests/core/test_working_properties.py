"""WorkingMemory checked against a naive model: a plain list of every step (W1-W9).

Every check runs on each summarizer the suite knows, a fork's included (tests/factories.py),
and none reads the summary's format: a summarizer may write whatever it likes (M1-M4, the
built-in summary's own rules, are tests/core/test_compression_properties.py's).
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from recuris import StructuredSummarizer, WorkingMemory, WorkingSettings
from recuris.core.prompt import INDENT
from recuris.core.text import clip, estimate_tokens

from factories import shared_examples, summarizer_factories

SUMMARIZERS = summarizer_factories()

texts = st.text(min_size=1, max_size=300).filter(str.strip)
subtask_names = st.lists(
    st.sampled_from(["fill email", "set password", "submit", "验证"]), unique=True, max_size=4
)


class WorkingMemoryMachine(RuleBasedStateMachine):
    """The real WorkingMemory, with one summarizer, beside a list of every step, goal and pins."""

    def __init__(self, name):
        super().__init__()
        self.make_summarizer = SUMMARIZERS[name]

    @initialize(
        window_size=st.integers(1, 8),
        max_summary_chars=st.integers(80, 500),
        max_step_chars=st.integers(1, 120),
        token_budget=st.none() | st.integers(1, 400),
        goal=texts,
        subtasks=subtask_names,
    )
    def start(self, window_size, max_summary_chars, max_step_chars, token_budget, goal, subtasks):
        self.settings = WorkingSettings(
            window_size, max_summary_chars, max_step_chars, token_budget
        )
        self.memory = WorkingMemory(self.settings, self.make_summarizer(max_summary_chars))
        self.new_task(goal, subtasks)

    @rule(goal=texts, subtasks=subtask_names)
    def new_task(self, goal, subtasks):
        self.memory.init_task(goal, subtasks)
        self.goal, self.subtasks, self.steps, self.pins, self.done = goal, subtasks, [], [], []

    @rule(action=texts, result=st.text(max_size=300), failed=st.none() | st.booleans())
    def add_step(self, action, result, failed):
        self.memory.add_step(action, result, failed)
        self.steps.append((action, result))
        budget = self.settings.token_budget
        section = self.memory.to_prompt_section()
        # W7: right after a step, the section fits the budget or only the newest step is left.
        assert (
            budget is None
            or estimate_tokens(section) <= budget
            or len(self.memory.recent_steps) == 1
        )

    @rule()
    def reopen(self):
        """W8: started again from its reads and resumed, it is the same, and goes on as one."""
        old = self.memory
        summarizer = self.make_summarizer(self.settings.max_summary_chars)
        self.memory = WorkingMemory(self.settings, summarizer)
        self.memory.init_task(old.goal, old.subtasks)
        for subtask in old.done_subtasks:
            self.memory.mark_done(subtask)
        for constraint in old.pins:
            self.memory.pin(constraint)
        self.memory.summarizer_failures = list(old.summarizer_failures)
        self.memory.resume(old.trajectory, len(old.recent_steps), old.summary)
        assert self.memory.to_prompt_section() == old.to_prompt_section()
        assert (self.memory.trajectory, self.memory.recent_steps, self.memory.summary) == (
            old.trajectory,
            old.recent_steps,
            old.summary,
        )

    @rule(constraint=texts)
    def pin(self, constraint):
        self.memory.pin(constraint)
        if constraint not in self.pins:
            self.pins.append(constraint)
        budget = self.settings.token_budget
        # W7: a pin makes the section longer, and it still fits, as after a step.
        assert (
            budget is None
            or estimate_tokens(self.memory.to_prompt_section()) <= budget
            or len(self.memory.recent_steps) <= 1
        )

    @rule(notes=st.lists(texts, min_size=1, max_size=3))
    def fold_notes(self, notes):
        self.memory.fold_notes(notes)
        budget = self.settings.token_budget
        # W7, W9: notes lengthen the summary, and the section still fits, as after a step.
        assert (
            budget is None
            or estimate_tokens(self.memory.to_prompt_section()) <= budget
            or len(self.memory.recent_steps) <= 1
        )

    @precondition(lambda self: len(self.done) < len(self.subtasks))
    @rule(data=st.data())
    def mark_done(self, data):
        subtask = data.draw(st.sampled_from([s for s in self.subtasks if s not in self.done]))
        self.memory.mark_done(subtask)
        self.done.append(subtask)

    @invariant()
    def W1_goal_stays_the_same_for_the_whole_task(self):
        assert self.memory.goal == self.goal

    @invariant()
    def W2_window_never_exceeds_window_size(self):
        recent = [(s.action, s.result) for s in self.memory.recent_steps]
        assert len(recent) <= self.memory.window_size
        # The window is the newest steps; only the token budget (W7) may shorten it.
        assert recent == self.steps[len(self.steps) - len(recent) :]
        if self.settings.token_budget is None:
            assert len(recent) == min(self.memory.window_size, len(self.steps))

    @invariant()
    def W3_trajectory_is_every_step_and_compressed_plus_recent(self):
        memory = self.memory
        assert [(s.action, s.result) for s in memory.trajectory] == self.steps
        assert memory.compressed_steps + memory.recent_steps == memory.trajectory

    @invariant()
    def W4_the_summary_never_exceeds_max_summary_chars(self):
        assert len(self.memory.summary) <= self.memory.max_summary_chars

    @invariant()
    def W4_prompt_section_is_bounded_by_the_configuration(self):
        memory = self.memory
        fixed = sum(len(text) + 12 for text in [self.goal, *self.pins, *self.subtasks]) + 200
        # Each summary line is indented and ends a line; at worst each character is a line.
        summary = (len(INDENT) + 2) * memory.max_summary_chars
        # A rendered step: indent, index (10 digits allow 10^10 steps), two clipped
        # sides, the arrow, the failed mark and a newline.
        per_step = 2 + 10 + 2 + 2 * memory.max_step_chars + 4 + 9 + 1
        assert len(memory.to_prompt_section()) <= fixed + summary + memory.window_size * per_step

    @invariant()
    def W5_every_pinned_constraint_is_in_the_prompt_section(self):
        section = self.memory.to_prompt_section()
        assert all(" ".join(pin.split()) in section for pin in self.pins)


@pytest.mark.parametrize("name", list(SUMMARIZERS))
def test_W1_W9_working_memory_follows_a_list_of_every_step_whatever_the_summarizer(name):
    """W1-W9: with any summarizer, goal, window, budget, trajectory, prompt, pins, folded notes
    and saving behave as the model says."""
    run_state_machine_as_test(
        lambda: WorkingMemoryMachine(name), settings=shared_examples(len(SUMMARIZERS))
    )


class Verbose:
    """A summarizer's answers, padded past any budget."""

    def __init__(self, inner):
        self.inner = inner
        self.answers = []

    def __call__(self, old_summary, evicted_steps):
        self.answers.append(self.inner(old_summary, evicted_steps) + " and so on" * 50)
        return self.answers[-1]


@pytest.mark.parametrize("name", list(SUMMARIZERS))
@shared_examples(len(SUMMARIZERS))
@given(st.integers(1, 4), st.integers(80, 300), st.lists(texts, min_size=1, max_size=10))
def test_W4_an_over_long_summary_is_clipped_to_max_summary_chars(
    name, window_size, max_summary_chars, actions
):
    """W4: whatever the summarizer answers, working memory keeps it clipped to max_summary_chars."""
    verbose = Verbose(SUMMARIZERS[name](max_summary_chars))
    memory = WorkingMemory(WorkingSettings(window_size, max_summary_chars), verbose)
    memory.init_task("ship the release")
    for action in actions:
        memory.add_step(action, "ok")
        assert memory.summary == (
            clip(verbose.answers[-1], max_summary_chars) if verbose.answers else ""
        )


JUNK = {"None": None, "empty": "", "blank": " \n ", "a number": 42}
plans = st.lists(st.sampled_from([None, None, "raises", *JUNK]), min_size=1, max_size=6)


class Saboteur:
    """A summarizer in the way of another: on the calls the plan marks, it raises or gives junk."""

    def __init__(self, inner, plan):
        self.inner, self.plan, self.calls = inner, plan, []

    def __call__(self, old_summary, evicted_steps):
        kind = self.plan[len(self.calls) % len(self.plan)]
        self.calls.append((old_summary, list(evicted_steps), kind))
        if kind == "raises":
            raise RuntimeError("the model timed out")
        return self.inner(old_summary, evicted_steps) if kind is None else JUNK[kind]


@pytest.mark.parametrize("name", list(SUMMARIZERS))
@shared_examples(len(SUMMARIZERS))
@given(
    st.integers(1, 4),
    st.integers(80, 300),
    st.lists(st.tuples(texts, st.booleans()), max_size=12),
    plans,
)
def test_W3_a_summarizer_that_fails_is_replaced_by_the_structured_one_and_the_failure_recorded(
    name, window_size, max_summary_chars, steps, plan
):
    """W3: a summarizer that raises or answers junk is replaced by the structured one, and noted."""
    saboteur = Saboteur(SUMMARIZERS[name](max_summary_chars), plan)
    memory = WorkingMemory(WorkingSettings(window_size, max_summary_chars), saboteur)
    memory.init_task("ship the release")
    for action, failed in steps:
        folds = len(saboteur.calls)
        memory.add_step(action, "error" if failed else "ok", failed)
        if len(saboteur.calls) > folds and saboteur.calls[-1][2] is not None:
            old_summary, evicted, _ = saboteur.calls[-1]
            assert memory.summary == StructuredSummarizer(max_summary_chars)(old_summary, evicted)
    failures = [kind for _, _, kind in saboteur.calls if kind is not None]
    assert len(memory.summarizer_failures) == len(failures)
    assert [
        kind
        for kind, failure in zip(failures, memory.summarizer_failures)
        if (failure == "RuntimeError: the model timed out") != (kind == "raises")
    ] == []
