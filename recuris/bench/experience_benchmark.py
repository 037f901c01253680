"""The experience benchmark: does the agent stop repeating its mistakes, at scale, on the product?

Document 000 §2.3 and §3.2: a failed task becomes an episode, and the next similar task
retrieves it and avoids the failed path; document 004 §2 forgets what is not used. This
module runs a stream of tasks (a task file, experience_tasks.py) on one `MemoryManager`,
day by day over a simulated year, through `MemoryManager.agent` with default settings and a
model whose choices depend only on its prompt, under five conditions that differ in one
thing each: no episodic memory, the default product (with the nightly forgetting cycle),
BM25 as the episodic scorer, no forgetting cycles, and one task type shared by every family.
Each part of the suite's split (the test part, then the tuning part) runs as a stream of its
own. Every task, retrieval, action and avoidance goes into an event log, and each figure is a
count over it: an avoidance names the episode that caused it, so negative transfer is
counted, not inferred.

Invariants:
    XP1 a run is deterministic: the same suite, conditions and model give the same log and
        figures; every condition runs the same stream with a model of the same kind.
    XP2 the figures are exactly the counts of the event log: a recount from the log alone
        gives every number of the summary.
    XP3 an avoidance is logged when an action done for a subtask comes after an option of
        the subtask (in the instance's shuffled order) that an episode shown in that step's
        prompt names as its failed action; a path followed, when the action, not the
        subtask's first option, is a step of a shown episode that succeeded. Each names the
        episode and its family.
    XP4 a failed task is a first encounter when its family had never met the trap it fell
        into, a repeat otherwise; a task that met no trap fails by a broken constraint or an
        unfinished plan.
    XP5 with memory, the stream runs on one manager and one clock; the forgetting cycle, when
        on, runs once at the end of each simulated day; without memory, each task runs on a
        fresh manager, so no episode outlives its task.
    XP6 the forgetting horizon is the decay settings' curve inverted at the retention threshold
        (D8): the days after which an unused episode of importance 1 weighs the threshold,
        under any curve.
    XP7 a task's warnings are the episodes its family's earlier tasks wrote when they fell
        into a trap that are still stored when it starts, as the store says (neither
        forgotten nor merged away); a task at risk counts as warned iff it has one.
    XP8 the figures of a kind of family count the tasks of the families tagged with it, so
        a family of several kinds counts in each.
"""

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import fmean

from ..core.clock import DAY, ManualClock
from ..core.decay import DecaySettings
from ..core.episodic import RetrievalSettings
from ..core.records import Episode, StageEvent
from ..core.similarity import JaccardScorer, Scorer
from ..core.text import estimate_tokens, normalize
from ..experience.agent import ExperienceSettings
from ..experience.lessons import read_lesson
from ..experience.settling import failed_at
from ..manager.cli_arguments import file_to_write
from ..manager.experience import model_on_manager
from ..manager.manager import ManagerSettings, MemoryManager
from ..retrieval.scoring import BM25Scorer
from .experience_tasks import (
    BUILT_IN,
    KINDS,
    PARTS,
    Instance,
    Suite,
    World,
    instances,
    load,
    part,
    respaced,
)
from ..tour.svg import HEIGHT, WIDTH, Series, line_plot

__all__ = [
    "CONDITIONS",
    "tried",
    "Condition",
    "Outcome",
    "Run",
    "forgetting_horizon",
    "parts",
    "run",
    "run_condition",
    "main",
]

START = 1_767_225_600  # 2026-01-01 00:00 UTC: a fixed start, so that every run is the same
USER = "agent"
MORNING = 9 * 3600  # each day's first task starts at 09:00 ...
SPACING = 600  # ... and the next ten minutes later
NIGHT = 23 * 3600  # the nightly forgetting cycle runs at 23:00
QUICK_DAYS = 120  # `--quick` runs the suite's first four months only
STORE_SAMPLE = 30  # the table of the store's size shows every thirtieth day
# Days of silence before a family returns, grouped for the table of forgetting's cost.
SILENCE_BINS = ((0, 7), (8, 14), (15, 21), (22, 30), (31, 60), (61, 120), (121, 365))


