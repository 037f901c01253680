"""Rung 5: the agent on a real model, through any OpenAI-compatible endpoint (stdlib only).

Set OPENAI_BASE_URL (e.g. http://localhost:8000/v1 for vLLM, http://localhost:11434/v1 for
Ollama), RECURIS_MODEL, and OPENAI_API_KEY if the endpoint needs one. Without them, this
explains what to set and exits 0.

Run from the repository root after the README's set-up, `python -m pip install -e ".[test]"`:
    python examples/05_real_endpoint.py
"""

import sys

import os

from recuris import AgentSettings, EpisodicMemory, RecurisAgent, WorkingMemory
from recuris.llm.llm_http import LLMError, OpenAICompatibleChat
from recuris.tour.mock_environment import MockEnvironment
from recuris.manager.entry import run_piped


def main() -> None:
    if not (os.environ.get("OPENAI_BASE_URL") and os.environ.get("RECURIS_MODEL")):
        print(
            "No endpoint configured. Set OPENAI_BASE_URL and RECURIS_MODEL (and OPENAI_API_KEY if"
        )
        print("needed), then run this again; or try: python agent_demo.py --llm URL --model NAME")
        raise SystemExit(0)

    llm = OpenAICompatibleChat(timeout=60)
    agent = RecurisAgent(
        WorkingMemory(),
        EpisodicMemory(),
        llm,
        AgentSettings(max_steps=8),
        observer=lambda event: print(event.render()),
    )
    world = MockEnvironment({"submit": "error: captcha required"}, default="ok")
    plan = ["open signup page", "fill email", "submit | solve captcha then submit"]
    try:
        for goal in ["register an account", "register another account"]:
            result = agent.run(goal, "web form", world, plan)
            print(f"{goal}: success={result.success} {result.failure_reason}")
    except LLMError as error:
        print(f"the endpoint failed: {error}")


if __name__ == "__main__":
    sys.exit(run_piped(main))  # a reader who stops early (`| head`) ends it quietly
