"""The OpenAI-compatible client against stub servers on the loopback interface (LM1-LM6)."""

import logging
import math
import socket
import time
from email.utils import formatdate
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from stub_openai import (
    KEY,
    RawServer,
    StubServer,
    chat,
    embedding_reply,
    failure,
    raw_chat,
    reply_head,
    tool_reply,
)

from recuris import (
    AgentSettings,
    EpisodicMemory,
    ManualClock,
    MemoryManager,
    RecurisAgent,
    RetrievalSettings,
    WorkingMemory,
)
from recuris.tour.mock_environment import MockEnvironment
from recuris.llm import llm_http
from recuris.llm.http_transport import redact
from recuris.llm.llm_http import (
    LLMConnectionError,
    LLMHTTPError,
    LLMInputTooLarge,
    LLMResponseError,
    LLMTimeout,
    OpenAICompatibleChat,
    OpenAICompatibleEmbeddings,
)


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


def test_a_prompt_gets_the_assistant_text_and_sends_the_key_as_bearer(stub):
    """LM6: the client posts the prompt as a user message and returns the assistant's content."""
    stub.script = [("text", "open the page")]
    assert chat(stub)("what next?") == "open the page"
    request = stub.requests[0]
    assert (
        request["path"] == "/v1/chat/completions"
        and request["headers"]["Authorization"] == f"Bearer {KEY}"
    )
    assert request["body"] == {
        "model": "stub-model",
        "messages": [{"role": "user", "content": "what next?"}],
        "max_tokens": 512,
        "temperature": 0.0,
    }


def test_429_then_success_retries_with_backoff(stub):
    """LM2: a 429 is retried after backoff · 2^n through the injected sleep."""
    stub.script = [("status", 429, "slow down"), ("status", 429, "slow down"), ("text", "ok")]
    sleeps = []
    assert chat(stub, sleeps=sleeps, backoff=0.5)("hi") == "ok" and sleeps == [0.5, 1.0]


def test_5xx_past_the_retries_raises_with_the_servers_message(stub):
    """LM2, LM3: three 500s with max_retries=2 fail after two sleeps, naming status and message."""
    stub.script = [("status", 500, "overloaded")] * 3
    sleeps = []
    with pytest.raises(LLMHTTPError, match="HTTP 500: overloaded") as raised:
        chat(stub, sleeps=sleeps)("hi")
    assert raised.value.status == 500 and len(sleeps) == 2 and len(stub.requests) == 3


def test_4xx_is_not_retried(stub):
    """LM2: a 400 is raised at once, with the server's message."""
    stub.script = [("status", 400, "model not found")]
    with pytest.raises(LLMHTTPError, match="model not found"):
        chat(stub)("hi")
    assert len(stub.requests) == 1


