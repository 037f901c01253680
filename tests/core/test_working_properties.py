"""WorkingMemory checked against a naive model: a plain list of every step (W1-W5)."""

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from recuris import WorkingMemory

texts = st.text(min_size=1, max_size=300).filter(str.strip)
subtask_names = st.lists(
    st.sampled_from(["fill email", "set password", "submit", "验证"]), unique=True, max_size=4
)


class WorkingMemoryMachine(RuleBasedStateMachine):
    """The real WorkingMemory next to a list of every step, the goal and the pins."""

    @initialize(
        window_size=st.integers(1, 8),
        max_summary_chars=st.integers(80, 500),
        max_step_chars=st.integers(1, 120),
        goal=texts,
        subtasks=subtask_names,
    )
    def start(self, window_size, max_summary_chars, max_step_chars, goal, subtasks):
        self.memory = WorkingMemory(window_size, max_summary_chars, max_step_chars=max_step_chars)
        self.new_task(goal, subtasks)

    @rule(goal=texts, subtasks=subtask_names)
    def new_task(self, goal, subtasks):
        self.memory.init_task(goal, subtasks)
        self.goal, self.subtasks, self.steps, self.pins, self.done = goal, subtasks, [], [], []

    @rule(action=texts, result=st.text(max_size=300), failed=st.none() | st.booleans())
    def add_step(self, action, result, failed):
        self.memory.add_step(action, result, failed)
        self.steps.append((action, result))

    @rule(constraint=texts)
    def pin(self, constraint):
        self.memory.pin(constraint)
        if constraint not in self.pins:
            self.pins.append(constraint)

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
        assert len(self.memory.recent_steps) <= self.memory.window_size
        assert [(s.action, s.result) for s in self.memory.recent_steps] == self.steps[
            -self.memory.window_size :
        ]

    @invariant()
    def W3_trajectory_is_every_step_and_compressed_plus_recent(self):
        memory = self.memory
        assert [(s.action, s.result) for s in memory.trajectory] == self.steps
        assert memory.compressed_steps + memory.recent_steps == memory.trajectory

    @invariant()
    def W4_prompt_section_is_bounded_by_the_configuration(self):
        memory = self.memory
        fixed = sum(len(text) + 12 for text in [self.goal, *self.pins, *self.subtasks]) + 200
        summary = memory.max_summary_chars + 2 * (memory.summary.count("\n") + 1)
        # A rendered step: indent, index (10 digits allow 10^10 steps), two clipped
        # sides, the arrow, the failed mark and a newline.
        per_step = 2 + 10 + 2 + 2 * memory.max_step_chars + 4 + 9 + 1
        assert memory.summary.count("\n") <= 2  # the default summarizer writes at most 3 lines
        assert len(memory.to_prompt_section()) <= fixed + summary + memory.window_size * per_step

    @invariant()
    def W5_every_pinned_constraint_is_in_the_prompt_section(self):
        section = self.memory.to_prompt_section()
        assert all(" ".join(pin.split()) in section for pin in self.pins)


TestWorkingMemoryMachine = WorkingMemoryMachine.TestCase
