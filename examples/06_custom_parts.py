"""Rung 6: your own parts: a scorer, a summarizer and a store, plugged in by the public API.

Run from the repository root after the README's set-up, `python -m pip install -e ".[test]"`:
    python examples/06_custom_parts.py
"""

import sys

from recuris import Episode, EpisodicMemory, InMemoryStore, MemoryManager, WorkingMemory
from recuris import WorkingSettings
from recuris.manager.entry import run_piped


class TrigramScorer(dict):
    """A Scorer: Jaccard of trigram sets, so "deployment" finds "deploys" (key -> trigrams)."""

    persist = False  # nothing worth storing beside each episode (an embedding scorer says True)

    def analyzer(self, text):
        return {w[i : i + 3] for w in text.lower().split() for i in range(max(1, len(w) - 2))}

    def add(self, key, terms):
        self[key] = frozenset(terms)

    def remove(self, key):
        self.pop(key, None)

    def score(self, query, key):
        return len(set(query) & self[key]) / max(1, len(set(query) | self[key]))

    def score_candidates(self, query):  # no index: every document is scored
        return [(key, score) for key in self if (score := self.score(query, key)) > 0]


def recent_actions(summary, steps):  # a summarizer with a format of its own
    return "\n".join((summary.splitlines() + [f"* {step.action}" for step in steps])[-3:])


class CountingStore(InMemoryStore):  # any object with the Store's methods will do
    writes = 0  # puts seen

    def put(self, items, audit=(), delete=()):
        self.writes += 1
        super().put(items, audit, delete)


def main() -> None:
    episodes = EpisodicMemory(scorer=TrigramScorer)
    episodes.add_episode(
        Episode(task_type="release", goal="deploys the billing app", status="success")
    )
    print("episodic memory:", [h.render() for h in episodes.retrieve("billing deployment", 1, 0.1)])

    working = WorkingMemory(WorkingSettings(window_size=2), summarizer=recent_actions)
    working.init_task("ship release 1.4")
    for action in ["run tests", "build image", "push image", "tag release", "deploy"]:
        working.add_step(action, "ok")
    print("summary:", working.summary.splitlines(), "failures:", working.summarizer_failures)

    store = CountingStore()
    manager = MemoryManager(store=store, scorer=TrigramScorer)  # a scorer for each user's episodes
    manager.start_task("ana", "deploy the billing service", task_type="release")
    manager.record_step("ana", "run migrations", "ok")
    manager.finish_task("ana")  # the episode goes to the store, its type and goal to the scorer
    found = manager.users.get("ana").episodic.retrieve(
        "billing deployments", top_k=1, threshold=0.1
    )
    print("the manager finds:", [f"{h.episode.goal} ({h.score:.2f})" for h in found])
    print("store writes:", store.writes)


if __name__ == "__main__":
    sys.exit(run_piped(main))  # a reader who stops early (`| head`) ends it quietly
