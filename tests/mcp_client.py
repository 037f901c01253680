"""What the MCP tests share: the messages a client sends, a session on a fresh manager, and a
small client that drives `python -m recuris.mcp` over real pipes, standard library only."""

import json
import os
import subprocess
import sys
from pathlib import Path

from recuris import MemoryManager
from recuris.mcp.memory_tools import MemoryTools
from recuris.mcp.session import Session

VERSION = "2025-06-18"


def request(number: int, method: str, params: dict | None = None) -> dict:
    """Return a JSON-RPC request."""
    message = {"jsonrpc": "2.0", "id": number, "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize(number: int = 1, version: str = VERSION) -> dict:
    """Return an initialize request as a client sends it."""
    client = {"name": "test-client", "version": "1"}
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
    return request(number, "initialize", params)


def call(number: int, name: str, arguments: dict) -> dict:
    """Return a tools/call request."""
    return request(number, "tools/call", {"name": name, "arguments": arguments})


def started(manager: MemoryManager | None = None, user: str = "ana") -> Session:
    """Return an initialized session on the user's memory."""
    session = Session(MemoryTools(manager or MemoryManager(), user))
    session.receive(json.dumps(initialize()))
    return session


def answer(session: Session, message: dict) -> dict:
    """Send one request; return its response (log notifications before it left out)."""
    return session.receive(json.dumps(message))[-1]


def tool_answer(response: dict) -> dict:
    """Return the JSON a tool answered with, from its CallToolResult."""
    return json.loads(response["result"]["content"][0]["text"])


ROOT = Path(__file__).resolve().parent.parent


class PipeClient:
    """`python -m recuris.mcp --db FILE --user USER` as a child process, spoken to over pipes."""

    def __init__(
        self,
        database: Path | str,
        user: str = "ana",
        *options: str,
        environment: dict | None = None,
    ) -> None:
        """Start the server; `environment` adds to (or replaces) this process's variables."""
        command = [sys.executable, "-m", "recuris.mcp", "--db", str(database), "--user", user]
        self.process = subprocess.Popen(
            [*command, *options],
            cwd=ROOT,
            env={**os.environ, **(environment or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def send(self, message: dict | bytes) -> None:
        """Write one message (or raw bytes) as one line."""
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict:
        """Read one line of standard output; it must be one JSON message."""
        return json.loads(self.process.stdout.readline())

    def ask(self, message: dict | bytes) -> dict:
        """Send one request and return the next message read."""
        self.send(message)
        return self.receive()

    def close(self) -> tuple[int, bytes, bytes]:
        """End input; return the exit status, and what was left on standard output and error."""
        remaining_output, errors = self.process.communicate(timeout=30)
        return self.process.returncode, remaining_output, errors
