"""Example tests for recuris.mcp.transports: stdio lines, and Streamable HTTP on 127.0.0.1."""

import http.client
import io
import json
import select
import socket
import struct
import subprocess
import sys
import threading

import pytest
from mcp_client import ROOT, call, initialize, request
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


@pytest.mark.parametrize(
    "origin", ["http://[::1", "http://localhost]:3000", "http://[evil.example.com"]
)
def test_an_origin_that_is_no_url_is_refused_as_foreign(served, origin):
    """TP3: an Origin that does not parse as a URL is 403, on loopback and with allow_remote."""
    for server in (served(), served(tokens=Tokens({ANA: "ana"}), allow_remote=True)):
        status, _, body = server.send(
            body=initialize(), Origin=origin, Authorization=f"Bearer {ANA}"
        )
        assert status == 403 and "DNS rebinding" in json.loads(body)["error"]["message"]
        assert server.server.endpoint.sessions == {}


SERVE = """
import json, sys
from recuris import MemoryManager
from recuris.mcp.memory_tools import MemoryTools
from recuris.mcp.session import Session
from recuris.mcp.transports import Endpoint, serve_http

manager = MemoryManager()
options = json.loads(sys.argv[1])
endpoint = Endpoint(lambda user: Session(MemoryTools(manager, user)), user="ana", **options)
server = serve_http(endpoint, "127.0.0.1", 0)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


class Child:
    """An endpoint served by a child process on 127.0.0.1 with the given options."""

    def __init__(self, **options) -> None:
        command = [sys.executable, "-c", SERVE, json.dumps(options)]
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.port = int(self.process.stdout.readline())

    def errors(self) -> bytes:
        """Stop the server; return what it wrote on standard error."""
        self.process.kill()
        return self.process.communicate(timeout=30)[1]


@pytest.fixture
def child():
    """Start child servers for one test; stop them after it."""
    started = []

    def serve(**options) -> Child:
        started.append(Child(**options))
        return started[-1]

    yield serve
    for server in started:
        server.errors()


def opened(port: int, address: str = "127.0.0.1") -> socket.socket:
    """Connect from a loopback address and send the start of a request, never its end."""
    client = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(address, 0))
    client.sendall(b"P")
    return client


def closed_by_server(client: socket.socket, wait: float = 10) -> bool:
    """Tell whether the server closes the connection, unanswered, within `wait` seconds."""
    client.settimeout(wait)
    try:
        return client.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def still_open(client: socket.socket) -> bool:
    """Tell whether nothing, not even its end, has come on the connection yet."""
    return select.select([client], [], [], 0)[0] == []


def answered(port: int, address: str = "127.0.0.1") -> int:
    """Send an initialize as a client does, from a loopback address; return the status."""
    connection = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=30, source_address=(address, 0)
    )
    connection.request("POST", "/mcp", body=json.dumps(initialize()))
    status = connection.getresponse().status
    connection.close()
    return status


@pytest.mark.processes
@pytest.mark.slow
def test_a_request_sent_a_byte_at_a_time_loses_its_connection_at_its_deadline(child):
    """TP8: bytes that keep coming do not stretch a request's arrival past the timeout."""
    port = child(timeout=1.0).port
    request_bytes = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Pad: " + b"x" * 200
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    # A byte every 0.1 s, far within the timeout of each read: at most 20 s of them.
    for byte in request_bytes:
        try:
            client.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            break
        if not still_open(client) or closed_by_server(client, wait=0.1):
            break
    else:
        pytest.fail("the whole drip was read: its arrival had no deadline")
    assert closed_by_server(client)
    client.close()
    assert answered(port) == 200


@pytest.mark.processes
@pytest.mark.slow
def test_past_its_addresss_cap_a_connection_closes_that_addresss_oldest_waiting_one(child):
    """TP9: a 5th and 6th connection from one address (cap 4) close its two oldest waiting
    ones; a client from that address is answered; another address's connections stay."""
    port = child(timeout=60.0, max_connections=8, max_connections_per_address=4).port
    others = [opened(port, "127.0.0.3") for _ in range(2)]
    mine = [opened(port, "127.0.0.2") for _ in range(6)]
    assert closed_by_server(mine[0]) and closed_by_server(mine[1])
    assert answered(port, "127.0.0.2") == 200
    assert closed_by_server(mine[2])
    assert all(still_open(client) for client in mine[3:] + others)
    for client in mine + others:
        client.close()


@pytest.mark.processes
@pytest.mark.slow
def test_past_the_cap_in_all_a_connection_closes_the_busiest_addresss_oldest_waiting_one(
    child,
):
    """TP9: with 4 open in all (cap 4), a new address's connection closes the oldest waiting
    one of the address holding the most, not the oldest of all."""
    port = child(timeout=60.0, max_connections=4, max_connections_per_address=3).port
    first = opened(port, "127.0.0.3")
    busiest = [opened(port, "127.0.0.2") for _ in range(3)]
    newest = opened(port, "127.0.0.4")
    assert closed_by_server(busiest[0])
    assert answered(port, "127.0.0.5") == 200
    assert closed_by_server(busiest[1])
    assert all(still_open(client) for client in [first, busiest[2], newest])
    for client in [first, *busiest, newest]:
        client.close()



def test_when_every_connection_is_being_answered_a_new_one_is_closed_unanswered():
    """TP9: past the cap, with no connection waiting for its request, the new one is closed
    unanswered; the one being answered is not closed, and gets its answer."""
    entered = threading.Event()
    release = threading.Event()

    def open_session(user: str) -> Session:
        entered.set()
        release.wait(10)  # the first connection is being answered until the test says
        return Session(MemoryTools(MemoryManager(), user))

    server = Served(Endpoint(open_session, user="ana", max_connections=1))
    statuses = []
    first = threading.Thread(target=lambda: statuses.append(server.send(body=initialize())[0]))
    first.start()
    try:
        assert entered.wait(10)
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as late:
            assert closed_by_server(late)
    finally:
        release.set()
        first.join(10)
        server.close()
    assert statuses == [200]

@pytest.mark.processes
@pytest.mark.slow
def test_with_the_defaults_a_client_is_answered_while_300_connections_drip(child):
    """TP8, TP9: 300 connections each sending a byte at a time do not keep a client from
    its answer; all but MAX_CONNECTIONS_PER_ADDRESS of them are closed."""
    port = child().port
    dripping = [opened(port) for _ in range(300)]
    for client in dripping:
        try:
            client.sendall(b"O")
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed already, to make room
    assert answered(port) == 200
    kept = transports.MAX_CONNECTIONS_PER_ADDRESS
    assert all(closed_by_server(client) for client in dripping[: len(dripping) - kept])
    for client in dripping:
        client.close()


@pytest.mark.processes
@pytest.mark.slow
def test_a_client_that_resets_its_connection_mid_request_leaves_no_traceback(child):
    """TP8: a connection reset by its client ends quietly; the server answers the next."""
    server = child()
    for _ in range(5):
        client = opened(server.port)
        # A linger of 0 s makes close send a reset, not an orderly end.
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
        assert answered(server.port) == 200
    assert b"Traceback" not in server.errors()
