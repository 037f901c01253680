"""A real model behind the same callable: an OpenAI-compatible client on the standard library.

Document 000 §4.3 leaves `default_llm` as a stub to replace with a model call; documents 000
§3.2 and 001 recommend embeddings for retrieval in production. Hosted APIs and local servers
(vLLM, llama.cpp, Ollama) speak the same chat-completions and embeddings wire format, so one
small client serves them all. `OpenAICompatibleChat` is a `prompt -> str` callable and drops
in wherever the mock LLM goes; `OpenAICompatibleEmbeddings` feeds `CosineScorer`. The wire,
bounded in time and size, is `http_transport.post`; the reply is read by `model_replies`.

Invariants:
    LM1 the API key appears in no exception message, log line or repr; a server's text has the
        key, and each piece of it of 8 characters or more, redacted before it is cut to length.
    LM2 429 and 5xx are retried at most `max_retries` times, waiting `backoff · 2^n`, or the
        server's `Retry-After` up to `max_retry_after`, through the injected `sleep`; 501, a
        5xx that says the input is too large (`LLMInputTooLarge`) and any other 4xx are not.
    LM3 every failure of a call is an `LLMError` subclass naming what went wrong; a bad
        setting is a `ValueError` at construction naming the rule it breaks.
    LM4 `timeout` bounds the whole call: every attempt and every wait between them share one
        deadline, and a wait that would pass it is not taken.
    LM5 `embed` returns one vector per text, all of one length (MR2 for each batch); a text
        longer than `max_input_chars` is refused before anything is sent.
    LM6 a request carries `model`, a prompt as one user message (a `messages` list as given)
        or at most `batch_size` texts to embed, every option not set to None and every
        `extra_fields` entry as given; a chat call returns the reply's text.
"""

import json
import math
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from email.utils import parsedate_to_datetime

from recuris.core.validation import require_count, require_number
from recuris.llm.http_transport import (
    Deadline,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    LLMInputTooLarge,
    LLMRedirectError,
    LLMReplyTooLarge,
    LLMResponseError,
    LLMTimeout,
    origin,
    post,
    redact,
)
from recuris.llm.model_replies import chat_reply_text, embedding_vectors

__all__ = [
    "OpenAICompatibleChat",
    "OpenAICompatibleEmbeddings",
    "LLMError",
    "LLMConnectionError",
    "LLMTimeout",
    "LLMHTTPError",
    "LLMInputTooLarge",
    "LLMResponseError",
    "LLMReplyTooLarge",
    "LLMRedirectError",
]

CLIENT_FIELDS = frozenset(
    {"model", "messages", "tools", "input", "max_tokens", "temperature", "stop"}
)
# llama.cpp: "input is too large to process. increase
# the physical batch size"; others say "too long"
INPUT_TOO_LARGE = re.compile(r"too (large|long)|exceeds? the (available )?context", re.IGNORECASE)


class _Endpoint:
    """POST JSON to an OpenAI-compatible endpoint, within one deadline, retrying what may change."""

    def __init__(
        self,
        base_url: str | None,
        model: str | None,
        api_key: str | None,
        *,
        timeout: float = 60,
        max_retries: int = 2,
        sleep: Callable[[float], None] = time.sleep,
        backoff: float = 0.5,
        max_retry_after: float = 30,
        max_reply_bytes: int = 16 * 2**20,
        extra_fields: Mapping[str, object] | None = None,
    ) -> None:
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "").rstrip("/")
        self.model = model or os.environ.get("RECURIS_MODEL") or ""
        if not self.base_url or not self.model:
            raise ValueError("LM3: set base_url and model (or OPENAI_BASE_URL and RECURIS_MODEL)")
        if (
            origin(self.base_url) is None
            or not self.base_url.isascii()
            or not self.base_url.isprintable()
            or " " in self.base_url
        ):
            raise ValueError(
                f"LM3: base_url must be an http:// or https:// URL with a host and no spaces or "
                f"non-ASCII characters, not {self.base_url!r}"
            )
        self._key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if self._key and not (self._key.isascii() and self._key.isprintable()):
            raise ValueError(
                "LM3: api_key must be printable ASCII (no line breaks): it goes in a header"
            )
        require_number("LM3: timeout", timeout, 0, above_minimum=True)
        require_count("LM3: max_retries", max_retries, 0)
        require_number("LM3: backoff", backoff, 0)
        require_number("LM3: max_retry_after", max_retry_after, 0)
        require_count("LM3: max_reply_bytes", max_reply_bytes, 1)
        if not callable(sleep):
            raise ValueError(f"LM3: sleep must be a callable taking seconds, not {sleep!r}")
        self.extra_fields = dict(extra_fields or {})
        if self.extra_fields.keys() & CLIENT_FIELDS or not _json_ready(self.extra_fields):
            raise ValueError(
                f"LM3: extra_fields must be JSON values, with none of {sorted(CLIENT_FIELDS)}"
            )
        self.timeout = timeout
        self.max_retries = max_retries
        self.sleep = sleep
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        self.max_reply_bytes = max_reply_bytes

    def post(self, path: str, payload: dict) -> dict:
        """POST within `timeout` (LM4); return the JSON object, or raise an LLMError (LM1-LM3)."""
        deadline = Deadline(self.timeout)
        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        attempt = 0
        while True:
            reply = post(
                self.base_url + path, body, headers, deadline, self.max_reply_bytes, self._key
            )
            if 200 <= reply.status < 300:
                return self._json(reply.body)
            message = self._server_message(reply.body)
            if reply.status == 413 or reply.status >= 500 and INPUT_TOO_LARGE.search(message):
                raise LLMInputTooLarge(reply.status, message)
            may_change = reply.status == 429 or (reply.status >= 500 and reply.status != 501)
            if attempt == self.max_retries or not may_change:
                raise LLMHTTPError(reply.status, message)
            wait = max(
                self.backoff * 2**attempt, min(_retry_after(reply.headers), self.max_retry_after)
            )
            if wait >= deadline.end - time.monotonic():
                raise LLMHTTPError(
                    reply.status,
                    f"{message} (waiting {wait:g} s to retry would pass the "
                    f"{self.timeout:g} s timeout)",
                )
            self.sleep(wait)
            attempt += 1

    def _server_message(self, body: bytes) -> str:
        raw = body.decode("utf-8", errors="replace")
        try:
            message = json.loads(raw)["error"]["message"]
        except (ValueError, KeyError, TypeError, IndexError):
            message = raw
        return redact(str(message), self._key, 300) or "(no message)"

    def _json(self, body: bytes) -> dict:
        try:
            data = json.loads(body)
        except ValueError:
            excerpt = redact(body.decode("utf-8", errors="replace"), self._key, 120)
            raise LLMResponseError(f"the body is not JSON: {excerpt!r}") from None
        if not isinstance(data, dict):
            raise LLMResponseError(f"the body is {type(data).__name__}, not a JSON object")
        return data

    def __repr__(self) -> str:
        key = "set" if self._key else "none"
        return (
            f"{type(self).__name__}(base_url={self.base_url!r}, model={self.model!r}, "
            f"api_key=<{key}>)"
        )


