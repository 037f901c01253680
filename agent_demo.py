"""A guided tour of recuris: one agent, its two memories, and what moves memory between tiers.

Run `python agent_demo.py`. Offline, standard library only, and the same output every run:
the clock is a ManualClock and the model is PromptFollowingLLM, which decides from the
prompt alone. Each task narrates the six stages of the loop (document 000 §2.3):
1 initialise, 2 decide, 3 act, 4 observe, 5 update, 6 settle.
"""

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from recuris import (
    Consolidator,
    DecayManager,
    Episode,
    EpisodicMemory,
    ManualClock,
    MemoryManager,
    RecurisAgent,
    SemanticMemory,
    SQLiteStore,
    WorkingMemory,
    estimate_tokens,
)
from recuris.core.clock import DAY
from recuris.llm.llm_http import OpenAICompatibleChat
from recuris.bench.mock_environment import MockEnvironment
from recuris.core.mock_llm import PromptFollowingLLM
from recuris.evolution.reflecting_llm import ReflectingLLM
from recuris.evolution.reflection import ReflectionCallback

START = 1_767_225_600  # 2026-01-01 00:00 UTC, fixed so every run prints the same


def banner(letter: str, title: str) -> None:
    print(f"\n=== {letter}. {title}")


def day(clock: ManualClock) -> str:
    return f"day {(clock() - START) / DAY:.1f}"


def main(llm=None, reflector=None) -> None:
    """Run the tour; `llm` and `reflector` default to the offline, deterministic mocks."""
    clock = ManualClock(START)
    working = WorkingMemory(window_size=6, max_summary_chars=300)
    episodic = EpisodicMemory()
    decay = DecayManager(half_life_days=7, retention_threshold=0.15, clock=clock)
    llm = llm or PromptFollowingLLM()
    agent = RecurisAgent(
        working,
        episodic,
        llm,
        max_steps=30,
        decay=decay,
        clock=clock,
        observer=lambda event: print("   ", event.render()),
    )
    signup = ["打开注册页", "填写邮箱", "设置密码", "提交表单 | 完成验证码后提交"]
    website = {"提交表单": "失败：需要先完成验证码"}

    # An old, never-used episode, so the decay cycle below has something stale to forget.
    episodic.add_episode(
        Episode(
            task_type="report",
            goal="export the 2025 sales report as CSV",
            status="success",
            created_at=START - 40 * DAY,
        )
    )

    banner("A", "A first task fails, and the failure is remembered")
    first = agent.run("注册一个新账号", "网页表单填写", MockEnvironment(website, "ok：页面响应正常"), signup)
    print(f"  -> success={first.success}; stored as {first.episode.id}: {first.episode.render()}")

    clock.advance(2 * DAY)
    banner("B", "A similar task retrieves that episode and avoids the failed path")
    second = agent.run(
        "再注册一个测试账号", "网页表单填写", MockEnvironment(website, "ok：页面响应正常"), signup
    )
    print(f"  -> success={second.success} in {second.steps} steps; the prompt said:")
    experience = llm.prompts[-1].split("## Related experience")[1].splitlines()[1]
    print(f"     {experience.strip()}")

    clock.advance(DAY)
    banner("C", "A long task: the window compresses, the goal and the pin stay, the prompt stays flat")
    tables = [
        f"migrate table {name}"
        for name in (
            "users orders invoices payments refunds carts products prices stock suppliers "
            "shipments returns reviews coupons audit sessions tokens settings carriers zones "
            "taxes currencies warehouses bins pickers routes labels manifests invoices_archive logs"
        ).split()
    ]
    plan = tables + ["create indexes in MySQL | create indexes in PostgreSQL", "run consistency checks"]
    goal = "move the shop database off the legacy server without losing a row"
    long_agent = RecurisAgent(working, episodic, llm, max_steps=40, clock=clock)
    first_prompt = len(llm.prompts)

    def migrate(action: str) -> str:
        rows = 1_000 + 137 * len(action) ** 2  # any deterministic figure will do
        return f"ok: {action} finished, {rows:,} rows copied, row counts and checksums match"

    third = long_agent.run(goal, "database migration", migrate, plan, constraints=["do not use MySQL"])
    prompts, trajectory = llm.prompts[first_prompt:], third.episode.trajectory
    print("    prompt  recuris tokens  raw history so far (what a full-history prompt adds)")
    for number in sorted({n for n in (1, 8, 16, 24, 32, len(prompts)) if 1 <= n <= len(prompts)}):
        raw = estimate_tokens("\n".join(step.render() for step in trajectory[: number - 1]))
        print(f"    {number:>6}  {estimate_tokens(prompts[number - 1]):>14}  {raw:>6} tokens")
    print(
        f"  -> success={third.success} in {third.steps} steps; goal in {sum(goal in p for p in prompts)}"
        f"/{len(prompts)} prompts, pin in {sum('do not use MySQL' in p for p in prompts)}/{len(prompts)}"
    )
    index_step = next((s for s in third.episode.trajectory if s.action.startswith("create indexes")), None)
    chose = f"step {index_step.index} chose {index_step.action!r}, as the pin requires" if index_step else (
        "no step built indexes")
    print(
        f"  -> {chose}; the episode keeps all {len(third.episode.trajectory)} steps; the summary at the end:"
    )
    for line in third.episode.summary.splitlines():
        print(f"     {line}")

    banner("D", "Repeated statements consolidate into a semantic fact")
    semantic = SemanticMemory()
    consolidator = Consolidator(semantic, min_occurrences=2, window_seconds=7 * DAY, clock=clock)
    sightings = [
        ("注册网站", "提交前需要验证码", first.episode.id),
        ("注册网站", "提交前需要验证码", second.episode.id),
        ("target database", "PostgreSQL", third.episode.id),
        ("target database", "MySQL", "episode-import-7"),
    ]
    for subject, value, source in sightings:
        fact = consolidator.observe(subject, value, source)
        outcome = f"promoted {fact.id}: {fact.render()}" if fact else "not promoted (yet)"
        print(f"    observe({subject!r}, {value!r}, {source!r}) -> {outcome}")
    for conflict in consolidator.conflicts:
        print(f"    reported {conflict.render()}")

    clock.advance(20 * DAY)
    banner("E", f"A decay cycle on {day(clock)}: stale memories are forgotten, used ones survive")
    for episode in episodic.episodes:
        print(
            f"    {episode.id:<10} weight {decay.weight(episode):.3f} "
            f"({(clock() - episode.last_access_at) / DAY:.0f} days since last access, "
            f"accesses={episode.access_count})"
        )
    report = decay.run_cycle(episodic.episodes)
    episodic.remove(item.id for item in report.forgotten)
    for record in report.audit:
        print(f"    {record.render()}")

    manager_tour(clock, llm, reflector or ReflectingLLM())

    banner("K", "The state of memory after the tour")
    print(f"    working memory : {working!r}")
    print(
        f"    episodic memory: {len(episodic)} episodes: "
        + ", ".join(f"{e.id} ({e.status})" for e in episodic.episodes)
    )
    print(f"    semantic memory: {len(semantic)} fact(s): " + "; ".join(f.render() for f in semantic.facts))
    print(f"    decay audit log: {len(decay.audit_log)} record(s); LLM calls: {len(llm.prompts)}")


