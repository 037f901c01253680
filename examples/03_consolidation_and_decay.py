"""Rung 3: what moves memory. Statements seen twice become facts; unused memories fade.

Run from the repository root after the README's set-up, `python -m pip install -e ".[test]"`:
    python examples/03_consolidation_and_decay.py
"""

import sys

from recuris import ConsolidationSettings, Consolidator, DecayManager, Episode, EpisodicMemory
from recuris import ManualClock, SemanticMemory
from recuris.core.clock import DAY
from recuris.manager.entry import run_piped


def main() -> None:
    clock = ManualClock(0)
    facts = SemanticMemory(clock=clock)
    consolidator = Consolidator(facts, ConsolidationSettings(min_occurrences=2), clock=clock)
    once = consolidator.observe("team language", "Python", "episode-1")
    print(f"seen once, a fact? {once is not None}")  # False: one episode is not enough (C1)
    fact = consolidator.observe("team language", "python", "episode-2")
    print(f"promoted: {fact.render()}")

    episodes = EpisodicMemory()
    decay = DecayManager(clock=clock)
    weekly = Episode(task_type="deploy", goal="ship the weekly release", status="success")
    used = episodes.add_episode(weekly)
    episodes.add_episode(
        Episode(task_type="report", goal="export a one-off report", status="success")
    )
    for _ in range(3):
        clock.advance(7 * DAY)
        decay.on_access(used)  # retrieved every week: reinforced
    report = decay.run_cycle(episodes.episodes)
    episodes.remove(item.id for item in report.forgotten)
    for record in report.audit:
        print(record.render())
    print(f"left: {[e.goal for e in episodes.episodes]}")


if __name__ == "__main__":
    sys.exit(run_piped(main))  # a reader who stops early (`| head`) ends it quietly
