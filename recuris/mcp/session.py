"""The MCP session: JSON-RPC 2.0 messages in, one answer each out, for one user's memory.

Document 004 §3 gives the agent its memory as a tool it calls when it needs to, and §7 of
document 003 asks that memory fail softly and stay with its user. The Model Context Protocol
(revision 2025-06-18, and 2025-11-25) is how agents written outside Python call tools and
read resources: JSON-RPC 2.0 requests (`initialize`, `ping`, `tools/call`, ...), each
answered by one response carrying its id, and notifications, answered by nothing. A
`Session` reads one message at a time, whatever carries it (transports.py), and hands the
memory's methods to the tools it is given (memory_tools.py); it knows nothing of users but
the one its tools were made for.

Invariants:
    MP1 `receive` never raises: a request gets exactly one response, with its id and either
        a result or an error object of the specification's codes; a notification or a
        response from the client gets none, even when it is malformed; a message that cannot
        be read as a request gets an error whose id is null. A client's response (a
        `result` or an `error`, no `method`) is known as one whatever its id, null included.
    MP2 `initialize` answers with the version the client asked for when it is one of
        PROTOCOL_VERSIONS, and otherwise the newest of them; before it, every request but
        `ping` is refused, and a second `initialize` is refused.
    MP3 a message longer than MAX_MESSAGE_BYTES is refused with INVALID_REQUEST before it is
        decoded; a JSON-RPC batch (an array), which revision 2025-06-18 removed, is refused.
    MP4 a failure no method expected is answered with INTERNAL_ERROR and a message naming
        no Python class and holding no traceback; the traceback goes to the log (stderr).
    MP5 what recuris logs at or above the level the client chose (`logging/setLevel`,
        WARNING until it chooses) while a request runs is sent before the request's response
        as `notifications/message`, in order, whatever the "recuris" logger's own level
        (lowered for the request's time, then given back); the log (stderr) has it too.
    MP6 every answer can be sent: `encode` makes one line of UTF-8 of strict JSON (no
        character a line reader splits on inside: a newline, U+0085, U+2028 and U+2029 are
        escaped (T4); a lone surrogate replaced; no NaN or Infinity), whatever the answer
        holds: one it cannot carry becomes an INTERNAL_ERROR with the answer's id.
    MP7 a request's id comes back exactly as it came: an id that is not an integer or a
        string of Unicode text (a lone surrogate, "\\ud800", which UTF-8 cannot carry and
        MP6 would replace) is refused with INVALID_REQUEST and a null id, as JSON-RPC 2.0
        answers a request whose id cannot be read.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata

from ..core.text import escape_line_breaks
from ..core.validation import replace_surrogates, unicode_problem

__all__ = [
    "Session",
    "RequestError",
    "encode",
    "error_object",
    "parse",
    "oversized",
    "MAX_MESSAGE_BYTES",
    "PROTOCOL_VERSIONS",
]

log = logging.getLogger("recuris.mcp.session")

# The newest first: `initialize` offers it to a client that asked for one it does not know.
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18")
# A message holds one call: a megabyte is a long document. The transports read no further
# (stdio: one line; HTTP: one body), so a larger one costs the server a megabyte at most.
MAX_MESSAGE_BYTES = 1_048_576
# JSON-RPC 2.0's codes, and the one MCP adds for a resource it does not have.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002
# MCP's log levels, least severe first, and the logging module's level each stands for.
LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL + 5,
    "emergency": logging.CRITICAL + 10,
}
INSTRUCTIONS = (
    "Long-term memory of one user. Call search_memory when the task needs something you do "
    "not see in the conversation; remember what the user will want recalled later; forget a "
    "memory by the id search_memory gave."
)


class RequestError(Exception):
    """A request that is answered with a JSON-RPC error object: its code and its message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def encode(message: dict) -> bytes:
    """Return a message as one line of UTF-8 of strict JSON, newline included (MP6)."""
    try:
        # json.dumps escapes every control character, so no newline can fall inside the line;
        # the other line breaks a reader may split on are escaped below (T4).
        text = json.dumps(message, ensure_ascii=False, allow_nan=False)
    except ValueError:
        log.error("an answer held a number JSON cannot carry (NaN or Infinity)")
        refused = error_object(message.get("id"), INTERNAL_ERROR, "Internal error: see the log")
        text = json.dumps(refused, ensure_ascii=False)
    return (escape_line_breaks(replace_surrogates(text)) + "\n").encode("utf-8")


