"""Experience tasks: the task file of the experience benchmark, checked, and the worlds it sets.

Document 000 §2.3 promises that a failed path, stored as an episode, is avoided the next time
a similar task comes; §1.2 names the mistakes to provoke. The experience benchmark
(experience_benchmark.py) runs a stream of tasks to measure that promise, and the tasks are data: a
JSON file of families, each a task type, several phrasings of its goal, a plan whose
subtasks list alternative actions, the actions that fail or break a constraint in the
family's world, constraints to pin, and the days its instances come on. This module reads
and checks such a file, lays its instances out in time, and answers each action as the
family's world does.

Invariants:
    XT1 a file loads iff it is valid; an invalid one raises `TaskFileError` whose message
        opens with the path of the offending field (`families[2].plan[1][0]: ...`).
    XT2 every subtask of a loaded family has an option that neither fails nor breaks a
        constraint, and no option appears twice in a plan.
    XT3 `instances` lists every scheduled instance once, ordered by day, then by the
        family's place in the file, then by instance number; instance n of a family takes
        its goal phrasing n modulo the number of phrasings.
    XT4 a world's answer depends only on the action: a failing option's result carries a
        failure marker, a violating option's does not but is recorded as a violation, and an
        action that is no option of the plan changes nothing.
    XT5 a world's run succeeds iff every subtask was done by a working option, no failing
        option ran and no constraint was broken.
    XT6 an instance's options are its family's, each subtask's shuffled by a generator seeded
        with the suite's seed, the family's name and the instance's number alone: the same
        file gives the same order, and adding a family moves no other family's order.
    XT7 a family's world on a day is its last change on or before that day (its `failing`
        before the first change); every world keeps a working option in every subtask.
    XT8 a family lies in exactly one part, `tuning` or `test` (the test part by default), and
        its kinds are known ones; `part` returns the suite of one part's families, in order.
    XT9 `respaced` keeps each family whose world does not change, in order, with new days:
        the first before `shortest`, each next from `shortest` to `longest` days after the one
        before, as many as the suite's days hold, drawn by a generator seeded with the suite's
        seed and the family's name alone; it raises ValueError naming XT9 unless
        1 <= shortest <= longest.
"""

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.agent import AgentSettings
from ..core.prompt import FINISH, OPTION_SEPARATOR
from ..core.text import normalize
from ..core.validation import unicode_problem

__all__ = [
    "Family",
    "Instance",
    "Suite",
    "TaskFileError",
    "World",
    "BUILT_IN",
    "KINDS",
    "PARTS",
    "instances",
    "load",
    "parse",
    "part",
    "respaced",
]

BUILT_IN = Path(__file__).with_name("data") / "experience.json"
# A plan longer than this cannot finish within the agent's default step budget (A1): one
# action a subtask, and the reply FINISH.
MAX_SUBTASKS = AgentSettings.max_steps - 1  # the field's default, read without a record
SUITE_KEYS = {"name", "days", "seed", "families"}
FAMILY_KEYS = {
    "name",
    "task_type",
    "goals",
    "plan",
    "failing",
    "violating",
    "constraints",
    "days",
    "changes",
    "part",
    "kinds",
}
CHANGE_KEYS = {"day", "failing"}
PARTS = ("test", "tuning")
# What a family is, for the figures by kind: a near-miss twin of another family, none, goals
# paraphrased with few shared words, a world that changes and changes back, a task type shared
# with families of other plans.
KINDS = ("twins", "no twin", "paraphrased", "changes back", "shared task type")
REQUIRED = ("name", "task_type", "goals", "plan", "days")


class TaskFileError(ValueError):
    """A task file that is not valid; the message opens with the offending field's path (XT1)."""


