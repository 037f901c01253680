"""Records: the dataclasses that memories hold, each able to render itself for a prompt.

Document 000 §2.1 names what an episode keeps (task type, goal, trajectory, final status,
failure reason); document 004 §2 adds the fields that decay reads (base weight, last
access, access count).

Invariants:
    R1  a `Step` is immutable; its `failed` flag was decided when it was observed.
    R2  an `Episode`'s status is "success" or "failed"; a failed episode has a reason.
    R3  an `Episode` that was never accessed counts its creation as its last access.
    R4  an `Episode`'s importance (its base weight for decay) lies in [0, 1].
    R5  each record renders as one line; an episode as a `[follow]` path, or as `[avoid]` at its
        failed step.
"""

from dataclasses import dataclass

from .text import flatten, looks_like_failure
from .validation import require_number, require_text

__all__ = ["Step", "Episode", "Hit", "AuditRecord", "StageEvent", "RunResult", "STATUSES", "STAGES"]

STATUSES = ("success", "failed")
STAGES = ("initialise", "decide", "act", "observe", "update", "settle")


@dataclass(frozen=True)
class Step:
    """One action the agent took and the result it observed (R1)."""

    index: int
    action: str
    result: str
    failed: bool = False

    @classmethod
    def observed(
        cls, index: int, action: str, result: object, failed: bool | None = None
    ) -> "Step":
        """Check and build an observed step; `failed` defaults to `looks_like_failure(result)`.

        Raises TypeError/ValueError for an empty or non-text action, or a non-text result.
        """
        if not isinstance(result, str):
            raise TypeError(f"result must be a str, got {type(result).__name__}")
        failed = looks_like_failure(result) if failed is None else bool(failed)
        return cls(index, require_text("action", action), result, failed)

    def render(self, limit: int = 200) -> str:
        """Render as `index. action -> result`, each side clipped to `limit` characters."""
        mark = " [failed]" if self.failed else ""
        return f"{self.index}. {flatten(self.action, limit)} -> {flatten(self.result, limit)}{mark}"


@dataclass(kw_only=True)
class Episode:
    """One finished task: what was asked, every step taken, and how it ended (R2, R3)."""

    task_type: str
    goal: str
    status: str
    id: str = ""  # "" until EpisodicMemory.add_episode assigns one
    trajectory: tuple[Step, ...] = ()
    summary: str = ""
    failure_reason: str = ""
    created_at: float = 0.0
    importance: float = 1.0
    last_access_at: float | None = None
    access_count: int = 0

    def __post_init__(self) -> None:
        require_text("Episode.task_type", self.task_type)
        require_text("Episode.goal", self.goal)
        if self.status not in STATUSES:
            raise ValueError(f"R2: Episode.status must be one of {STATUSES}, got {self.status!r}")
        if self.status == "failed" and not self.failure_reason.strip():
            raise ValueError("R2: a failed Episode needs a failure_reason")
        require_number("R4: Episode.importance", self.importance, 0.0, 1.0)
        self.trajectory = tuple(self.trajectory)
        if self.last_access_at is None:
            self.last_access_at = self.created_at

    @property
    def consolidated(self) -> bool:
        """False: an episode is raw memory, which decay weighs at the plain half-life."""
        return False

    @property
    def actions(self) -> tuple[str, ...]:
        """The actions of the trajectory, in order."""
        return tuple(step.action for step in self.trajectory)

    @property
    def failed_step(self) -> Step | None:
        """The last step whose result was a failure, if any."""
        return next((s for s in reversed(self.trajectory) if s.failed), None)

    def render(self, max_actions: int = 12, limit: int = 120) -> str:
        """Render for a prompt: a success as a path to follow, a failure as one to avoid."""
        heading = f"{flatten(self.goal, limit)} ({flatten(self.task_type, limit)})"
        if self.status == "success":
            shown = [flatten(action, limit) for action in self.actions[-max_actions:]]
            skipped = len(self.actions) - len(shown)
            path = " -> ".join(([f"(+{skipped} earlier)"] if skipped else []) + shown)
            return f"[follow] {heading} succeeded: {path or '(no steps)'}"
        step = self.failed_step
        if step is None:
            where = f"failed: {flatten(self.failure_reason, limit)}"
        else:
            where = f'failed at "{flatten(step.action, limit)}": {flatten(step.result, limit)}'
        return f"[avoid] {heading} {where}. This path does not work."


@dataclass(frozen=True)
class Hit:
    """One retrieved episode and the similarity that brought it back."""

    score: float
    episode: Episode

    def render(self) -> str:
        """Render the episode with its score, for a prompt."""
        return f"{self.episode.render()} (similarity {self.score:.2f})"


@dataclass(frozen=True)
class AuditRecord:
    """One line of an audit log: what happened to which item, when, and why."""

    item_id: str
    operation: str
    reason: str
    at: float
    weight: float | None = None

    def render(self) -> str:
        """Render as one log line."""
        weight = "" if self.weight is None else f" weight={self.weight:.3f}"
        return f"[audit t={self.at:.0f}] {self.operation} {self.item_id}{weight}: {self.reason}"


@dataclass(frozen=True)
class StageEvent:
    """One thing the loop did, tagged with its stage (1-6), for an observer to show."""

    stage: int
    detail: str
    # For a retrieval, the ids of the episodes it brought, best first; None for any other
    # event. An observer reads which episodes a prompt showed here, not from `detail`.
    recalled: tuple[str, ...] | None = None

    @property
    def name(self) -> str:
        return STAGES[self.stage - 1]

    def render(self) -> str:
        return f"[{self.stage} {self.name}] {self.detail}"


@dataclass(frozen=True)
class RunResult:
    """How a run ended and the episode it wrote."""

    success: bool
    status: str
    steps: int
    episode: Episode
    failure_reason: str = ""
    retrievals: int = 0
