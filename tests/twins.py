"""Past deployments that disagree over a step, for the tests of settling and of the agents."""

from recuris import Episode, EpisodicMemory
from recuris.core.records import Step


def deployment(goal, steps, created_at):
    """An episode of type "deploy" with these steps, failed if its last step failed."""
    failed = steps[-1].failed
    return Episode(
        task_type="deploy",
        goal=goal,
        status="failed" if failed else "success",
        failure_reason="error" if failed else "",
        created_at=created_at,
        trajectory=steps,
    )


def failed_push(goal, push, created_at):
    """A deployment that built, then failed at `push`."""
    steps = (Step(1, "build", "ok", False), Step(2, push, "error", True))
    return deployment(goal, steps, created_at)


def twins():
    """A memory of two deployments that failed at different pushes after the same build,
    told apart by "EU" and "US": a disagreement over a step (DG2)."""
    episodic = EpisodicMemory()
    episodic.add_episode(failed_push("deploy search to EU", "push internal", 1))
    episodic.add_episode(failed_push("deploy search to US", "push mirror", 2))
    return episodic
