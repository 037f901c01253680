"""Example tests for recuris.experience.agent.ExperienceAgent: what it adds (XA1-XA4)."""

import pytest

from recuris import (
    AgentSettings,
    DecayManager,
    EpisodicMemory,
    ManualClock,
    RetrievalSettings,
    WorkingMemory,
    WorkingSettings,
)
from recuris.tour.mock_environment import MockEnvironment
from recuris.core.mock_llm import PromptFollowingLLM, ScriptedLLM
from recuris.core.prompt import ContextSection
from recuris.experience.agent import EpisodicExperience, ExperienceAgent, ExperienceSettings

from signup_form import SIGNUP, SITE
from twins import twins


def make_agent(llm, experience=None, **options):
    """An agent on a fresh episodic memory; ExperienceSettings' fields may be given by name."""
    fields = ("max_steps", "max_failures", "tool_answers_kept", "settle")
    settings = {name: options.pop(name) for name in fields if name in options}
    retrieval = {name: options.pop(name) for name in ("top_k", "threshold") if name in options}
    if retrieval:
        settings["retrieval"] = RetrievalSettings(**retrieval)
    options.setdefault("clock", ManualClock(100))
    experience = experience or EpisodicMemory()
    working = WorkingMemory(WorkingSettings(window_size=3))
    return ExperienceAgent(working, experience, llm, ExperienceSettings(**settings), **options)


class AskRegion:
    """A tool handler of the smallest kind: one call it answers, and how to make it."""

    instruction = "To ask for the region, reply with: ask: region"

    def respond(self, reply):
        answer = ContextSection("## Tool answer", ("region is eu-west",))
        return answer if reply.startswith("ask:") else None


def test_a_reply_the_tool_handler_answers_is_never_executed():
    """XA1: the handler's answer goes into the next prompt; the reply is not an action."""
    llm, env = ScriptedLLM(["ask: region", "act"]), MockEnvironment()
    result = make_agent(llm, tools=AskRegion()).run("goal", "type", env)
    assert env.executed == ["act"] and "region is eu-west" in llm.prompts[1] and result.success


def test_a_tool_call_uses_one_of_the_max_steps_calls():
    """XA1: a model that only calls the tool is stopped at max_steps, nothing executed."""
    llm, env = ScriptedLLM(["ask: region"] * 10), MockEnvironment()
    result = make_agent(llm, tools=AskRegion(), max_steps=3).run("goal", "type", env)
    assert (result.status, len(llm.prompts), env.executed) == ("failed", 3, [])


def test_the_prompt_keeps_the_last_tool_answers_kept_answers():
    """XA1: with tool_answers_kept=1, the prompt shows one answer however many were given."""
    llm = ScriptedLLM(["ask: region", "ask: region", "act"])
    make_agent(llm, tools=AskRegion(), tool_answers_kept=1).run("goal", "type", MockEnvironment())
    assert llm.prompts[2].count("region is eu-west") == 1


def test_the_tools_instruction_ends_every_prompt_and_only_when_there_are_tools():
    """XA1: a prompt offers a tool only when the agent has one; its instruction ends the prompt."""
    with_tools, without = ScriptedLLM(["act"]), ScriptedLLM(["act"])
    make_agent(with_tools, tools=AskRegion()).run("goal", "type", MockEnvironment())
    make_agent(without).run("goal", "type", MockEnvironment())
    assert with_tools.prompts[0].endswith(AskRegion.instruction)
    assert "ask: region" not in without.prompts[0] and "search_memory" not in without.prompts[0]


def test_without_a_tool_handler_every_reply_is_an_action():
    """XA1: the layer brings no tools of its own; a manager's agent brings search_memory."""
    llm, env = ScriptedLLM(["ask: region"]), MockEnvironment()
    make_agent(llm).run("goal", "type", env)
    assert env.executed == ["ask: region"]


def test_a_negative_number_of_tool_answers_is_refused():
    """XA1: tool_answers_kept below 0 raises, naming it."""
    with pytest.raises(ValueError, match="tool_answers_kept"):
        ExperienceSettings(tool_answers_kept=-1)


def test_a_context_section_is_shown_after_experience_and_refreshed_with_each_recall():
    """XA2, P1: an injected source's section follows experience and is asked again at each
    recall."""

    class Counting:
        def __init__(self):
            self.asked = 0

        def section(self, query, task_type, hits):
            self.asked += 1
            return ContextSection("## Notes", (f"- asked {self.asked} times",))

    llm = ScriptedLLM(["a", "b"])
    source = Counting()
    make_agent(llm, context=[source]).run("goal", "type", MockEnvironment(), ["a", "b"])
    assert source.asked == 3 and "- asked 1 times" in llm.prompts[0]
    assert llm.prompts[1].index("## Related experience") < llm.prompts[1].index("## Notes")
    assert "- asked 2 times" in llm.prompts[1]


