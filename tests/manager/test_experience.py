"""Example tests for recuris.manager.experience: the loop on a manager's memory (MX1-MX5)."""

from recuris import AgentSettings, ManualClock, RetrievalSettings
from recuris.tour.mock_environment import MockEnvironment
from recuris.core.mock_llm import PromptFollowingLLM, ScriptedLLM
from recuris.experience.lessons import LEARNED
from recuris.manager.experience import model_on_manager

from signup_form import SIGNUP, SITE


def test_on_a_manager_the_prompt_carries_recalled_procedures_and_facts():
    """MX1: on a manager, recall adds the user's procedures and facts; the mock follows them."""
    from recuris import MemoryManager

    manager = MemoryManager(clock=ManualClock(0))
    manager.write(
        "deploy",
        "ana",
        level="procedural",
        metadata={"steps": ["run tests", "build image", "roll out"], "task_types": ["release"]},
    )
    manager.write("release region: eu-west", "ana", level="semantic")
    llm = model_on_manager()
    agent = manager.agent("ana", llm, clock=ManualClock(0))
    result = agent.run("ship release 7 to the release region", "release", MockEnvironment())
    assert "## Recalled memory" in llm.prompts[0] and "release region: eu-west" in llm.prompts[0]
    assert result.success and result.episode.actions == ("run tests", "build image", "roll out")
    assert manager.users.get("ana").episodic.get(result.episode.id) is result.episode


def test_on_a_manager_episodes_persist_and_are_isolated(tmp_path):
    """MX3, MG1: the agent's episodes go to the user's store; no other user's agent sees them."""
    from recuris import MemoryManager, SQLiteStore

    manager = MemoryManager(SQLiteStore(tmp_path / "m.db"), clock=ManualClock(0))
    ana = manager.agent("ana", PromptFollowingLLM(), clock=ManualClock(0))
    ana.run("register an account", "web form", MockEnvironment(SITE), SIGNUP)
    manager.store.close()
    reopened = MemoryManager(SQLiteStore(tmp_path / "m.db"), clock=ManualClock(0))
    assert [e.status for e in reopened.users.get("ana").episodic.episodes] == ["failed"]
    bob = reopened.agent("bob", PromptFollowingLLM(), clock=ManualClock(0))
    assert not bob.run("register an account", "web form", MockEnvironment(SITE), SIGNUP).success
    anas_second = reopened.agent("ana", PromptFollowingLLM(), clock=ManualClock(0))
    assert anas_second.run(
        "register another account", "web form", MockEnvironment(SITE), SIGNUP
    ).success


def test_on_a_manager_the_agent_carries_on_when_the_store_fails():
    """MG5: with the store down mid-run, recall degrades to nothing; the episode write is queued."""
    from recuris import InMemoryStore, MemoryManager, StoreError

    class Switchable(InMemoryStore):
        down = False

        def list(self, *args, **kwargs):
            if self.down:
                raise StoreError("disk I/O error")
            return super().list(*args, **kwargs)

        def put(self, *arguments, **keywords):
            if self.down:
                raise StoreError("disk I/O error")
            return super().put(*arguments, **keywords)

    store = Switchable()
    manager = MemoryManager(store, clock=ManualClock(0))
    agent = manager.agent("ana", ScriptedLLM(["a", "b"]), clock=ManualClock(0))
    store.down = True
    result = agent.run("goal", "type", MockEnvironment())
    assert result.success and manager.store.pending >= 1
    store.down = False
    manager.store.flush()
    assert [i.id for i in store.list("ana", "episodic")] == [result.episode.id]


def test_a_tool_call_is_answered_from_memory_and_the_run_goes_on():
    """MX1, XA1: the mock asks search_memory for a slot, gets the answer in a section, and acts."""
    from recuris import MemoryManager

    manager = MemoryManager(clock=ManualClock(0))
    manager.write("deploy region: eu-west", "ana", level="semantic")
    llm = model_on_manager()
    exact = AgentSettings(retrieval=RetrievalSettings(threshold=1.0))
    agent = manager.agent("ana", llm, settings=exact, clock=ManualClock(0))
    env = MockEnvironment()
    result = agent.run("ship release 9", "release", env, ["run tests", "deploy to {deploy region}"])
    assert result.success and env.executed == ["run tests", "deploy to eu-west"]
    asked = [p for p in llm.prompts if "## Recalled by search_memory" in p]
    assert asked and "query: deploy region" in asked[0] and result.steps == 2


def test_on_a_manager_a_recalled_memory_counts_as_used_once_per_run():
    """MX2: a fact recalled at the start and after every completed subtask gets one access a run."""
    from recuris import MemoryManager

    manager = MemoryManager(clock=ManualClock(0))
    fact = manager.write("release region: eu-west", "ana", level="semantic")
    agent = manager.agent("ana", ScriptedLLM(["a", "b", "c"]), clock=ManualClock(0))
    result = agent.run(
        "ship the release to the region", "release", MockEnvironment(), ["a", "b", "c"]
    )
    assert result.retrievals == 4 and manager.get(fact.id, "ana").access_count == 1
    agent.run("ship the release to the region", "release", MockEnvironment(), ["a"])
    assert manager.get(fact.id, "ana").access_count == 2