@dataclass(frozen=True)
class Condition:
    """One way to run the stream: with episodes kept or not, a scorer, forgetting or not."""

    name: str
    memory: bool = True  # episodes outlive their task (False: a fresh manager per task)
    scorer: Callable[[], Scorer] | None = None  # the episodic scorer; None: the product's
    forgetting: bool = True  # run the default forgetting cycle each simulated night
    settings: ExperienceSettings | None = None  # the agent's; None: the product's defaults
    task_type: str | None = None  # the task type every family is given; None: each its own


# The task type of the shared condition: one word that tells no family from another.
SHARED_TASK_TYPE = "task"
CONDITIONS = (
    Condition("no episodic memory", memory=False),
    Condition("default product"),
    Condition("BM25 as the episodic scorer", scorer=BM25Scorer),
    Condition("default, no forgetting cycles", forgetting=False),
    Condition("default, one task type for every family", task_type=SHARED_TASK_TYPE),
)


def tried() -> tuple[Condition, ...]:
    """Return the other settings of the product tried beside it (`--tried`), the former first."""
    # Built when asked, not at import: the exercises grade a skeleton of the core's records.
    default = ManagerSettings().episodes
    return (
        Condition(
            "before: Jaccard of raw words, threshold 0.25, 2 shown, no settling",
            scorer=JaccardScorer,
            settings=ExperienceSettings(settle=False),
        ),
        Condition(
            "Jaccard of analysed terms, threshold 0.1, 2 shown, no settling",
            settings=ExperienceSettings(retrieval=RetrievalSettings(threshold=0.1), settle=False),
        ),
        Condition(
            "default without settling disagreements",
            settings=ExperienceSettings(retrieval=default, settle=False),
        ),
        Condition(
            "default with 2 shown",
            settings=ExperienceSettings(retrieval=replace(default, top_k=2)),
        ),
        Condition(
            "default at threshold 0.1",
            settings=ExperienceSettings(retrieval=replace(default, threshold=0.1)),
        ),
        Condition(
            "default without consolidating lessons",
            settings=ExperienceSettings(retrieval=default, consolidate=False),
        ),
    )


def forgetting_horizon(settings: DecaySettings | None = None) -> float:
    """Return the days an episode never used again outlives its last use, under `settings`.

    Its weight, importance 1 falling along the settings' forgetting curve, reaches the retention
    threshold then (the curve's inverse, D8); each use adds reinforcement and pushes the horizon
    further. No settings: `DecaySettings()`, the defaults.
    """
    settings = settings if settings is not None else DecaySettings()
    return settings.curve.elapsed_for(settings.retention_threshold, settings.half_life_days)


@dataclass
class Outcome:
    """How one task ended, as its `end` event says (XP4)."""

    success: bool
    cause: str | None  # "trap", "constraint broken", "plan unfinished", or None
    encounter: str | None  # "first" or "repeat" for a trap
    at_risk: bool  # its family had met a trap before
    silent: int | None  # days since its family was last seen
    warned: bool  # an episode of its family's earlier traps was still stored (XP7)
    negative: bool  # it avoided a working action because of another family's episode
    misled: bool  # it followed another family's path into an action that does not work here
    kinds: tuple[str, ...] = ()  # its family's kinds (XP8)
    ruled_out: bool = False  # it was shown episodes that named every option of a step failed


