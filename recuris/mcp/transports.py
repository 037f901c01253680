"""The MCP transports: newline-delimited JSON-RPC on stdio, and Streamable HTTP on loopback.

Document 003 §7 asks that memory stay with its user and fail softly; over a wire that means
the server must never answer the wrong client, never read more than it bounds, and never let
a web page in the user's browser reach it. MCP (revision 2025-06-18) defines two transports.
On stdio the client starts the server and writes one JSON-RPC message per line to its
standard input; the server writes one per line to standard output and anything else to
standard error. Over Streamable HTTP each message is the body of a POST to one endpoint
(`/mcp`): a request is answered by JSON (or by an event stream when log notifications come
before the answer), a notification by 202; `initialize` opens a session whose id
(`Mcp-Session-Id`) every later request carries.

Invariants:
    TP1 standard output carries only the session's messages, one per line (MP6); a log line
        or a traceback goes to standard error. End of input ends `serve_stdio`.
    TP2 no message is read past MAX_MESSAGE_BYTES: stdio reads a line up to the limit and
        skips the rest of a longer one, answering it with the refusal of MP3; HTTP refuses
        a body declared longer (413) or undeclared (411) before reading it.
    TP3 DNS rebinding: on loopback, a request whose Host is not a loopback name or address
        (`is_loopback`, the test that lets the server bind), or whose Origin (when sent) is
        not a loopback origin (an Origin that is no URL, `http://[::1`, is none), is refused
        with 403 before its body is read; with `allow_remote`, an Origin must be the origin
        the Host names.
    TP4 with tokens, every request carries `Authorization: Bearer TOKEN` of the tokens
        file, which names exactly one user; any other gets 401 before its body is read.
        Each session is bound to the user that opened it: another user's token, or a
        session id the server did not give, finds no session (404).
    TP5 a request other than `initialize` without a session id is refused (400), as is one
        whose `MCP-Protocol-Version` header names a version the server does not speak.
    TP6 one session answers one message at a time; a user's sessions beyond MAX_SESSIONS
        close that user's oldest first, so that no user ends another's; DELETE ends a
        session, and GET (a stream the server never opens) is 405.
    TP7 a session opens only when `initialize`, sent as a request, succeeds: a failed one,
        or one sent as a notification, leaves no session and returns no Mcp-Session-Id.
    TP8 a request arrives whole, headers and body, within the endpoint's `timeout`
        (TIMEOUT_SECONDS) of the server starting to wait for it (its connection accepted, or
        its last answer sent), or its connection is closed unanswered: a client that sends
        a request however slowly, a byte at a time, holds a thread that long at most. The
        token is checked as soon as the headers are in (TP4). A connection its client
        resets ends quietly, with no traceback.
    TP9 at most `max_connections` (MAX_CONNECTIONS) connections are open, and at most
        `max_connections_per_address` (MAX_CONNECTIONS_PER_ADDRESS) from one address. A
        connection past a cap closes the oldest connection still waiting for its request:
        one of its own address past that address's cap, else one of the address holding the
        most. When every connection is being answered, the new one is closed unanswered.
"""

from __future__ import annotations

import hmac
import io
import ipaddress
import json
import logging
import secrets
import socket
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import BinaryIO
from urllib.parse import SplitResult, urlsplit

from ..core.validation import require_count, require_number
from .session import (
    INVALID_REQUEST,
    MAX_MESSAGE_BYTES,
    PROTOCOL_VERSIONS,
    Session,
    encode,
    error_object,
    oversized,
    parse,
)

__all__ = [
    "serve_stdio",
    "serve_http",
    "Endpoint",
    "Tokens",
    "is_loopback",
    "MAX_SESSIONS",
    "MAX_CONNECTIONS",
    "MAX_CONNECTIONS_PER_ADDRESS",
]

log = logging.getLogger("recuris.mcp.transports")