def test_a_value_a_section_states_fills_a_slot_of_the_plan():
    """XA3: a subtask with a slot is done by the action holding the value a section gave."""

    class Region:
        def section(self, query, task_type, hits):
            return ContextSection("## Notes", ("- region: eu-west",), (("Region", "eu-west"),))

    agent = make_agent(ScriptedLLM(["deploy to eu-west"]), context=[Region()])
    agent.run("ship", "release", MockEnvironment(), ["deploy to {region}", "check"])
    assert agent.working.pending_subtasks == ("check",)


def test_a_value_noted_in_a_result_fills_a_slot_of_the_plan_whichever_copy_is_used():
    """XA3: every value a step's result noted for a slot completes it, the first or a later one."""
    results = {"a": "ok; note: port = 80", "b": "ok; note: port = 90"}
    for used in ("use 80", "use 90"):
        agent = make_agent(ScriptedLLM(["a", "b", used]))
        environment = MockEnvironment(results)
        agent.run("go", "type", environment, ["a", "b", "use {port}", "end"])
        assert agent.working.pending_subtasks == ("end",)


def test_a_slot_step_is_not_done_by_an_action_that_only_shares_its_verb():
    """XA3: "book {preferred hotel}" stays pending when "book the red-eye flight" runs."""
    llm, env = ScriptedLLM(["book the red-eye flight"]), MockEnvironment()
    agent = make_agent(llm)
    agent.run("plan the trip", "travel", env, ["book {preferred hotel}"])
    assert agent.working.pending_subtasks == ("book {preferred hotel}",)


@pytest.mark.parametrize("settle, shown", [(True, 1), (False, 2)])
def test_episodic_experience_settles_unless_the_settings_turn_it_off(settle, shown):
    """XA4: on an EpisodicMemory the agent shows the settled retrieval; settle=False, all."""
    events = []
    agent = make_agent(
        ScriptedLLM([]), twins(), top_k=2, threshold=0.1, settle=settle, observer=events.append
    )
    agent.run("deploy search to US", "deploy", MockEnvironment())
    assert len(events[0].recalled) == shown


def test_retrieved_episodes_are_reinforced_once_per_run():
    """XA4, A5: a hit gets one access per run, not one per re-retrieval."""
    clock = ManualClock(0)
    experience = EpisodicExperience(EpisodicMemory(), DecayManager(clock=clock))
    agent = make_agent(PromptFollowingLLM(), experience, clock=clock)
    first = agent.run("register an account", "web form", MockEnvironment(SITE), SIGNUP)
    clock.advance(50)
    agent.run("register another account", "web form", MockEnvironment(SITE), SIGNUP)
    assert (first.episode.access_count, first.episode.last_access_at) == (1, 50)


def test_documents_settings_get_the_layers_defaults_beside_them():
    """XA4: an AgentSettings given is kept, with settling on and the tool answers' default."""
    given = AgentSettings(max_steps=4, retrieval=RetrievalSettings(threshold=0.5))
    agent = ExperienceAgent(WorkingMemory(), EpisodicMemory(), ScriptedLLM([]), given)
    assert agent.settings == ExperienceSettings(max_steps=4, retrieval=given.retrieval)
    assert agent.settings.settle


def test_settings_of_the_wrong_type_are_refused():
    """A1: the agent takes its settings as one settings record, nothing else."""
    with pytest.raises(TypeError, match="AgentSettings"):
        ExperienceAgent(WorkingMemory(), EpisodicMemory(), ScriptedLLM([]), {"max_steps": 3})


def test_a_run_keeps_its_state_in_its_own_record_not_on_the_agent():
    """A2: a run adds no attribute to the agent; what a run tracks lives in the run's record."""
    agent = make_agent(ScriptedLLM(["a", "ask: region", "b"]), tools=AskRegion())
    before = dict(vars(agent))
    agent.run("goal", "type", MockEnvironment(), ["a", "b"])
    assert vars(agent).keys() == before.keys()
    assert all(vars(agent)[name] is value for name, value in before.items())


def test_the_episode_is_settled_into_the_experience():
    """A2: the finished episode goes to the experience's `settle`, once."""

    class Kept(EpisodicExperience):
        def settle(self, episode):
            self.settled = episode
            return super().settle(episode)

    experience = Kept(EpisodicMemory())
    result = make_agent(ScriptedLLM(["a"]), experience).run("goal", "type", MockEnvironment())
    assert experience.settled is result.episode
    assert experience.episodic.episodes == (result.episode,)


def test_each_recall_is_told_the_actions_done_so_far():
    """XA4, LS6: the experience hears, at each recall, the task's actions done, failed ones left
    out, so that it can show the lessons about the step at hand."""

    class Heard(EpisodicExperience):
        def recall(self, query, task_type, settings, done=()):
            self.heard.append(tuple(done))
            return super().recall(query, task_type, settings, done)

    experience = Heard(EpisodicMemory())
    experience.heard = []
    environment = MockEnvironment({"b": "error: no"})
    make_agent(ScriptedLLM(["a", "b", "c"]), experience).run("goal", "t", environment, ["a", "c"])
    assert experience.heard[0] == () and experience.heard[1] == ("a",)
    assert ("a", "b") not in experience.heard
