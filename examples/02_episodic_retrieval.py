"""Rung 2: episodic memory. A failed task is remembered as a path to avoid; a similar task finds it.

Run from the repository root after the README's set-up, `python -m pip install -e ".[test]"`:
    python examples/02_episodic_retrieval.py
"""

import sys

from recuris import EpisodicMemory, ManualClock, RecurisAgent, WorkingMemory
from recuris.tour.mock_environment import MockEnvironment
from recuris.core.mock_llm import PromptFollowingLLM
from recuris.manager.entry import run_piped


def main() -> None:
    plan = ["open signup page", "fill email", "submit | solve captcha then submit"]
    site = {"submit": "error: captcha required"}
    episodes = EpisodicMemory()
    agent = RecurisAgent(WorkingMemory(), episodes, PromptFollowingLLM(), clock=ManualClock(0))

    first = agent.run("register an account", "web form", MockEnvironment(site), plan)
    print(f"first task:  success={first.success}  ({first.failure_reason})")

    for hit in episodes.retrieve("web form register another account", top_k=2):
        print(f"retrieved:   {hit.render()}")

    second = agent.run("register another account", "web form", MockEnvironment(site), plan)
    print(f"second task: success={second.success}  path: {' -> '.join(second.episode.actions)}")


if __name__ == "__main__":
    sys.exit(run_piped(main))  # a reader who stops early (`| head`) ends it quietly
