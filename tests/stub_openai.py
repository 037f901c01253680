"""A stub OpenAI-compatible server on the loopback interface, for the HTTP client's tests.

It speaks /chat/completions and /embeddings, and can be told, call by call, to answer with
text, a tool call, an HTTP error status, a garbage body, a body without choices, or slowly.
Without a script, chat answers come from a `PromptFollowingLLM` reading the prompt, so a
whole agent run can be decided over HTTP; embeddings are bag-of-words hash vectors.
"""

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from recuris.mock_llm import PromptFollowingLLM
from recuris.text import tokenize


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
        self.model = PromptFollowingLLM()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                behaviour = stub.script.pop(0) if stub.script else ("auto",)
                stub.answer(self, behaviour, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "StubServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, handler, behaviour: tuple, body: dict) -> None:
        kind = behaviour[0]
        if kind == "status":
            self.send(handler, behaviour[1], {"error": {"message": behaviour[2]}})
        elif kind == "garbage":
            self.send(handler, 200, b"<html>not json</html>")
        elif kind == "no-choices":
            self.send(handler, 200, {"id": "x", "object": "chat.completion"})
        elif kind == "slow":
            time.sleep(behaviour[1])
            self.send(handler, 200, self.chat("late"))
        elif kind == "tool":
            call = {"id": "call-1", "type": "function",
                    "function": {"name": behaviour[1], "arguments": json.dumps(behaviour[2])}}
            self.send(handler, 200, {"choices": [{"message": {"role": "assistant", "content": None,
                                                              "tool_calls": [call]}}]})
        elif kind == "text":
            self.send(handler, 200, self.chat(behaviour[1]))
        elif handler.path.endswith("/embeddings"):
            rows = [{"index": i, "embedding": hash_vector(text)} for i, text in enumerate(body["input"])]
            self.send(handler, 200, {"data": list(reversed(rows))})  # out of order on purpose
        else:
            self.send(handler, 200, self.chat(self.model(body["messages"][-1]["content"])))

    @staticmethod
    def chat(text: str) -> dict:
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}

    @staticmethod
    def send(handler, status: int, payload) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