MAX_SESSIONS = 1_000  # open HTTP sessions of one user; their oldest closes first past it (TP6)
MIN_TOKEN_CHARS = 16  # a shorter token is guessed too soon to guard a memory
# A request not in whole this long after the server began to wait for it loses its connection
# (TP8): a message is at most a megabyte, which a client sends in well under a second, and a
# client waits for its answer, not the other way round.
TIMEOUT_SECONDS = 30.0
# Open connections (TP9). A client holds one or two at a time, and one machine runs a handful
# of agents; every agent on this machine shares the loopback address, so its cap is theirs.
MAX_CONNECTIONS = 128
MAX_CONNECTIONS_PER_ADDRESS = 32
PATH = "/mcp"
_CHUNK = 65_536  # how much of an over-long line stdio skips at a time
_CLOSE = {"Connection": "close"}


def serve_stdio(session: Session, reader: BinaryIO, writer: BinaryIO) -> None:
    """Answer each line of `reader` on `writer` until end of input (TP1, TP2)."""
    while True:
        line = reader.readline(MAX_MESSAGE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
            replies = [oversized(len(line) + _skip_line(reader))]
        elif line.strip():
            replies = session.receive(line.rstrip(b"\r\n"))
        else:
            continue  # a blank line is no message
        for reply in replies:
            writer.write(encode(reply))
        writer.flush()


def _skip_line(reader: BinaryIO) -> int:
    """Read past the rest of the current line, a chunk at a time; return how many bytes."""
    skipped = 0
    while True:
        chunk = reader.readline(_CHUNK)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped


def is_loopback(host: str) -> bool:
    """Tell whether a host (a name or an address) is this machine's loopback."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Tokens:
    """Bearer tokens, each naming one user: a JSON object {"TOKEN": "USER", ...} in a file."""

    def __init__(self, users: dict[str, str]) -> None:
        """Raises ValueError for a token shorter than MIN_TOKEN_CHARS or a blank user."""
        for token, user in users.items():
            if not isinstance(token, str) or len(token) < MIN_TOKEN_CHARS:
                raise ValueError(f"TP4: each token is text of {MIN_TOKEN_CHARS} characters or more")
            if not isinstance(user, str) or not user.strip():
                raise ValueError("TP4: each token names one user, as non-empty text")
        self.users = dict(users)

    @classmethod
    def load(cls, path: Path) -> Tokens:
        """Read a tokens file.

        Raises OSError if it cannot be read, ValueError if it is not a JSON object of tokens
        to users.
        """
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not data:
            raise ValueError(f'{path}: a tokens file is a JSON object {{"TOKEN": "USER"}}')
        return cls(data)

    def user_of(self, authorization: str | None) -> str | None:
        """Return the user a `Bearer TOKEN` header names, or None (TP4)."""
        scheme, _, given = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not given:
            return None
        found = None
        # Every token is compared, in constant time each, so that timing tells nothing.
        for token, user in self.users.items():
            if hmac.compare_digest(token.encode(), given.strip().encode()):
                found = user
        return found


class Endpoint:
    """What the HTTP server serves: who may call it, and each open session (TP3-TP6).

    `open_session(user)` makes a fresh Session for the user. Without `tokens` every
    request is `user`'s; with them, the token names the user. A request not in whole
    `timeout` seconds after the server began to wait for it loses its connection (TP8);
    `max_connections` and `max_connections_per_address` cap the open connections (TP9).
    """

    def __init__(
        self,
        open_session: Callable[[str], Session],
        *,
        user: str | None = None,
        tokens: Tokens | None = None,
        allow_remote: bool = False,
        timeout: float = TIMEOUT_SECONDS,
        max_connections: int = MAX_CONNECTIONS,
        max_connections_per_address: int = MAX_CONNECTIONS_PER_ADDRESS,
    ) -> None:
        require_number("TP8: timeout", timeout, 0, above_minimum=True)
        require_count("TP9: max_connections", max_connections, 1)
        require_count("TP9: max_connections_per_address", max_connections_per_address, 1)
        if (user is None) == (tokens is None):
            raise ValueError("TP4: give a user or tokens, not both")
        if allow_remote and tokens is None:
            raise ValueError("TP4: a server reachable from other machines needs tokens")
        self.open_session = open_session
        self.user = user
        self.tokens = tokens
        self.allow_remote = allow_remote
        self.timeout = timeout
        self.max_connections = max_connections
        self.max_connections_per_address = max_connections_per_address
        self.sessions: OrderedDict[str, tuple[str, Session, threading.Lock]] = OrderedDict()
        self.lock = threading.Lock()

    def keep(self, user: str, session: Session) -> str:
        """Keep an initialized session of the user; return its new id (TP6, TP7)."""
        session_id = secrets.token_urlsafe(24)
        with self.lock:
            self.sessions[session_id] = (user, session, threading.Lock())
            users = [key for key, (owner, _, _) in self.sessions.items() if owner == user]
            for oldest in users[: max(0, len(users) - MAX_SESSIONS)]:
                del self.sessions[oldest]
        return session_id

    def find(self, session_id: str | None, user: str) -> tuple[Session, threading.Lock] | None:
        """Return the user's session with this id, or None: another user's is none (TP4)."""
        with self.lock:
            found = self.sessions.get(session_id or "")
        if found is None or found[0] != user:
            return None
        return found[1], found[2]

    def end(self, session_id: str | None, user: str) -> bool:
        """Close the user's session with this id; return whether there was one."""
        with self.lock:
            found = self.sessions.get(session_id or "")
            if found is None or found[0] != user:
                return False
            del self.sessions[session_id]
            return True


def _name_of(netloc: str) -> str | None:
    parts = _parts_of(f"//{netloc}")
    return None if parts is None else parts.hostname


def _parts_of(url: str) -> SplitResult | None:
    """Return a URL's parts, or None for text that is no URL (`http://[::1`) (TP3)."""
    try:
        return urlsplit(url)
    except ValueError:
        return None


class _Connection:
    """One accepted connection: its address, and whether its request is still arriving."""

    def __init__(self, client: socket.socket, address: str, deadline: float) -> None:
        self.client = client
        self.address = address
        self.deadline = deadline  # on the monotonic clock: its request's whole arrival (TP8)
        self.arriving = True
        self.closed = False  # closed by a newer connection, to make room (TP9)


class _Connections:
    """A server's open connections, oldest first, within its endpoint's caps (TP9)."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.open: OrderedDict[socket.socket, _Connection] = OrderedDict()
        self.lock = threading.Lock()

    def admit(self, client: socket.socket, address: str) -> bool:
        """Keep a new connection, closing a waiting one if a cap is reached; or refuse it."""
        with self.lock:
            if not self._make_room(address):
                return False
            deadline = time.monotonic() + self.endpoint.timeout
            self.open[client] = _Connection(client, address, deadline)
            return True

    def _make_room(self, address: str) -> bool:
        """Close the waiting connection TP9 names if a cap is reached; return if there is room."""
        counted = Counter(
            connection.address for connection in self.open.values() if not connection.closed
        )
        waiting = [
            connection
            for connection in self.open.values()
            if connection.arriving and not connection.closed
        ]
        if counted[address] >= self.endpoint.max_connections_per_address:
            waiting = [connection for connection in waiting if connection.address == address]
        elif counted.total() < self.endpoint.max_connections:
            return True
        if not waiting:
            return False
        # `min` keeps the first of equals, and `open` is oldest first.
        oldest = min(waiting, key=lambda connection: -counted[connection.address])
        oldest.closed = True
        try:
            # Shutting down reading wakes its thread out of `recv`; its answer, if it was
            # refusing the request, can still be written.
            oldest.client.shutdown(socket.SHUT_RD)
        except OSError:
            pass  # already closed by its client
        return True

    def of(self, client: socket.socket) -> _Connection:
        """Return the connection kept for this socket."""
        with self.lock:
            return self.open[client]

    def wait(self, connection: _Connection) -> None:
        """Start waiting for the connection's next request: its arrival has `timeout` (TP8)."""
        with self.lock:
            if not connection.arriving:
                connection.deadline = time.monotonic() + self.endpoint.timeout
                connection.arriving = True

    def arrived(self, connection: _Connection) -> None:
        """Mark the connection's request as in: from now it is answered, never closed (TP9).

        Raises TimeoutError if a newer connection closed it first.
        """
        with self.lock:
            if connection.closed:
                raise TimeoutError("TP9: closed to make room for a newer connection")
            connection.arriving = False

    def release(self, client: socket.socket) -> None:
        """Forget a connection that ended."""
        with self.lock:
            self.open.pop(client, None)


class _Arrival(io.RawIOBase):
    """A connection's bytes, read until its request's deadline (TP8) or its closing (TP9)."""

    def __init__(self, connection: _Connection) -> None:
        super().__init__()
        self.connection = connection

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        connection = self.connection
        left = connection.deadline - time.monotonic()
        if connection.closed or left <= 0:
            raise TimeoutError("TP8: the request did not arrive whole within the timeout")
        connection.client.settimeout(left)
        received = connection.client.recv_into(buffer)
        if connection.closed:
            raise TimeoutError("TP9: closed to make room for a newer connection")
        return received


class _Handler(BaseHTTPRequestHandler):
    """One HTTP connection to the endpoint; `server.endpoint` holds what it serves."""

    protocol_version = "HTTP/1.1"
    server_version = "recuris-mcp"

    def setup(self) -> None:
        self.timeout = self.server.endpoint.timeout  # bounds each write of an answer
        super().setup()
        self.arrival = self.server.connections.of(self.request)
        # Each read waits at most until the request's deadline, so that a client sending a
        # byte at a time cannot stretch the arrival by a timeout per byte (TP8).
        self.rfile = io.BufferedReader(_Arrival(self.arrival))

    def handle_one_request(self) -> None:
        # A read timed out, or closed to make room, raises TimeoutError, which the base
        # class answers by closing the connection (TP8, TP9).
        self.server.connections.wait(self.arrival)
        try:
            super().handle_one_request()
        except ConnectionError as error:
            # A client that reset its connection is gone: there is no one to answer, and a
            # traceback for each of a flood of them would bury standard error.
            log.debug("%s %r", self.address_string(), error)
            self.close_connection = True

    def send_response(self, code: int, message: str | None = None) -> None:
        self._arrived()  # every answer, and every refusal, starts here
        super().send_response(code, message)

    def _arrived(self) -> None:
        """End the request's arrival: it is answered now, and its writes get the timeout."""
        self.server.connections.arrived(self.arrival)
        self.connection.settimeout(self.timeout)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the base class's name)
        log.debug("%s %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        if self._admitted() is not None:
            self._send(405, b"", "text/plain", {"Allow": "POST, DELETE"})

    def do_DELETE(self) -> None:
        user = self._admitted()
        if user is None:
            return
        if self.server.endpoint.end(self.headers.get("Mcp-Session-Id"), user):
            self._send(204, b"", "text/plain")
        else:
            self._refuse(404, "no such session")

    def do_POST(self) -> None:
        user = self._admitted()
        if user is None:
            return
        body = self._body()
        if body is None:
            return
        self._arrived()  # before its work is done, so that no newer connection closes it
        message, unreadable = parse(body)  # read once, here
        version = self.headers.get("MCP-Protocol-Version")
        opening = message is not None and message.get("method") == "initialize"
        if version is not None and version not in PROTOCOL_VERSIONS and not opening:
            self._refuse(400, f"unsupported MCP-Protocol-Version {version[:40]!r}")
            return
        endpoint = self.server.endpoint
        session_id = self.headers.get("Mcp-Session-Id")
        if session_id is None and opening:
            self._open(user, message)
            return
        if session_id is None:
            self._refuse(400, "no Mcp-Session-Id: send initialize first")
            return
        found = endpoint.find(session_id, user)
        if found is None:
            self._refuse(404, "no such session: initialize again")
            return
        session, lock = found
        with lock:
            replies = [unreadable] if message is None else session.answer(message)
        self._answer(replies, {"Mcp-Session-Id": session_id})

    def _open(self, user: str, message: dict) -> None:
        """Answer an `initialize`; keep its session only if it succeeded as a request (TP7)."""
        endpoint = self.server.endpoint
        session = endpoint.open_session(user)
        replies = session.answer(message)
        opened = bool(replies) and "result" in replies[-1]
        headers = {"Mcp-Session-Id": endpoint.keep(user, session)} if opened else {}
        self._answer(replies, headers)

    def _admitted(self) -> str | None:
        """Return the request's user, or answer it with a refusal and return None (TP3, TP4)."""
        endpoint = self.server.endpoint
        if urlsplit(self.path).path != PATH:
            self._refuse(404, f"the endpoint is {PATH}")
            return None
        host = self.headers.get("Host", "")
        origin = self.headers.get("Origin")
        sent = None if origin is None else _parts_of(origin)
        if endpoint.allow_remote:
            matches = sent is not None and sent.netloc.lower() == host.lower()
            foreign = origin is not None and not matches
        else:
            names = [_name_of(host)]
            if origin is not None:
                names.append(None if sent is None else sent.hostname)
            foreign = not all(name is not None and is_loopback(name) for name in names)
        if foreign:
            self._refuse(403, "Host or Origin is not this server's: refused (DNS rebinding)")
            return None
        if endpoint.tokens is None:
            return endpoint.user
        user = endpoint.tokens.user_of(self.headers.get("Authorization"))
        if user is None:
            self._refuse(401, "a bearer token is required", {"WWW-Authenticate": "Bearer"})
        return user

    def _body(self) -> bytes | None:
        declared = self.headers.get("Content-Length")
        try:
            size = int(declared) if declared is not None else None
        except ValueError:
            size = -1
        if size is None:
            self._refuse(411, "a message declares its Content-Length")
            return None
        if size < 0 or size > MAX_MESSAGE_BYTES:
            self._send(413, encode(oversized(size)), "application/json", _CLOSE)  # body unread
            return None
        return self.rfile.read(size)

    def _answer(self, replies: list[dict], headers: dict[str, str]) -> None:
        if not replies:
            self._send(202, b"", "text/plain", headers)
            return
        *notes, response = replies
        unreadable = "error" in response and response.get("id") is None
        status = 400 if unreadable else 200
        if notes and "text/event-stream" in self.headers.get("Accept", ""):
            events = b"".join(
                b"event: message\ndata: " + encode(reply) + b"\n" for reply in replies
            )
            self._send(status, events, "text/event-stream", headers)
            return
        self._send(status, encode(response), "application/json", headers)

    def _refuse(self, status: int, why: str, headers: dict[str, str] | None = None) -> None:
        # A refused request's body may be left unread: the connection ends with the answer
        # (sending "Connection: close" ends it), so no unread byte is taken for a request.
        body = error_object(None, INVALID_REQUEST, why)
        self._send(status, encode(body), "application/json", {**(headers or {}), **_CLOSE})

    def _send(
        self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a client that keeps its connection open never holds up shutdown
    # Connections waiting to be accepted: a burst past the caps is accepted and then meets
    # them (TP9), rather than filling a short queue whose overflow the kernel drops unseen,
    # each new client then retrying after a second or more.
    request_queue_size = MAX_CONNECTIONS

    def verify_request(self, request: socket.socket, client_address: tuple) -> bool:
        # Here, before its thread starts, so that the caps bound the threads too (TP9).
        return self.connections.admit(request, client_address[0])

    def shutdown_request(self, request: socket.socket) -> None:
        self.connections.release(request)
        super().shutdown_request(request)


class _ServerIPv6(_Server):
    address_family = socket.AF_INET6


def serve_http(endpoint: Endpoint, host: str, port: int) -> ThreadingHTTPServer:
    """Bind the endpoint at host:port (0 picks a free port); return the server, not serving.

    Call its `serve_forever`. Raises ValueError for a non-loopback host without
    `allow_remote` (TP3), OSError if the address cannot be bound.
    """
    if not is_loopback(host) and not endpoint.allow_remote:
        raise ValueError(f"TP3: {host} is not loopback; serving other machines needs allow_remote")
    kind = _ServerIPv6 if ":" in host else _Server
    server = kind((host, port), _Handler)
    server.endpoint = endpoint
    server.connections = _Connections(endpoint)
    return server
