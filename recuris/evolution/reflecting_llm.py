"""A mock model for reflection: insights from interactions by fixed rules, offline.

Document 004 §1 reflects on a buffer of raw interactions with a model that answers in a JSON
list of insights; the demo and the tests need that model offline and deterministic. This
one reads the interactions back from the reflection prompt (recuris/evolution/extraction.py
lays it out) and answers by rules, so a test can say exactly which insights it expects.

Invariants:
    RL1 the reply is a pure function of the prompt: the same prompt, the same insights.
    RL2 it reads nothing but the prompt text, and always answers valid insights JSON.
"""

import json
import re

__all__ = ["ReflectingLLM"]

_INTERACTION = re.compile(r"^\[(?P<id>[^\]]+)\] user: (?P<user>.*) \| agent: (?P<agent>.*)$")
_USER_FACTS = [  # (pattern on the user's words, insight, confidence)
    (re.compile(r"\bour (.+?) is (.+?)[.!]*$", re.IGNORECASE), "{0}: {1}", 0.9),
    (re.compile(r"\bi (?:prefer|like|love) (.+?)[.!]*$", re.IGNORECASE), "user prefers {0}", 0.8),
    (re.compile(r"我(?:喜欢|偏好)(.+?)[。！]*$"), "用户偏好{0}", 0.8),
]
_APOLOGY = re.compile(r"\bsorry\b|\bi was wrong\b|抱歉", re.IGNORECASE)


class ReflectingLLM:
    """Reflect on interactions by fixed rules and answer in the insights JSON format (RL1, RL2).

    "our X is Y" gives the user fact "X: Y"; "I prefer X" gives "user prefers X"; an agent
    that apologises gives the learning "check before answering: <what the user said>".
    """

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        insights = {}
        for line in prompt.splitlines():
            match = _INTERACTION.match(line.strip())
            if not match:
                continue
            found = []
            for pattern, template, confidence in _USER_FACTS:
                hit = pattern.search(match["user"])
                if hit:
                    found.append((template.format(*hit.groups()), "user_fact", confidence))
            if _APOLOGY.search(match["agent"]):
                found.append(
                    (f"check before answering: {match['user'][:80]}", "agent_learning", 0.6)
                )
            for content, kind, confidence in found:
                entry = {
                    "type": kind,
                    "content": content,
                    "confidence": confidence,
                    "sources": [match["id"]],
                }
                insights.setdefault(content, entry)
        return json.dumps({"insights": list(insights.values())}, ensure_ascii=False)
