"""A guided tour of recuris: one agent, its two memories, and what moves memory between tiers.

Run `python agent_demo.py`. Offline, standard library only, and the same output every run:
the clock is a ManualClock, and the model is the core's PromptFollowingLLM, which decides
from the prompt alone, for document 000's loop (parts A to E), then `model_on_manager()`,
the same model taught to fill a plan step's slots and read the manager's sections
(recuris/experience/slot_llm.py). Each task narrates the six stages of the loop (document
000 §2.3): 1 initialise, 2 decide, 3 act, 4 observe, 5 update, 6 settle. Every outcome says
why.

One function per part: A-B `failure_then_recovery`, C `long_task`, D `consolidation`,
E `decay_cycle`, F-J `manager_tour` and `evolving_tour`, K `memory_after_the_tour`.

`--html FILE` also writes the whole tour as one self-contained page (recuris/tour/trace.py):
every prompt cut into its sections, what each tier holds after each part, and plots.
`--llm URL --model NAME` runs the same tour on a real OpenAI-compatible model; the narration
says what that model did, and the tour stops at the first prompt the model gives no reply to
(unreachable, an HTTP error, a timeout: any LLMError), with one line and exit status 1.
A bad argument is refused before the tour starts; Ctrl-C ends it with one line.
"""

import math
import sys

# First, alone: on Python 3.9 the package says, in one line, which version it needs.
try:
    import recuris  # noqa: F401
except ImportError as error:
    sys.exit(f"error: {error}")

from recuris.manager.entry import interrupted, run_piped

# Ctrl-C while the tour's modules load ends it as Ctrl-C during the tour does (EN2).
try:
    import argparse
    import tempfile
    from collections import Counter
    from pathlib import Path
    from typing import TYPE_CHECKING

    # Parts A to E narrate document 000's loop and import the core alone, the reference path,
    # and what the tour needs to show it: the recorder and the mock world. Each later part
    # imports what it narrates (the manager, procedures, reflection, the database), in its
    # function; the HTML trace and a real model's client load only when asked for.
    from recuris.core.agent import AgentSettings, RecurisAgent
    from recuris.core.clock import DAY, ManualClock
    from recuris.core.consolidation import ConsolidationSettings, Consolidator
    from recuris.core.decay import DecayManager
    from recuris.core.episodic import EpisodicMemory, RetrievalSettings
    from recuris.core.mock_llm import PromptFollowingLLM
    from recuris.core.records import Episode
    from recuris.core.semantic import SemanticMemory
    from recuris.core.text import FAILURE_MARKERS, estimate_tokens
    from recuris.core.working import WorkingMemory, WorkingSettings
    from recuris.tour.mock_environment import MockEnvironment
    from recuris.tour.recorder import Recorder, full_history, sections
except KeyboardInterrupt:
    sys.exit(interrupted())

# Read by a type checker only: the manager is imported by the parts that narrate it.
if TYPE_CHECKING:
    from recuris.manager.manager import MemoryManager

START = 1_767_225_600  # 2026-01-01 00:00 UTC, fixed so every run prints the same

# The Chinese tasks of document 000, with what they say. They stay in Chinese because they
# show why the tokenizer needs CJK bigrams: these goals have no space to split words at.
GLOSS = {
    "注册一个新账号": "sign up for a new account",
    "再注册一个测试账号": "sign up for another, test account",
    "网页表单填写": "web form filling",
    "打开注册页": "open the sign-up page",
    "填写邮箱": "fill in the email",
    "设置密码": "set a password",
    "提交表单 | 完成验证码后提交": "submit the form | solve the captcha, then submit",
    "失败：需要先完成验证码": "failed: solve the captcha first",
    "ok：页面响应正常": "ok: the page responded",
    "注册网站": "the sign-up site",
    "提交前需要验证码": "needs a captcha before submitting",
}


def glossed(text: str) -> str:
    return f"{text} ({GLOSS[text]})" if text in GLOSS else text


