"""Example tests for recuris.llm.model_replies: a model's reply read without trusting its shape
(MR1, MR2).
"""

import json
import math

import pytest
from stub_openai import (
    RawServer,
    StubServer,
    chat,
    embedding_reply,
    reply_head,
    tool_reply,
)

from recuris.llm.llm_http import (
    LLMResponseError,
    OpenAICompatibleEmbeddings,
)


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


def test_a_tool_call_comes_back_in_the_loops_format(stub):
    """MR1: a tool_calls reply becomes {"function_call": ...} text."""
    stub.script = [("tool", "search_memory", {"query": "deploy region"})]
    reply = json.loads(chat(stub)("hi"))
    assert reply["function_call"]["name"] == "search_memory"
    assert json.loads(reply["function_call"]["arguments"]) == {"query": "deploy region"}


def test_tool_call_arguments_sent_as_an_object_are_accepted(stub):
    """MR1: arguments given as a JSON object instead of JSON text still make a loop-format call."""
    call = {"function": {"name": "search_memory", "arguments": {"query": "q"}}}
    stub.script = [("json", tool_reply([call]))]
    reply = json.loads(chat(stub)("hi"))
    assert json.loads(reply["function_call"]["arguments"]) == {"query": "q"}


@pytest.mark.parametrize(
    "body, message",
    [
        (
            embedding_reply((0, [1.0, math.nan]), (1, [1.0, 2.0])),
            "data\\[0\\].embedding is not a list of finite",
        ),
        (
            b'{"data": [{"index": 0, "embedding": [1.0, Infinity]}, '
            b'{"index": 1, "embedding": [1.0, 2.0]}]}',
            "data\\[0\\].embedding is not a list of finite",
        ),
        (embedding_reply((0, [1.0, 2.0]), (0, [1.0, 2.0])), "index 0 appears twice"),
        (embedding_reply((0, [1.0, 2.0])), "indexes \\[1\\] are missing"),
        (embedding_reply((0, [1.0, 2.0]), (2, [1.0, 2.0])), "no index from 0 to 1"),
        (embedding_reply((0, [1.0, 2.0]), (True, [1.0, 2.0])), "no index from 0 to 1"),
        (embedding_reply((0, [1.0, 2.0]), (1, [1.0, 2.0, 3.0])), "differ in length: \\[2, 3\\]"),
        (
            embedding_reply((0, [1.0, 2.0]), (1, ["1", 2.0])),
            "data\\[1\\].embedding is not a list of finite",
        ),
        (
            embedding_reply((0, [1.0, 2.0]), (1, [])),
            "data\\[1\\].embedding is not a list of finite",
        ),
        (b'{"data": {"0": [1.0]}}', "no data list"),
    ],
)
def test_a_malformed_embedding_reply_is_a_response_error(body, message):
    """MR2, LM5: NaN, infinity, a repeated or missing
    index, or vectors of two lengths are refused."""

    def respond(server, connection):
        connection.sendall(reply_head(Content_Length=len(body)) + body)

    with RawServer(respond) as server:
        with pytest.raises(LLMResponseError, match=message):
            OpenAICompatibleEmbeddings(server.url, "embed-model").embed(["one", "two"])
