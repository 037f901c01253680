"""Example tests for recuris.core.agent.RecurisAgent: the six stages and how runs end (A1-A4)."""

import pytest

from recuris import (
    AgentSettings,
    DecayManager,
    EpisodicMemory,
    ManualClock,
    RecurisAgent,
    RetrievalSettings,
    WorkingMemory,
    WorkingSettings,
)
from recuris.tour.mock_environment import MockEnvironment
from recuris.core.agent import EpisodicExperience
from recuris.core.mock_llm import PromptFollowingLLM, ScriptedLLM
from recuris.core.prompt import ContextSection

SIGNUP = ["open page", "fill email", "submit | solve captcha then submit"]
SITE = {"submit": "error: captcha required"}


def make_agent(llm, experience=None, **options):
    """An agent on a fresh episodic memory; AgentSettings' fields may be given by name."""
    fields = ("max_steps", "max_failures", "tool_answers_kept")
    settings = {name: options.pop(name) for name in fields if name in options}
    retrieval = {name: options.pop(name) for name in ("top_k", "threshold") if name in options}
    if retrieval:
        settings["retrieval"] = RetrievalSettings(**retrieval)
    options.setdefault("clock", ManualClock(100))
    experience = experience or EpisodicMemory()
    working = WorkingMemory(WorkingSettings(window_size=3))
    return RecurisAgent(working, experience, llm, AgentSettings(**settings), **options)


def test_finish_ends_the_run_in_success():
    """A2: FINISH from the model ends the run as a success and writes its one episode."""
    agent = make_agent(ScriptedLLM(["a", "b"]))
    result = agent.run("goal", "type", MockEnvironment())
    assert (result.success, result.status, result.steps) == (True, "success", 2)
    assert agent.experience.episodic.episodes == (result.episode,)


def test_settled_episode_keeps_the_whole_trajectory_not_just_the_window():
    """A2, the prototype's defect: all 10 steps are saved although the window holds 3."""
    agent = make_agent(ScriptedLLM([f"step {i}" for i in range(10)]))
    result = agent.run("goal", "type", MockEnvironment())
    assert [s.action for s in result.episode.trajectory] == [f"step {i}" for i in range(10)]
    assert result.episode.summary.startswith("done: step 0")


def test_failed_result_ends_the_run_with_its_reason():
    """A2: a failed result ends the run as failed; the reason names the step and its result."""
    result = make_agent(ScriptedLLM(["open page", "submit"])).run(
        "goal", "type", MockEnvironment(SITE)
    )
    assert (result.success, result.failure_reason) == (
        False,
        "step 2 failed: error: captcha required",
    )
    assert result.episode.failed_step.action == "submit"


def test_failure_test_is_pluggable():
    """is_failure decides what counts as a failed step."""
    agent = make_agent(ScriptedLLM(["a"]), is_failure=lambda result: result == "BAD")
    assert agent.run("goal", "type", MockEnvironment(default="error but fine")).success
    agent = make_agent(ScriptedLLM(["a"]), is_failure=lambda result: result == "BAD")
    assert not agent.run("goal", "type", MockEnvironment(default="BAD")).success


def test_reaching_max_steps_fails():
    """A1: a model that never says FINISH is stopped at max_steps."""
    llm = ScriptedLLM(["again"] * 100)
    result = make_agent(llm, max_steps=4).run("goal", "type", MockEnvironment())
    assert (result.status, result.steps, len(llm.prompts)) == ("failed", 4, 4)
    assert "max_steps (4)" in result.failure_reason


def test_llm_exception_fails_the_run_and_still_writes_the_episode():
    """A2: an exception from llm_fn ends the run as failed with the reason."""

    def broken(prompt):
        raise ConnectionError("model unreachable")

    agent = make_agent(broken)
    result = agent.run("goal", "type", MockEnvironment())
    assert result.failure_reason == "llm_fn raised ConnectionError: model unreachable"
    assert len(agent.experience.episodic) == 1


@pytest.mark.parametrize("reply", [None, "", "   ", 42, {"action": "x"}])
def test_llm_reply_that_is_not_an_action_fails_the_run(reply):
    """A2: untrusted model output: a reply that is not non-empty text ends the run as failed."""
    result = make_agent(lambda prompt: reply).run("goal", "type", MockEnvironment())
    assert result.status == "failed" and "not an action" in result.failure_reason


def test_action_exception_fails_the_run_and_records_the_step():
    """A2: an exception from action_fn is a failed step, kept in the episode."""

    def explode(action):
        raise TimeoutError("browser hung")

    result = make_agent(ScriptedLLM(["open"])).run("goal", "type", explode)
    assert result.failure_reason == "step 1: action raised TimeoutError: browser hung"
    assert result.episode.trajectory[-1].failed


def test_action_returning_non_text_fails_the_run():
    """A2: an action result that is not text is a failed step, and the run ends with its reason."""
    result = make_agent(ScriptedLLM(["open"])).run("goal", "type", lambda action: 7)
    assert "action_fn returned int" in result.failure_reason