class Tour:
    """What every part of the tour shares: the clock, the memories, the model, and the recorder.

    `model` names a real model in the narration; None means the offline mock, whose choices
    the narration can foretell. `loop_llm` decides document 000's loop (parts A to E); None
    means `llm` decides every part.
    """

    def __init__(self, llm, model: str | None = None, loop_llm=None) -> None:
        self.model = model
        # Whether task B took the other option; part E says so only if it did.
        self.avoided = False
        # Whether task A failed and B's first prompt held that failure; part E says so only then.
        self.failure_shown = False
        self.clock = ManualClock(START)
        self.recorder = Recorder(self.clock)
        self.working = WorkingMemory(WorkingSettings(window_size=6, max_summary_chars=300))
        self.episodic = EpisodicMemory()
        self.semantic = SemanticMemory()
        decay = DecayManager(clock=self.clock)
        # Every access and cycle is kept, for the trace's plot
        self.decay = self.recorder.watch(decay)
        # Every prompt is kept: printed below, and in the HTML trace
        self.llm = self.recorder.wrap(llm)
        self.loop_llm = self.llm if loop_llm is None else self.recorder.wrap(loop_llm)

    def calls(self) -> int:
        """Return how many prompts the tour's models were sent."""
        if self.loop_llm is self.llm:
            return len(self.llm.prompts)
        return len(self.loop_llm.prompts) + len(self.llm.prompts)

    def foretold(self, mock: str, real: str) -> str:
        """Return `mock`, what the mock will do, or `real` for a model whose choice is unknown."""
        return mock if self.model is None else real

    def part(self, letter: str, title: str) -> None:
        print(f"\n=== {letter}. {title}")
        self.recorder.begin(f"{letter}. {title}")

    def say(self, text: str, indent: str = "    ") -> None:
        """Print a line of narration, and keep it for the HTML trace."""
        print(f"{indent}{text}")
        self.recorder.note(text.strip())

    def show_prompt(self, prompt: str) -> None:
        """Print a prompt section by section, each line under its section's label; keep it."""
        for label, text in sections(prompt):
            for number, line in enumerate(line for line in text.splitlines() if line.strip()):
                print(f"      {label if number == 0 else '':<16}| {line}")
        self.recorder.show_prompt(prompt)

    def table(self, header: tuple[str, ...], rows: list[tuple]) -> None:
        """Print a table, each column right-aligned under its heading; keep it for the trace."""
        widths = [max(6, len(heading)) for heading in header]  # six digits at least
        for row in [header, *rows]:
            print("    " + "  ".join(f"{cell:>{width}}" for cell, width in zip(row, widths)))
        self.recorder.table(header, rows)

    def show(self, event) -> None:
        """The agent's observer: print each stage event and record it."""
        print("   ", event.render())
        self.recorder.observe(event)

    def day(self) -> str:
        return f"day {(self.clock() - START) / DAY:.1f}"

    def settle(self, audit=()) -> None:
        """Record what each tier of the agent's own memory holds now."""
        self.recorder.settle(
            {
                "working memory": self.working.to_prompt_section().splitlines()[1:],
                "episodic memory": [
                    f"{e.id}: {e.render()} [weight {self.decay.weight(e):.3f}, "
                    f"accesses {e.access_count}]"
                    for e in self.episodic.episodes
                ],
                "semantic memory": [fact.render() for fact in self.semantic.facts],
            },
            audit,
        )


def why_it_ended(run, agent) -> str:
    """Say which rule ended a run."""
    if run.success:
        pending = len(agent.working.pending_subtasks)
        if pending:
            return f"the model replied FINISH with {pending} subtask(s) of the plan not ticked"
        return "the model replied FINISH: every subtask was ticked"
    reason = run.failure_reason
    if "failed:" in reason:
        markers = ", ".join(repr(marker) for marker in FAILURE_MARKERS)
        return (
            f"{reason}; a result containing a failure marker ({markers}) is a failed step, and "
            f"this agent stops after {agent.settings.max_failures} "
            f"(max_failures={agent.settings.max_failures})"
        )
    if "max_steps" in reason:
        return f"{reason}: the agent's step budget ran out"
    return reason


def main(llm=None, reflector=None, html: str | None = None) -> None:
    """Run the tour; `llm` and `reflector` default to the offline, deterministic mocks."""
    # The mock of the manager's parts: the core's PromptFollowingLLM, taught to fill slots and
    # to read also what the manager's agent adds to its prompts in parts G and H.
    from recuris.manager.experience import model_on_manager

    named = None if llm is None else getattr(llm, "name", "the one given")
    # Document 000's loop (A to E) needs only the core's mock (recuris/core/mock_llm.py).
    tour = Tour(llm or model_on_manager(), named, None if llm else PromptFollowingLLM())
    # An old, never-used episode, so the decay cycle below has something stale to forget.
    tour.episodic.add_episode(
        Episode(
            task_type="report",
            goal="export the 2025 sales report as CSV",
            status="success",
            created_at=START - 40 * DAY,
        )
    )
    first, second = failure_then_recovery(tour)
    third = long_task(tour)
    consolidation(tour, [first, second, third])
    decay_cycle(tour, first)
    manager_tour(tour, reflector)
    memory_after_the_tour(tour, html)


