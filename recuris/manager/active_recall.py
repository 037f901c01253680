"""Active recall: the agent asks memory a question when it needs to, through a tool call.

Document 004 §3: loading every memory into the context pollutes it; instead give the agent a
`search_memory` tool in the OpenAI function-calling format (query, max_results, default 3),
and, when no tool is called, gate automatic retrieval by density: retrieve only when the
best hit passes a similarity threshold, and inject at most a token budget of memories.
mem0 exposes its search to agents the same way.

Invariants:
    Z1  `retrieve_context` returns memories whose estimated tokens, summed, never exceed
        `max_tokens`.
    Z2  while the gate is closed, `retrieve_context` returns nothing and counts no use; the
        gate is monotone in the threshold: where a higher threshold retrieves, every lower
        one does too.
    Z3  `handle_search_memory` always returns a JSON string, never raises; malformed arguments
        get {"error": ...}. `answer` and `respond` never raise either: a call without a
        text "name" or without "arguments", or one that is not an object, is answered by
        an error line.
    Z4  the gate's similarity is the largest share of the text's analysed terms that one
        long-term memory holds, in [0, 1]; a similarity equal to the threshold retrieves.
    Z5  a query is cut to MAX_QUERY_CHARS (the answer's "query_truncated" says so) and echoed
        into a prompt at most 200 characters long.
    Z6  the tool speaks OpenAI's format: `search_memory_tool` is a function whose JSON Schema
        requires `query`; `parse_tool_call` reads a `function_call` or a `tool_calls` call and
        nothing else (any reply that is not text is no call); an answer's prompt section is
        headed as recalled by search_memory.
    Z7  every answer can be sent: `handle_search_memory`'s JSON text and each line of an
        answer's section encode as UTF-8. A surrogate that UTF-8 cannot carry (a lone
        "\\ud800" in a query) is replaced by U+FFFD, not escaped, so that the echoed query
        reads the same in every JSON parser.
    Z8  the memories' contents in one `handle_search_memory` answer hold at most
        SEARCH_TOKEN_BUDGET estimated tokens together, whatever one memory holds: a content
        longer than its share is cut to it, and its result's "content_truncated" says so.
        The shortest contents are served first, so a memory that fits its share stays whole.
    Z9  every `handle_search_memory` answer that is no error says in "skipped" how many
        stored items recall left out because it could not read them (MG8), 0 included, so
        that an answer short of what is stored says why.
    Z10 a query with no word to search for (SR5: punctuation and stop words alone) is
        answered {"error": ...} naming Z10, not an empty list of results, as the command
        line's search refuses it (VA7).
"""

import json
import re

from ..core.prompt import ContextSection
from ..core.text import estimate_tokens, fit, fits, flatten, normalize, statement
from ..core.validation import replace_surrogates, require_count, require_number, require_text
from ..experience.slot_llm import SlotView
from ..retrieval.scoring import analyze, query_problem
from .bounds import cap_query

__all__ = [
    "search_memory_tool",
    "parse_tool_call",
    "ActiveRecall",
    "TOOL_RESULT_HEADER",
    "read_memory",
    "read_memory_line",
    "read_answer",
    "ask_memory",
    "SEARCH_TOKEN_BUDGET",
    "fitted_contents",
]

MAX_RESULTS = 10
DEFAULT_RESULTS = 3  # memories a call returns when it does not say how many (document 004 §3)
# Tokens the memories of one search_memory answer hold together (Z8): ten long memories
# whole, while a pasted document cannot fill the model's context with one tool result.
SEARCH_TOKEN_BUDGET = 2_000
TOOL_RESULT_HEADER = "## Recalled by search_memory (a tool call you made)"
# A memory as a prompt shows it: `- [level] content`, maybe with its relevance after it.
_MEMORY_LINE = re.compile(r"^- \[(?!follow\]|avoid\])\w+\] (.*?)(?: \(relevance [\d.]+\))?$")


