"""One POST to a model endpoint, bounded in time and size, that keeps the key at its origin.

Document 000 §4.3 replaces the stub `default_llm` with a model call; this is the wire under
`llm_http`, on `http.client`. `urlopen(timeout=...)` bounds each socket read, not the call (a
server dripping a byte at a time holds it for ever), reads any body whole, and follows a
redirect to another host with the Authorization header: `post` does none of these.

Invariants:
    HT1 `post` ends by its `Deadline`: connecting, sending, and every read of the status line,
        headers and body waits at most the time left, so a slow drip is cut off (`LLMTimeout`).
    HT2 at most `max_reply_bytes` of a body are read; a larger body is `LLMReplyTooLarge`, and a
        Content-Length over the limit is refused before any of the body is read.
    HT3 the headers (and the key in them) go only to the origin of the URL `post` was given:
        a redirect to another scheme, host or port is `LLMRedirectError` and sends nothing; a
        redirect within the origin is followed, at most `MAX_REDIRECTS` times.
    HT4 every failure of `post` is an `LLMError` subclass: refused or dropped connection, a reply
        that is not HTTP or ends early, a timeout; no `http.client` or socket error escapes.
"""

import functools
import http.client
import io
import time
import urllib.parse
from email.message import Message
from typing import NamedTuple

MAX_REDIRECTS = 3
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
SHORTEST_SECRET_FRAGMENT = 8  # a shorter piece of a key is too common to hide and too short to use


class LLMError(Exception):
    """A model endpoint could not give an answer (LM3, HT4)."""


class LLMConnectionError(LLMError):
    """The endpoint could not be reached, or dropped the connection before it answered."""


class LLMTimeout(LLMError):
    """The endpoint did not answer in full within the timeout (HT1)."""


class LLMHTTPError(LLMError):
    """The endpoint answered with an HTTP error status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class LLMInputTooLarge(LLMError):
    """The input is more than the endpoint takes: retrying cannot help (`status` None: not sent)."""

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(f"input too large{f' (HTTP {status})' if status else ''}: {message}")
        self.status = status


class LLMResponseError(LLMError):
    """The endpoint answered, but not with the HTTP or JSON the API promises."""


class LLMReplyTooLarge(LLMResponseError):
    """The reply is longer than `max_reply_bytes` (HT2)."""


class LLMRedirectError(LLMError):
    """The endpoint redirected where the key must not follow, or redirected too often (HT3)."""


def redact(text: str, secret: str | None, limit: int) -> str:
    """Replace the secret and each piece of it of 8 characters or more; cut to `limit` (LM1)."""
    # Redacting before the cut leaves no part of the key
    # showing; a key starting before `limit` ends here:
    text = text[: limit + len(secret or "")]
    if secret:
        for length in range(len(secret), min(SHORTEST_SECRET_FRAGMENT, len(secret)) - 1, -1):
            for start in range(
                len(secret) - length + 1
            ):  # longest first, so the whole key is one mark
                text = text.replace(secret[start : start + length], "***")
    return text[:limit]


class Deadline:
    """The monotonic instant by which one call must end, and what the call is doing now (HT1)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.stage = "starting"

    def left(self) -> float:
        """Return the seconds left; raise LLMTimeout, naming the stage, once there are none."""
        remaining = self.end - time.monotonic()
        if remaining <= 0:
            raise self.expired()
        return remaining

    def expired(self) -> LLMTimeout:
        return LLMTimeout(f"no complete answer within {self.seconds:g} s (timed out {self.stage})")


class Reply(NamedTuple):
    """What the endpoint answered: any status, its headers, and the body read in full."""

    status: int
    headers: Message
    body: bytes


