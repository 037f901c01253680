"""The OpenAI-compatible client against a stub server on the loopback interface (L4-L7)."""

import json
import logging
import socket

import pytest
from stub_openai import StubServer

from recuris import EpisodicMemory, ManualClock, MemoryManager, RecurisAgent, WorkingMemory
from recuris.llm_http import (
    LLMConnectionError,
    LLMHTTPError,
    LLMResponseError,
    LLMTimeout,
    OpenAICompatibleChat,
    OpenAICompatibleEmbeddings,
)
from recuris.mock_environment import MockEnvironment

KEY = "sk-test-SECRET-1234567890"


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


def chat(stub, **options):
    sleeps = options.pop("sleeps", [])
    return OpenAICompatibleChat(stub.url, "stub-model", api_key=KEY, sleep=sleeps.append, **options)


def test_a_prompt_gets_the_assistant_text_and_sends_the_key_as_bearer(stub):
    """The client posts the prompt as a user message and returns the assistant's content."""
    stub.script = [("text", "open the page")]
    assert chat(stub)("what next?") == "open the page"
    request = stub.requests[0]
    assert (
        request["path"] == "/v1/chat/completions" and request["headers"]["Authorization"] == f"Bearer {KEY}"
    )
    assert request["body"] == {"model": "stub-model", "messages": [{"role": "user", "content": "what next?"}]}


def test_429_then_success_retries_with_backoff(stub):
    """L5: a 429 is retried after backoff · 2^n through the injected sleep."""
    stub.script = [("status", 429, "slow down"), ("status", 429, "slow down"), ("text", "ok")]
    sleeps = []
    assert chat(stub, sleeps=sleeps, backoff=0.5)("hi") == "ok" and sleeps == [0.5, 1.0]


def test_5xx_past_the_retries_raises_with_the_servers_message(stub):
    """L5, L6: three 500s with max_retries=2 fail after two sleeps, naming status and message."""
    stub.script = [("status", 500, "overloaded")] * 3
    sleeps = []
    with pytest.raises(LLMHTTPError, match="HTTP 500: overloaded") as raised:
        chat(stub, sleeps=sleeps)("hi")
    assert raised.value.status == 500 and len(sleeps) == 2 and len(stub.requests) == 3


def test_4xx_is_not_retried(stub):
    """L5: a 400 is raised at once, with the server's message."""
    stub.script = [("status", 400, "model not found")]
    with pytest.raises(LLMHTTPError, match="model not found"):
        chat(stub)("hi")
    assert len(stub.requests) == 1