def search_memory_tool() -> dict:
    """Return the `search_memory` tool definition in the OpenAI function-calling format."""
    return {
        "type": "function",
        "function": {
            "name": "search_memory",
            "description": (
                "Search long-term memory for the user's preferences, past decisions and lessons "
                "learned. Call it only when the task needs something you do not see in the prompt. "
                "The answer's skipped counts stored memories that could not be read."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "what to recall, stated precisely"},
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_RESULTS,
                        "default": DEFAULT_RESULTS,
                        "description": "the most memories to return",
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    }


def parse_tool_call(reply: object) -> dict | None:
    """Return {"name", "arguments"} if the reply is a function call, else None.

    Accepted shapes, as text: {"function_call": {"name", "arguments"}} (document 004) and an
    OpenAI message with "tool_calls": [{"function": {"name", "arguments"}}]. A reply that
    is not text is no call (Z6).
    """
    if not isinstance(reply, str):
        return None
    text = reply.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    call = data.get("function_call")
    if call is None and isinstance(data.get("tool_calls"), list) and data["tool_calls"]:
        first = data["tool_calls"][0]
        call = first.get("function") if isinstance(first, dict) else None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None
    return {"name": call["name"], "arguments": call.get("arguments", "{}")}


class ActiveRecall:
    """Answer `search_memory` calls and gate automatic retrieval, for one user of a manager."""

    def __init__(self, manager, user_id: str = "default", threshold: float = 0.3) -> None:
        """Raises ValueError for a threshold outside [0, 1] (Z2) or an empty user_id."""
        self.manager = manager
        self.user_id = require_text("user_id", user_id)
        self.threshold = require_number("Z2: threshold", threshold, 0.0, 1.0)

    def _arguments(self, arguments: object) -> tuple[str, int]:
        data = json.loads(arguments) if isinstance(arguments, str) else arguments
        if not isinstance(data, dict):
            raise ValueError("arguments must be a JSON object")
        query = data.get("query")
        limit = data.get("max_results", DEFAULT_RESULTS)
        if not isinstance(query, str) or not query.strip():
            raise ValueError("'query' is required and must be non-empty text")
        require_count("'max_results'", limit, minimum=1, maximum=MAX_RESULTS + 1)
        return query, limit

    def handle_search_memory(self, arguments_json: object, user_id: str | None = None) -> str:
        """Run a search_memory call; return JSON results with score breakdowns, or a JSON error.

        Never raises (Z3).
        """
        try:
            query, limit = self._arguments(arguments_json)
            # BD2: the query is echoed back into the prompt.
            query, cut = cap_query(query)
            problem = query_problem(query)
            if problem:
                raise ValueError(f"Z10: {problem}")
            found = self.manager.recall(query, user_id or self.user_id, top_k=limit)
        except (ValueError, TypeError, RecursionError) as error:
            return _sent({"error": f"search_memory: {flatten(str(error), 200)}"})
        contents = fitted_contents([r.item.content for r in found.results], SEARCH_TOKEN_BUDGET)
        results = [
            {
                "id": r.item.id,
                "level": r.item.level,
                "content": content,
                "content_truncated": content != r.item.content,
                "score": r.breakdown(),
                "reason": r.reason,
            }
            for r, content in zip(found.results, contents)
        ]
        return _sent(
            {
                "query": query,
                "query_truncated": cut,
                "results": results,
                "degraded": found.degraded,
                "skipped": found.skipped,  # Z9: unreadable stored items left out (MG8)
            }
        )

    # How a model calls the tool; the agent ends every prompt with it (experience/agent.py's Tools).
    instruction = (
        "To search memory, reply with\n"
        '{"function_call": {"name": "search_memory", "arguments": "{\\"query\\": \\"...\\"}"}}'
    )

    def respond(self, reply: object) -> ContextSection | None:
        """Answer the tool call in a model's reply, or return None if the reply is an action."""
        call = parse_tool_call(reply)
        return None if call is None else self.answer(call)

    def answer(self, call: object) -> ContextSection:
        """Answer a tool call as a prompt section that says it came from recall (Z6).

        The section's values are the statements (`subject: value`) of the memories found. A
        malformed call gets a section holding one error line (Z3).
        """
        name = call.get("name") if isinstance(call, dict) else None
        if not isinstance(name, str) or "arguments" not in call:
            problem = 'error: a tool call is an object with a text "name" and "arguments"'
            return ContextSection(TOOL_RESULT_HEADER, (problem,))
        if name != "search_memory":
            # repr escapes what cannot be printed, a surrogate among it (Z7)
            unknown = f"error: unknown tool {flatten(name, 80)!r}"
            return ContextSection(TOOL_RESULT_HEADER, (unknown,))
        reply = json.loads(self.handle_search_memory(call["arguments"]))
        if "error" in reply:
            return ContextSection(TOOL_RESULT_HEADER, (f"error: {reply['error']}",))
        found = [
            f"- [{result['level']}] {flatten(result['content'], 200)} "
            f"(relevance {result['score']['relevance']:.2f})"
            for result in reply["results"]
        ]
        lines = (f"query: {flatten(reply['query'], 200)}", *(found or ["(nothing found)"]))
        values = [read_memory(result["content"]) for result in reply["results"]]
        return ContextSection(TOOL_RESULT_HEADER, lines, tuple(pair for pair in values if pair))

    def best_similarity(self, text: str) -> float:
        """Return the largest share of the text's terms one long-term memory holds (0 if none).

        Recall's relevance is relative (its best candidate scores 1), so the gate needs an
        absolute measure: how much of what is asked a memory actually covers.
        """
        asked = set(analyze(text))
        if not asked:
            return 0.0
        found = self.manager.recall(text, self.user_id, top_k=50, count_access=False)
        held = [set(analyze(r.item.content)) for r in found.results if r.item.level != "working"]
        return max((len(asked & terms) / len(asked) for terms in held), default=0.0)

    def should_retrieve(self, text: str) -> bool:
        """True only when the best hit's similarity reaches the threshold (Z2)."""
        return self.best_similarity(text) >= self.threshold

    def retrieve_context(self, text: str, max_tokens: int = 500) -> list[str]:
        """Return rendered memories for the text, within `max_tokens` in all (Z1).

        Returns [] when the gate is closed (Z2).
        """
        require_count("Z1: max_tokens", max_tokens, 0)
        if not self.should_retrieve(text):
            return []
        found = self.manager.recall(text, self.user_id, top_k=20, count_access=False)
        chosen = []
        used = 0
        # Z1's policy: the best first, each memory costed alone, and a smaller one further
        # down may fit what is left.
        for result in found.results:
            line = result.render()
            if fits(line, max_tokens - used):
                chosen.append(result)
                used += estimate_tokens(line)
        self.manager.users.count_access(self.user_id, chosen)
        return [result.render() for result in chosen]


def fitted_contents(contents: list[str], budget: int) -> list[str]:
    """Return the contents, each cut to its share of `budget` tokens, shortest served first (Z8).

    Z8's policy: what is left of the budget is shared equally among the contents not yet
    served, so that one long memory cannot crowd out the others; each is cut by `fit` (T5).
    """
    costs = [estimate_tokens(content) for content in contents]
    fitted = list(contents)
    left = budget
    order = sorted(range(len(contents)), key=costs.__getitem__)
    for served, index in enumerate(order):
        share = left // (len(order) - served)
        fitted[index] = fit(contents[index], share)
        left -= estimate_tokens(fitted[index])
    return fitted


def _sent(answer: dict) -> str:
    """Return the answer as JSON text that encodes as UTF-8 (Z7)."""
    return replace_surrogates(json.dumps(answer, ensure_ascii=False))


def read_memory(text: str) -> tuple[str, str] | None:
    """Return the (normalised subject, value) a memory's text states, or None."""
    pair = statement(text)
    return None if pair is None else (normalize(pair[0]), pair[1])


def read_memory_line(line: str) -> tuple[str, str] | None:
    """Return what a memory shown as `- [level] content` states, or None."""
    match = _MEMORY_LINE.match(line)
    return None if match is None else read_memory(match.group(1))


def read_answer(line: str, view: SlotView) -> None:
    """Read a line of a search_memory answer for the mock model: the query asked, a value."""
    if line.startswith("query: "):
        view.asked.append(normalize(line[len("query: ") :]))
        return
    pair = read_memory_line(line)
    if pair:
        view.known.setdefault(*pair)


def ask_memory(slot: str, view: SlotView) -> str | None:
    """Return the mock model's search_memory call for a slot, if the prompt offers the tool.

    None once the slot was asked, or when the instruction offers no search_memory.
    """
    if "search_memory" not in view.instruction or normalize(slot) in view.asked:
        return None
    arguments = json.dumps({"query": slot, "max_results": DEFAULT_RESULTS})
    return json.dumps({"function_call": {"name": "search_memory", "arguments": arguments}})