def parse(data: bytes | str) -> tuple[dict | None, dict | None]:
    """Read one message; return (the JSON object, None) or (None, the error answering it).

    MP1, MP3. Never raises.
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > MAX_MESSAGE_BYTES:
        return None, oversized(len(data))
    try:
        message = json.loads(data, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return None, error_object(None, PARSE_ERROR, "Parse error: the message is not JSON text")
    if isinstance(message, list):
        return None, error_object(
            None, INVALID_REQUEST, "Invalid Request: batches are not supported"
        )
    if not isinstance(message, dict):
        return None, error_object(None, INVALID_REQUEST, "Invalid Request: a message is an object")
    return message, None


def _not_json(constant: str) -> None:
    # Python's json reads NaN and Infinity; JSON has no such numbers.
    raise ValueError(f"{constant} is not JSON")


def _server_version() -> str:
    try:
        return metadata.version("recuris")
    except metadata.PackageNotFoundError:
        return "unknown"


class _Notes(logging.Handler):
    """Keep the log records of one thread while one request runs (MP5)."""

    def __init__(self, level: int) -> None:
        super().__init__(level)
        self.thread = threading.get_ident()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.records.append(record)


# The levels of the requests running now, in every thread, and the level the "recuris" logger
# had before the first of them: while a client asks for records below the logger's level,
# the logger lets them through (MP5), and gets its own level back after the last request.
_HEARD_LOCK = threading.Lock()
_heard_levels: list[int] = []
_level_before: list[int] = []


@contextmanager
def _heard(level: int) -> Iterator[None]:
    """Let the "recuris" logger pass records at `level` while the block runs (MP5)."""
    recuris = logging.getLogger("recuris")
    with _HEARD_LOCK:
        if not _heard_levels:
            _level_before[:] = [recuris.level, recuris.getEffectiveLevel()]
        _heard_levels.append(level)
        recuris.setLevel(min(_level_before[1], *_heard_levels))
    try:
        yield
    finally:
        with _HEARD_LOCK:
            _heard_levels.remove(level)
            if _heard_levels:
                recuris.setLevel(min(_level_before[1], *_heard_levels))
            else:
                recuris.setLevel(_level_before[0])


class Session:
    """One client's conversation with one user's memory, from `initialize` to its end.

    `tools` answers the memory's methods: `tools()`, `call(name, arguments)`,
    `resources(cursor)`, `templates()` and `read(uri)` (memory_tools.py), each returning a
    result or raising RequestError. Not made for two threads at once: a transport gives
    each connection its own session.
    """

    def __init__(self, tools) -> None:
        self.tools = tools
        self.version: str | None = None  # the negotiated protocol version, once initialized
        self.level = LOG_LEVELS["warning"]
        self.methods: dict[str, Callable[[dict], dict]] = {
            "initialize": self._initialize,
            "ping": lambda params: {},
            "logging/setLevel": self._set_level,
            "tools/list": lambda params: {"tools": self.tools.tools()},
            "tools/call": self._call,
            "resources/list": lambda params: self.tools.resources(params.get("cursor")),
            "resources/templates/list": lambda params: self.tools.templates(),
            "resources/read": self._read,
        }

    def receive(self, data: bytes | str) -> list[dict]:
        """Answer one message: the log notifications it caused, then its response (MP1, MP5).

        Returns [] for a notification or a client's response. Never raises.
        """
        message, refused = parse(data)
        return [refused] if message is None else self.answer(message)

    def answer(self, message: dict) -> list[dict]:
        """Answer one message `parse` read, as `receive` does (MP1, MP5). Never raises."""
        if "method" not in message and ("result" in message or "error" in message):
            return []  # a response to a request this server never sends, whatever its id
        if "id" not in message:
            self._notified(message)
            return []
        request_id = message["id"]
        if not _valid_id(request_id):
            return [
                error_object(
                    None,
                    INVALID_REQUEST,
                    "Invalid Request: MP7: an id is an integer or a string of Unicode text",
                )
            ]
        notes = _Notes(self.level)
        recuris = logging.getLogger("recuris")
        recuris.addHandler(notes)
        try:
            with _heard(self.level):
                response = self._answer(message, request_id)
        finally:
            recuris.removeHandler(notes)
        return [*map(_notification, notes.records), response]

    def _answer(self, message: dict, request_id: object) -> dict:
        method = message.get("method")
        params = message.get("params", {})
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            return error_object(
                request_id,
                INVALID_REQUEST,
                'Invalid Request: needs "jsonrpc": "2.0" and a text "method"',
            )
        if not isinstance(params, dict):
            return error_object(request_id, INVALID_PARAMS, "Invalid params: params are an object")
        if method not in self.methods:
            return error_object(request_id, METHOD_NOT_FOUND, f"Method not found: {method[:100]!r}")
        if self.version is None and method not in ("initialize", "ping"):
            return error_object(request_id, INVALID_REQUEST, "Invalid Request: initialize first")
        try:
            return {"jsonrpc": "2.0", "id": request_id, "result": self.methods[method](params)}
        except RequestError as error:
            return error_object(request_id, error.code, error.message)
        except Exception:  # MP4: said in words here; the traceback goes to the log alone
            log.exception("%s failed", method)
            return error_object(request_id, INTERNAL_ERROR, "Internal error: see the server's log")

    def _notified(self, message: dict) -> None:
        # MP1: a notification is never answered; "initialized" and "cancelled" need nothing.
        if message.get("method") not in ("notifications/initialized", "notifications/cancelled"):
            log.debug("notification ignored: %.100r", message.get("method"))

    def _initialize(self, params: dict) -> dict:
        if self.version is not None:
            raise RequestError(INVALID_REQUEST, "Invalid Request: already initialized")
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            raise RequestError(INVALID_PARAMS, "Invalid params: protocolVersion is text")
        self.version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return {
            "protocolVersion": self.version,
            "capabilities": {
                "logging": {},
                "tools": {"listChanged": False},
                "resources": {"subscribe": False, "listChanged": False},
            },
            "serverInfo": {"name": "recuris", "version": _server_version()},
            "instructions": INSTRUCTIONS,
        }

    def _set_level(self, params: dict) -> dict:
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise RequestError(
                INVALID_PARAMS, f"Invalid params: level is one of {list(LOG_LEVELS)}"
            )
        self.level = LOG_LEVELS[level]
        return {}

    def _call(self, params: dict) -> dict:
        name = params.get("name")
        arguments = params.get("arguments", {})
        if not isinstance(name, str):
            raise RequestError(INVALID_PARAMS, "Invalid params: a tool call names its tool")
        if not isinstance(arguments, dict):
            raise RequestError(INVALID_PARAMS, "Invalid params: a tool's arguments are an object")
        return self.tools.call(name, arguments)

    def _read(self, params: dict) -> dict:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RequestError(INVALID_PARAMS, "Invalid params: resources/read needs a text uri")
        return self.tools.read(uri)


def _valid_id(request_id: object) -> bool:
    # JSON-RPC allows null too; MCP does not: a request's id is a string or an integer. A
    # string holding a lone surrogate could only come back altered (MP6), so it is none (MP7).
    if isinstance(request_id, str):
        return not unicode_problem(request_id)
    return isinstance(request_id, int) and not isinstance(request_id, bool)


def oversized(size: int) -> dict:
    """Return the error that refuses a message of `size` bytes, over the limit (MP3)."""
    limit = f"{MAX_MESSAGE_BYTES:,}-byte limit"
    return error_object(
        None, INVALID_REQUEST, f"Invalid Request: {size:,} bytes is over the {limit}"
    )


def error_object(request_id: object, code: int, message: str) -> dict:
    """Return the JSON-RPC error response with this id, code and message."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _notification(record: logging.LogRecord) -> dict:
    """Return a log record as MCP's `notifications/message` (MP5)."""
    level = max(
        (name for name, number in LOG_LEVELS.items() if number <= record.levelno),
        key=LOG_LEVELS.get,
        default="debug",
    )
    params = {"level": level, "logger": record.name, "data": record.getMessage()}
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": params}