def manager_tour(clock: ManualClock, llm, reflector) -> None:
    """F to J: every layer behind one manager, on SQLite, for two isolated users."""
    folder = tempfile.TemporaryDirectory()
    path = Path(folder.name) / "memory.db"
    manager = MemoryManager(SQLiteStore(path), clock=clock)

    banner("F", "One manager, many users: routing, a superseded fact, layered recall with breakdowns")
    writes = [  # (user, content, level, importance)
        ("ana", "database: MySQL", "semantic", None),
        ("ana", "deploy region: eu-west", None, None),  # a statement: consolidated once seen twice
        ("ana", "deploy failed: the DB_URL variable was missing", None, 0.9),
        ("ana", "deploy failed: the DB_URL variable was missing again", None, 0.8),
        ("ana", "deploy region: eu-west", None, None),
        ("ana", "database: PostgreSQL", "semantic", None),  # contradicts MySQL: supersedes it
        ("bob", "database: SQLite", "semantic", None),
        ("ana", "好的", None, None),  # trivial: skipped
    ]
    for user, content, level, importance in writes:
        clock.advance(600)
        item = manager.write(content, user, level=level, importance=importance)
        outcome = f"{item.id} at level {item.level}" if item else "skipped as trivial"
        print(f"    write({content!r}, {user!r}, level={level!r}) -> {outcome}")
    manager.write(
        "deploy",
        "ana",
        level="procedural",
        metadata={"steps": ["run migrations", "set DB_URL", "roll out"], "task_types": ["release"]},
    )
    facts = "; ".join(fact.render() for fact in manager.layers("ana").semantic.current())
    print(f"    ana's valid facts: {facts}")
    for record in manager.history("ana", "fact-1"):
        print(f"    {record.render()}")
    query = "which database and deploy region for the release"
    print(f"    recall({query!r}, 'ana', task_type='release'):")
    for result in manager.recall(query, "ana", task_type="release").results:
        print(f"      {result.explain()}\n        {result.render()}")
    print(f"    the same recall for 'bob': {[r.render() for r in manager.recall(query, 'bob').results]}")

    banner("G", "The agent on the manager follows a recalled procedure")
    agent = manager.agent("ana", llm, clock=clock)
    run = agent.run("ship release 7 to the deploy region", "release", MockEnvironment())
    recalled = llm.prompts[-1].split("## Recalled memory")[1].split("\n\n")[0].splitlines()[1:]
    print("    the agent's first prompt recalled:")
    for line in recalled:
        print(f"    {line}")
    print(f"    -> success={run.success}; it followed the procedure: {' -> '.join(run.episode.actions)}")
    evolving_tour(manager, clock, llm, reflector)

    banner("J", "A forgotten user, and the database reopened")
    deleted = manager.forget_user("bob")
    print(f"    forget_user('bob') deleted {deleted} item(s); bob now has {manager.list('bob')}")
    manager.store.close()
    reopened = MemoryManager(SQLiteStore(path, create=False), clock=clock)
    levels = Counter(item.level for item in reopened.list("ana"))
    print(f"    reopened: ana has {dict(sorted(levels.items()))} (superseded facts kept for audit)")
    trail = [(record.operation, record.reason) for record in reopened.history("bob")]
    print(f"    bob has {len(reopened.list('bob'))} items; his audit trail keeps no text: {trail}")
    reopened.store.close()
    folder.cleanup()