@dataclass
class Run:
    """One condition's run: its event log, and the counts kept while it ran (XP2)."""

    condition: str
    log: list[dict] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)  # each task's instance number
    prompt_tokens: list[int] = field(default_factory=list)
    retrieved: int = 0  # distinct episodes shown, summed over tasks
    relevant: int = 0  # of them, episodes of the task's own family
    store_sizes: list[tuple[int, int]] = field(default_factory=list)  # (day, episodes)

    def summary(self) -> dict:
        """Return the condition's figures, each a share of the tasks it names."""
        outcomes = self.outcomes
        tasks = len(outcomes)
        at_risk = [o for o in outcomes if o.at_risk]
        warned = [o for o in at_risk if o.warned]
        unwarned = [o for o in at_risk if not o.warned]
        return {
            "tasks": tasks,
            "success_rate": _share(sum(o.success for o in outcomes), tasks),
            "first_encounter_failures": sum(o.encounter == "first" for o in outcomes),
            "first_encounters_after_transfer": sum(
                o.encounter == "first" and (o.negative or o.misled) for o in outcomes
            ),
            "first_encounter_failure_rate": _share(
                sum(o.encounter == "first" for o in outcomes), tasks
            ),
            "repeat_failures": sum(o.encounter == "repeat" for o in outcomes),
            "at_risk": len(at_risk),
            "repeat_failure_rate": _repeats(at_risk),
            "at_risk_warned": len(warned),
            "repeat_failure_rate_warned": _repeats(warned),
            "at_risk_unwarned": len(unwarned),
            "repeat_failure_rate_unwarned": _repeats(unwarned),
            "negative_transfers": sum(o.negative for o in outcomes),
            "negative_transfer_rate": _share(sum(o.negative for o in outcomes), tasks),
            "misled_rate": _share(sum(o.misled for o in outcomes), tasks),
            "other_failures": sum(
                o.cause in ("constraint broken", "plan unfinished") for o in outcomes
            ),
            "kinds": {kind: _kind(outcomes, kind) for kind in KINDS},
            "ruled_out": sum(o.ruled_out for o in outcomes),
            "repeat_failures_ruled_out": sum(
                o.ruled_out and o.encounter == "repeat" for o in outcomes
            ),
            "retrieval_precision": _share(self.relevant, self.retrieved),
            "episodes_retrieved": self.retrieved,
            "prompt_tokens_per_step": round(fmean(self.prompt_tokens), 1)
            if self.prompt_tokens
            else 0.0,
            "store_size_final": self.store_sizes[-1][1] if self.store_sizes else 0,
            "store_size_max": max((size for _, size in self.store_sizes), default=0),
        }

    def learning_curve(self) -> list[tuple[int, float]]:
        """Return the success rate by instance number (the first instance of each family is 1)."""
        by_number = defaultdict(list)
        for number, outcome in zip(self.numbers, self.outcomes, strict=True):
            by_number[number + 1].append(outcome.success)
        return [(number, fmean(wins)) for number, wins in sorted(by_number.items())]

    def silence(self) -> list[dict]:
        """Return repeat failures of at-risk tasks by days of silence, warned or not (XP7)."""
        rows = []
        for low, high in SILENCE_BINS:
            row = {"days": f"{low}-{high}"}
            for warned in (True, False):
                group = [
                    o
                    for o in self.outcomes
                    if o.at_risk and o.warned == warned and low <= (o.silent or 0) <= high
                ]
                key = "warned" if warned else "not_warned"
                row[key] = [sum(o.encounter == "repeat" for o in group), len(group)]
            rows.append(row)
        return rows


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _repeats(at_risk: list[Outcome]) -> float | None:
    return _share(sum(o.encounter == "repeat" for o in at_risk), len(at_risk))


def _kind(outcomes: list[Outcome], kind: str) -> dict:
    """Return the figures of the tasks whose family is of one kind (XP8)."""
    tasks = [o for o in outcomes if kind in o.kinds]
    at_risk = [o for o in tasks if o.at_risk]
    return {
        "tasks": len(tasks),
        "at_risk": len(at_risk),
        "repeat_failures": sum(o.encounter == "repeat" for o in at_risk),
        "repeat_failure_rate": _repeats(at_risk),
        "negative_transfers": sum(o.negative for o in tasks),
        "negative_transfer_rate": _share(sum(o.negative for o in tasks), len(tasks)),
    }