PUSH = ["build the image", "push it to the internal registry | push it to the mirror registry"]
REGISTRY = {"push it to the internal registry": "error: the internal registry is down"}


def test_a_past_task_phrased_otherwise_is_shown_and_its_failed_path_avoided():
    """MX4: "roll out the storefront on EU prod" is shown "deploy the billing API to the EU
    production cluster" (analysed terms, threshold 0.05), and avoids the path that failed."""
    from recuris import MemoryManager

    manager = MemoryManager(clock=ManualClock(0))
    first = manager.agent("ana", PromptFollowingLLM(), clock=ManualClock(0))
    goal = "deploy the billing API to the EU production cluster"
    assert not first.run(goal, "deployment", MockEnvironment(REGISTRY), PUSH).success
    again = manager.agent("ana", PromptFollowingLLM(), clock=ManualClock(0))
    result = again.run(
        "roll out the storefront on EU prod", "deployment", MockEnvironment(REGISTRY), PUSH
    )
    assert result.success and "push it to the internal registry" not in result.episode.actions


def test_the_same_two_tasks_by_the_cores_raw_words_show_nothing():
    """MX4: the core's raw-word Jaccard at 0.25 does not reach across the two phrasings (what
    the manager's scorer fixes), so the second task meets the trap again."""
    from recuris import JaccardScorer, MemoryManager

    manager = MemoryManager(clock=ManualClock(0), scorer=JaccardScorer)
    core = AgentSettings(retrieval=RetrievalSettings())
    first = manager.agent("ana", PromptFollowingLLM(), settings=core, clock=ManualClock(0))
    goal = "deploy the billing API to the EU production cluster"
    first.run(goal, "deployment", MockEnvironment(REGISTRY), PUSH)
    again = manager.agent("ana", PromptFollowingLLM(), settings=core, clock=ManualClock(0))
    result = again.run(
        "roll out the storefront on EU prod", "deployment", MockEnvironment(REGISTRY), PUSH
    )
    assert not result.success


def test_settings_given_to_the_agent_are_used_as_given():
    """MX4: `manager.agent(settings=...)` keeps its own retrieval settings; without settings
    the agent takes `ManagerSettings.episodes`."""
    from recuris import ManagerSettings, MemoryManager

    from recuris.experience.agent import ExperienceSettings

    manager = MemoryManager(clock=ManualClock(0))
    exact = ExperienceSettings(retrieval=RetrievalSettings(threshold=1.0), settle=False)
    assert manager.agent("ana", PromptFollowingLLM(), settings=exact).settings is exact
    default = manager.agent("ana", PromptFollowingLLM()).settings
    assert default.retrieval == ManagerSettings().episodes
    retrieval = default.retrieval
    assert (retrieval.top_k, retrieval.threshold, default.settle) == (3, 0.05, True)


def _lessons_manager():
    """Two deployments fail at the internal registry, consolidating; then 40 quiet days."""
    from recuris import MemoryManager
    from recuris.core.clock import DAY
    from recuris.experience.agent import ExperienceSettings

    clock = ManualClock(0)
    manager = MemoryManager(clock=clock)
    settings = ExperienceSettings(retrieval=manager.settings.episodes, consolidate=True)
    steps = ["build the image", "push it to the internal registry"]
    for goal in ("deploy the billing API to EU prod", "deploy the storefront to EU prod"):
        agent = manager.agent("ana", ScriptedLLM(steps), settings=settings, clock=clock)
        assert not agent.run(goal, "deployment", MockEnvironment(REGISTRY), PUSH).success
    for day in range(1, 41):  # longer than the 19.2-day horizon of an unused episode
        clock.now = day * DAY
        manager.run_decay("ana")
    assert len(manager.users.get("ana").episodic) == 0
    return manager, clock, settings


def test_a_lesson_that_recurred_outlives_its_episodes_and_is_avoided():
    """MX5, LS4: a lesson two tasks failed at becomes a fact that outlives a gap longer than the
    forgetting horizon, and the next similar task is shown it as a path to avoid."""
    manager, clock, settings = _lessons_manager()
    model = PromptFollowingLLM()
    agent = manager.agent("ana", model, settings=settings, clock=clock)
    goal = "deploy the search service to EU prod"
    result = agent.run(goal, "deployment", MockEnvironment(REGISTRY), PUSH)
    assert result.success and "push it to the internal registry" not in result.episode.actions
    assert '[avoid]' in model.prompts[0]


def test_a_lesson_contradicted_since_is_shown_contested_not_as_a_path_to_avoid():
    """MX5, LS1: once a later task did the lesson's action without failing, the consolidated
    lesson is no longer shown as a path to avoid (contested, or settled away by DG2)."""
    manager, clock, settings = _lessons_manager()
    steps = ["build the image", "push it to the internal registry"]
    agent = manager.agent("ana", ScriptedLLM(steps), settings=settings, clock=clock)
    goal = "deploy the checkout service to EU prod"
    assert agent.run(goal, "deployment", MockEnvironment({}), PUSH).success
    model = PromptFollowingLLM()
    agent = manager.agent("ana", model, settings=settings, clock=clock)
    agent.run("deploy the search service to EU prod", "deployment", MockEnvironment({}), PUSH)
    assert "[avoid]" not in model.prompts[0]