def memory_after_the_tour(tour: Tour, html: str | None) -> None:
    """K: what each memory holds at the end; with `html`, the trace page and its year plot."""
    tour.part("K", "The state of memory after the tour")
    episodic = tour.episodic
    semantic = tour.semantic
    tour.say(f"working memory : {tour.working!r}")
    held = ", ".join(f"{e.id} ({e.status})" for e in episodic.episodes)
    tour.say(f"episodic memory: {len(episodic)} episodes: {held}")
    tour.say(
        f"semantic memory: {len(semantic)} fact(s): "
        + "; ".join(f.render() for f in semantic.facts)
    )
    tour.say(
        f"decay audit log: {len(tour.decay.audit_log)} record(s); LLM calls: "
        f"{tour.calls()}"
    )
    tour.settle()
    if html:
        from recuris.tour.simulation import simulate, year_plot
        from recuris.tour.trace import write_page

        year = simulate(per_day=5)
        caption = (
            f"The forgetting simulation (recuris/tour/simulation.py) at {year.per_day} memories a "
            "day: the store levels off instead of growing with everything ever written."
        )
        figures = [("(c) The store over a simulated year", caption, year_plot(year))]
        write_page(html, tour.recorder, "recuris: the guided tour, traced", figures)
        print(f"\nThe trace is in {html}: open it in a browser.")


def failure_then_recovery(tour: Tour) -> tuple:
    """A and B: a task fails; a similar one retrieves the failure and takes the other option."""
    agent = RecurisAgent(
        tour.working,
        tour.episodic,
        tour.loop_llm,
        AgentSettings(max_steps=30),
        decay=tour.decay,
        clock=tour.clock,
        observer=tour.show,
    )
    signup = ["打开注册页", "填写邮箱", "设置密码", "提交表单 | 完成验证码后提交"]
    website = {"提交表单": "失败：需要先完成验证码"}

    title = tour.foretold("fails, and the failure is remembered", "runs, and its episode is kept")
    tour.part("A", f"A first task {title}")
    tour.say(f"task: {glossed('注册一个新账号')}, of type {glossed('网页表单填写')}")
    tour.say("plan, one subtask a line:")
    for number, step in enumerate(signup, 1):
        tour.say(f"{number}. {glossed(step)}", "      ")
    tour.say(
        tour.foretold(
            '" | " separates alternative actions for one subtask: the model takes the first one '
            "not known to fail.",
            '" | " separates alternative actions for one subtask.',
        )
    )
    tour.say(
        f"the website answers 提交表单 with {glossed('失败：需要先完成验证码')}, "
        f"anything else with {glossed('ok：页面响应正常')}"
    )
    if tour.model is None:
        tour.say(
            "The model is a mock (PromptFollowingLLM) that decides from the prompt alone: for "
            "the first subtask not ticked [x], it replies with the first option that no failed "
            "step, [avoid] experience or pin rules out; FINISH once all are ticked."
        )
    else:
        tour.say(
            f"The model is {tour.model}: each prompt it is sent and each reply are shown; what "
            "it chose is told after each task."
        )
    calls = len(tour.loop_llm.prompts)
    first = agent.run(
        "注册一个新账号", "网页表单填写", MockEnvironment(website, "ok：页面响应正常"), signup
    )
    tour.say(
        f"-> success={first.success}; stored as {first.episode.id}: {first.episode.render()}", "  "
    )
    tour.say(f"why: {why_it_ended(first, agent)}.", "     ")
    tour.say("The first prompt of this task, with nothing remembered yet, section by section:")
    before = tour.loop_llm.prompts[calls]
    tour.show_prompt(before)
    tour.settle()

    tour.clock.advance(2 * DAY)
    title = tour.foretold(
        "retrieves that episode and avoids the failed path", "and the experience its prompt holds"
    )
    tour.part("B", f"A similar task {title}")
    tour.say(f"task: {glossed('再注册一个测试账号')}: the same type, plan and website")
    calls = len(tour.loop_llm.prompts)
    second = agent.run(
        "再注册一个测试账号", "网页表单填写", MockEnvironment(website, "ok：页面响应正常"), signup
    )
    tour.say(f"-> success={second.success} in {second.steps} steps; the prompt said:", "  ")
    experience = tour.loop_llm.prompts[-1].split("## Related experience")[1].splitlines()[1]
    tour.say(f"{experience.strip()}", "     ")
    tour.avoided = (
        second.success
        and "完成验证码后提交" in second.episode.actions
        and "提交表单" not in second.episode.actions
    )
    if tour.avoided:
        tour.say(
            "why: at the last subtask the [avoid] line ruled out 提交表单, so the model took "
            "the next option, 完成验证码后提交; with every subtask ticked it replied FINISH.",
            "     ",
        )
    elif "提交表单" in second.episode.actions and "[avoid]" in experience:
        tour.say(
            f"why: the model took 提交表单 again, which the [avoid] line ruled out; "
            f"{why_it_ended(second, agent)}.",
            "     ",
        )
    else:
        tour.say(f"why: {why_it_ended(second, agent)}.", "     ")
    after = tour.loop_llm.prompts[calls]
    # Told from B's first prompt, not foretold: a real model's task A may have succeeded
    recalled = first.episode.render() in after
    tour.failure_shown = recalled and not first.success
    remembered = "the failure" if tour.failure_shown else "A's success"
    if recalled:
        shared = set("注册一个新账号".split()) & set("再注册一个测试账号".split())
        tour.say(
            f"The two goals share {len(shared)} space-separated words; their CJK bigrams "
            f"(注册, 账号, ...) bring {remembered} back, above the similarity threshold "
            f"{agent.settings.retrieval.threshold}."
        )
        tour.say(
            f"Retrieving {first.episode.id} also reinforced it: its decay clock restarted on "
            f"{tour.day()} and it has {first.episode.access_count} access(es). Part E depends on "
            "this."
        )
    changed = [
        label for (label, text), (_, old) in zip(sections(after), sections(before)) if text != old
    ]
    held = f", with {remembered} remembered" if recalled else f", without {first.episode.id}"
    tour.say(f"Its first prompt{held}; the sections that differ from A's: {', '.join(changed)}:")
    tour.show_prompt(after)
    tour.settle()
    return first, second