def test_a_closed_port_is_a_connection_error():
    """LM3: connection refused is LLMConnectionError."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(LLMConnectionError, match="cannot reach"):
        OpenAICompatibleChat(f"http://127.0.0.1:{port}/v1", "m")("hi")


def test_a_slow_server_times_out(stub):
    """LM3: no answer within the timeout is LLMTimeout."""
    stub.script = [("slow", 1.0)]
    with pytest.raises(LLMTimeout, match="within 0.2 s"):
        chat(stub, timeout=0.2)("hi")


@pytest.mark.parametrize(
    "behaviour, message", [(("garbage",), "not JSON"), (("no-choices",), "no choices")]
)
def test_a_body_that_is_not_a_chat_completion_is_a_response_error(stub, behaviour, message):
    """LM3: garbage, or JSON without choices, is LLMResponseError."""
    stub.script = [behaviour]
    with pytest.raises(LLMResponseError, match=message):
        chat(stub)("hi")


def test_the_key_never_shows_in_errors_reprs_or_logs(stub, caplog):
    """LM1: a server that echoes the key cannot make it appear in an exception, repr or log."""
    stub.script = [("status", 401, f"invalid key {KEY}")]
    client = chat(stub)
    with caplog.at_level(logging.DEBUG), pytest.raises(LLMHTTPError) as raised:
        client("hi")
    assert KEY not in str(raised.value) and "***" in str(raised.value)
    assert KEY not in repr(client) and "api_key=<set>" in repr(client) and KEY not in caplog.text


def test_configuration_comes_from_the_environment(stub, monkeypatch):
    """LM3: arguments fall back to OPENAI_BASE_URL,
    OPENAI_API_KEY and RECURIS_MODEL; none set is refused."""
    monkeypatch.setenv("OPENAI_BASE_URL", stub.url)
    monkeypatch.setenv("RECURIS_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    stub.script = [("text", "ok")]
    assert OpenAICompatibleChat()("hi") == "ok" and stub.requests[0]["body"]["model"] == "env-model"
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(ValueError, match="OPENAI_BASE_URL"):
        OpenAICompatibleChat()


def test_the_tool_call_round_trip_through_the_agent(stub):
    """XA1, MR1: a search_memory call over HTTP is
    answered from memory, and the next prompt carries it."""
    manager = MemoryManager(clock=ManualClock(0))
    manager.write("deploy region: eu-west", "ana", level="semantic")
    stub.script = [("tool", "search_memory", {"query": "deploy region"})]
    exact = AgentSettings(retrieval=RetrievalSettings(threshold=1.0))
    agent = manager.agent("ana", chat(stub), settings=exact, clock=ManualClock(0))
    env = MockEnvironment()
    result = agent.run("ship release 9", "release", env, ["deploy to {deploy region}"])
    second_prompt = stub.requests[1]["body"]["messages"][0]["content"]
    assert (
        "## Recalled by search_memory" in second_prompt
        and "deploy region: eu-west" in second_prompt
    )
    assert result.success and env.executed == ["deploy to eu-west"]


def test_a_whole_run_decided_over_http(stub):
    """LM6: every decision of a RecurisAgent run comes
    from the stub (a PromptFollowingLLM behind HTTP)."""
    plan = ["open page", "fill email", "submit | solve captcha then submit"]
    site = {"submit": "error: captcha required"}
    agent = RecurisAgent(WorkingMemory(), EpisodicMemory(), chat(stub), clock=ManualClock(0))
    first = agent.run("register an account", "web form", MockEnvironment(site), plan)
    second = agent.run("register another account", "web form", MockEnvironment(site), plan)
    assert (first.success, second.success) == (False, True) and len(stub.requests) == 7


def test_an_http_failure_ends_the_run_as_failed_with_the_reason(stub):
    """A2: a client exception is a failed run with its reason; the episode is still written."""
    stub.script = [("status", 503, "maintenance")] * 3
    agent = RecurisAgent(WorkingMemory(), EpisodicMemory(), chat(stub), clock=ManualClock(0))
    result = agent.run("goal", "type", MockEnvironment())
    assert result.failure_reason == "llm_fn raised LLMHTTPError: HTTP 503: maintenance"
    assert len(agent.episodic) == 1


def test_embeddings_come_in_batches_in_order(stub):
    """LM5, LM6: five texts with batch_size 2 are
    three requests; vectors come back in input order."""
    embedder = OpenAICompatibleEmbeddings(stub.url, "embed-model", batch_size=2)
    texts = ["alpha", "beta", "gamma", "delta", "alpha"]
    vectors = embedder.embed(texts)
    assert len(vectors) == 5 and vectors[0] == vectors[4] != vectors[1]
    assert [len(r["body"]["input"]) for r in stub.requests] == [2, 2, 1]


def test_cosine_retrieval_persists_vectors_and_reloads_without_embedding(stub):
    """SR4: episodes retrieved by cosine keep their
    vectors in the store; a reload embeds nothing."""
    from recuris import Episode, InMemoryStore
    from recuris.retrieval.scoring import CosineScorer
    from recuris.storage.archives import StoredEpisodes

    embedder = OpenAICompatibleEmbeddings(stub.url, "embed-model")
    store = InMemoryStore()

    def scorer():
        return CosineScorer(embedder.embed)

    memory = StoredEpisodes(store, "ana", scorer)
    for goal in ["deploy the api to staging", "rotate the database passwords"]:
        memory.add_episode(Episode(task_type="ops", goal=goal, status="success"))
    [hit] = memory.retrieve("deploy api staging", top_k=1, threshold=0.3)
    assert hit.episode.goal == "deploy the api to staging"
    calls = len(stub.requests)
    reloaded = StoredEpisodes(store, "ana", scorer)
    assert len(stub.requests) == calls and len(reloaded) == 2


# --- bounded in time (LM4) --------------------------------------------------------------------


def test_retries_share_one_deadline():
    """LM4: 503s that each take 0.2 s, with ten retries allowed, still end the call at 0.5 s."""

    def respond(server, connection):
        time.sleep(0.2)
        body = b'{"error": {"message": "busy"}}'
        connection.sendall(reply_head("503 Service Unavailable", Content_Length=len(body)) + body)

    with RawServer(respond) as server:
        error = failure(raw_chat(server, timeout=0.5, max_retries=10, backoff=0.01))
        requests = server.requests
    # Counted, never timed: a request begins 0.2 s at the least after the one before, so a
    # fourth would begin past the deadline; a deadline per request would make all eleven.
    assert isinstance(error, LLMTimeout) and requests <= 3


def test_a_wait_that_would_pass_the_deadline_is_not_taken(stub):
    """LM4: a Retry-After of 5 s under a 1 s timeout raises the 429 at once, saying why."""
    stub.script = [("status", 429, "slow down", {"Retry-After": "5"}), ("text", "too late")]
    sleeps = []
    with pytest.raises(LLMHTTPError, match="would pass the 1 s timeout"):
        chat(stub, sleeps=sleeps, timeout=1)("hi")
    assert sleeps == [] and len(stub.requests) == 1


# --- Retry-After (LM2) --------------------------------------------------------------------------


@pytest.mark.parametrize("asked, waited", [("3", 3.0), ("0", 0.5), ("soon", 0.5), ("1000", 20.0)])
def test_retry_after_is_honoured_up_to_its_cap_through_sleep(stub, asked, waited):
    """LM2: the wait is Retry-After (at least the back-off,
    at most max_retry_after), slept through `sleep`."""
    stub.script = [("status", 429, "slow down", {"Retry-After": asked}), ("text", "ok")]
    sleeps = []
    assert chat(stub, sleeps=sleeps, max_retry_after=20)("hi") == "ok" and sleeps == [waited]


def test_retry_after_as_an_http_date_is_honoured(stub, monkeypatch):
    """LM2: Retry-After given as an HTTP date 10 s ahead waits 10 s."""
    now = 1_800_000_000.0
    # The client's calendar clock stands still: the date stays 10 s ahead of it however long
    # the reply takes to arrive; its deadline's clock runs as ever.
    still = SimpleNamespace(time=lambda: now, monotonic=time.monotonic)
    monkeypatch.setattr(llm_http, "time", still)
    stub.script = [
        ("status", 503, "later", {"Retry-After": formatdate(now + 10, usegmt=True)}),
        ("text", "ok"),
    ]
    sleeps = []
    assert chat(stub, sleeps=sleeps)("hi") == "ok" and sleeps == [10.0]


# --- which failures are retried (LM2) ---------------------------------------------------------


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_5xx_that_may_pass_is_retried(stub, status):
    """LM2: 500, 502, 503 and 504 with an ordinary message are retried, then answered."""
    stub.script = [("status", status, "busy"), ("text", "ok")]
    assert chat(stub)("hi") == "ok" and len(stub.requests) == 2


def test_501_is_not_retried(stub):
    """LM2: 501 (an endpoint the server does not serve) cannot change, so it is raised at once."""
    stub.script = [("status", 501, "the embeddings endpoint is not enabled")] * 3
    with pytest.raises(LLMHTTPError, match="HTTP 501: the embeddings endpoint") as raised:
        chat(stub)("hi")
    assert raised.value.status == 501 and len(stub.requests) == 1


@pytest.mark.parametrize(
    "status, message",
    [
        (500, "input is too large to process. increase the physical batch size"),
        (500, "the request exceeds the available context size, try increasing it"),
        (413, "payload too large"),
    ],
)
def test_an_input_too_large_is_reported_as_such_and_not_retried(stub, status, message):
    """LM2: a 500 saying the input is too large (llama.cpp's
    words), or a 413, is LLMInputTooLarge at once."""
    stub.script = [("status", status, message)] * 3
    with pytest.raises(LLMInputTooLarge, match=f"input too large \\(HTTP {status}\\)") as raised:
        chat(stub)("hi")
    assert raised.value.status == status and len(stub.requests) == 1


def test_embeddings_report_a_server_side_input_too_large(stub):
    """LM2: the embeddings endpoint's 500 "input is
    too large" is LLMInputTooLarge, not a retried 500."""
    stub.script = [
        ("status", 500, "input is too large to process. increase the physical batch size")
    ] * 3
    with pytest.raises(LLMInputTooLarge, match="physical batch size"):
        OpenAICompatibleEmbeddings(stub.url, "embed-model", sleep=lambda seconds: None).embed(
            ["a long text"]
        )
    assert len(stub.requests) == 1