def origin(url: str) -> str | None:
    """Return `scheme://host:port` of an http(s) URL, port explicit; None for any other URL."""
    parts = urllib.parse.urlsplit(url)
    scheme = url.partition(":")[0].lower()
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:  # a port that is not a number from 0 to 65535
        return None
    return (
        f"{scheme}://{parts.hostname}:{port}"
        if scheme in ("http", "https") and parts.hostname
        else None
    )


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    deadline: Deadline,
    max_reply_bytes: int,
    secret: str | None = None,
) -> Reply:
    """POST `body`, following same-origin redirects; return the reply or raise an LLMError."""
    home = origin(url) or ""  # the clients check their base URL when they are made
    for _ in range(MAX_REDIRECTS + 1):
        reply = _post_once(url, body, headers, deadline, max_reply_bytes, secret)
        location = reply.headers.get("Location")
        if reply.status not in REDIRECT_STATUSES or not location:
            return reply
        # Percent-encode what http.client refuses in a path (spaces, other scripts), as browsers do:
        target = urllib.parse.quote(
            urllib.parse.urljoin(url, location), safe="/:?#[]@!$&'()*+,;=%~"
        )
        moved = origin(target)
        if moved != home:
            raise LLMRedirectError(
                redact(
                    f"{home} redirected to {moved or 'a URL that is not http(s)'}; refused, so the "
                    "key goes to no other origin (set base_url to the new address if it is to be "
                    "trusted)",
                    secret,
                    300,
                )
            )
        url = target
    raise LLMRedirectError(f"{home} redirected more than {MAX_REDIRECTS} times")


def _post_once(
    url: str,
    body: bytes,
    headers: dict[str, str],
    deadline: Deadline,
    max_reply_bytes: int,
    secret: str | None,
) -> Reply:
    parts = urllib.parse.urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    kind = (
        http.client.HTTPSConnection
        if parts.scheme.lower() == "https"
        else http.client.HTTPConnection
    )
    deadline.stage = "while connecting"
    connection = kind(parts.hostname, parts.port, timeout=deadline.left())
    connection.response_class = functools.partial(_DeadlineResponse, deadline=deadline)
    try:
        connection.connect()
        deadline.stage = "while sending the request"
        connection.sock.settimeout(deadline.left())  # sendall's timeout bounds the whole send
        connection.request("POST", path, body, headers)
        deadline.stage = "waiting for the reply"
        with connection.getresponse() as response:
            deadline.stage = "while reading the reply"
            return Reply(response.status, response.headers, _read_body(response, max_reply_bytes))
    except TimeoutError:
        raise deadline.expired() from None
    except http.client.IncompleteRead as error:
        raise LLMResponseError(
            f"the reply ended {error.expected} bytes short of its length"
        ) from None
    except http.client.RemoteDisconnected:
        raise LLMConnectionError(f"{origin(url)} closed the connection without replying") from None
    except http.client.HTTPException as error:
        raise LLMResponseError(
            f"not an HTTP reply ({type(error).__name__}: {redact(str(error), secret, 120)})"
        ) from None
    except OSError as error:
        lost = "cannot reach" if deadline.stage == "while connecting" else "lost the connection to"
        detail = redact(str(error), secret, 200)
        raise LLMConnectionError(f"{lost} {origin(url)} {deadline.stage}: {detail}") from None
    finally:
        connection.close()


def _read_body(response: http.client.HTTPResponse, limit: int) -> bytes:
    if response.length is not None:  # a Content-Length, so the size is known before reading
        if response.length > limit:
            raise LLMReplyTooLarge(
                f"the reply declares {response.length} bytes; max_reply_bytes is {limit}"
            )
        return response.read()  # IncompleteRead if the body stops short
    body = bytearray()
    while len(body) <= limit:
        chunk = response.read(min(65536, limit + 1 - len(body)))
        if not chunk:
            break
        body += chunk
    if len(body) > limit:
        raise LLMReplyTooLarge(f"the reply is longer than max_reply_bytes ({limit})")
    return bytes(body)


class _DeadlineResponse(http.client.HTTPResponse):
    """An HTTP response whose every socket read waits at most until the deadline (HT1)."""

    def __init__(self, sock, *args, deadline: Deadline, **kwargs) -> None:
        super().__init__(sock, *args, **kwargs)
        self.fp = io.BufferedReader(_DeadlineReader(sock, self.fp.detach(), deadline))


class _DeadlineReader(io.RawIOBase):
    """Read from a socket's file, first setting its timeout to the time the deadline leaves."""

    def __init__(self, sock, raw: io.RawIOBase, deadline: Deadline) -> None:
        self.sock = sock
        self.raw = raw
        self.deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int | None:
        # The per-read timeout shrinks as the call goes on
        self.sock.settimeout(self.deadline.left())
        return self.raw.readinto(buffer)

    def close(self) -> None:
        # Releases the socket file's hold, so closing the connection closes the socket
        self.raw.close()
        super().close()