def long_task(tour: Tour):
    """C: 32 steps through a window of 6; the goal and the pin stay, the prompt stays flat."""
    tour.clock.advance(DAY)
    title = tour.foretold(
        "the window compresses, the goal and the pin stay, the prompt stays flat",
        f"through a window of {tour.working.window_size} recent steps, with a goal and a pin",
    )
    tour.part("C", f"A long task: {title}")
    tables = [
        f"migrate table {name}"
        for name in (
            "users orders invoices payments refunds carts products prices stock suppliers "
            "shipments returns reviews coupons audit sessions tokens settings carriers zones "
            "taxes currencies warehouses bins pickers routes labels manifests invoices_archive logs"
        ).split()
    ]
    plan = tables + [
        "create indexes in MySQL | create indexes in PostgreSQL",
        "run consistency checks",
    ]
    goal = "move the shop database off the legacy server without losing a row"
    tour.say(f"task: {goal}; {len(plan)} subtasks, and one pinned constraint: do not use MySQL")
    # Recorded for the trace, not printed
    agent = RecurisAgent(
        tour.working,
        tour.episodic,
        tour.loop_llm,
        AgentSettings(max_steps=40),
        clock=tour.clock,
        observer=tour.recorder.observe,
    )
    calls = len(tour.loop_llm.prompts)

    def migrate(action: str) -> str:
        rows = 1_000 + 137 * len(action) ** 2  # any deterministic figure will do
        return f"ok: {action} finished, {rows:,} rows copied, row counts and checksums match"

    third = agent.run(goal, "database migration", migrate, plan, constraints=["do not use MySQL"])
    prompts = tour.loop_llm.prompts[calls:]
    full = [estimate_tokens(text) for text in full_history(prompts)]
    ours = [estimate_tokens(text) for text in prompts]
    shown = sorted({n for n in (1, 8, 16, 24, 32, len(prompts)) if 1 <= n <= len(prompts)})
    tour.table(
        ("step", "recuris prompt (tokens)", "full-history prompt (tokens)"),
        [(number, ours[number - 1], full[number - 1]) for number in shown],
    )
    tour.say(
        "Flat means bounded by configuration, not by the number of steps: "
        f"{tour.working.window_size} recent steps verbatim, older ones folded into a summary of at "
        f"most {tour.working.max_summary_chars} characters. The full-history prompt is the same "
        "prompt with every step verbatim instead."
    )
    if len(prompts) >= 16:
        tour.say(
            f"From step 16 to step {len(prompts)}, recuris's prompt grew by {ours[-1] - ours[15]} "
            f"tokens, the full history by {full[-1] - full[15]}."
        )
    tour.say(
        f"-> success={third.success} in {third.steps} steps; goal in "
        f"{sum(goal in p for p in prompts)}/{len(prompts)} prompts, pin in "
        f"{sum('do not use MySQL' in p for p in prompts)}/{len(prompts)}",
        "  ",
    )
    if not third.success:
        tour.say(f"why: {why_it_ended(third, agent)}.", "     ")
    index_step = next(
        (s for s in third.episode.trajectory if s.action.startswith("create indexes")), None
    )
    chose = (
        f"step {index_step.index} chose {index_step.action!r}, as the pin requires"
        if index_step
        else ("no step built indexes")
    )
    kept = len(third.episode.trajectory)
    tour.say(f"-> {chose}; the episode keeps all {kept} steps; the summary at the end:", "  ")
    for line in third.episode.summary.splitlines():
        tour.say(line, "     ")
    tour.settle()
    return third


