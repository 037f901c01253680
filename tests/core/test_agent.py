"""Example tests for recuris.core.agent.RecurisAgent: the documents' six stages (A1-A5)."""

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
from recuris.core.mock_llm import PromptFollowingLLM, ScriptedLLM

from signup_form import SIGNUP, SITE
from twins import twins


def make_agent(llm, episodic=None, **options):
    """An agent on a fresh episodic memory; AgentSettings' fields may be given by name."""
    fields = ("max_steps", "max_failures")
    settings = {name: options.pop(name) for name in fields if name in options}
    retrieval = {name: options.pop(name) for name in ("top_k", "threshold") if name in options}
    if retrieval:
        settings["retrieval"] = RetrievalSettings(**retrieval)
    options.setdefault("clock", ManualClock(100))
    episodic = episodic if episodic is not None else EpisodicMemory()
    working = WorkingMemory(WorkingSettings(window_size=3))
    return RecurisAgent(working, episodic, llm, AgentSettings(**settings), **options)


def test_finish_ends_the_run_in_success():
    """A2: FINISH from the model ends the run as a success and writes its one episode."""
    agent = make_agent(ScriptedLLM(["a", "b"]))
    result = agent.run("goal", "type", MockEnvironment())
    assert (result.success, result.status, result.steps) == (True, "success", 2)
    assert agent.episodic.episodes == (result.episode,)


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
    assert len(agent.episodic) == 1


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
    assert [e.status for e in agent.episodic.episodes] == ["failed"]
    assert "aborted by RuntimeError" in agent.episodic.episodes[0].failure_reason


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
    agent = make_agent(PromptFollowingLLM(), decay=DecayManager(clock=clock), clock=clock)
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
    assert len(agent.episodic) == 0


def test_settings_of_the_wrong_type_are_refused():
    """A1: the agent takes its settings as one AgentSettings record, nothing else."""
    with pytest.raises(TypeError, match="AgentSettings"):
        RecurisAgent(WorkingMemory(), EpisodicMemory(), ScriptedLLM([]), {"max_steps": 3})


def test_a_slot_step_is_not_done_by_an_action_that_only_shares_its_verb():
    """A4: "book {preferred hotel}" stays pending when "book the red-eye flight" runs."""
    llm, env = ScriptedLLM(["book the red-eye flight"]), MockEnvironment()
    agent = make_agent(llm)
    agent.run("plan the trip", "travel", env, ["book {preferred hotel}"])
    assert agent.working.pending_subtasks == ("book {preferred hotel}",)


def test_every_reply_is_an_action():
    """A1: the documents' agent offers no tools: a reply that looks like a call is executed."""
    llm, env = ScriptedLLM(["ask: region"]), MockEnvironment()
    make_agent(llm).run("goal", "type", env)
    assert env.executed == ["ask: region"]


def test_a_run_keeps_its_state_in_its_own_record_not_on_the_agent():
    """A2: a run adds no attribute to the agent; what a run tracks lives in the run's record."""
    agent = make_agent(ScriptedLLM(["a", "b"]))
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


def test_a_subtask_is_done_by_any_of_its_options_in_normalised_words():
    """A4: an action equal to an option, case and spacing aside, completes its subtask."""
    agent = make_agent(ScriptedLLM(["Solve  Captcha then submit"]))
    agent.run("sign up", "web form", MockEnvironment(), ["submit | solve captcha then submit", "x"])
    assert agent.working.pending_subtasks == ("x",)


def test_a_slot_is_matched_only_as_written():
    """A4: the documents' agent fills no slot: a noted value does not complete "use {port}"."""
    agent = make_agent(ScriptedLLM(["a", "use 80"]))
    environment = MockEnvironment({"a": "ok; note: port = 80"})
    agent.run("go", "type", environment, ["a", "use {port}", "end"])
    assert agent.working.pending_subtasks == ("use {port}", "end")


def test_recall_returns_exactly_what_episodic_retrieve_returns():
    """A4: no settling in the core: two past tasks that disagree are both shown, as retrieved."""
    episodic = twins()
    events = []
    agent = make_agent(ScriptedLLM([]), episodic, top_k=2, threshold=0.1, observer=events.append)
    query = "deploy deploy search to US"
    expected = tuple(hit.episode.id for hit in episodic.retrieve(query, 2, 0.1))
    agent.run("deploy search to US", "deploy", MockEnvironment())
    assert len(expected) == 2 and events[0].recalled == expected


def test_the_loop_calls_the_methods_a_subclass_overrides():
    """A1-A4: recall, prompt, answer_tool and completes_option overridden change the run."""

    class Answering(RecurisAgent):
        def prompt(self, run):
            return "asked: " + super().prompt(run)

        def answer_tool(self, run, reply):
            return reply == "ask"

        def completes_option(self, run, action, option):
            return action == "anything"

    llm = ScriptedLLM(["ask", "anything"])
    environment = MockEnvironment()
    working = WorkingMemory()
    agent = Answering(working, EpisodicMemory(), llm, clock=ManualClock(0))
    result = agent.run("goal", "type", environment, ["one step"])
    assert environment.executed == ["anything"] and result.retrievals == 2
    assert all(prompt.startswith("asked: ") for prompt in llm.prompts)
