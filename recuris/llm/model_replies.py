"""What an OpenAI-compatible endpoint answers, read without trusting its shape.

Document 000 §4.3 has the loop call a model; documents 000 §3.2 and 001 retrieve by
embeddings. A local server or a proxy may answer with JSON of another shape than the API
promises: `message` as a string, `tool_calls` as an object, vectors holding NaN or of two
lengths, an index twice. Each is caught here and named, so a malformed reply is an
`LLMResponseError` and never a `KeyError` or a poisoned vector in the index.

Invariants:
    MR1 a tool call in the reply comes back as `{"function_call": {...}}` text, the format
        the agent loop answers (active_recall.parse_tool_call).
    MR2 `embedding_vectors` returns one finite vector per input, from indexes 0..n-1 each once;
        anything else is an `LLMResponseError` naming the fault.
"""

import json

from recuris.core.validation import require_count, require_number
from recuris.llm.http_transport import LLMResponseError


def chat_reply_text(data: dict) -> str:
    """Return the reply's text, or its first tool call as loop text (MR1).

    Raises LLMResponseError if the reply is malformed.
    """
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise LLMResponseError("the body has no choices[0] object")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise LLMResponseError(f"choices[0].message is {type(message).__name__}, not an object")
    calls = message.get("tool_calls")
    if calls is None or calls == []:
        content = message.get("content")
        if not isinstance(content, str):
            raise LLMResponseError("choices[0].message has neither text content nor a tool call")
        return content
    if not isinstance(calls, list):
        raise LLMResponseError(f"tool_calls is {type(calls).__name__}, not a list")
    function = calls[0].get("function") if isinstance(calls[0], dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    arguments = function.get("arguments", "{}") if isinstance(function, dict) else None
    if isinstance(
        arguments, dict
    ):  # some servers send the arguments as an object, not as JSON text
        arguments = json.dumps(arguments)
    if not isinstance(name, str) or not isinstance(arguments, str):
        raise LLMResponseError("tool_calls[0] has no function with a name and arguments")
    return json.dumps({"function_call": {"name": name, "arguments": arguments}})  # MR1


def embedding_vectors(data: dict, count: int) -> list[list[float]]:
    """Return `count` finite vectors in index order (MR2).

    Raises LLMResponseError if the reply is malformed.
    """
    rows = data.get("data")
    if not isinstance(rows, list):
        raise LLMResponseError("the body has no data list of embeddings")
    found: dict[int, list[float]] = {}
    for row in rows:
        index = row.get("index") if isinstance(row, dict) else None
        try:
            require_count("index", index, 0, count)
        except ValueError:
            raise LLMResponseError(f"a data row has no index from 0 to {count - 1}") from None
        if index in found:
            raise LLMResponseError(f"index {index} appears twice in data")
        vector = row.get("embedding")
        problem = f"data[{index}].embedding is not a list of finite numbers"
        if not isinstance(vector, list) or not vector:
            raise LLMResponseError(problem)
        try:
            found[index] = [require_number("a coordinate", x) for x in vector]
        except ValueError:
            raise LLMResponseError(problem) from None
    if len(found) != count:
        missing = sorted(set(range(count)) - found.keys())
        raise LLMResponseError(f"asked for {count} vectors; indexes {missing} are missing")
    return [found[index] for index in range(count)]