def test_a_closed_port_is_a_connection_error():
    """L6: connection refused is LLMConnectionError."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(LLMConnectionError, match="cannot reach"):
        OpenAICompatibleChat(f"http://127.0.0.1:{port}/v1", "m")("hi")


def test_a_slow_server_times_out(stub):
    """L6: no answer within the timeout is LLMTimeout."""
    stub.script = [("slow", 1.0)]
    with pytest.raises(LLMTimeout, match="within 0.2 s"):
        chat(stub, timeout=0.2)("hi")


@pytest.mark.parametrize("behaviour, message", [(("garbage",), "not JSON"), (("no-choices",), "no choices")])
def test_a_body_that_is_not_a_chat_completion_is_a_response_error(stub, behaviour, message):
    """L6: garbage, or JSON without choices, is LLMResponseError."""
    stub.script = [behaviour]
    with pytest.raises(LLMResponseError, match=message):
        chat(stub)("hi")


def test_the_key_never_shows_in_errors_reprs_or_logs(stub, caplog):
    """L4: a server that echoes the key cannot make it appear in an exception, repr or log."""
    stub.script = [("status", 401, f"invalid key {KEY}")]
    client = chat(stub)
    with caplog.at_level(logging.DEBUG), pytest.raises(LLMHTTPError) as raised:
        client("hi")
    assert KEY not in str(raised.value) and "[redacted]" in str(raised.value)
    assert KEY not in repr(client) and "api_key=<set>" in repr(client) and KEY not in caplog.text


def test_configuration_comes_from_the_environment(stub, monkeypatch):
    """Arguments fall back to OPENAI_BASE_URL, OPENAI_API_KEY and RECURIS_MODEL; none set is an error."""
    monkeypatch.setenv("OPENAI_BASE_URL", stub.url)
    monkeypatch.setenv("RECURIS_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    stub.script = [("text", "ok")]
    assert OpenAICompatibleChat()("hi") == "ok" and stub.requests[0]["body"]["model"] == "env-model"
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(ValueError, match="OPENAI_BASE_URL"):
        OpenAICompatibleChat()


def test_a_tool_call_comes_back_in_the_loops_format(stub):
    """L7: a tool_calls reply becomes {"function_call": ...} text."""
    stub.script = [("tool", "search_memory", {"query": "deploy region"})]
    reply = json.loads(chat(stub)("hi"))
    assert reply["function_call"]["name"] == "search_memory"
    assert json.loads(reply["function_call"]["arguments"]) == {"query": "deploy region"}


def test_the_tool_call_round_trip_through_the_agent(stub):
    """The model asks search_memory over HTTP, the loop answers from memory, the next prompt carries it."""
    manager = MemoryManager(clock=ManualClock(0))
    manager.write("deploy region: eu-west", "ana", level="semantic")
    stub.script = [("tool", "search_memory", {"query": "deploy region"})]
    agent = RecurisAgent.on_manager(manager, "ana", chat(stub), clock=ManualClock(0), threshold=1.0)
    env = MockEnvironment()
    result = agent.run("ship release 9", "release", env, ["deploy to {deploy region}"])
    second_prompt = stub.requests[1]["body"]["messages"][0]["content"]
    assert "## Recalled by search_memory" in second_prompt and "deploy region: eu-west" in second_prompt
    assert result.success and env.executed == ["deploy to eu-west"]


def test_a_whole_run_decided_over_http(stub):
    """Every decision of a RecurisAgent run comes from the stub (a PromptFollowingLLM behind HTTP)."""
    plan = ["open page", "fill email", "submit | solve captcha then submit"]
    site = {"submit": "error: captcha required"}
    agent = RecurisAgent(WorkingMemory(), EpisodicMemory(), chat(stub), clock=ManualClock(0))
    first = agent.run("register an account", "web form", MockEnvironment(site), plan)
    second = agent.run("register another account", "web form", MockEnvironment(site), plan)
    assert (first.success, second.success) == (False, True) and len(stub.requests) == 7


def test_an_http_failure_ends_the_run_as_failed_with_the_reason(stub):
    """A client exception is a failed run with its reason; the episode is still written."""
    stub.script = [("status", 503, "maintenance")] * 3
    agent = RecurisAgent(WorkingMemory(), EpisodicMemory(), chat(stub), clock=ManualClock(0))
    result = agent.run("goal", "type", MockEnvironment())
    assert result.failure_reason == "llm_fn raised LLMHTTPError: HTTP 503: maintenance"
    assert len(agent.episodic) == 1


def test_embeddings_come_in_batches_in_order(stub):
    """Five texts with batch_size 2 are three requests; vectors come back in input order."""
    embedder = OpenAICompatibleEmbeddings(stub.url, "embed-model", batch_size=2)
    texts = ["alpha", "beta", "gamma", "delta", "alpha"]
    vectors = embedder.embed(texts)
    assert len(vectors) == 5 and vectors[0] == vectors[4] != vectors[1]
    assert [len(r["body"]["input"]) for r in stub.requests] == [2, 2, 1]


def test_cosine_retrieval_persists_vectors_and_reloads_without_embedding(stub):
    """B8: episodes retrieved by cosine keep their vectors in the store; a reload embeds nothing."""
    from recuris import Episode, InMemoryStore
    from recuris.scoring import CosineScorer

    embedder, store = OpenAICompatibleEmbeddings(stub.url, "embed-model"), InMemoryStore()
    memory = EpisodicMemory(scorer=CosineScorer(embedder.embed), store=store, user_id="ana")
    for goal in ["deploy the api to staging", "rotate the database passwords"]:
        memory.add_episode(Episode(task_type="ops", goal=goal, status="success"))
    [hit] = memory.retrieve("deploy api staging", top_k=1, threshold=0.3)
    assert hit.episode.goal == "deploy the api to staging"
    calls = len(stub.requests)
    reloaded = EpisodicMemory(scorer=CosineScorer(embedder.embed), store=store, user_id="ana")
    assert len(stub.requests) == calls and len(reloaded) == 2