def _quiet(manager, clock, days):
    """Run the nightly forgetting cycle for `days` days past the clock's day."""
    from recuris.core.clock import DAY

    start = int(clock.now // DAY)
    for day in range(start + 1, start + days + 1):
        clock.now = day * DAY
        manager.run_decay("ana")


def test_a_mistake_made_again_after_its_episode_was_forgotten_becomes_a_lesson():
    """MX5, LS4, LS7: a failure is kept as a lesson seen once; 40 quiet days forget its
    episode, the same mistake made again recurs through it, and the lesson it becomes outlives
    40 more days, so that the third task avoids the action."""
    from recuris import MemoryManager

    clock = ManualClock(0)
    manager = MemoryManager(clock=clock)
    steps = ["build the image", "push it to the internal registry"]
    goals = ["deploy the billing API to EU prod", "deploy the storefront to EU prod"]
    for goal in goals:
        agent = manager.agent("ana", ScriptedLLM(steps), clock=clock)
        assert not agent.run(goal, "deployment", MockEnvironment(REGISTRY), PUSH).success
        _quiet(manager, clock, 40)  # longer than the 19.2-day horizon of an unused episode
        assert len(manager.users.get("ana").episodic) == 0
    model = PromptFollowingLLM()
    agent = manager.agent("ana", model, clock=clock)
    goal = "deploy the search service to EU prod"
    result = agent.run(goal, "deployment", MockEnvironment(REGISTRY), PUSH)
    assert result.success and "push it to the internal registry" not in result.episode.actions


def _failed_once():
    """A manager whose user's one deployment failed at the internal registry, and its clock."""
    from recuris import MemoryManager

    clock = ManualClock(0)
    manager = MemoryManager(clock=clock)
    steps = ["build the image", "push it to the internal registry"]
    agent = manager.agent("ana", ScriptedLLM(steps), clock=clock)
    agent.run("deploy the billing API to EU prod", "deployment", MockEnvironment(REGISTRY), PUSH)
    return manager, clock


def test_a_lesson_seen_once_is_not_shown_and_a_mistake_made_once_is_forgotten():
    """LS7, MX1: with its episode forgotten, a mistake made once is not shown to the next task:
    the lesson seen once is kept for consolidation, not as advice."""
    manager, clock = _failed_once()
    _quiet(manager, clock, 40)
    assert [fact.value for fact in manager.users.get("ana").semantic.current()] == [
        "seen once: deploy the billing API to EU prod"
    ]
    model = PromptFollowingLLM()
    agent = manager.agent("ana", model, clock=clock)
    agent.run("deploy the storefront to EU prod", "deployment", MockEnvironment({}), PUSH)
    assert "[avoid]" not in model.prompts[0]
    assert "seen once" not in model.prompts[0]


def test_a_lesson_that_saved_a_task_outlives_its_episodes():
    """MX5, LS4: a task shown a failure that took the other way and worked makes the lesson a
    fact; 40 quiet days later the episodes are forgotten and the next task still avoids it."""
    manager, clock = _failed_once()
    _quiet(manager, clock, 1)
    agent = manager.agent("ana", PromptFollowingLLM(), clock=clock)
    saved = agent.run(
        "deploy the storefront to EU prod", "deployment", MockEnvironment(REGISTRY), PUSH
    )
    assert saved.success
    _quiet(manager, clock, 40)
    assert len(manager.users.get("ana").episodic) == 0
    model = PromptFollowingLLM()
    agent = manager.agent("ana", model, clock=clock)
    goal = "deploy the search service to EU prod"
    result = agent.run(goal, "deployment", MockEnvironment(REGISTRY), PUSH)
    assert result.success and "[avoid]" in model.prompts[0]


def test_a_lesson_that_saves_a_task_again_cites_its_episodes_each_goal_once():
    """LS4, MX5: a consolidated lesson shown to a task it saves stands for the episodes it
    cites: the fact gathers the new goal once and cites episodes, never a fact."""
    manager, clock = _failed_once()
    # The second task is saved by the episode, the third, 40 days on, by the lesson alone.
    for goal, quiet in (("deploy the storefront to EU prod", 1), ("deploy search to EU", 40)):
        _quiet(manager, clock, quiet)
        agent = manager.agent("ana", PromptFollowingLLM(), clock=clock)
        assert agent.run(goal, "deployment", MockEnvironment(REGISTRY), PUSH).success
    [fact] = manager.users.get("ana").semantic.current()
    goals = ["deploy the billing API to EU prod", "deploy the storefront to EU prod"]
    assert fact.value == LEARNED + " | ".join([*goals, "deploy search to EU"])
    assert all(source.startswith("episode-") for source in fact.source_ids)