@dataclass(frozen=True)
class Family:
    """Tasks of one kind in one world: what they ask, their plan, and what fails there."""

    name: str
    task_type: str
    goals: tuple[str, ...]
    plan: tuple[tuple[str, ...], ...]  # each subtask's options, first choice first
    days: tuple[int, ...]  # the day of each instance, in order
    failing: frozenset[str] = field(
        default_factory=frozenset
    )  # options whose result is an error here
    violating: frozenset[str] = field(
        default_factory=frozenset
    )  # options that break a constraint here
    constraints: tuple[str, ...] = ()  # pinned in working memory for every instance
    # (day, failing options from that day on), by day: the world changes (XT7)
    changes: tuple[tuple[int, frozenset[str]], ...] = ()
    part: str = "test"  # the part of the split it lies in (XT8)
    kinds: tuple[str, ...] = ()  # what it is, for the figures by kind (KINDS)

    def subtasks(self) -> list[str]:
        """Return the plan as the agent's subtasks: options joined by the separator (P3)."""
        return [OPTION_SEPARATOR.join(options) for options in self.plan]

    def failing_on(self, day: int) -> frozenset[str]:
        """Return the options that fail in this family's world on `day` (XT7)."""
        failing = self.failing
        for start, options in self.changes:
            if start <= day:
                failing = options
        return failing

    def works(self, action: str, day: int = 0) -> bool:
        """Return True if the action is an option of the plan that works in the world of `day`."""
        key = normalize(action)
        options = {normalize(option) for subtask in self.plan for option in subtask}
        bad = {normalize(option) for option in self.failing_on(day) | self.violating}
        return key in options and key not in bad


@dataclass(frozen=True)
class Suite:
    """A task file, loaded: its name, its length in days, and its families in file order."""

    name: str
    days: int
    families: tuple[Family, ...]
    seed: int = 0  # seeds the order of each instance's options (XT6)


@dataclass(frozen=True)
class Instance:
    """One task of the stream: a family's `number`-th instance, on `day`, with its goal."""

    family: Family
    number: int  # from 0
    day: int
    goal: str
    plan: tuple[tuple[str, ...], ...] = ()  # the family's plan, options shuffled (XT6)

    def subtasks(self) -> list[str]:
        """Return this instance's plan as the agent's subtasks, in its shuffled order (P3)."""
        return [OPTION_SEPARATOR.join(options) for options in self.plan or self.family.plan]

    def works(self, action: str) -> bool:
        """Return True if the action is an option that works in the world of this day."""
        return self.family.works(action, self.day)


def _fail(where: str, problem: str) -> TaskFileError:
    return TaskFileError(f"{where}: {problem}")


def _text(where: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, f"must be non-empty text, got {json.dumps(value)[:60]}")
    problem = unicode_problem(value)
    if problem:
        raise _fail(where, f"must be valid Unicode text: {problem}")
    return value.strip()


def _list(where: str, value: object, *, empty: bool = False) -> list:
    if not isinstance(value, list):
        raise _fail(where, f"must be a list, got {type(value).__name__}")
    if not value and not empty:
        raise _fail(where, "must not be empty")
    return value


def _day(where: str, value: object, days: int) -> int:
    # bool is an int in Python, and a JSON true is no day.
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, f"must be a whole number of days, got {json.dumps(value)[:60]}")
    if not 0 <= value < days:
        raise _fail(where, f"must lie in [0, {days}) (the suite's days), got {value}")
    return value


def _keys(where: str, value: object, allowed: set[str], required: tuple[str, ...]) -> dict:
    if not isinstance(value, dict):
        raise _fail(where, f"must be an object, got {type(value).__name__}")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise _fail(f"{where}.{unknown[0]}" if where else unknown[0], "is not a known field")
    for key in required:
        if key not in value:
            raise _fail(f"{where}.{key}" if where else key, "is required")
    return value


def _plan(where: str, value: object) -> tuple[tuple[str, ...], ...]:
    subtasks = _list(where, value)
    if len(subtasks) > MAX_SUBTASKS:
        raise _fail(where, f"has {len(subtasks)} subtasks; at most {MAX_SUBTASKS} fit (A1)")
    plan = []
    seen = {}
    for number, subtask in enumerate(subtasks):
        options = []
        for index, option in enumerate(_list(f"{where}[{number}]", subtask)):
            place = f"{where}[{number}][{index}]"
            text = _text(place, option)
            if OPTION_SEPARATOR.strip() in text:
                raise _fail(
                    place, f"must not hold {OPTION_SEPARATOR.strip()!r}, which parts options"
                )
            if normalize(text) == normalize(FINISH):
                raise _fail(place, f"{FINISH} is the model's reply that ends a task, not an action")
            if normalize(text) in seen:
                raise _fail(place, f"{text!r} is already an option at {seen[normalize(text)]}")
            seen[normalize(text)] = place
            options.append(text)
        plan.append(tuple(options))
    return tuple(plan)


