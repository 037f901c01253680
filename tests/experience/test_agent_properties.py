"""Property tests for recuris.experience.agent over random models with tool calls (XA1)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris import EpisodicMemory, ManualClock, WorkingMemory
from recuris.core.prompt import ContextSection
from recuris.experience.agent import ExperienceAgent, ExperienceSettings

replies = st.sampled_from(["ask: a", "ask: b", "open", "fill", "FINISH"])


class Asked:
    """A tool handler that answers every `ask:` reply with a numbered answer."""

    instruction = "To ask, reply with: ask: NAME"

    def __init__(self):
        self.answered = 0

    def respond(self, reply):
        if not reply.startswith("ask:"):
            return None
        self.answered += 1
        return ContextSection("## Tool answer", (f"answer {self.answered}",))


@given(st.lists(replies, max_size=20), st.integers(1, 10), st.integers(0, 3))
def test_xa1_tool_calls_are_never_executed_and_count_against_max_steps(
    script, max_steps, kept
):
    """XA1: answered replies are never executed, every reply is one of the max_steps calls,
    and a prompt shows at most `tool_answers_kept` answers."""
    replies_left = list(script)
    prompts = []

    def llm(prompt):
        prompts.append(prompt)
        return replies_left.pop(0) if replies_left else "again"

    executed = []

    def act(action):
        executed.append(action)
        return "ok"

    settings = ExperienceSettings(max_steps=max_steps, tool_answers_kept=kept)
    working = WorkingMemory()
    agent = ExperienceAgent(
        working, EpisodicMemory(), llm, settings, tools=Asked(), clock=ManualClock(0)
    )
    agent.run("goal", "task", act)
    assert len(prompts) <= max_steps
    assert not any(action.startswith("ask:") for action in executed)
    assert len(executed) + sum(reply.startswith("ask:") for reply in script[: len(prompts)]) <= (
        len(prompts)
    )
    assert all(prompt.count("## Tool answer") <= kept for prompt in prompts)