def test_observer_exception_still_writes_the_episode_then_propagates():
    """A2: a bug in the observer settles the run as failed, then surfaces."""

    def observer(event):
        if event.stage == 3:
            raise RuntimeError("observer bug")

    agent = make_agent(ScriptedLLM(["a"]), observer=observer)
    with pytest.raises(RuntimeError, match="observer bug"):
        agent.run("goal", "type", MockEnvironment())
    assert [e.status for e in agent.experience.episodic.episodes] == ["failed"]
    assert "aborted by RuntimeError" in agent.experience.episodic.episodes[0].failure_reason


def test_goal_is_in_every_prompt():
    """A3: the model sees the goal on every step, however long the task."""
    llm = ScriptedLLM([f"s{i}" for i in range(20)])
    make_agent(llm, max_steps=25).run("migrate the database", "type", MockEnvironment())
    assert len(llm.prompts) == 21 and all("Goal: migrate the database" in p for p in llm.prompts)


def test_second_task_avoids_the_path_that_failed_before():
    """A4: episodic memory at work: recalled at the start, a failed submit is avoided next time."""
    agent = make_agent(PromptFollowingLLM())
    first = agent.run("register an account", "web form", MockEnvironment(SITE), SIGNUP)
    second = agent.run("register another account", "web form", MockEnvironment(SITE), SIGNUP)
    assert (first.success, second.success) == (False, True)
    assert second.episode.actions[-1] == "solve captcha then submit"


def test_without_episodic_memory_the_mistake_repeats():
    """A4, the control: with nothing recalled (a threshold of 1), the second task fails too."""
    agent = make_agent(PromptFollowingLLM(), threshold=1.0)
    agent.run("register an account", "web form", MockEnvironment(SITE), SIGNUP)
    assert not agent.run(
        "register another account", "web form", MockEnvironment(SITE), SIGNUP
    ).success


def test_retrieval_happens_at_start_and_on_each_completed_subtask():
    """A4: one retrieval at the start, one per completed subtask, none on other steps."""
    agent = make_agent(ScriptedLLM(["open page", "look around", "fill email"]))
    result = agent.run("goal", "type", MockEnvironment(), SIGNUP)
    assert result.retrievals == 3


def test_failed_step_below_max_failures_triggers_a_retrieval():
    """A4: with max_failures=2, the first failure re-retrieves and the run goes on."""
    llm = ScriptedLLM(["submit", "solve captcha then submit"])
    result = make_agent(llm, max_failures=2).run("goal", "type", MockEnvironment(SITE), SIGNUP)
    assert (result.success, result.retrievals) == (True, 3)


def test_retrieved_episodes_are_reinforced_once_per_run():
    """A5: retrieval reinforcement: a hit gets one access per run, not one per re-retrieval."""
    clock = ManualClock(0)
    experience = EpisodicExperience(EpisodicMemory(), DecayManager(clock=clock))
    agent = make_agent(PromptFollowingLLM(), experience, clock=clock)
    first = agent.run("register an account", "web form", MockEnvironment(SITE), SIGNUP)
    clock.advance(50)
    agent.run("register another account", "web form", MockEnvironment(SITE), SIGNUP)
    assert (first.episode.access_count, first.episode.last_access_at) == (1, 50)


def test_observer_sees_the_six_stages_in_order():
    """The loop reports initialise, decide, act, observe, update and settle."""
    events = []
    make_agent(ScriptedLLM(["open page"]), observer=events.append).run(
        "goal", "type", MockEnvironment(), SIGNUP
    )
    assert [e.name for e in events] == [
        "initialise",
        "decide",
        "act",
        "observe",
        "update",
        "update",
        "decide",
        "settle",
    ]


def test_pinned_constraints_reach_every_prompt():
    """W5 through the agent: constraints given to run() are pinned."""
    llm = ScriptedLLM(["a"] * 5)
    make_agent(llm).run("goal", "type", MockEnvironment(), constraints=["do not use MySQL"])
    assert all("- do not use MySQL" in p for p in llm.prompts)


@pytest.mark.parametrize(
    "settings, rule",
    [
        (dict(max_steps=0), "max_steps"),
        (dict(top_k=0), "top_k"),
        (dict(threshold=2), "threshold"),
        (dict(max_failures=0), "max_failures"),
    ],
)
def test_bad_settings_are_refused(settings, rule):
    """A1, E1, E2, VL2: max_steps, top_k or max_failures < 1, or a threshold outside [0, 1], raise.

    The records refuse them: AgentSettings and RetrievalSettings.
    """
    with pytest.raises(ValueError, match=rule):
        make_agent(ScriptedLLM([]), **settings)


def test_bad_task_is_refused_before_anything_is_written():
    """VL1: an empty goal or a non-text task type raises, naming it, and writes no episode."""
    agent = make_agent(ScriptedLLM([]))
    with pytest.raises(ValueError, match="goal"):
        agent.run("", "type", MockEnvironment())
    with pytest.raises(TypeError, match="task_type"):
        agent.run("goal", None, MockEnvironment())
    assert len(agent.experience.episodic) == 0