class _Task:
    """One task as it runs: the episodes its prompts show, its world, and what steered it.

    It is the agent's observer (`observe`, which reads the recalls), its model (`model`,
    which counts each prompt's tokens) and its action function (a call answers an action
    from the world, after logging what steered the action).
    """

    def __init__(
        self,
        instance: Instance,
        number: int,
        log: list[dict],
        origins: dict[str, str],
        llm: Callable[[str], str],
        lookup: Callable[[str], Episode | None],
    ) -> None:
        self.llm = llm
        self.lookup = lookup  # the episode an id names in the memory, merged ones too
        self.tokens: list[int] = []  # each prompt's estimated tokens
        self.instance = instance
        self.number = number
        self.log = log
        self.origins = origins
        self.world = World(instance.family, instance.day)
        self.shown: list[str] = []  # the ids the current prompt shows
        self.seen: dict[str, None] = {}  # every id shown during the task, in order
        self.steered: list[dict] = []
        self.ruled_out = False  # a prompt's episodes named every option of a step as failed

    def model(self, prompt: str) -> str:
        """Ask the model, counting the prompt's tokens."""
        self.tokens.append(estimate_tokens(prompt))
        return self.llm(prompt)

    def observe(self, event: StageEvent) -> None:
        """Keep the episodes a recall brought: the prompts that follow show them."""
        if event.recalled is None:
            return  # not a retrieval
        self.shown = list(event.recalled)
        self.seen.update(dict.fromkeys(self.shown))
        failed = {
            failed_at(episode)
            for episode in map(self.lookup, self.shown)
            if episode is not None and failed_at(episode)
        }
        self.ruled_out = self.ruled_out or any(
            all(normalize(option) in failed for option in options)
            for options in self.instance.family.plan
        )
        episodes = [[key, self.origins.get(key, "?")] for key in self.shown]
        self.log.append({"event": "retrieve", "task": self.number, "episodes": episodes})

    def __call__(self, action: str) -> str:
        # What the prompt showed: the memory's episodes under those ids, as `ruled_out` reads.
        shown = [episode for episode in map(self.lookup, self.shown) if episode is not None]
        for steer in _steering(self.instance, action, shown):
            event = {
                "event": steer["kind"],
                "task": self.number,
                "option": steer["option"],
                "episode": steer["episode"],
                "family": self.origins.get(steer["episode"], "?"),
                "works_here": self.instance.works(steer["option"]),
            }
            self.steered.append(event)
            self.log.append(event)
        answer = self.world(action)
        self.log.append({"event": "act", "task": self.number, "action": action, "result": answer})
        return answer


def _steering(instance: Instance, action: str, shown: Sequence[Episode]) -> list[dict]:
    """Return the avoidances and followed paths an action shows, naming each episode (XP3)."""
    key = normalize(action)
    events = []
    for options in instance.plan:
        keys = [normalize(option) for option in options]
        if key not in keys:
            continue
        chosen = keys.index(key)
        for skipped in options[:chosen]:
            for episode in shown:
                if failed_at(episode) == normalize(skipped):
                    events.append({"kind": "avoid", "option": skipped, "episode": episode.id})
        if chosen:
            for episode in shown:
                if episode.status == "success" and key in {normalize(a) for a in episode.actions}:
                    events.append({"kind": "follow", "option": action, "episode": episode.id})
    return events