def _json_ready(value) -> bool:
    try:
        return bool(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return False


def _retry_after(headers) -> float:
    value = (headers.get("Retry-After") or "").strip()
    try:
        seconds = float(value)
    except ValueError:
        try:  # an HTTP date
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, OverflowError):
            return 0.0
    return max(0.0, seconds) if math.isfinite(seconds) else 0.0


class OpenAICompatibleChat(_Endpoint):
    """`prompt -> str` over /chat/completions; also takes a `messages` list and tools.

    `max_tokens`, `temperature` and `stop` go into every request unless None. The other
    keywords (`timeout`, `max_retries`, `sleep`, `backoff`, `max_retry_after`,
    `max_reply_bytes`, `extra_fields`) are every endpoint's, checked as it is made (LM3).
    """

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        tools: Sequence[dict] = (),
        max_tokens: int | None = 512,
        temperature: float | None = 0.0,
        stop: str | Sequence[str] | None = None,
        **options,
    ) -> None:
        super().__init__(base_url, model, api_key, **options)
        if max_tokens is not None:
            require_count("LM3: max_tokens", max_tokens, 1)
        if temperature is not None:
            require_number("LM3: temperature", temperature, 0)
        if (
            stop is not None
            and not isinstance(stop, str)
            and not (isinstance(stop, (list, tuple)) and all(isinstance(s, str) for s in stop))
        ):
            raise ValueError(f"LM3: stop must be a string or a list of strings, not {stop!r}")
        self.tools = list(tools)
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.stop = stop if stop is None or isinstance(stop, str) else list(stop)

    def __call__(self, prompt: str | list[dict]) -> str:
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        fields = {
            "tools": self.tools or None,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "stop": self.stop,
        }
        payload = {"model": self.model, "messages": messages, **self.extra_fields}
        payload.update((name, value) for name, value in fields.items() if value is not None)
        return chat_reply_text(self.post("/chat/completions", payload))


class OpenAICompatibleEmbeddings(_Endpoint):
    """`embed(texts) -> vectors` over /embeddings, in batches, order kept (MR2)."""

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        batch_size: int = 64,
        max_input_chars: int = 8000,
        **options,
    ) -> None:
        super().__init__(base_url, model, api_key, **options)
        require_count("LM3: batch_size", batch_size, 1)
        require_count("LM3: max_input_chars", max_input_chars, 1)
        self.batch_size = batch_size
        self.max_input_chars = max_input_chars

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one vector per text; each batch is one call under `timeout` (LM4, LM5)."""
        for number, text in enumerate(texts):
            if len(text) > self.max_input_chars:
                raise LLMInputTooLarge(
                    None,
                    f"text {number} has {len(text)} characters; max_input_chars "
                    f"is {self.max_input_chars}: split it before embedding",
                )
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            data = self.post(
                "/embeddings", {**self.extra_fields, "model": self.model, "input": batch}
            )
            vectors.extend(embedding_vectors(data, len(batch)))
        if len({len(vector) for vector in vectors}) > 1:
            raise LLMResponseError(
                f"the vectors differ in length: {sorted({len(v) for v in vectors})}"
            )
        return vectors
