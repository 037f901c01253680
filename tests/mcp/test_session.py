"""Example tests for recuris.mcp.session: one answer per request, none per notification."""

import json
import logging

import pytest
from mcp_client import VERSION, PipeClient, answer, call, initialize, request, started
from outages import Outage

from recuris import MemoryManager
from recuris.mcp.memory_tools import MemoryTools
from recuris.mcp.session import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_MESSAGE_BYTES,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_VERSIONS,
    Session,
    encode,
)


def fresh() -> Session:
    return Session(MemoryTools(MemoryManager(), "ana"))


def error_of(response: dict) -> tuple[object, int]:
    return response["id"], response["error"]["code"]


def test_a_request_gets_one_response_with_its_id():
    """MP1: a request is answered once, with its own id, string or integer."""
    session = started()
    assert session.receive(json.dumps(request("a-7", "ping"))) == [
        {"jsonrpc": "2.0", "id": "a-7", "result": {}}
    ]


def test_notifications_and_client_responses_get_no_answer_even_when_malformed():
    """MP1: nothing answers a notification (known, unknown, malformed) or a client's response."""
    session = started()
    for message in [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "no/such/notification", "params": [1]},
        {"method": 42},
        {"jsonrpc": "2.0", "id": 9, "result": {}},
    ]:
        assert session.receive(json.dumps(message)) == []


def test_unreadable_messages_are_answered_with_a_null_id():
    """MP1: bad JSON, a non-object and a bad id are answered with the right code and id null."""
    session = started()
    assert error_of(session.receive(b"{not json")[-1]) == (None, PARSE_ERROR)
    assert error_of(session.receive(b'"ping"')[-1]) == (None, INVALID_REQUEST)
    assert error_of(session.receive(b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}')[-1]) == (
        None,
        INVALID_REQUEST,
    )
    assert error_of(session.receive(b"\xff\xfe")[-1]) == (None, PARSE_ERROR)


def test_an_unknown_method_and_bad_params_are_refused_by_code():
    """MP1: an unknown method is METHOD_NOT_FOUND; params that are not an object, INVALID_PARAMS."""
    session = started()
    assert error_of(answer(session, request(2, "tools/destroy"))) == (2, METHOD_NOT_FOUND)
    bad = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": [1, 2]}
    assert error_of(answer(session, bad)) == (3, INVALID_PARAMS)
    assert error_of(answer(session, {"id": 4, "method": "ping"})) == (4, INVALID_REQUEST)


def test_initialize_echoes_a_supported_version_and_offers_the_newest_otherwise():
    """MP2: the client's version when supported, else the newest the server speaks."""
    for asked, given in [(VERSION, VERSION), ("2025-11-25", "2025-11-25"), ("1999-01-01", None)]:
        response = answer(fresh(), initialize(version=asked))
        assert response["result"]["protocolVersion"] == (given or PROTOCOL_VERSIONS[0])
    capabilities = answer(fresh(), initialize())["result"]["capabilities"]
    assert set(capabilities) == {"tools", "resources", "logging"}


def test_before_initialize_only_ping_is_answered_and_initialize_happens_once():
    """MP2: requests before initialize are refused, ping aside; a second initialize is refused."""
    session = fresh()
    assert answer(session, request(1, "ping"))["result"] == {}
    assert error_of(answer(session, request(2, "tools/list"))) == (2, INVALID_REQUEST)
    assert "result" in answer(session, initialize(3))
    assert error_of(answer(session, initialize(4))) == (4, INVALID_REQUEST)
    bad_version = request(5, "initialize", {"protocolVersion": 20250618})
    assert error_of(answer(fresh(), bad_version)) == (5, INVALID_PARAMS)


def test_a_message_over_the_limit_is_refused_unread_and_a_batch_is_refused():
    """MP3: over MAX_MESSAGE_BYTES is INVALID_REQUEST, saying the limit; so is a batch."""
    session = started()
    query = "x" * MAX_MESSAGE_BYTES
    [refused] = session.receive(json.dumps(call(2, "search_memory", {"query": query})))
    assert error_of(refused) == (None, INVALID_REQUEST)
    assert "1,048,576-byte limit" in refused["error"]["message"]
    batch = json.dumps([request(3, "ping"), request(4, "ping")])
    assert error_of(session.receive(batch)[-1]) == (None, INVALID_REQUEST)


def test_an_unexpected_failure_is_an_internal_error_without_a_traceback(caplog):
    """MP4: a method that raises is answered INTERNAL_ERROR, no class named; the log has it."""

    class Broken(MemoryTools):
        def tools(self):
            raise RuntimeError("secret internals at 0xdeadbeef")

    session = Session(Broken(MemoryManager(), "ana"))
    session.receive(json.dumps(initialize()))
    with caplog.at_level(logging.ERROR):
        response = answer(session, request(2, "tools/list"))
    assert error_of(response) == (2, INTERNAL_ERROR)
    message = response["error"]["message"]
    assert "RuntimeError" not in message and "0xdeadbeef" not in message
    assert "Traceback" not in json.dumps(response)
    assert "secret internals" in caplog.text