def run_condition(
    suite: Suite,
    condition: Condition,
    model: Callable[[str], str] | None = None,
    days: int | None = None,
) -> Run:
    """Run the suite's stream under one condition and return its log and counts (XP1-XP5).

    `model` decides each step (default: the prompt-following mock of the manager's agent);
    `days` cuts the stream to its first days.
    """
    llm = model if model is not None else model_on_manager()
    horizon_days = suite.days if days is None else min(days, suite.days)
    stream = [task for task in instances(suite) if task.day < horizon_days]
    clock = ManualClock(START)
    result = Run(condition.name)
    log = result.log
    origins: dict[str, str] = {}  # episode id -> the family whose task wrote it
    met: set[tuple[str, str]] = set()  # (family, trap) pairs met so far
    last_seen: dict[str, int] = {}
    traps: dict[str, list[str]] = defaultdict(list)  # family -> episodes its traps wrote
    manager = _manager(condition, clock)
    by_day = defaultdict(list)
    for task in stream:
        by_day[task.day].append(task)
    for day in range(horizon_days):
        for order, instance in enumerate(by_day.get(day, ())):
            clock.now = max(clock.now, START + day * DAY + MORNING + order * SPACING)
            if not condition.memory:
                manager = _manager(condition, clock)
                origins.clear()
            number = len(result.outcomes)
            family = instance.family.name
            lookup = _lookup(manager, origins)
            # What the store kept of the family's traps when the task starts (XP7).
            warnings = [key for key in traps[family] if lookup(key) is not None]
            log.append(
                {
                    "event": "task",
                    "task": number,
                    "family": family,
                    "instance": instance.number,
                    "day": day,
                    "goal": instance.goal,
                    "warnings": warnings,
                }
            )
            task = _Task(instance, number, log, origins, llm, lookup)
            agent = manager.agent(
                USER, task.model, settings=condition.settings, observer=task.observe, clock=clock
            )
            ran = agent.run(
                instance.goal,
                condition.task_type or instance.family.task_type,
                task,
                instance.subtasks(),
                instance.family.constraints,
            )
            tokens = task.tokens
            result.prompt_tokens.extend(tokens)
            origins[ran.episode.id] = family
            seen = list(task.seen)
            result.retrieved += len(seen)
            result.relevant += sum(origins.get(key) == family for key in seen)
            outcome = _outcome(task, met, last_seen, bool(warnings))
            if task.world.errors:
                traps[family].append(ran.episode.id)
            last_seen[family] = day
            result.outcomes.append(outcome)
            result.numbers.append(instance.number)
            log.append(
                {
                    "event": "end",
                    "task": number,
                    "success": outcome.success,
                    "cause": outcome.cause,
                    "encounter": outcome.encounter,
                    "trap": task.world.errors[0] if task.world.errors else None,
                    "at_risk": outcome.at_risk,
                    "silent": outcome.silent,
                    "warned": outcome.warned,
                    "episode": ran.episode.id,
                    "shown": seen,
                    "prompt_tokens": tokens,
                }
            )
        # Night falls whether or not a task ran: the cycle weighs each memory at 23:00.
        clock.now = max(clock.now, START + day * DAY + NIGHT)
        if condition.memory and condition.forgetting:
            report = manager.run_decay(USER)
            for item in report.forgotten:
                log.append({"event": "forgotten", "day": day, "episode": item.id})
            for survivor, folded in report.merged:
                for item in folded:
                    log.append(
                        {"event": "merged", "day": day, "episode": item.id, "into": survivor.id}
                    )
        size = len(manager.users.get(USER).episodic) if condition.memory else 0
        result.store_sizes.append((day, size))
        log.append({"event": "day", "day": day, "episodes": size})
    return result


def _lookup(manager: MemoryManager, origins: dict[str, str]) -> Callable[[str], Episode | None]:
    """Return what an id shown names: a stored episode, or a consolidated lesson, read as the
    failed episode it is shown as (LS5) and counted as its first source's family's (XP3)."""
    layers = manager.users.get(USER)

    def lookup(key: str) -> Episode | None:
        episode = layers.episodic.get(key)
        if episode is not None:
            return episode
        fact = next((fact for fact in layers.semantic.current() if fact.id == key), None)
        if fact is None:
            return None
        origins.setdefault(key, next((origins[s] for s in fact.source_ids if s in origins), "?"))
        return read_lesson(fact.id, fact.subject, fact.value, fact.created_at)

    return lookup


