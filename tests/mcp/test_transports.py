"""Example tests for recuris.mcp.transports: stdio lines, and Streamable HTTP on 127.0.0.1."""

import http.client
import io
import json
import socket
import threading

import pytest
from mcp_client import call, initialize, request
from outages import Outage

from recuris import MemoryManager
from recuris.mcp import transports
from recuris.mcp.memory_tools import MemoryTools
from recuris.mcp.session import MAX_MESSAGE_BYTES, PROTOCOL_VERSIONS, Session
from recuris.mcp.transports import Endpoint, Tokens, serve_http, serve_stdio

ANA = "a" * 16 + "-ana-token"
BOB = "b" * 16 + "-bob-token"


def lines(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.splitlines()]


def test_stdio_answers_line_by_line_and_writes_nothing_else():
    """TP1: one message per line out, in order; blank lines and notifications are not answered."""
    messages = [initialize(), {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    messages += [request(2, "ping")]
    given = b"\n".join(json.dumps(m).encode() for m in messages) + b"\n\n"
    written = io.BytesIO()
    serve_stdio(Session(MemoryTools(MemoryManager(), "ana")), io.BytesIO(given), written)
    assert [reply["id"] for reply in lines(written.getvalue())] == [1, 2]


def test_stdio_skips_the_rest_of_an_over_long_line_and_reads_on():
    """TP2: a line over the limit is refused without being read whole; the next is answered."""
    over = b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "pad": "' + b"x" * MAX_MESSAGE_BYTES
    given = json.dumps(initialize()).encode() + b"\n" + over + b'"}\n'
    given += json.dumps(request(3, "ping")).encode() + b"\n"
    written = io.BytesIO()
    serve_stdio(Session(MemoryTools(MemoryManager(), "ana")), io.BytesIO(given), written)
    first, refused, last = lines(written.getvalue())
    assert refused["id"] is None and "over the 1,048,576-byte limit" in refused["error"]["message"]
    assert last == {"jsonrpc": "2.0", "id": 3, "result": {}}


class Served:
    """An endpoint served on 127.0.0.1 at a free port, in a thread, for one test."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.server = serve_http(endpoint, "127.0.0.1", 0)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def send(self, method="POST", body=None, **headers) -> tuple[int, dict, bytes]:
        """Send one request; return the status, the headers and the body."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        data = json.dumps(body).encode() if isinstance(body, dict) else body
        sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        sent.update({name.replace("_", "-"): value for name, value in headers.items()})
        connection.request(method, "/mcp", body=data, headers=sent)
        response = connection.getresponse()
        answer = (response.status, dict(response.getheaders()), response.read())
        connection.close()
        return answer

    def open(self, **headers) -> str:
        """Initialize a session; return its id."""
        status, got, body = self.send(body=initialize(), **headers)
        assert status == 200 and json.loads(body)["result"]["protocolVersion"]
        return got["Mcp-Session-Id"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def served():
    opened = []

    def serve(manager=None, **options) -> Served:
        manager = manager or MemoryManager()
        options = options or {"user": "ana"}
        opened.append(Served(Endpoint(lambda user: Session(MemoryTools(manager, user)), **options)))
        return opened[-1]

    yield serve
    for server in opened:
        server.close()


def test_a_session_is_opened_by_initialize_and_carried_by_its_id(served):
    """TP5: initialize gives a session id; a later request carries it and is answered as JSON."""
    server = served()
    session = server.open()
    status, headers, body = server.send(
        body=call(2, "remember", {"content": "the region is eu-west"}), Mcp_Session_Id=session
    )
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert json.loads(body)["result"]["structuredContent"]["stored"] is True
    notified = server.send(
        body={"jsonrpc": "2.0", "method": "notifications/initialized"}, Mcp_Session_Id=session
    )
    assert notified[0] == 202 and notified[2] == b""


def test_a_request_without_a_session_or_with_an_unknown_one_is_refused(served):
    """TP5, TP4: no session id is 400; an id the server did not give is 404."""
    server = served()
    assert server.send(body=request(2, "tools/list"))[0] == 400
    assert server.send(body=request(2, "tools/list"), Mcp_Session_Id="made-up")[0] == 404


def test_an_unsupported_protocol_version_header_is_refused(served):
    """TP5: an MCP-Protocol-Version the server does not speak is 400; a supported one is served."""
    server = served()
    session = server.open()
    for version, status in [("2024-11-05", 400), ("soon", 400), (PROTOCOL_VERSIONS[-1], 200)]:
        sent = server.send(
            body=request(2, "ping"), Mcp_Session_Id=session, MCP_Protocol_Version=version
        )
        assert sent[0] == status


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil.example.com"},
        {"Origin": "http://evil.example.com"},
        {"Origin": "null"},
        {"Host": "attacker.test:8080", "Origin": "http://localhost"},
    ],
)
def test_dns_rebinding_is_refused_before_the_body_is_read(served, headers):
    """TP3: a Host or Origin that is not loopback is 403, and nothing is stored."""
    manager = MemoryManager()
    server = served(manager)
    status, _, body = server.send(body=initialize(), **headers)
    assert status == 403 and "DNS rebinding" in json.loads(body)["error"]["message"]
    assert server.send(body=initialize(), Origin="http://127.0.0.1:3000")[0] == 200


def test_with_tokens_each_request_is_its_tokens_user_alone(served):
    """TP4: no token or a wrong one is 401; a session opened by ana is not found with bob's."""
    manager = MemoryManager()
    manager.write("bob's vault code is 9999", "bob")
    server = served(manager, tokens=Tokens({ANA: "ana", BOB: "bob"}))
    assert server.send(body=initialize())[0] == 401
    assert server.send(body=initialize(), Authorization="Bearer " + "c" * 20)[0] == 401
    session = server.open(Authorization=f"Bearer {ANA}")
    asked = call(2, "search_memory", {"query": "vault code"})
    stolen = server.send(body=asked, Mcp_Session_Id=session, Authorization=f"Bearer {BOB}")
    assert stolen[0] == 404
    status, _, body = server.send(body=asked, Mcp_Session_Id=session, Authorization=f"Bearer {ANA}")
    assert status == 200 and json.loads(body)["result"]["structuredContent"]["results"] == []


def test_tokens_too_short_and_remote_serving_without_them_are_refused():
    """TP4, TP3: a short token is refused; a non-loopback address needs allow_remote and tokens."""
    with pytest.raises(ValueError, match="TP4"):
        Tokens({"short": "ana"})
    with pytest.raises(ValueError, match="TP4"):
        Endpoint(lambda user: None, user="ana", allow_remote=True)
    with pytest.raises(ValueError, match="TP3"):
        serve_http(Endpoint(lambda user: None, user="ana"), "0.0.0.0", 0)


def test_a_body_over_the_limit_or_of_no_declared_length_is_refused_unread(served):
    """TP2: Content-Length over the limit is 413 with the JSON-RPC refusal; none is 411."""
    server = served()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.putrequest("POST", "/mcp")
    connection.putheader("Content-Length", str(MAX_MESSAGE_BYTES + 1))
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 413 and "1,048,576-byte limit" in response.read().decode()
    connection.close()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.putrequest("POST", "/mcp")
    connection.endheaders()
    assert connection.getresponse().status == 411
    connection.close()


def test_get_is_not_offered_and_delete_ends_a_session(served):
    """TP6: GET is 405; DELETE ends the session, which is then not found."""
    server = served()
    session = server.open()
    assert server.send("GET", Mcp_Session_Id=session)[0] == 405
    assert server.send("DELETE", Mcp_Session_Id=session)[0] == 204
    assert server.send(body=request(2, "ping"), Mcp_Session_Id=session)[0] == 404
    assert server.send("DELETE", Mcp_Session_Id=session)[0] == 404


def test_log_notifications_come_as_an_event_stream_before_the_response(served):
    """MP5 over HTTP: a degraded recall's warning and its answer come as two events."""
    store = Outage()
    server = served(MemoryManager(store))
    session = server.open()
    store.down = "all"
    status, headers, body = server.send(
        body=call(2, "search_memory", {"query": "region"}), Mcp_Session_Id=session
    )
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    events = [
        json.loads(line[len(b"data: ") :])
        for line in body.splitlines()
        if line.startswith(b"data: ")
    ]
    assert [event.get("method", event.get("id")) for event in events] == [
        "notifications/message",
        2,
    ]


def test_a_refused_request_ends_its_connection_so_its_unread_body_is_never_read_as_a_request(
    served,
):
    """TP3: after a refusal whose body was left unread, the server closes the connection."""
    server = served()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    body = json.dumps(request(2, "ping")).encode()
    connection.request("POST", "/mcp", body=body, headers={"Origin": "http://evil.example.com"})
    response = connection.getresponse()
    response.read()
    assert response.status == 403 and response.will_close
    connection.close()


def test_every_loopback_address_the_server_binds_is_a_host_it_answers():
    """TP3: one notion of loopback: served on 127.0.0.2, a request with that Host is answered."""
    endpoint = Endpoint(lambda user: Session(MemoryTools(MemoryManager(), user)), user="ana")
    server = serve_http(endpoint, "127.0.0.2", 0)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        connection = http.client.HTTPConnection("127.0.0.2", server.server_address[1], timeout=10)
        connection.request("POST", "/mcp", body=json.dumps(initialize()))
        response = connection.getresponse()
        assert response.status == 200 and response.getheader("Mcp-Session-Id")
        connection.close()
    finally:
        server.shutdown()
        server.server_close()


def test_one_users_sessions_never_close_another_users(served, monkeypatch):
    """TP6: past MAX_SESSIONS a user's own oldest session closes, never another user's."""
    monkeypatch.setattr(transports, "MAX_SESSIONS", 2)
    server = served(tokens=Tokens({ANA: "ana", BOB: "bob"}))
    bobs = server.open(Authorization=f"Bearer {BOB}")
    anas = [server.open(Authorization=f"Bearer {ANA}") for _ in range(3)]
    asked = request(2, "ping")
    assert server.send(body=asked, Mcp_Session_Id=bobs, Authorization=f"Bearer {BOB}")[0] == 200
    kept = [
        server.send(body=asked, Mcp_Session_Id=session, Authorization=f"Bearer {ANA}")[0]
        for session in anas
    ]
    assert kept == [404, 200, 200]


@pytest.mark.parametrize(
    "opening",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
    ],
)
def test_an_initialize_that_fails_or_is_a_notification_opens_no_session(served, opening):
    """TP7: a failed initialize, or one sent as a notification, gives no Mcp-Session-Id."""
    server = served()
    status, headers, _ = server.send(body=opening)
    assert "Mcp-Session-Id" not in headers and status in (200, 202)
    assert server.server.endpoint.sessions == {}


def test_a_client_that_stops_mid_request_loses_its_connection(served):
    """TP8: a connection silent for the endpoint's timeout amid its headers is closed."""
    assert 0 < transports.TIMEOUT_SECONDS < float("inf")
    server = served(user="ana", timeout=0.2)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as client:
        client.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and nothing more
        assert client.recv(1024) == b""  # closed by the server, not by this client's timeout
