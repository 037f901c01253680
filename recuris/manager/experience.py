"""Experience on a manager: the agent's loop run over every layer of one user's memory.

Document 000 §2.3 retrieves similar episodes at the start of a task; document 003 §4.4
recalls across layers (facts, procedures, events) and document 004 §3 lets the model ask
memory itself, through a `search_memory` tool. The core's agent takes both by injection: an
`Experience` to recall from and settle into, and a tool handler. This module builds them on
a `MemoryManager`, so that `manager.agent(user_id, llm)` runs document 000's loop on it.

Invariants:
    MX1 each recall returns the user's similar episodes, then the manager's recall of the
        user's other memories, leaving out the episodes already shown.
    MX2 every memory a prompt shows, episodes included, counts as used: once per run, in the
        store, however often it returns.
    MX3 the finished episode is settled through the manager: stored with its audit record
        and the task's deletions in one transaction, then offered to extraction.
"""

from collections.abc import Callable

from ..core.agent import RecurisAgent
from ..core.episodic import check_query
from ..core.records import Episode, Hit
from ..core.working import WorkingMemory
from ..storage.archives import episode_to_item
from .active_recall import ActiveRecall
from .recall import Recalled

__all__ = ["ManagedExperience", "agent_on_manager"]

# Besides the episodes shown, the recall brings this many more memories of the other layers.
OTHER_MEMORIES = 2


class ManagedExperience:
    """One user's experience in a manager: their episodes first, then every other layer."""

    def __init__(self, manager, user_id: str, top_k: int = 2, threshold: float = 0.25) -> None:
        check_query(top_k, threshold)
        self.manager, self.user_id, self.top_k, self.threshold = manager, user_id, top_k, threshold
        self.episodic = manager.users.get(user_id).episodic
        self.counted: set[str] = set()

    def begin(self) -> None:
        self.counted = set()

    def recall(self, query: str, task_type: str) -> tuple[list[Hit], list[str]]:
        hits = self.episodic.retrieve(query, self.top_k, self.threshold)
        recalled = self.manager.recall(
            query,
            self.user_id,
            self.top_k + OTHER_MEMORIES,
            task_type=task_type,
            count_access=False,
        )
        shown = {hit.episode.id for hit in hits}
        others = [result for result in recalled.results if result.item.id not in shown]
        # Every memory the prompt shows is a use, counted in the store once per run (MX2):
        # that is what keeps an episode in use from being forgotten by the next decay cycle.
        episodes = [
            Recalled(
                episode_to_item(hit.episode, self.user_id),
                hit.score,
                0.0,
                hit.episode.importance,
                hit.score,
                "a similar past task",
            )
            for hit in hits
            if hit.episode.id not in self.counted
        ]
        fresh = [*episodes, *(result for result in others if result.item.id not in self.counted)]
        self.manager.users.count_access(self.user_id, fresh)
        self.counted.update(result.item.id for result in fresh)
        return hits, [result.render() for result in others]

    def settle(self, episode: Episode) -> Episode:
        # Assigns the id, in one transaction (MX3).
        self.manager.tasks.settle(self.user_id, episode)
        return episode

    def __repr__(self) -> str:
        return f"ManagedExperience(user={self.user_id!r}, top_k={self.top_k}, threshold={self.threshold})"


def agent_on_manager(
    manager, user_id: str, llm_fn: Callable[[str], str], **options
) -> RecurisAgent:
    """Build an agent on one user's memory in a manager; `working_memory` is optional.

    `top_k` and `threshold` go to its experience; the other options are `RecurisAgent`'s.
    Its tools answer `search_memory` calls from the user's memory.
    """
    working = options.pop("working_memory", None) or WorkingMemory()
    experience = ManagedExperience(
        manager, user_id, options.pop("top_k", 2), options.pop("threshold", 0.25)
    )
    return RecurisAgent(
        working,
        experience.episodic,
        llm_fn,
        experience=experience,
        tools=ActiveRecall(manager, user_id),
        **options,
    )