def _manager(condition: Condition, clock: ManualClock) -> MemoryManager:
    return MemoryManager(clock=clock, scorer=condition.scorer)


def _outcome(
    task: "_Task",
    met: set[tuple[str, str]],
    last_seen: dict[str, int],
    warned: bool,
) -> Outcome:
    instance = task.instance
    world = task.world
    family = instance.family.name
    at_risk = any(name == family for name, _ in met)
    encounter = None
    cause = None
    if world.errors:
        cause = "trap"
        trap = (family, world.errors[0])
        encounter = "repeat" if trap in met else "first"
        met.add(trap)
    elif world.violations:
        cause = "constraint broken"
    elif not world.succeeded():
        cause = "plan unfinished"
    silent = instance.day - last_seen[family] if family in last_seen else None
    return Outcome(
        success=world.succeeded(),
        cause=cause,
        encounter=encounter,
        at_risk=at_risk,
        silent=silent,
        warned=warned,
        negative=any(
            event["event"] == "avoid" and event["works_here"] and event["family"] != family
            for event in task.steered
        ),
        misled=any(
            event["event"] == "follow"
            and not instance.works(event["option"])
            and event["family"] != family
            for event in task.steered
        ),
        kinds=instance.family.kinds,
        ruled_out=task.ruled_out,
    )


def run(
    suite: Suite,
    conditions: Sequence[Condition] = CONDITIONS,
    model_factory: Callable[[], Callable[[str], str]] = model_on_manager,
    days: int | None = None,
) -> dict[str, Run]:
    """Run every condition on the same stream, each with a new model of the same kind (XP1)."""
    return {
        condition.name: run_condition(suite, condition, model_factory(), days)
        for condition in conditions
    }


def parts(
    suite: Suite,
    conditions: Sequence[Condition] = CONDITIONS,
    model_factory: Callable[[], Callable[[str], str]] = model_on_manager,
    days: int | None = None,
    names: Sequence[str] = PARTS,
) -> dict[str, dict[str, Run]]:
    """Run every condition on each part of the split named that has families, the test part
    first. `names` chooses the parts: `("tuning",)` runs the tuning part alone, as settings and
    designs are chosen on it."""
    return {
        name: run(part(suite, name), conditions, model_factory, days)
        for name in PARTS
        if name in names and part(suite, name).families
    }


COLUMNS = (
    ("success", "success_rate"),
    ("first-encounter failures", "first_encounter_failure_rate"),
    ("repeat failures, whole run (of tasks at risk)", "repeat_failure_rate"),
    ("repeat failures, a warning still stored", "repeat_failure_rate_warned"),
    ("repeat failures, every warning forgotten", "repeat_failure_rate_unwarned"),
    ("negative transfer", "negative_transfer_rate"),
    ("misled by a path", "misled_rate"),
    ("retrieval precision", "retrieval_precision"),
    ("prompt tokens per step", "prompt_tokens_per_step"),
    ("episodes stored, end (max)", "store"),
)


def _cell(figures: dict, key: str) -> str:
    if key == "store":
        return f"{figures['store_size_final']} ({figures['store_size_max']})"
    value = figures[key]
    if value is None:
        return "-"
    if key == "prompt_tokens_per_step":
        return f"{value:.0f}"
    counts = {
        "first_encounter_failure_rate": f" ({figures['first_encounter_failures']}, "
        f"{figures['first_encounters_after_transfer']} after a transfer)",
        "repeat_failure_rate": f" ({figures['repeat_failures']} of {figures['at_risk']})",
        "repeat_failure_rate_warned": f" (of {figures['at_risk_warned']})",
        "repeat_failure_rate_unwarned": f" (of {figures['at_risk_unwarned']})",
        "negative_transfer_rate": f" ({figures['negative_transfers']})",
        "retrieval_precision": f" (of {figures['episodes_retrieved']})",
    }
    return f"{value:.3f}{counts.get(key, '')}"