def consolidation(tour: Tour, runs: list) -> None:
    """D: two agreeing episodes promote a fact; two disagreeing ones report a conflict."""
    tour.part("D", "Repeated statements consolidate into a semantic fact")
    consolidator = Consolidator(tour.semantic, ConsolidationSettings(), clock=tour.clock)
    tour.say(
        "A statement becomes a fact once 2 different episodes state it within 7 days, and none "
        "contradicts it."
    )
    tour.say(
        f"注册网站: 提交前需要验证码 means '{GLOSS['注册网站']}: {GLOSS['提交前需要验证码']}'."
    )
    first, second, third = (run.episode.id for run in runs)
    sightings = [
        ("注册网站", "提交前需要验证码", first),
        ("注册网站", "提交前需要验证码", second),
        ("target database", "PostgreSQL", third),
        ("target database", "MySQL", "episode-import-7"),
    ]
    for subject, value, source in sightings:
        conflicts = len(consolidator.conflicts)
        fact = consolidator.observe(subject, value, source)
        if fact:
            outcome = f"promoted {fact.id}: {fact.render()}"
        elif len(consolidator.conflicts) > conflicts:
            outcome = "not promoted: another source states another value (a conflict)"
        else:
            outcome = "not promoted (yet): one source so far"
        tour.say(f"observe({subject!r}, {value!r}, {source!r}) -> {outcome}")
    for conflict in consolidator.conflicts:
        tour.say(f"reported {conflict.render()}")
    tour.settle()


def decay_cycle(tour: Tour, first) -> None:
    """E: the weights, the cycle's verdicts, and why each survivor survived."""
    decay = tour.decay
    settings = decay.settings
    # Long enough for an unused episode of importance 1 to fall below the threshold, in whole
    # days: the curve's inverse (D8), so that under any curve the unused go and the used stays.
    idle = settings.curve.elapsed_for(settings.retention_threshold, settings.half_life_days)
    tour.clock.advance(math.ceil(idle) * DAY)
    tour.part(
        "E", f"A decay cycle on {tour.day()}: stale memories are forgotten, used ones survive"
    )
    per_access = decay.settings.reinforcement_per_access
    cap = decay.settings.reinforcement_cap
    # The curve is named, not written out: the formula is its chapter's (docs/core/decay.md),
    # so a fork with another curve (D8) changes no line here.
    tour.say(
        f"weight = importance x {decay.settings.curve!r} of the idle days, half-life "
        f"{decay.settings.half_life_days:g} days, + {per_access} per access (at most {cap}); "
        f"below {decay.settings.retention_threshold}, a memory is forgotten."
    )
    for episode in tour.episodic.episodes:
        weight = decay.weight(episode)
        bonus = min(cap, per_access * episode.access_count)
        idle = (tour.clock() - episode.last_access_at) / DAY
        tour.say(
            f"{episode.id:<10} weight {weight:.3f} = {weight - bonus:.3f} decayed + {bonus:.3f} "
            f"reinforced ({idle:.0f} days since last access, accesses={episode.access_count})"
        )
    report = decay.run_cycle(tour.episodic.episodes)
    tour.episodic.remove(item.id for item in report.forgotten)
    for record in report.audit:
        print(f"    {record.render()}")
    for episode in report.kept:
        tour.say(
            f"kept {episode.id} ({episode.status}, weight {report.weights[episode.id]:.3f}): "
            + (
                f"it was retrieved {episode.access_count} time(s), which restarted its decay clock "
                f"and added {min(cap, per_access * episode.access_count):.2f}; that lifts it over "
                "the threshold."
                if episode.access_count
                else "it was written recently enough."
            )
        )
    successes_forgotten = any(e.status == "success" for e in report.forgotten)
    if tour.failure_shown and first.episode in report.kept and successes_forgotten:
        failure = "the failure that saved task B" if tour.avoided else "the failure B was shown"
        tour.say(
            f"A memory survives by being used, not by being a success: {failure} stays, while "
            "the successes no task has needed yet are forgotten."
        )
    tour.settle(report.audit)