# --- the key stays home (LM1) -------------------------------------------------------------------


def test_the_key_is_redacted_before_the_message_is_cut(stub):
    """LM1: a key echoed in a plain-text body where the
    300-character cut falls leaves no 8-character piece."""
    stub.script = [("status", 401, ("p" * 270 + f" invalid key {KEY}").encode())]
    with pytest.raises(LLMHTTPError) as raised:
        chat(stub)("hi")
    assert not any(KEY[start : start + 8] in str(raised.value) for start in range(len(KEY) - 7))


def test_pieces_of_the_key_are_redacted(stub):
    """LM1: a server that echoes the key's first and last characters shows neither piece."""
    stub.script = [("status", 401, f"incorrect key {KEY[:12]}...{KEY[-10:]}")]
    with pytest.raises(LLMHTTPError) as raised:
        chat(stub)("hi")
    assert str(raised.value) == "HTTP 401: incorrect key ***...***"


@given(
    st.text("sk-ABCxyz0189", min_size=8, max_size=40),
    st.lists(st.sampled_from(["key", "piece", "filler"]), max_size=12),
    st.integers(0, 120),
)
def test_no_eight_character_piece_of_the_key_survives_redaction(secret, parts, limit):
    """LM1: whatever mixes the key, its pieces and other
    text, redact leaves no 8-character piece of it."""
    pieces = {"key": secret, "piece": secret[2:10], "filler": "error: "}
    text = redact("".join(pieces[part] for part in parts), secret, limit)
    assert len(text) <= limit and not any(secret[i : i + 8] in text for i in range(len(secret) - 7))