def evolving_tour(manager: MemoryManager, clock: ManualClock, llm, reflector) -> None:
    """H and I: reflection feeds a later task through the search_memory tool; a cycle forgets and merges."""
    banner(
        "H", "Reflection turns a conversation into an insight; a later task asks for it with search_memory"
    )
    reflection = ReflectionCallback(reflector, manager, threshold=3, user_id="ana")
    for user, agent_reply in [
        ("Can you check the build?", "The build is green."),
        ("Our staging host is stage-7.internal.", "Noted."),
        ("Deploy it there, not to prod!", "Sorry, I was wrong to suggest prod."),
    ]:
        reflection.add_interaction(user, agent_reply)
    print(f"    3 interactions buffered (no model call yet); ready={reflection.ready}")
    for insight in reflection.reflect().stored:
        print(f"    insight {insight.id} ({insight.metadata['type']}): {insight.content!r}"
              f" from {insight.metadata['source_ids']}")
    clock.advance(DAY)
    agent = manager.agent("ana", llm, clock=clock, threshold=1.0)
    environment = MockEnvironment()
    run = agent.run("get release 8 ready for QA", "qa", environment, ["build", "deploy to {staging host}"])
    answered = next((p for p in reversed(llm.prompts) if "## Recalled by search_memory" in p), "")
    if answered:
        print("    the model asked search_memory for the {staging host} slot; its next prompt carried:")
        for line in answered.split("## Recalled by search_memory")[1].split("\n\n")[0].splitlines()[:3]:
            print(f"      {line.strip()}")
    print(f"    -> success={run.success}; executed: {environment.executed}")

    banner("I", "Two weeks later, a forgetting cycle merges near-duplicates and forgets the unused")
    clock.advance(14 * DAY)
    report = manager.run_decay(DecayManager(half_life_days=7, clock=clock), "ana")
    for record in report.audit:
        print(f"    {record.render()}")
    print(
        f"    episodic and semantic items: {report.size_before} before the cycle, {report.size_after} after"
    )


# A decision is one action line or one search_memory call; a model that never stops would
# otherwise write until the timeout. Reflection answers a JSON list of insights, so it gets more.
ACTION_MAX_TOKENS = 96
REFLECTION_MAX_TOKENS = 512


def http_models(base_url: str, model: str | None) -> tuple["ShowingLLM", "ShowingLLM"]:
    """Return the deciding model and the reflecting model on one endpoint, each showing its traffic."""
    decide = OpenAICompatibleChat(base_url, model, max_tokens=ACTION_MAX_TOKENS)
    reflect = OpenAICompatibleChat(base_url, model, max_tokens=REFLECTION_MAX_TOKENS)
    return ShowingLLM(decide), ShowingLLM(reflect)


class ShowingLLM:
    """Send each prompt to a real endpoint, and show the prompt and the reply."""

    def __init__(self, client) -> None:
        self.client, self.prompts = client, []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        print("    >>> prompt sent:\n" + "\n".join(f"    | {line}" for line in prompt.splitlines()))
        reply = self.client(prompt)
        print(f"    <<< reply: {reply!r}")
        return reply


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="The recuris tour; offline and deterministic unless --llm is given."
    )
    parser.add_argument(
        "--llm", metavar="URL", help="an OpenAI-compatible base URL, e.g. http://localhost:8000/v1"
    )
    parser.add_argument("--model", help="the model name the endpoint serves (or set RECURIS_MODEL)")
    arguments = parser.parse_args()
    if arguments.llm:
        main(*http_models(arguments.llm, arguments.model))
    else:
        main()
