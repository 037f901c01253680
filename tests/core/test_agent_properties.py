"""Property tests for recuris.core.agent over random models and environments (A1-A3)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris import (
    AgentSettings,
    EpisodicMemory,
    ManualClock,
    RecurisAgent,
    WorkingMemory,
    WorkingSettings,
)

replies = st.one_of(
    st.sampled_from(["open", "fill", "submit", "FINISH", "finish", "", None, "Boom!"]),
    st.text(max_size=30),
)
results = st.sampled_from(["ok", "ok: saved", "error: 500", "提交失败", "raise", 3])
goals = st.text(min_size=1, max_size=60).filter(str.strip)


class Script:
    """A model and an environment that replay drawn lists and raise where told to."""

    def __init__(self, replies, results):
        self.replies, self.results, self.prompts = list(replies), list(results), []

    def llm(self, prompt):
        self.prompts.append(prompt)
        reply = self.replies.pop(0) if self.replies else "again"
        if reply == "Boom!":
            raise RuntimeError("model crashed")
        return reply

    def act(self, action):
        result = self.results.pop(0) if self.results else "ok"
        if result == "raise":
            raise OSError("environment down")
        return result


@given(
    st.lists(replies, max_size=25),
    st.lists(results, max_size=25),
    st.integers(1, 12),
    st.integers(1, 3),
    goals,
    st.integers(1, 3),
)
def test_A1_A2_A3_any_run_is_bounded_settled_once_and_goal_led(
    replies, results, max_steps, max_failures, goal, runs
):
    """A1: at most max_steps actions and calls; A2: one episode a run; A3: goal in every prompt."""
    episodic = EpisodicMemory()
    settings = AgentSettings(max_steps=max_steps, max_failures=max_failures)
    agent = RecurisAgent(
        WorkingMemory(WorkingSettings(window_size=2)),
        episodic,
        None,
        settings,
        clock=ManualClock(0),
    )
    for run in range(1, runs + 1):
        script = Script(replies, results)
        agent.llm_fn = script.llm
        result = agent.run(goal, "task", script.act)
        assert result.steps <= max_steps and len(script.prompts) <= max_steps  # A1
        assert len(episodic) == run and episodic.episodes[-1] is result.episode  # A2
        flat_goal = " ".join(goal.split())
        assert all(f"Goal: {flat_goal}" in prompt for prompt in script.prompts)  # A3
        assert result.success == (result.status == "success") and (
            result.success or result.failure_reason
        )