def _options_of(where: str, value: object, plan: tuple[tuple[str, ...], ...]) -> frozenset[str]:
    options = {normalize(option): option for subtask in plan for option in subtask}
    chosen = set()
    for index, action in enumerate(_list(where, value, empty=True)):
        text = _text(f"{where}[{index}]", action)
        if normalize(text) not in options:
            raise _fail(f"{where}[{index}]", f"{text!r} is no option of the plan")
        chosen.add(options[normalize(text)])
    return frozenset(chosen)


def _family(where: str, value: object, days: int) -> Family:
    data = _keys(where, value, FAMILY_KEYS, REQUIRED)
    plan = _plan(f"{where}.plan", data["plan"])
    failing = _options_of(f"{where}.failing", data.get("failing", []), plan)
    violating = _options_of(f"{where}.violating", data.get("violating", []), plan)
    changes = _changes(f"{where}.changes", data.get("changes", []), plan, days)
    worlds = [(failing, f"{where}.plan[{{}}]")]
    worlds += [(options, f"{place}.failing: plan[{{}}]") for _, options, place in changes]
    for failing_here, place in worlds:
        for number, options in enumerate(plan):
            if set(options) <= failing_here | violating:
                raise _fail(place.format(number), "every option fails or breaks a constraint")
    part = data.get("part", "test")
    if part not in PARTS:
        raise _fail(f"{where}.part", f"must be one of {', '.join(PARTS)}, got {part!r}")
    kinds = _list(f"{where}.kinds", data.get("kinds", []), empty=True)
    for index, kind in enumerate(kinds):
        if kind not in KINDS:
            raise _fail(f"{where}.kinds[{index}]", f"must be one of {', '.join(KINDS)}")
    goals = _list(f"{where}.goals", data["goals"])
    schedule = _list(f"{where}.days", data["days"])
    pins = _list(f"{where}.constraints", data.get("constraints", []), empty=True)
    return Family(
        name=_text(f"{where}.name", data["name"]),
        task_type=_text(f"{where}.task_type", data["task_type"]),
        goals=tuple(_text(f"{where}.goals[{n}]", goal) for n, goal in enumerate(goals)),
        plan=plan,
        days=tuple(sorted(_day(f"{where}.days[{n}]", day, days) for n, day in enumerate(schedule))),
        failing=failing,
        violating=violating,
        constraints=tuple(_text(f"{where}.constraints[{n}]", pin) for n, pin in enumerate(pins)),
        changes=tuple((day, options) for day, options, _ in changes),
        part=part,
        kinds=tuple(dict.fromkeys(kinds)),
    )


def _changes(
    where: str, value: object, plan: tuple[tuple[str, ...], ...], days: int
) -> list[tuple[int, frozenset[str], str]]:
    changes = []
    for index, change in enumerate(_list(where, value, empty=True)):
        place = f"{where}[{index}]"
        data = _keys(place, change, CHANGE_KEYS, ("day", "failing"))
        day = _day(f"{place}.day", data["day"], days)
        if changes and day <= changes[-1][0]:
            raise _fail(f"{place}.day", "must come after the change before it")
        changes.append((day, _options_of(f"{place}.failing", data["failing"], plan), place))
    return changes


def parse(data: object) -> Suite:
    """Check a task file's decoded JSON and return its suite (XT1, XT2).

    Raises TaskFileError naming the first offending field.
    """
    suite = _keys("", data, SUITE_KEYS, ("days", "families"))
    days = suite["days"]
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise _fail("days", f"must be a whole number of days >= 1, got {json.dumps(days)[:60]}")
    families = []
    names = {}
    for number, value in enumerate(_list("families", suite["families"])):
        family = _family(f"families[{number}]", value, days)
        if family.name in names:
            raise _fail(
                f"families[{number}].name",
                f"{family.name!r} already names families[{names[family.name]}]",
            )
        names[family.name] = number
        families.append(family)
    name = _text("name", suite["name"]) if "name" in suite else "unnamed"
    seed = suite.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise _fail("seed", f"must be a whole number, got {json.dumps(seed)[:60]}")
    return Suite(name, days, tuple(families), seed)