def _kind_cell(figures: dict) -> str:
    if not figures["tasks"]:
        return "-"
    repeats = figures["repeat_failure_rate"]
    repeats = "-" if repeats is None else f"{repeats:.3f}"
    return (
        f"{repeats} ({figures['repeat_failures']} of {figures['at_risk']}); "
        f"{figures['negative_transfer_rate']:.3f} ({figures['negative_transfers']} of "
        f"{figures['tasks']})"
    )


def report(suite: Suite, runs: dict[str, dict[str, Run]], horizon: float) -> dict:
    """Return the figures of every part and condition as one JSON-ready object."""
    return {
        "suite": suite.name,
        "seed": suite.seed,
        "forgetting_horizon_days": round(horizon, 1),
        "parts": {name: _part_report(suite, name, results) for name, results in runs.items()},
    }


def _part_report(suite: Suite, name: str, runs: dict[str, Run]) -> dict:
    return {
        "families": len(part(suite, name).families),
        "conditions": {condition: result.summary() for condition, result in runs.items()},
        "learning_curve": {
            condition: result.learning_curve() for condition, result in runs.items()
        },
        "repeat_failures_by_silence": {
            condition: result.silence() for condition, result in runs.items()
        },
        "store_size_by_day": {
            condition: [[day, size] for day, size in result.store_sizes]
            for condition, result in runs.items()
        },
    }


def print_tables(figures: dict) -> None:
    """Print each part's conditions, its figures by kind, and repeat failures by silence."""
    print(
        f"Experience benchmark: {figures['suite']}; options shuffled per instance with seed "
        f"{figures['seed']}; forgetting horizon of an unused episode "
        f"{figures['forgetting_horizon_days']} days."
    )
    for name, values in figures["parts"].items():
        conditions = values["conditions"]
        print(
            f"\n## The {name} part: {values['families']} families, "
            f"{next(iter(conditions.values()))['tasks']} tasks a condition\n"
        )
        print("| condition | " + " | ".join(title for title, _ in COLUMNS) + " |")
        print("| --- " * (len(COLUMNS) + 1) + "|")
        for condition, row in conditions.items():
            print(f"| {condition} | " + " | ".join(_cell(row, key) for _, key in COLUMNS) + " |")
        print(
            f"\nBy kind of family, the {name} part: repeat failures (of tasks at risk); "
            "negative transfer (of tasks):\n"
        )
        print("| condition | " + " | ".join(KINDS) + " |")
        print("| --- " * (len(KINDS) + 1) + "|")
        for condition, row in conditions.items():
            cells = [_kind_cell(row["kinds"][kind]) for kind in KINDS]
            print(f"| {condition} | " + " | ".join(cells) + " |")
        print(
            f"\nRepeat failures / tasks at risk, the {name} part, by days since the family was "
            "last seen:\n"
        )
        by_silence = values["repeat_failures_by_silence"]
        bins = [row["days"] for row in next(iter(by_silence.values()))]
        print("| condition | a warning still stored | " + " | ".join(bins) + " |")
        print("| --- " * (len(bins) + 2) + "|")
        for condition, rows in by_silence.items():
            for key, said in (("warned", "yes"), ("not_warned", "no")):
                cells = [f"{row[key][0]}/{row[key][1]}" if row[key][1] else "-" for row in rows]
                print(f"| {condition} | {said} | " + " | ".join(cells) + " |")