def manager_tiers(manager: "MemoryManager", *users: str) -> dict:
    """What each user's layers hold in the manager, level by level."""
    tiers = {}
    for user in users:
        for item in manager.list(user):
            closed = "" if item.invalidated_at is None else f" [superseded by {item.superseded_by}]"
            tiers.setdefault(f"{user}: {item.level}", []).append(
                f"{item.id}: {item.content}{closed}"
            )
    return tiers


def manager_tour(tour: Tour, reflector) -> None:
    """F to J: every layer behind one manager, on SQLite, for two isolated users."""
    from recuris.manager.manager import MemoryManager
    from recuris.storage.sqlite_store import SQLiteStore

    clock = tour.clock
    llm = tour.llm
    folder = tempfile.TemporaryDirectory()
    path = Path(folder.name) / "memory.db"
    manager = MemoryManager(SQLiteStore(path), clock=clock)

    tour.part(
        "F", "One manager, many users: routing, a superseded fact, layered recall with breakdowns"
    )
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
        outcome = (
            f"{item.id} at level {item.level}" if item else "skipped as trivial (好的 means 'OK')"
        )
        tour.say(f"write({content!r}, {user!r}, level={level!r}) -> {outcome}")
    procedure = ["run migrations", "set DB_URL", "roll out"]
    manager.write(
        "deploy",
        "ana",
        level="procedural",
        metadata={"steps": procedure, "task_types": ["release"]},
    )
    facts = "; ".join(fact.render() for fact in manager.users.get("ana").semantic.current())
    tour.say(f"ana's valid facts: {facts}")
    tour.say(
        "'deploy region: eu-west' was written twice as a plain statement, so it was promoted to a "
        "fact citing both writes; 'database: PostgreSQL' contradicts 'database: MySQL', so it "
        "supersedes it:"
    )
    for record in manager.history("ana", "fact-1"):
        print(f"    {record.render()}")
    query = "which database and deploy region for the release"
    tour.say(f"recall({query!r}, 'ana', task_type='release'):")
    for result in manager.recall(query, "ana", task_type="release").results:
        tour.say(f"{result.explain()}\n        {result.render()}", "      ")
    tour.say(
        f"the same recall for 'bob': {[r.render() for r in manager.recall(query, 'bob').results]}"
    )
    tour.recorder.settle(manager_tiers(manager, "ana", "bob"), manager.history("ana"))

    outcome = tour.foretold("follows", "is given")
    tour.part("G", f"The agent on the manager {outcome} a recalled procedure")
    agent = manager.agent("ana", llm, clock=clock, observer=tour.recorder.observe)
    run = agent.run("ship release 7 to the deploy region", "release", MockEnvironment())
    recalled = llm.prompts[-1].split("## Recalled memory")[1].split("\n\n")[0].splitlines()[1:]
    tour.say("the agent's first prompt recalled:")
    for line in recalled:
        tour.say(f"{line}")
    followed = (
        "it followed the procedure"
        if list(run.episode.actions) == procedure
        else f"the procedure was {' -> '.join(procedure)}; it did"
    )
    tour.say(f"-> success={run.success}; {followed}: {' -> '.join(run.episode.actions)}")
    if not run.success:
        tour.say(f"why: {why_it_ended(run, agent)}.", "     ")
    tour.recorder.settle(manager_tiers(manager, "ana", "bob"))
    evolving_tour(tour, manager, reflector)

    tour.part("J", "A forgotten user, and the database reopened")
    deleted = manager.forget_user("bob")
    tour.say(f"forget_user('bob') deleted {deleted} item(s); bob now has {manager.list('bob')}")
    manager.store.close()
    reopened = MemoryManager(SQLiteStore(path, create=False), clock=clock)
    levels = Counter(item.level for item in reopened.list("ana"))
    tour.say(f"reopened: ana has {dict(sorted(levels.items()))} (superseded facts kept for audit)")
    trail = [(record.operation, record.reason) for record in reopened.history("bob")]
    tour.say(f"bob has {len(reopened.list('bob'))} items; his audit trail keeps no text: {trail}")
    tour.recorder.settle(manager_tiers(reopened, "ana", "bob"), reopened.history("bob"))
    reopened.store.close()
    folder.cleanup()