def test_warnings_during_a_request_come_before_its_response_as_log_notifications():
    """MP5: a degraded recall's warning is a notifications/message, then the response."""
    store = Outage()
    session = started(MemoryManager(store))
    store.down = "all"
    *notes, response = session.receive(json.dumps(call(2, "search_memory", {"query": "region"})))
    assert [note["method"] for note in notes] == ["notifications/message"]
    assert notes[0]["params"]["level"] == "warning"
    assert "memory unavailable" in notes[0]["params"]["data"]
    assert response["id"] == 2 and response["result"]["structuredContent"]["degraded"] is True


def test_the_clients_log_level_filters_the_notifications():
    """MP5: after logging/setLevel "error", a warning is no longer sent; a bad level is refused."""
    store = Outage()
    session = started(MemoryManager(store))
    assert answer(session, request(2, "logging/setLevel", {"level": "error"}))["result"] == {}
    assert error_of(answer(session, request(3, "logging/setLevel", {"level": "loud"}))) == (
        3,
        INVALID_PARAMS,
    )
    store.down = "all"
    replies = session.receive(json.dumps(call(4, "search_memory", {"query": "region"})))
    assert [reply.get("id") for reply in replies] == [4]


def test_every_answer_encodes_as_one_line_of_utf8():
    """MP6: newlines and lone surrogates in an answer still make one line of valid UTF-8."""
    line = encode({"text": "two\nlines \ud800 and \u2028"})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line.decode("utf-8"))["text"] == "two\nlines \ufffd and \u2028"


class _Logging:
    """Tools whose listing logs one info record and one warning from a recuris logger."""

    def tools(self) -> list:
        logging.getLogger("recuris.test").info("an info record")
        logging.getLogger("recuris.test").warning("a warning record")
        return []


def test_records_below_warning_are_sent_once_the_client_asks_for_them():
    """MP5: after logging/setLevel "debug", an info record of recuris is sent, whatever the
    logger's own level; the logger gets its level back afterwards."""
    recuris = logging.getLogger("recuris")
    before = recuris.level
    session = Session(_Logging())
    answer(session, initialize())
    answer(session, request(2, "logging/setLevel", {"level": "debug"}))
    *notes, response = session.receive(json.dumps(request(3, "tools/list")))
    assert [note["params"]["level"] for note in notes] == ["info", "warning"]
    assert response["id"] == 3 and recuris.level == before


def test_a_client_response_with_a_null_id_gets_no_answer():
    """MP1: a client's response, even an error with a null id, is not answered."""
    session = fresh()
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "x"}}
    assert session.receive(json.dumps(error)) == []
    assert session.receive(json.dumps({"jsonrpc": "2.0", "id": None, "result": {}})) == []


def test_an_answer_holding_nan_encodes_as_strict_json():
    """MP6: an answer JSON cannot carry (NaN) is sent as an internal error with its id."""
    line = encode({"jsonrpc": "2.0", "id": 7, "result": {"score": float("nan")}})
    assert error_of(json.loads(line, parse_constant=lambda name: pytest.fail(name))) == (
        7,
        INTERNAL_ERROR,
    )


def test_a_message_holding_nan_is_not_json():
    """MP1: NaN and Infinity, which JSON has not, make a message unreadable (a parse error)."""
    session = started(MemoryManager())
    sent = '{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": NaN}}'
    assert error_of(session.receive(sent)[0]) == (None, PARSE_ERROR)


@pytest.mark.processes
@pytest.mark.slow
def test_line_breaks_json_leaves_raw_are_escaped_in_what_the_server_writes(tmp_path):
    """MP6, T4: U+0085, U+2028 and U+2029 in memories leave stdio escaped: one message a line."""
    client = PipeClient(tmp_path / "m.db")
    content = "deploy notes:\u2028region eu-west\u2029host stage-7\u0085done"
    asked = [
        initialize(),
        call(2, "remember", {"content": content}),
        call(3, "search_memory", {"query": "deploy notes"}),
        request(4, "resources/read", {"uri": "memory://recent"}),
        request(5, "ping"),
    ]
    lines = b"".join(json.dumps(message).encode() + b"\n" for message in asked)
    output, errors = client.process.communicate(lines, timeout=30)
    written = output.decode("utf-8")
    assert not {"\u0085", "\u2028", "\u2029"} & set(written)
    replies = [json.loads(line) for line in written.splitlines()]
    assert [reply["id"] for reply in replies] == [1, 2, 3, 4, 5]
    [found] = json.loads(replies[2]["result"]["content"][0]["text"])["results"]
    assert found["content"] == content and client.process.returncode == 0


def test_an_id_that_is_not_unicode_text_is_refused_not_altered():
    """MP7: the id "\\ud800" (a lone surrogate) is refused as INVALID_REQUEST with id null."""
    session = started()
    sent = b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}'
    assert error_of(session.receive(sent)[-1]) == (None, INVALID_REQUEST)
    assert "MP7" in session.receive(sent)[-1]["error"]["message"]
    kept = b'{"jsonrpc": "2.0", "id": "\\ud83d\\ude00 \\u2028", "method": "ping"}'
    assert session.receive(kept)[-1]["id"] == "\U0001f600 \u2028"
