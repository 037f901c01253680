"""Example tests for recuris.llm.http_transport: one POST, bounded in time and size, the key kept at
its origin, against raw servers on the loopback interface (HT1-HT4).
"""

import pytest
from stub_openai import (
    KEY,
    RawServer,
    StubServer,
    chat,
    failure,
    raw_chat,
    reply_head,
)

from recuris.llm.llm_http import (
    LLMConnectionError,
    LLMRedirectError,
    LLMReplyTooLarge,
    LLMResponseError,
    LLMTimeout,
)


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


# Counted, never timed: a drip of a byte every 50 ms, or a flood of FLOOD chunks of 64 KiB, that
# the server could send in full only to a client that let it, shows a call was cut off.
FLOOD = 1000  # 65 MB: more than the loopback's socket buffers hold, far past any limit here


def test_a_body_dripped_a_byte_at_a_time_is_cut_off_at_the_timeout():
    """HT1: a server sending one byte every 50 ms cannot stretch a 0.5 s timeout."""
    body = b"x" * 1000  # 50 s of drip at the least

    def respond(server, connection):
        connection.sendall(reply_head(Content_Length=len(body)))
        server.drip(connection, body, 0.05)

    with RawServer(respond) as server:
        error = failure(raw_chat(server, timeout=0.5))
    assert isinstance(
        error, LLMTimeout
    ) and "within 0.5 s (timed out while reading the reply)" in str(error)
    assert server.dripped < len(body)


def test_headers_dripped_a_byte_at_a_time_are_cut_off_at_the_timeout():
    """HT1: a status line and headers that arrive one
    byte every 50 ms end the call at the timeout."""
    head = reply_head(X_Padding="p" * 200)  # 13 s of drip at the least

    def respond(server, connection):
        server.drip(connection, head, 0.05)

    with RawServer(respond) as server:
        error = failure(raw_chat(server, timeout=0.5))
    assert isinstance(error, LLMTimeout) and "waiting for the reply" in str(error)
    assert server.dripped < len(head)


def test_a_declared_body_over_the_limit_is_refused_before_reading():
    """HT2: a Content-Length of 1 GB against max_reply_bytes=100_000 is LLMReplyTooLarge at once."""

    def respond(server, connection):
        server.flood(connection, reply_head(Content_Length=10**9), b"x" * 65536, FLOOD)

    with RawServer(respond) as server:
        error = failure(raw_chat(server, max_reply_bytes=100_000))
    assert isinstance(error, LLMReplyTooLarge) and "declares 1000000000 bytes" in str(error)
    assert server.flooded < FLOOD


@pytest.mark.parametrize("framing", ["close-delimited", "chunked"])
def test_an_undeclared_body_over_the_limit_stops_at_the_limit(framing):
    """HT2: a body of unknown length is read no further
    than max_reply_bytes, whatever the framing."""
    head = (
        reply_head(Connection="close")
        if framing == "close-delimited"
        else reply_head(Transfer_Encoding="chunked")
    )
    chunk = b"x" * 65536 if framing == "close-delimited" else b"10000\r\n" + b"x" * 65536 + b"\r\n"

    def respond(server, connection):
        server.flood(connection, head, chunk, FLOOD)

    with RawServer(respond) as server:
        error = failure(raw_chat(server, max_reply_bytes=100_000))
    assert isinstance(error, LLMReplyTooLarge) and "longer than max_reply_bytes (100000)" in str(
        error
    )
    assert server.flooded < FLOOD


def test_a_redirect_to_another_port_is_refused_and_sends_nothing_there(stub):
    """HT3: a 302 to another origin is LLMRedirectError;
    the other server receives no request, no key."""
    with StubServer() as elsewhere:
        stub.script = [("redirect", 302, f"{elsewhere.url}/chat/completions")]
        with pytest.raises(
            LLMRedirectError, match="redirected to http://127.0.0.1:.*refused"
        ) as raised:
            chat(stub)("hi")
        assert elsewhere.requests == [] and KEY not in str(raised.value)


def test_a_redirect_within_the_origin_is_followed_with_the_key(stub):
    """HT3: a 307 to another path on the same origin is followed, and the key goes with it."""
    stub.script = [("redirect", 307, "/v2/chat/completions"), ("text", "moved")]
    assert chat(stub)("hi") == "moved"
    assert stub.requests[1]["path"] == "/v2/chat/completions"
    assert stub.requests[1]["headers"]["Authorization"] == f"Bearer {KEY}"


def test_a_redirect_to_a_path_with_spaces_is_followed_percent_encoded(stub):
    """HT3, HT4: a same-origin Location holding a space
    or another script is encoded, not a raw error."""
    stub.script = [("redirect", 307, "/v2/chat completions/é"), ("text", "moved")]
    assert (
        chat(stub)("hi") == "moved" and stub.requests[1]["path"] == "/v2/chat%20completions/%C3%A9"
    )


def test_a_redirect_loop_is_an_error(stub):
    """HT3: more than MAX_REDIRECTS same-origin redirects is LLMRedirectError, not a loop."""
    stub.script = [("redirect", 308, "/v1/chat/completions")] * 10
    with pytest.raises(LLMRedirectError, match="more than 3 times"):
        chat(stub)("hi")
    assert len(stub.requests) == 4


@pytest.mark.parametrize(
    "reply, error, message",
    [
        (reply_head(Content_Length=100) + b'{"choi', LLMResponseError, "ended 94 bytes short"),
        (b"", LLMConnectionError, "closed the connection without replying"),
        (b"garbage\r\n\r\n", LLMResponseError, "not an HTTP reply \\(BadStatusLine"),
        (
            b"HTTP/1.1 200 OK\r\n" + b"X-Long: " + b"h" * 70000 + b"\r\n\r\n",
            LLMResponseError,
            "LineTooLong",
        ),
    ],
    ids=["incomplete-read", "remote-disconnected", "bad-status-line", "line-too-long"],
)
def test_a_broken_reply_on_the_wire_is_a_named_llm_error(reply, error, message):
    """HT4: IncompleteRead, RemoteDisconnected,
    BadStatusLine and LineTooLong come back as LLMErrors."""

    def respond(server, connection):
        connection.sendall(reply)

    with RawServer(respond) as server:
        with pytest.raises(error, match=message):
            raw_chat(server, max_retries=0)("hi")
