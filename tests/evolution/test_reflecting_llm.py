"""Example tests for recuris.evolution.reflecting_llm:
a scripted model for reflection (RL1, RL2)."""

import json

from recuris.evolution.reflecting_llm import ReflectingLLM


def test_reflecting_llm_draws_insights_by_rule_with_sources():
    """RL2: 'our X is Y' -> 'X: Y'; 'I prefer X' -> 'user
    prefers X'; an apology -> a learning, each with its source."""
    prompt = (
        "Interactions:\n  [turn-1] user: Our region is eu-west. | agent: ok\n"
        "  [turn-2] user: I prefer tea | agent: Sorry, I was wrong.\n"
    )
    reply = json.loads(ReflectingLLM()(prompt))["insights"]
    assert [(i["type"], i["content"], i["sources"]) for i in reply] == [
        ("user_fact", "region: eu-west", ["turn-1"]),
        ("user_fact", "user prefers tea", ["turn-2"]),
        ("agent_learning", "check before answering: I prefer tea", ["turn-2"]),
    ]


def test_the_same_prompt_gets_the_same_reply_and_junk_gets_no_insight():
    """RL1, RL2: a pure function of the prompt; a prompt
    with no interaction gives an empty, valid list."""
    prompt = "Interactions:\n  [turn-1] user: our database is PostgreSQL | agent: noted\n"
    assert ReflectingLLM()(prompt) == ReflectingLLM()(prompt)
    assert json.loads(ReflectingLLM()("<script>nothing here</script>")) == {"insights": []}