def svg(figures: dict) -> str:
    """Draw the first part's learning curve and repeat failures by days of silence, stacked."""
    figures = next(iter(figures["parts"].values()))
    curve = line_plot(
        "Success by instance number",
        "instance of the family (n)",
        "success rate (share of tasks)",
        [Series(name, points) for name, points in figures["learning_curve"].items()],
        whole_x=True,
    )
    series = []
    for name, rows in figures["repeat_failures_by_silence"].items():
        if name == CONDITIONS[0].name:
            continue
        for key, said in (("warned", "warned"), ("not_warned", "not warned")):
            points = [
                (float(row["days"].split("-")[0]), row[key][0] / row[key][1])
                for row in rows
                if row[key][1]
            ]
            if points:
                series.append(Series(f"{name}, {said}", points, dashed=key != "warned"))
    silence = line_plot(
        "Repeat failures by days of silence",
        "days since the family was last seen (bin start)",
        "repeat failures (share of tasks at risk)",
        series or [Series("none", [(0.0, 0.0)])],
    )
    # Two documents stacked in one: the lower one moved down by the upper one's height.
    lower = silence.replace("<svg ", f'<svg y="{HEIGHT}" ', 1)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{2 * HEIGHT}">\n'
        f"{curve}\n{lower}\n</svg>\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark from the command line; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m recuris.bench experience", description=__doc__.splitlines()[0]
    )
    add_arguments(parser)
    return command(parser.parse_args(argv))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the experience benchmark's arguments to a parser."""
    parser.add_argument("tasks", nargs="?", default=str(BUILT_IN), help="a task file (JSON)")
    parser.add_argument("--json", action="store_true", help="print the figures as one object")
    parser.add_argument(
        "--svg",
        metavar="FILE",
        type=file_to_write,
        help="draw the learning curve and forgetting",
    )
    parser.add_argument("--quick", action="store_true", help=f"the first {QUICK_DAYS} days only")
    parser.add_argument(
        "--tried", action="store_true", help="also run the changes to the product tried"
    )
    parser.add_argument(
        "--part",
        choices=PARTS,
        help="run one part of the split only (the tuning part: to choose a setting or design)",
    )
    parser.add_argument(
        "--respace",
        nargs=2,
        type=int,
        metavar=("SHORTEST", "LONGEST"),
        help="re-space each family's instances SHORTEST to LONGEST days apart (worlds that "
        "change left out)",
    )
    parser.add_argument("--llm", metavar="URL", help="an OpenAI-compatible base URL")
    parser.add_argument("--model", metavar="NAME", help="the model's name at that URL")


def command(arguments: argparse.Namespace) -> int:
    """Run the benchmark with parsed arguments; return the exit status (1 for a bad file,
    2 for gaps `respaced` refuses or a suite it leaves empty, or a URL or model the client
    refuses, said before the stream starts)."""
    try:
        suite = load(arguments.tasks)
    except (OSError, ValueError) as error:
        print(f"error: {arguments.tasks}: {error}", file=sys.stderr)
        return 1
    if arguments.respace:
        try:
            suite = respaced(suite, *arguments.respace)
        except ValueError as error:
            print(f"error: --respace: {error}", file=sys.stderr)
            return 2
        if not suite.families:
            print("error: --respace: XT9: every family's world changes", file=sys.stderr)
            return 2
    factory = model_on_manager
    if arguments.llm:
        # Imported here: the offline run needs no client.
        from ..llm.llm_http import OpenAICompatibleChat

        def factory():
            return OpenAICompatibleChat(arguments.llm, arguments.model, max_tokens=64)

        try:  # one client made now, so that a bad URL or model (LM3) is said before the stream
            factory()
        except ValueError as error:
            print(f"error: --llm {arguments.llm}: {error}", file=sys.stderr)
            return 2

    horizon = forgetting_horizon()
    conditions = CONDITIONS + (tried() if arguments.tried else ())
    names = (arguments.part,) if arguments.part else PARTS
    runs = parts(suite, conditions, factory, QUICK_DAYS if arguments.quick else None, names)
    figures = report(suite, runs, horizon)
    if arguments.json:
        print(json.dumps(figures, ensure_ascii=False))
    else:
        print_tables(figures)
    if arguments.svg:
        Path(arguments.svg).write_text(svg(figures), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