# --- only its own errors (LM3) ------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, message",
    [
        ({"choices": [{"message": "just a string"}]}, "choices\\[0\\].message is str"),
        ({"choices": []}, "no choices\\[0\\]"),
        ({"choices": {"0": {}}}, "no choices\\[0\\]"),
        ({"choices": ["text"]}, "no choices\\[0\\]"),
        ({"choices": [{"message": {"role": "assistant"}}]}, "neither text content nor a tool call"),
        ({"choices": [{"message": {"content": 42}}]}, "neither text content nor a tool call"),
        (tool_reply({"function": {"name": "search_memory"}}), "tool_calls is dict, not a list"),
        (tool_reply(7), "tool_calls is int, not a list"),
        (tool_reply(["search_memory"]), "no function with a name"),
        (tool_reply([{"function": {"arguments": "{}"}}]), "no function with a name"),
        (
            tool_reply([{"function": {"name": "search_memory", "arguments": 3}}]),
            "no function with a name",
        ),
        ([1, 2, 3], "the body is list, not a JSON object"),
    ],
)
def test_a_malformed_chat_reply_is_a_response_error(stub, body, message):
    """LM3: every wrong shape of a chat reply is an LLMResponseError naming the fault, never raw."""
    stub.script = [("json", body)]
    with pytest.raises(LLMResponseError, match=message):
        chat(stub)("hi")


def test_vectors_of_two_lengths_across_batches_are_refused():
    """LM5: each batch may be well formed, yet vectors
    of 2 and 3 numbers in one call are an error."""
    bodies = [embedding_reply((0, [1.0, 2.0])), embedding_reply((0, [1.0, 2.0, 3.0]))]

    def respond(server, connection):
        body = bodies[server.requests - 1]
        connection.sendall(reply_head(Content_Length=len(body)) + body)

    with RawServer(respond) as server:
        with pytest.raises(LLMResponseError, match="differ in length: \\[2, 3\\]"):
            OpenAICompatibleEmbeddings(server.url, "embed-model", batch_size=1).embed(
                ["one", "two"]
            )


def test_a_text_over_max_input_chars_is_refused_before_sending(stub):
    """LM5: a text longer than max_input_chars is
    LLMInputTooLarge, naming it, and nothing is sent."""
    embedder = OpenAICompatibleEmbeddings(stub.url, "embed-model", max_input_chars=10)
    with pytest.raises(
        LLMInputTooLarge, match="text 1 has 11 characters; max_input_chars is 10"
    ) as raised:
        embedder.embed(["short", "x" * 11])
    assert raised.value.status is None and stub.requests == []


