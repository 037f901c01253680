"""Stub servers on the loopback interface (127.0.0.1 only), for the HTTP client's tests.

`StubServer` speaks /chat/completions and /embeddings, and can be told, call by call, to
answer with text, a tool call, any JSON, an HTTP error status (with headers), a redirect, a
garbage body, a body without choices, or slowly. Without a script, chat answers come from a
`SlotFollowingLLM` (as `model_on_manager` makes it) reading the prompt, so a whole agent
run can be decided over HTTP; embeddings are bag-of-words hash vectors. `RawServer` writes
raw bytes, for the replies no well-behaved server sends: a slow drip, a body cut short, a
status line that is not HTTP; it counts what it sent, so that a test shows a call cut off
by the work it left undone, never by the seconds it took.
`chat` and `raw_chat` make a client of each, holding `KEY`; `failure` calls one expecting an
LLMError; `reply_head`, `tool_reply` and `embedding_reply` build what a server sends.
"""

import hashlib
import json
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from recuris.core.text import tokenize
from recuris.llm.llm_http import LLMError, OpenAICompatibleChat
from recuris.manager.experience import model_on_manager


def hash_vector(text: str, size: int = 64) -> list[float]:
    """A deterministic bag-of-words embedding: similar texts get similar vectors."""
    vector = [0.0] * size
    for token in tokenize(text):
        vector[int(hashlib.sha256(token.encode()).hexdigest(), 16) % size] += 1.0
    return vector


class StubServer:
    """Start on 127.0.0.1 at a free port; `script` is a list of behaviours, consumed in order."""

    def __init__(self) -> None:
        self.script: list[tuple] = []
        self.requests: list[dict] = []
        self.model = model_on_manager()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                behaviour = stub.script.pop(0) if stub.script else ("auto",)
                stub.answer(self, behaviour, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        # a short poll lets `shutdown` return within 10 ms, so each test stops its server quickly
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)

    def __enter__(self) -> "StubServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, handler, behaviour: tuple, body: dict) -> None:
        kind = behaviour[0]
        if kind == "status":  # ("status", code, message or raw body bytes[, headers])
            headers = behaviour[3] if len(behaviour) > 3 else {}
            body = (
                behaviour[2]
                if isinstance(behaviour[2], bytes)
                else {"error": {"message": behaviour[2]}}
            )
            self.send(handler, behaviour[1], body, headers)
        elif kind == "redirect":  # ("redirect", code, location)
            self.send(handler, behaviour[1], b"", {"Location": behaviour[2]})
        elif kind == "json":
            self.send(handler, 200, behaviour[1])
        elif kind == "garbage":
            self.send(handler, 200, b"<html>not json</html>")
        elif kind == "no-choices":
            self.send(handler, 200, {"id": "x", "object": "chat.completion"})
        elif kind == "slow":
            time.sleep(behaviour[1])
            self.send(handler, 200, self.chat("late"))
        elif kind == "tool":
            call = {
                "id": "call-1",
                "type": "function",
                "function": {"name": behaviour[1], "arguments": json.dumps(behaviour[2])},
            }
            self.send(
                handler,
                200,
                {
                    "choices": [
                        {"message": {"role": "assistant", "content": None, "tool_calls": [call]}}
                    ]
                },
            )
        elif kind == "text":
            self.send(handler, 200, self.chat(behaviour[1]))
        elif handler.path.endswith("/embeddings"):
            rows = [
                {"index": i, "embedding": hash_vector(text)} for i, text in enumerate(body["input"])
            ]
            self.send(handler, 200, {"data": list(reversed(rows))})  # out of order on purpose
        else:
            self.send(handler, 200, self.chat(self.model(body["messages"][-1]["content"])))

    @staticmethod
    def chat(text: str) -> dict:
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}

    @staticmethod
    def send(handler, status: int, payload, headers: dict | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)


class RawServer:
    """Start on 127.0.0.1 at a free port; read each request, let `respond(server, socket)` write.

    Every loop here is bounded and watches `stopping`, so leaving the `with` block ends the
    server within a fraction of a second whatever `respond` is doing.
    """

    def __init__(self, respond: Callable[["RawServer", socket.socket], None]) -> None:
        self.respond = respond
        self.requests = 0
        # Work counted, never time: the bytes `drip` and the chunks `flood` managed to send.
        self.dripped = 0
        self.flooded = 0
        self.stopping = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        # How often `serve` looks at `stopping`: leaving is that quick
        self.listener.settimeout(0.01)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"
        self.thread = threading.Thread(target=self.serve, daemon=True)

    def __enter__(self) -> "RawServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        self.listener.close()

    def serve(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(2)
                try:
                    self.read_request(connection)
                    self.requests += 1
                    self.respond(self, connection)
                except OSError:  # the client gave up and closed: what the tests provoke
                    pass

    @staticmethod
    def read_request(connection: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            data += connection.recv(4096) or b"\r\n\r\n"
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        while len(body) < length:
            body += connection.recv(4096) or b" " * length

    def drip(self, connection: socket.socket, data: bytes, interval: float) -> None:
        """Send `data` a byte at a time, `interval` seconds apart, until done or stopping."""
        for byte in data:
            if self.stopping.is_set():
                return
            connection.sendall(bytes([byte]))
            self.dripped += 1
            time.sleep(interval)

    def flood(self, connection: socket.socket, head: bytes, chunk: bytes, times: int) -> None:
        """Send `head`, then `chunk` up to `times` times, until the client hangs up or stopping."""
        connection.sendall(head)
        for _ in range(times):
            if self.stopping.is_set():
                return
            connection.sendall(chunk)
            self.flooded += 1


KEY = "sk-test-SECRET-1234567890"


def chat(stub, **options):
    sleeps = options.pop("sleeps", [])
    return OpenAICompatibleChat(stub.url, "stub-model", api_key=KEY, sleep=sleeps.append, **options)


def raw_chat(server, **options):
    return OpenAICompatibleChat(
        server.url, "raw-model", api_key=KEY, sleep=lambda seconds: None, **options
    )


def reply_head(status: str = "200 OK", **headers) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Content-Type: application/json"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def failure(client, prompt="hi") -> LLMError:
    """Call the client, expecting an LLMError; return it."""
    with pytest.raises(LLMError) as raised:
        client(prompt)
    return raised.value


def tool_reply(calls) -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": calls}}]}


def embedding_reply(*rows) -> bytes:
    return json.dumps(
        {"data": [{"index": index, "embedding": vector} for index, vector in rows]}
    ).encode()