def evolving_tour(tour: Tour, manager: "MemoryManager", reflector) -> None:
    """H and I: reflection feeds a later task through search_memory; a cycle forgets and merges.

    `reflector` None is the scripted ReflectingLLM.
    """
    from recuris.evolution.reflecting_llm import ReflectingLLM
    from recuris.evolution.reflection import ReflectionCallback

    clock = tour.clock
    llm = tour.llm
    outcome = tour.foretold(
        "turns a conversation into an insight; a later task asks for it",
        "on a conversation; a later task may ask for its insights",
    )
    tour.part("H", f"Reflection {outcome} with search_memory")
    reflection = ReflectionCallback(
        reflector or ReflectingLLM(), manager, threshold=3, user_id="ana"
    )
    for user, agent_reply in [
        ("Can you check the build?", "The build is green."),
        ("Our staging host is stage-7.internal.", "Noted."),
        ("Deploy it there, not to prod!", "Sorry, I was wrong to suggest prod."),
    ]:
        reflection.add_interaction(user, agent_reply)
    tour.say(f"3 interactions buffered (no model call yet); ready={reflection.ready}")
    reflected = reflection.reflect()
    for insight in reflected.stored:
        tour.say(
            f"insight {insight.id} ({insight.metadata['type']}): {insight.content!r}"
            f" from {insight.metadata['source_ids']}"
        )
    if reflected.failed:
        tour.say(f"the reflection failed and said why: {'; '.join(reflected.problems)}")
        tour.say(
            f"nothing was stored; the {len(reflection.buffer)} interactions stay buffered for the "
            "next try."
        )
    for problem in () if reflected.failed else reflected.problems:
        tour.say(f"the reflection reported a problem: {problem}")
    clock.advance(DAY)
    exact = AgentSettings(retrieval=RetrievalSettings(threshold=1.0))
    agent = manager.agent("ana", llm, settings=exact, clock=clock, observer=tour.recorder.observe)
    environment = MockEnvironment()
    tour.say(
        "the next task's plan has a slot, {staging host}, that no prompt fills: the model must ask "
        "memory."
    )
    run = agent.run(
        "get release 8 ready for QA", "qa", environment, ["build", "deploy to {staging host}"]
    )
    answered = next((p for p in reversed(llm.prompts) if "## Recalled by search_memory" in p), "")
    if answered:
        tour.say(
            "the model asked search_memory for the {staging host} slot; its next prompt carried:"
        )
        for line in (
            answered.split("## Recalled by search_memory")[1].split("\n\n")[0].splitlines()[:3]
        ):
            tour.say(f"{line.strip()}", "      ")
    tour.say(f"-> success={run.success}; executed: {environment.executed}")
    if not run.success:
        tour.say(f"why: {why_it_ended(run, agent)}.", "     ")
    tour.recorder.settle(manager_tiers(manager, "ana"))

    tour.part(
        "I", "Two weeks later, a forgetting cycle merges near-duplicates and forgets the unused"
    )
    clock.advance(14 * DAY)
    decay = manager.forgetting.decay  # the manager's own: a half-life of 7 days
    report = manager.run_decay("ana")
    for record in report.audit:
        print(f"    {record.render()}")
    tour.say(
        f"episodic and semantic items: {report.size_before} before the cycle, {report.size_after} "
        "after"
    )
    kept: dict[str, list[str]] = {}
    for item in manager.list("ana"):
        if item.level not in ("episodic", "semantic") or not item.is_valid:
            continue
        if item.level == "semantic":
            slowdown = decay.settings.consolidated_slowdown
            why = f"facts and insights (semantic memory decays {slowdown:g}x more slowly)"
        elif item.access_count:
            why = "recalled since it was written (each access restarts the decay clock)"
        else:
            why = "important enough to outlast two weeks unused"
        kept.setdefault(why, []).append(f"{item.id} ({decay.weight(item):.2f})")
    for why, items in kept.items():
        tour.say(f"kept, {why}: {', '.join(items)}")
    if {"item-1", "item-4"} <= {
        record.item_id for record in report.audit if record.operation == "forget"
    }:
        tour.say(
            "item-1 and item-4 were the raw statements behind fact-2: the fact stays, the events "
            "go."
        )
    tour.recorder.settle(manager_tiers(manager, "ana"), report.audit)


