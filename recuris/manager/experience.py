"""Experience on a manager: the agent's loop run over every layer of one user's memory.

Document 000 §2.3 retrieves similar episodes at the start of a task; document 003 §4.4
recalls across layers (facts, procedures, events) and document 004 §3 lets the model ask
memory itself, through a `search_memory` tool. The core's agent takes both by injection: an
`Experience` to recall from and settle into, and a tool handler. This module builds them on
a `MemoryManager`, so that `manager.agent(user_id, llm)` runs document 000's loop on it.

Invariants:
    MX1 each recall returns the user's similar episodes, then the manager's recall of the
        user's other memories, leaving out the episodes already shown.
    MX2 within a run, a recalled memory's access is counted once, however often it returns.
    MX3 the finished episode is settled through the manager: stored with its audit record
        and the task's deletions in one transaction, then offered to extraction.
"""

from collections.abc import Callable

from ..core.agent import EpisodicExperience, RecurisAgent
from ..core.decay import DecayManager
from ..core.records import Episode, Hit
from ..core.working import WorkingMemory
from .active_recall import ActiveRecall

__all__ = ["ManagedExperience", "agent_on_manager"]


class ManagedExperience:
    """One user's experience in a manager: their episodes first, then every other layer."""

    def __init__(self, manager, user_id: str, top_k: int = 2, threshold: float = 0.25,
                 decay: DecayManager | None = None) -> None:
        self.manager, self.user_id = manager, user_id
        self.episodes = EpisodicExperience(manager.layers(user_id).episodic, top_k, threshold, decay)

    def begin(self) -> None:
        self.episodes.begin()

    def recall(self, query: str, task_type: str) -> tuple[list[Hit], list[str]]:
        hits, _ = self.episodes.recall(query, task_type)
        recalled = self.manager.recall(query, self.user_id, self.episodes.top_k + 2, task_type=task_type,
                                       count_access=False)
        shown = {hit.episode.id for hit in hits}
        # Count each memory once per run (MX2): the episodes were counted by their own layer.
        fresh = [result for result in recalled.results if result.item.id not in self.episodes.reinforced | shown]
        self.manager.count_access(self.user_id, fresh)
        self.episodes.reinforced.update(result.item.id for result in fresh)
        return hits, [result.render() for result in recalled.results if result.item.id not in shown]

    def settle(self, episode: Episode) -> Episode:
        self.manager.settle_episode(self.user_id, episode)  # assigns the id, in one transaction (MX3)
        return episode

    def __repr__(self) -> str:
        return f"ManagedExperience(user={self.user_id!r})"


def agent_on_manager(manager, user_id: str, llm_fn: Callable[[str], str], **options) -> RecurisAgent:
    """Build an agent on one user's memory in a manager; `working_memory` is optional.

    The other options are `RecurisAgent`'s; its recall tool answers `search_memory` calls.
    """
    working = options.pop("working_memory", None) or WorkingMemory()
    experience = ManagedExperience(manager, user_id, options.get("top_k", 2), options.get("threshold", 0.25),
                                   options.get("decay"))
    return RecurisAgent(working, experience.episodes.episodic, llm_fn, experience=experience,
                        tools=ActiveRecall(manager, user_id).respond, **options)