class AskRegion:
    """A tool handler of the smallest kind: one call it answers, and how to make it."""

    instruction = "To ask for the region, reply with: ask: region"

    def respond(self, reply):
        answer = ContextSection("## Tool answer", ("region is eu-west",))
        return answer if reply.startswith("ask:") else None


def test_a_reply_the_tool_handler_answers_is_never_executed():
    """A6: the handler's answer goes into the next prompt; the reply is not an action."""
    llm, env = ScriptedLLM(["ask: region", "act"]), MockEnvironment()
    result = make_agent(llm, tools=AskRegion()).run("goal", "type", env)
    assert env.executed == ["act"] and "region is eu-west" in llm.prompts[1] and result.success


def test_the_tools_instruction_ends_every_prompt_and_only_when_there_are_tools():
    """A6: a prompt offers a tool only when the agent has one; the handler's instruction ends it."""
    with_tools, without = ScriptedLLM(["act"]), ScriptedLLM(["act"])
    make_agent(with_tools, tools=AskRegion()).run("goal", "type", MockEnvironment())
    make_agent(without).run("goal", "type", MockEnvironment())
    assert with_tools.prompts[0].endswith(AskRegion.instruction)
    assert "ask: region" not in without.prompts[0] and "search_memory" not in without.prompts[0]


def test_settings_of_the_wrong_type_are_refused():
    """A1: the agent takes its settings as one AgentSettings record, nothing else."""
    with pytest.raises(TypeError, match="AgentSettings"):
        RecurisAgent(WorkingMemory(), EpisodicMemory(), ScriptedLLM([]), {"max_steps": 3})


def test_a_context_section_is_shown_after_experience_and_refreshed_with_each_recall():
    """A4, P1: an injected source's section follows experience and is asked again at each recall."""

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
    """P3: a subtask with a slot is done by the action holding the value a section gave for it."""

    class Region:
        def section(self, query, task_type, hits):
            return ContextSection("## Notes", ("- region: eu-west",), (("Region", "eu-west"),))

    agent = make_agent(ScriptedLLM(["deploy to eu-west"]), context=[Region()])
    agent.run("ship", "release", MockEnvironment(), ["deploy to {region}", "check"])
    assert agent.working.pending_subtasks == ("check",)


def test_a_value_noted_in_a_result_fills_a_slot_of_the_plan_whichever_copy_is_used():
    """P3: every value a step's result noted for a slot completes it, the first or a later one."""
    results = {"a": "ok; note: port = 80", "b": "ok; note: port = 90"}
    for used in ("use 80", "use 90"):
        agent = make_agent(ScriptedLLM(["a", "b", used]))
        environment = MockEnvironment(results)
        agent.run("go", "type", environment, ["a", "b", "use {port}", "end"])
        assert agent.working.pending_subtasks == ("end",)


def test_a_slot_step_is_not_done_by_an_action_that_only_shares_its_verb():
    """A3-A4 with P3: "book {preferred hotel}" stays pending when "book the red-eye flight" runs."""
    llm, env = ScriptedLLM(["book the red-eye flight"]), MockEnvironment()
    agent = make_agent(llm)
    agent.run("plan the trip", "travel", env, ["book {preferred hotel}"])
    assert agent.working.pending_subtasks == ("book {preferred hotel}",)


def test_without_a_tool_handler_every_reply_is_an_action():
    """A6: the core agent offers no tools of its own; a manager's agent brings search_memory."""
    llm, env = ScriptedLLM(["ask: region"]), MockEnvironment()
    make_agent(llm).run("goal", "type", env)
    assert env.executed == ["ask: region"]


def test_a_run_keeps_its_state_in_its_own_record_not_on_the_agent():
    """A2: a run adds no attribute to the agent; what a run tracks lives in the run's record."""
    agent = make_agent(ScriptedLLM(["a", "b"]), tools=AskRegion())
    before = dict(vars(agent))
    agent.run("goal", "type", MockEnvironment(), ["a", "b"])
    assert vars(agent).keys() == before.keys()
    assert all(vars(agent)[name] is value for name, value in before.items())


def test_a_retrieval_event_names_the_episodes_it_recalled():
    """A4: a retrieval's event lists the recalled episodes' ids, best first; others list none."""
    events = []
    agent = make_agent(ScriptedLLM(["open page", "FINISH"] * 2), observer=events.append)
    first = agent.run("sign up", "signup", MockEnvironment()).episode
    events.clear()
    agent.run("sign up again", "signup", MockEnvironment())
    retrievals = [event for event in events if event.recalled is not None]
    assert retrievals and retrievals[0].recalled == (first.id,)
    assert all(event.detail.startswith("retrieve (") for event in retrievals)
    assert all(event.recalled is None for event in events if event not in retrievals)
