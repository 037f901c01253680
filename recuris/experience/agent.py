"""The experience layer's agent: the documents' loop, with what the product adds to it.

Document 000 §2.3 and §3.2 recall similar episodes into the prompt; document 003 §4.4 recalls
across layers and document 004 §3 lets the model ask memory itself, through a tool. The core's
`RecurisAgent` is the documents' agent alone; `ExperienceAgent` runs the same loop and adds,
through the methods the loop calls: experience recalled from any `Experience` (disagreements
settled, settling.py), extra prompt sections from `ContextSource`s, tool calls answered by a
`Tools` handler, and subtasks completed by an action with a slot filled by a value the run was
given (a step's note, a section's or a tool answer's values).

Invariants:
    XA1 a reply the tool handler answers is never executed as an action; it uses one of the
        `max_steps` calls; the prompt keeps the last `tool_answers_kept` answers.
    XA2 the extra sections are asked for at every recall (A4), with the hits just recalled,
        and on no other step.
    XA3 a subtask completes when the action is one of its options, each `{slot}` filled
        with a value the run was given for the slot's text (P3).
    XA4 `EpisodicExperience` recalls the settled retrieval (DG4), its contradicted lessons
        contested (LS3), settling and contesting unless the settings turn them off, and
        reinforces each recalled episode at most once per run (A5).
"""

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..core.agent import AgentSettings, RecurisAgent, RunState, reinforce_once
from ..core.decay import DecayManager
from ..core.episodic import EpisodicMemory
from ..core.prompt import ContextSection, build_prompt
from ..core.records import Episode, Hit, StageEvent, Step
from ..core.text import looks_like_failure, normalize
from ..core.validation import require_count
from ..core.working import WorkingMemory
from .lessons import recall_lessons
from .slots import completes, noted_values

__all__ = [
    "ExperienceAgent",
    "ExperienceSettings",
    "Experience",
    "EpisodicExperience",
    "ContextSource",
    "Tools",
    "ExperienceRun",
]


@dataclass(frozen=True)
class ExperienceSettings(AgentSettings):
    """The documents' settings, and whether recall settles disagreements, how many answers stay."""

    # Whether recall leaves out the hits that others contradict and the query's words side
    # against (DG4), or shows `retrieve`'s top k as they are.
    settle: bool = True
    # Whether a lesson a later outcome in its situation contradicts is shown as contested
    # (lessons.py, LS1) or as a path to avoid.
    contest: bool = True
    # Whether a lesson that recurred or saved a task becomes a fact citing its episodes, a
    # failure's lesson kept as seen once until it recurs (lessons.py, LS4, LS7;
    # manager/experience.py, MX5). On the benchmark's tuning part, repeats of the tasks at
    # risk: 23 of 260 against 24 without; with its families re-spaced 20 to 45 days apart
    # (`--respace 20 45`: most first failures forgotten before the family is back), 19 of
    # 198 against 29.
    consolidate: bool = True
    # Whether recall adds, beside the top k, the lessons about the step at hand: the settled
    # candidates beyond the top k that failed after exactly the actions done so far (LS6).
    step_lessons: bool = True
    tool_answers_kept: int = 3  # the tools' latest answers each prompt keeps (XA1)

    def __post_init__(self) -> None:
        super().__post_init__()
        require_count("XA1: tool_answers_kept", self.tool_answers_kept, minimum=0)

    @classmethod
    def around(cls, settings: AgentSettings) -> "ExperienceSettings":
        """Return the settings with this layer's defaults beside any the record lacks.

        ExperienceSettings are returned as they are.
        """
        if isinstance(settings, cls):
            return settings
        given = dataclasses.fields(settings)
        return cls(**{item.name: getattr(settings, item.name) for item in given})


class Experience(Protocol):
    """Memory across tasks: `begin` a run, `recall` similar episodes (stages 1, 5), `settle` (6).

    `episodic` is the episodic memory the experience settles into.
    """

    episodic: EpisodicMemory

    def begin(self) -> None: ...
    def recall(
        self, query: str, task_type: str, settings: ExperienceSettings, done: Sequence[str] = ()
    ) -> list[Hit]: ...
    def settle(self, episode: Episode) -> Episode: ...


class ContextSource(Protocol):
    """An extra prompt section, asked for whenever experience is recalled (XA2).

    `section` is given the query, the task type and the episodes just recalled (so that it
    need not repeat them); its section appears only when it has lines.
    """

    def section(self, query: str, task_type: str, hits: Sequence[Hit]) -> ContextSection: ...


class Tools(Protocol):
    """Tools the model may call: `instruction` ends each prompt; `respond` answers a call.

    `respond` returns None when the reply is an action, not a call.
    """

    instruction: str

    def respond(self, reply: str) -> ContextSection | None: ...