def part(suite: Suite, name: str) -> Suite:
    """Return the suite of the families in one part of the split, in file order (XT8)."""
    families = tuple(family for family in suite.families if family.part == name)
    return Suite(f"{suite.name}, {name} part", suite.days, families, suite.seed)


def respaced(suite: Suite, shortest: int, longest: int) -> Suite:
    """Return the suite with each family's instances re-spaced `shortest` to `longest` days
    apart, leaving out the families whose world changes (XT9).

    Raises ValueError naming XT9 unless 1 <= shortest <= longest.
    """
    if not 1 <= shortest <= longest:
        raise ValueError(f"XT9: gaps must run 1 <= shortest <= longest, got {shortest}-{longest}")
    families = []
    for family in suite.families:
        # A change of world falls on given days, which new days would move past or before.
        if family.changes:
            continue
        generator = random.Random(f"{suite.seed}/{family.name}/gaps")
        day = generator.randrange(min(shortest, suite.days))
        days = []
        while day < suite.days:
            days.append(day)
            day += generator.randint(shortest, longest)
        families.append(replace(family, days=tuple(days)))
    name = f"{suite.name}, re-spaced {shortest}-{longest} days"
    return Suite(name, suite.days, tuple(families), suite.seed)


def load(path: str | Path = BUILT_IN) -> Suite:
    """Read and check a task file (the built-in suite by default).

    Raises TaskFileError for a file that is not JSON or not valid, OSError if unreadable.
    """
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise TaskFileError(f"(file): not JSON: {error}") from None
    return parse(data)


def instances(suite: Suite) -> list[Instance]:
    """Return every instance of the suite, ordered by day, family and number (XT3, XT6)."""
    stream = [
        Instance(
            family,
            number,
            day,
            family.goals[number % len(family.goals)],
            _shuffled(family, number, suite.seed),
        )
        for family in suite.families
        for number, day in enumerate(family.days)
    ]
    place = {family.name: index for index, family in enumerate(suite.families)}
    return sorted(stream, key=lambda task: (task.day, place[task.family.name], task.number))


def _shuffled(family: Family, number: int, seed: int) -> tuple[tuple[str, ...], ...]:
    # A text seed is hashed the same way in every process, whatever PYTHONHASHSEED says.
    generator = random.Random(f"{seed}/{family.name}/{number}")
    plan = []
    for options in family.plan:
        order = list(options)
        generator.shuffle(order)
        plan.append(tuple(order))
    return tuple(plan)


@dataclass
class World:
    """One instance's world: answers each action by the family's rules and keeps what ran."""

    family: Family
    day: int = 0  # the world of this day (XT7)
    executed: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __call__(self, action: str) -> str:
        """Answer an action (XT4): an error for a failing option, `ok` otherwise."""
        self.executed.append(action)
        known = _lookup(self.family)
        option = known.get(normalize(action))
        if option is None:
            return "ok: nothing happened (that is no step of this task)"
        if option in self.family.failing_on(self.day):
            self.errors.append(option)
            return f'error: "{option}" does not work here'
        if option in self.family.violating:
            self.violations.append(option)
            return "ok: done, but a pinned constraint was broken"
        return "ok: done"

    def done(self) -> list[bool]:
        """Return, for each subtask, whether a working option of it ran."""
        ran = {normalize(action) for action in self.executed}
        return [
            any(
                normalize(option) in ran and self.family.works(option, self.day)
                for option in options
            )
            for options in self.family.plan
        ]

    def succeeded(self) -> bool:
        """Return True iff the run did the whole plan without a failure or violation (XT5)."""
        return all(self.done()) and not self.errors and not self.violations


def _lookup(family: Family) -> Mapping[str, str]:
    return {normalize(option): option for subtask in family.plan for option in subtask}