# A decision is one action line or one search_memory call; a model that never stops would
# otherwise write until the timeout. Reflection answers a JSON list of insights, so it gets more.
ACTION_MAX_TOKENS = 96
REFLECTION_MAX_TOKENS = 512


def http_models(base_url: str, model: str | None) -> tuple["ShowingLLM", "ShowingLLM"]:
    """Return the deciding and the reflecting model on one endpoint, each showing its traffic."""
    from recuris.llm.llm_http import OpenAICompatibleChat

    decide = OpenAICompatibleChat(base_url, model, max_tokens=ACTION_MAX_TOKENS)
    reflect = OpenAICompatibleChat(base_url, model, max_tokens=REFLECTION_MAX_TOKENS)
    return ShowingLLM(decide), ShowingLLM(reflect)


class ModelFailed(BaseException):
    """A call to the model failed: the tour stops at the first prompt that got no reply.

    Not an Exception, on purpose: the agent ends a task as failed on a model's Exception
    (A2) and reflection keeps it as a failed try (Y2), which is right for a task; but the
    model's failure is not the task's. An endpoint that is not there, answers an HTTP error,
    times out or sends no chat reply (any `LLMError`, LM3) would have the tour store
    "llm_fn raised ..." as an [avoid] lesson and narrate recoveries that never happened.
    """


class ShowingLLM:
    """Send each prompt to a real endpoint, and show the prompt and the reply."""

    def __init__(self, client) -> None:
        self.client = client
        self.prompts = []
        self.name = f"{client.model} at {client.base_url}"

    def __call__(self, prompt: str) -> str:
        """Return the model's reply; raise ModelFailed, naming the failure, if none came."""
        from recuris.llm.llm_http import LLMConnectionError, LLMError

        self.prompts.append(prompt)
        print("    >>> prompt sent:\n" + "\n".join(f"    | {line}" for line in prompt.splitlines()))
        try:
            reply = self.client(prompt)
        except LLMConnectionError as error:
            raise ModelFailed(f"{error}; the tour stopped here") from None
        except LLMError as error:
            said = f"the model {self.name} failed: {error}; the tour stopped here"
            raise ModelFailed(said) from None
        print(f"    <<< reply: {reply!r}")
        return reply


def run_tour(models: tuple, html: str | None) -> int:
    """Run the tour on `models` (none: the mocks); return 1, having said why, if it stopped."""
    try:
        main(*models, html=html)
    except ModelFailed as error:
        sys.stdout.flush()  # the prompt that could not be sent, before the line that says why
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def command() -> int:
    """Read the command line, then run the tour; return the exit status (a usage error: 2)."""
    from recuris.manager.cli_arguments import file_to_write

    parser = argparse.ArgumentParser(
        description="The recuris tour; offline and deterministic unless --llm is given."
    )
    parser.add_argument(
        "--llm", metavar="URL", help="an OpenAI-compatible base URL, e.g. http://localhost:8000/v1"
    )
    parser.add_argument("--model", help="the model name the endpoint serves (or set RECURIS_MODEL)")
    parser.add_argument(
        "--html",
        metavar="FILE",
        type=file_to_write,
        help="also write the tour as one self-contained HTML trace",
    )
    arguments = parser.parse_args()
    if arguments.model is not None and not arguments.llm:
        # Else the offline mock would run, narrated as the mock, while a model was asked for.
        parser.error(f"--model {arguments.model} needs --llm URL, the endpoint that serves it")
    try:  # the client checks its URL and model (LM3) here, before the tour starts
        models = http_models(arguments.llm, arguments.model) if arguments.llm else ()
    except ValueError as error:
        parser.error(f"--llm {arguments.llm}: {error}")
    return run_tour(models, arguments.html)


if __name__ == "__main__":
    sys.exit(run_piped(command))