class EpisodicExperience:
    """Experience from one episodic memory: settled recall, each episode reinforced once a run.

    XA4: the settled retrieval (DG4) unless the settings turn settling off; `decay`, if given,
    reinforces each recalled episode at most once per run (A5).
    """

    def __init__(self, episodic: EpisodicMemory, decay: DecayManager | None = None) -> None:
        self.episodic = episodic
        self.decay = decay
        self.reinforced: set[str] = set()

    def begin(self) -> None:
        self.reinforced = set()

    def recall(
        self, query: str, task_type: str, settings: ExperienceSettings, done: Sequence[str] = ()
    ) -> list[Hit]:
        retrieval = settings.retrieval
        step = tuple(done) if settings.step_lessons else None
        hits = recall_lessons(
            self.episodic, query, retrieval, settings.settle, settings.contest, step=step
        )
        reinforce_once(self.episodic, self.decay, hits, self.reinforced)
        return hits

    def settle(self, episode: Episode) -> Episode:
        return self.episodic.add_episode(episode)

    def __repr__(self) -> str:
        return f"EpisodicExperience({self.episodic!r}, decay={self.decay!r})"


@dataclass
class ExperienceRun(RunState):
    """The documents' run record, with the sections, tool answers and slot values it was given."""

    sections: list[ContextSection] = field(default_factory=list)  # the extra sections
    tool_answers: list[ContextSection] = field(default_factory=list)  # the latest (XA1)
    # Every value given for a slot text, normalised: by a step's note or a section (XA3).
    known: dict[str, list[str]] = field(default_factory=dict)

    def learn(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Remember each (slot text, value) pair as a value given for the slot."""
        for slot, value in pairs:
            self.known.setdefault(normalize(slot), []).append(value)


class ExperienceAgent(RecurisAgent):
    """The documents' agent, with injected experience, context sections, tools and slot values.

    It adds to `RecurisAgent`: `experience` is where episodes are recalled from and settled
    into, an `EpisodicMemory` (recalled as `EpisodicExperience(memory)`, settled, without
    decay) or any `Experience`; `context` adds prompt sections refreshed at each recall
    (XA2), `tools` what the model may call (XA1); a subtask completes by an option whose
    slots the run's values fill (XA3).
    """

    def __init__(
        self,
        working_memory: WorkingMemory,
        experience: Experience | EpisodicMemory,
        llm_fn: Callable[[str], str],
        settings: AgentSettings | None = None,
        *,
        context: Sequence[ContextSource] = (),
        tools: Tools | None = None,
        is_failure: Callable[[str], bool] = looks_like_failure,
        observer: Callable[[StageEvent], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Raises TypeError unless `settings` is an AgentSettings (which checks its values).

        No settings: `ExperienceSettings()`, the defaults; an `AgentSettings` gets this
        layer's defaults beside it (`ExperienceSettings.around`).
        """
        if settings is None:
            settings = ExperienceSettings()
        if not isinstance(settings, AgentSettings):
            raise TypeError(f"settings must be an AgentSettings, got {type(settings).__name__}")
        if isinstance(experience, EpisodicMemory):
            experience = EpisodicExperience(experience)
        super().__init__(
            working_memory,
            experience.episodic,
            llm_fn,
            ExperienceSettings.around(settings),
            is_failure=is_failure,
            observer=observer,
            clock=clock,
        )
        self.experience = experience
        self.context = tuple(context)
        self.tools = tools

    def start(self, query: str, task_type: str) -> ExperienceRun:
        self.experience.begin()
        return ExperienceRun(query, task_type)

    def recall(self, run: ExperienceRun) -> list[Hit]:
        done = [normalize(step.action) for step in self.working.trajectory if not step.failed]
        hits = self.experience.recall(run.query, run.task_type, self.settings, done)
        run.sections = [source.section(run.query, run.task_type, hits) for source in self.context]
        for section in run.sections:
            run.learn(section.values)
        return hits

    def prompt(self, run: ExperienceRun) -> str:
        return build_prompt(
            self.working.to_prompt_section(),
            run.hits,
            run.sections,
            run.tool_answers,
            self.tools.instruction if self.tools else "",
        )

    def answer_tool(self, run: ExperienceRun, reply: str) -> bool:
        answer = self.tools.respond(reply) if self.tools is not None else None
        if answer is None:
            return False
        # Answered, never executed; the latest answers stay in the prompt (XA1).
        kept = self.settings.tool_answers_kept
        run.tool_answers = [*run.tool_answers, answer][-kept:] if kept else []
        run.learn(answer.values)
        self._emit(2, "tool call: answered from memory")
        return True

    def after_step(self, run: ExperienceRun, step: Step) -> None:
        run.learn(noted_values(step.result))

    def completes_option(self, run: ExperienceRun, action: str, option: str) -> bool:
        return completes(action, option, run.known)

    def settle_episode(self, episode: Episode) -> Episode:
        return self.experience.settle(episode)
