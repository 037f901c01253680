"""Run the experience layer's recall beside the retrieval it settles, interleaved, in one process.

Standard library only; run from a clone (docs/benchmarks.md gives the command). What a user
of the core would write is `EpisodicMemory.retrieve(query, top_k, threshold)`: the most
similar past tasks, trusted alike. The experience layer's recall (`recall_lessons`, chapter
experience/lessons) reads more of them and settles their disagreements on the words of the
nearest past tasks (chapter experience/settling), contests the lessons a later outcome
contradicts, and adds the lessons about the step at hand. This measures what that costs.

The memory is generated from a seed: deployments of one task type, each goal a phrasing of
four, a service of 200 and a region of two; the two regions' worlds fail at opposite pushes,
so that every recall meets disagreements to settle. Two classes of query, each reported
alone: common words (a service every 200th goal names) and rare words (a service no stored
goal names, so that only the phrasing and the region match). Both sides take turns on each
query, the first side alternating (A, B, then B, A: `side_by_side.in_turns`); each query's
time is processor time (the machine may be shared), and the median and range are over every
query of every round.
"""

import random

from benchmarks.side_by_side import by_size, in_turns, processor_ms, ratios, shown, spread
from recuris.core.episodic import EpisodicMemory
from recuris.core.records import Episode, Step
from recuris.experience.lessons import recall_lessons
from recuris.manager.experience import episode_scorer
from recuris.manager.manager import ManagerSettings

PHRASINGS = (
    "deploy {service} to the {region} production cluster",
    "roll out the new build of {service} on {region} prod",
    "ship {service} live in the {region} region",
    "release the latest version of {service} to {region} customers",
)
SERVICES = 200
PUSHES = ("push the image to the internal registry", "push the image to the mirror registry")


def memory_of(size: int, seed: int) -> EpisodicMemory:
    """Return a manager's episodic memory of `size` deployments, half of them failed."""
    rng = random.Random(seed)
    memory = EpisodicMemory(episode_scorer)
    for number in range(size):
        region = rng.choice(("EU", "US"))
        service = f"service {rng.randrange(SERVICES)}"
        goal = rng.choice(PHRASINGS).format(service=service, region=region)
        push = rng.choice(PUSHES)
        failed = push == PUSHES[region == "US"]  # each region fails at its own push
        steps = (
            Step(1, "build the release image", "ok: done"),
            Step(2, push, "error: does not work here" if failed else "ok: done", failed),
        )
        status = "failed" if failed else "success"
        reason = "error" if failed else ""
        episode = Episode(
            task_type="deployment",
            goal=goal,
            status=status,
            trajectory=steps,
            failure_reason=reason,
            created_at=float(number),
        )
        memory.add_episode(episode)
    return memory


def queries(count: int, seed: int) -> dict[str, list[str]]:
    """Return `count` queries of each class, each as the agent asks: task type, then goal."""
    rng = random.Random(seed)
    drawn = {}
    for kind, service in (("common words", "service {}"), ("rare words", "billing {}")):
        drawn[kind] = [
            "deployment "
            + rng.choice(PHRASINGS).format(
                service=service.format(rng.randrange(SERVICES)), region=rng.choice(("EU", "US"))
            )
            for _ in range(count)
        ]
    return drawn


def measure(size: int, rounds: int, count: int, seed: int) -> None:
    """Print one size's rows: each class of query, per side, with the ratio pair by pair."""
    memory = memory_of(size, seed)
    retrieval = ManagerSettings().episodes

    def retrieve(query):
        return memory.retrieve(query, retrieval.top_k, retrieval.threshold)

    def recall(query):
        return recall_lessons(memory, query, retrieval, step=("build the release image",))

    for kind, asked in queries(count, seed + 1).items():
        plain, settled = in_turns([retrieve, recall], asked * rounds, processor_ms)
        print(
            f"| {kind}, ms | {size:,} | {shown(spread(plain), 2)} | "
            f"{shown(spread(settled), 2)} | {shown(ratios(settled, plain), 1)} |",
            flush=True,
        )


def main(argv=None) -> int:
    header = "| a recall | episodes | retrieve | recall_lessons | recall_lessons / retrieve |"
    return by_size(argv, __doc__.splitlines()[0], header, measure, [500, 5_000, 20_000])


if __name__ == "__main__":
    raise SystemExit(main())
