"""A real model behind the same callable: an OpenAI-compatible HTTP client on urllib alone.

Document 000 §4.3 leaves `default_llm` as a stub to replace with a model call; documents 000
§3.2 and 001 recommend embeddings for retrieval in production. Hosted APIs and local servers
(vLLM, llama.cpp, Ollama) speak the same chat-completions and embeddings wire format, so one
small client serves them all. `OpenAICompatibleChat` is a `prompt -> str` callable and drops
in wherever the mock LLM goes; `OpenAICompatibleEmbeddings` feeds `CosineScorer`.

Invariants:
    L4  the API key appears in no exception message, log line or repr.
    L5  429 and 5xx are retried at most `max_retries` times, sleeping `backoff · 2^n` through
        the injected `sleep`; any other 4xx is raised at once with the server's message.
    L6  every failure is an `LLMError` subclass naming what went wrong: connection refused,
        timeout, HTTP status, or a body that is not the expected JSON.
    L7  a tool call in the reply comes back as `{"function_call": {...}}` text, the format
        the agent loop answers (active_recall.parse_tool_call).
"""

import json
import os
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence

__all__ = ["OpenAICompatibleChat", "OpenAICompatibleEmbeddings", "LLMError", "LLMConnectionError",
           "LLMTimeout", "LLMHTTPError", "LLMResponseError"]


class LLMError(Exception):
    """A model endpoint could not give an answer (L6)."""


class LLMConnectionError(LLMError):
    """The endpoint could not be reached (refused, unknown host)."""


class LLMTimeout(LLMError):
    """The endpoint did not answer within the timeout."""


class LLMHTTPError(LLMError):
    """The endpoint answered with an HTTP error status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class LLMResponseError(LLMError):
    """The endpoint answered, but not with the JSON the API promises."""


class _Endpoint:
    """POST JSON to an OpenAI-compatible endpoint, with bounded retries and a hidden key."""

    def __init__(self, base_url: str | None, model: str | None, api_key: str | None, timeout: float,
                 max_retries: int, sleep: Callable[[float], None], backoff: float) -> None:
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "").rstrip("/")
        self.model = model or os.environ.get("RECURIS_MODEL") or ""
        if not self.base_url or not self.model:
            raise ValueError("L6: set base_url and model (or OPENAI_BASE_URL and RECURIS_MODEL)")
        self._key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout, self.max_retries, self.sleep, self.backoff = timeout, max_retries, sleep, backoff

    def _redact(self, text: str) -> str:
        return text.replace(self._key, "[redacted]") if self._key else text

    def post(self, path: str, payload: dict) -> dict:
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        request = urllib.request.Request(f"{self.base_url}{path}", json.dumps(payload).encode(), headers)
        for attempt in range(self.max_retries + 1):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    body = response.read()
                break
            except urllib.error.HTTPError as error:
                message = self._redact(_server_message(error))
                if (error.code == 429 or error.code >= 500) and attempt < self.max_retries:
                    self.sleep(self.backoff * 2**attempt)
                    continue
                raise LLMHTTPError(error.code, message) from None
            except TimeoutError as error:
                raise LLMTimeout(f"no answer from {self.base_url} within {self.timeout} s") from error
            except urllib.error.URLError as error:
                if isinstance(error.reason, (TimeoutError, socket.timeout)):
                    raise LLMTimeout(f"no answer from {self.base_url} within {self.timeout} s") from None
                raise LLMConnectionError(
                    f"cannot reach {self.base_url}: {self._redact(str(error.reason))}"
                ) from None
        try:
            data = json.loads(body)
        except ValueError:
            raise LLMResponseError(
                f"the body is not JSON: {self._redact(body[:120].decode(errors='replace'))!r}"
            ) from None
        if not isinstance(data, dict):
            raise LLMResponseError(f"the body is {type(data).__name__}, not a JSON object")
        return data

    def __repr__(self) -> str:
        key = "set" if self._key else "none"
        return f"{type(self).__name__}(base_url={self.base_url!r}, model={self.model!r}, api_key=<{key}>)"


def _server_message(error: urllib.error.HTTPError) -> str:
    raw = error.read().decode(errors="replace")
    try:
        return str(json.loads(raw)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return raw[:300] or error.reason


class OpenAICompatibleChat(_Endpoint):
    """`prompt -> str` over /chat/completions; also takes a `messages` list and tools."""

    def __init__(self, base_url: str | None = None, model: str | None = None, api_key: str | None = None,
                 timeout: float = 30, max_retries: int = 2, sleep: Callable[[float], None] = time.sleep,
                 backoff: float = 0.5, tools: Sequence[dict] = ()) -> None:
        super().__init__(base_url, model, api_key, timeout, max_retries, sleep, backoff)
        self.tools = list(tools)

    def __call__(self, prompt: str | list[dict]) -> str:
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        payload = {"model": self.model, "messages": messages}
        if self.tools:
            payload["tools"] = self.tools
        data = self.post("/chat/completions", payload)
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise LLMResponseError("the body has no choices[0].message") from None
        calls = message.get("tool_calls") or []
        if calls and isinstance(calls[0], dict) and isinstance(calls[0].get("function"), dict):
            function = calls[0]["function"]  # L7: the loop's own tool-call format
            return json.dumps(
                {
                    "function_call": {
                        "name": function.get("name"),
                        "arguments": function.get("arguments", "{}"),
                    }
                }
            )
        content = message.get("content")
        if not isinstance(content, str):
            raise LLMResponseError("the message has neither text content nor a tool call")
        return content


class OpenAICompatibleEmbeddings(_Endpoint):
    """`embed(texts) -> vectors` over /embeddings, in batches, order kept."""

    def __init__(self, base_url: str | None = None, model: str | None = None, api_key: str | None = None,
                 timeout: float = 30, max_retries: int = 2, sleep: Callable[[float], None] = time.sleep,
                 backoff: float = 0.5, batch_size: int = 64) -> None:
        super().__init__(base_url, model, api_key, timeout, max_retries, sleep, backoff)
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one vector per text. Raises LLMResponseError if the reply's shape is wrong."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            data = self.post("/embeddings", {"model": self.model, "input": batch})
            try:
                rows = sorted(data["data"], key=lambda row: row["index"])
                found = [[float(x) for x in row["embedding"]] for row in rows]
            except (KeyError, TypeError, ValueError):
                raise LLMResponseError("the body has no data[].embedding vectors") from None
            if len(found) != len(batch):
                raise LLMResponseError(f"asked for {len(batch)} vectors, got {len(found)}")
            vectors.extend(found)
        return vectors