@pytest.mark.parametrize(
    "setting, rule",
    [
        ({"max_retries": -1}, "max_retries must be an int >= 0"),
        ({"max_retries": 1.5}, "max_retries must be an int >= 0"),
        ({"max_retries": True}, "max_retries must be an int >= 0"),
        ({"timeout": -1}, "timeout must be > 0"),
        ({"timeout": 0}, "timeout must be > 0"),
        ({"timeout": math.nan}, "timeout must be finite"),
        ({"timeout": math.inf}, "timeout must be finite"),
        ({"timeout": True}, "timeout must be a number"),
        ({"timeout": "30"}, "timeout must be a number"),
        ({"backoff": -0.5}, "backoff must be >= 0"),
        ({"max_retry_after": math.inf}, "max_retry_after must be finite"),
        ({"max_reply_bytes": 0}, "max_reply_bytes must be an int >= 1"),
        ({"max_tokens": 0}, "max_tokens must be an int >= 1"),
        ({"temperature": -1.0}, "temperature must be >= 0"),
        ({"stop": [1, 2]}, "stop must be a string or a list of strings"),
        ({"stop": 5}, "stop must be a string or a list of strings"),
        ({"sleep": 0.5}, "sleep must be a callable"),
        ({"extra_fields": {"model": "other"}}, "extra_fields must be JSON values, with none of"),
        ({"extra_fields": {"seed": object()}}, "extra_fields must be JSON values"),
        ({"api_key": "sk-abc\r\nX-Injected: 1"}, "api_key must be printable"),
        ({"base_url": "ftp://127.0.0.1/v1"}, "base_url must be an http:// or https:// URL"),
        ({"base_url": "http://127.0.0.1:99999/v1"}, "base_url must be an http:// or https:// URL"),
        ({"base_url": "http://127.0.0.1/my models/v1"}, "base_url must be .* no spaces"),
        ({"api_key": "sk-clé"}, "api_key must be printable ASCII"),
    ],
)
def test_a_bad_setting_fails_at_construction_naming_the_rule(setting, rule):
    """LM3: a bad setting is a ValueError when the client is made, naming the rule it breaks."""
    arguments = {"base_url": "http://127.0.0.1:9/v1", "model": "m", **setting}
    with pytest.raises(ValueError, match=f"LM3: {rule}"):
        OpenAICompatibleChat(**arguments)


@pytest.mark.parametrize(
    "setting, rule",
    [
        ({"batch_size": 0}, "batch_size"),
        ({"max_input_chars": -1}, "max_input_chars"),
        ({"timeout": -1}, "timeout"),
    ],
)
def test_a_bad_embeddings_setting_fails_at_construction(setting, rule):
    """LM3: the embeddings client checks its own settings and the shared ones when it is made."""
    with pytest.raises(ValueError, match=f"LM3: {rule} must be"):
        OpenAICompatibleEmbeddings("http://127.0.0.1:9/v1", "m", **setting)


# --- the payload ---------------------------------------------------------------------------------


def test_max_tokens_stop_temperature_and_extra_fields_are_sent(stub):
    """LM6: the options go into the request as given, and extra fields pass through untouched."""
    stub.script = [("text", "ok")]
    chat(stub, max_tokens=64, stop=["\n"], temperature=0.7, extra_fields={"seed": 7, "top_p": 0.9})(
        "hi"
    )
    body = stub.requests[0]["body"]
    assert (body["max_tokens"], body["stop"], body["temperature"], body["seed"], body["top_p"]) == (
        64,
        ["\n"],
        0.7,
        7,
        0.9,
    )


def test_options_set_to_none_are_left_out(stub):
    """LM6: max_tokens, temperature and stop set to
    None are not sent, for servers that refuse them."""
    stub.script = [("text", "ok")]
    chat(stub, max_tokens=None, temperature=None, extra_fields={"max_completion_tokens": 32})("hi")
    assert stub.requests[0]["body"] == {
        "model": "stub-model",
        "max_completion_tokens": 32,
        "messages": [{"role": "user", "content": "hi"}],
    }


def test_embeddings_pass_extra_fields_through(stub):
    """LM6: an embeddings request carries its extra fields beside model and input."""
    OpenAICompatibleEmbeddings(stub.url, "embed-model", extra_fields={"dimensions": 64}).embed(
        ["a"]
    )
    assert stub.requests[0]["body"] == {"model": "embed-model", "input": ["a"], "dimensions": 64}
