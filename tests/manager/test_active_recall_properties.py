"""Property tests for recuris.manager.active_recall (Z1-Z3, Z6-Z8)."""

import json

from hypothesis import given
from hypothesis import strategies as st

from recuris import ManualClock, MemoryManager
from recuris.core.text import estimate_tokens
from recuris.manager.active_recall import SEARCH_TOKEN_BUDGET, ActiveRecall, parse_tool_call

memories = st.lists(st.text(min_size=3, max_size=120).filter(str.strip), max_size=10)
queries = st.text(max_size=60)


def manager_with(texts):
    manager = MemoryManager(clock=ManualClock(0))
    for text in texts:
        manager.write(text, "u", level="episodic")
    return manager


@given(memories, queries, st.integers(0, 80))
def test_Z1_retrieved_context_fits_the_budget(texts, query, budget):
    """Z1: for any store and text, the context's estimated tokens stay within max_tokens."""
    context = ActiveRecall(manager_with(texts), "u", threshold=0.0).retrieve_context(
        query, max_tokens=budget
    )
    assert sum(estimate_tokens(line) for line in context) <= budget


@given(memories, queries, st.floats(0, 1), st.floats(0, 1))
def test_Z2_the_gate_is_monotone_in_the_threshold(texts, query, low, high):
    """Z2: if the higher threshold retrieves, the lower one does too."""
    low, high = sorted((low, high))
    manager = manager_with(texts)
    if ActiveRecall(manager, "u", high).should_retrieve(query):
        assert ActiveRecall(manager, "u", low).should_retrieve(query)


@given(st.text() | st.binary().map(repr) | st.none() | st.integers())
def test_Z3_any_arguments_get_a_json_answer(arguments):
    """Z3: whatever the model sends, the answer is JSON, never an exception."""
    assert isinstance(
        json.loads(ActiveRecall(manager_with(["a note"]), "u").handle_search_memory(arguments)),
        dict,
    )


# Anything a model's JSON may hold, and what a caller may pass: lone surrogates, NaN, depth.
# Hypothesis's text leaves surrogates out unless told, and seldom draws them when allowed.
surrogates = st.integers(0xD800, 0xDFFF).map(chr)
any_text = st.text(st.characters(blacklist_categories=()) | surrogates, max_size=12)
scalars = st.none() | st.booleans() | st.integers() | st.floats() | any_text
json_like = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(any_text, children, max_size=4)
    ),
    max_leaves=12,
)
argument_objects = st.fixed_dictionaries(
    {}, optional={"query": any_text | json_like, "max_results": json_like | st.integers(-2, 12)}
)
arguments_sent = json_like | argument_objects | argument_objects.map(json.dumps)
calls = st.fixed_dictionaries(
    {}, optional={"name": st.just("search_memory") | json_like, "arguments": arguments_sent}
)


def sendable(text: str) -> dict:
    """Return the JSON object text holds, having checked it encodes as UTF-8."""
    assert isinstance(text, str)
    text.encode("utf-8")
    data = json.loads(text)
    assert isinstance(data, dict)
    return data


@given(arguments_sent)
def test_Z3_any_arguments_get_an_answer_that_can_be_sent(arguments):
    """Z3, Z7: any arguments get JSON text that encodes as UTF-8: results or an error."""
    data = sendable(ActiveRecall(manager_with(["a note"]), "u").handle_search_memory(arguments))
    assert set(data) in ({"error"}, {"query", "query_truncated", "results", "degraded", "skipped"})


@given(calls | json_like)
def test_Z3_any_call_gets_a_section_that_can_be_sent(call):
    """Z3, Z7: any call, well formed or not, is answered by a section whose lines are UTF-8."""
    section = ActiveRecall(manager_with(["a note"]), "u").answer(call)
    assert all(isinstance(line, str) and line.encode("utf-8") for line in section.lines)


@given(calls | json_like)
def test_Z6_any_reply_is_a_call_or_not_never_an_exception(call):
    """Z6, Z3: a model's reply of any JSON, as text or not, is parsed and answered, never raises."""
    recall = ActiveRecall(manager_with(["a note"]), "u")
    for reply in (json.dumps({"function_call": call}), json.dumps(call), call):
        parsed = parse_tool_call(reply)
        assert parsed is None or isinstance(parsed["name"], str)
        section = recall.respond(reply)
        assert section is None or all(line.encode("utf-8") for line in section.lines)


# A memory repeated up to 3,000 times: from a few tokens to several times the budget.
phrases = st.sampled_from(["deploy note ", "部署说明 ", "deploy 区域 "])
long_memories = st.lists(st.tuples(phrases, st.integers(1, 3_000)), min_size=1, max_size=10)


@given(long_memories)
def test_Z8_a_search_answer_holds_at_most_the_budget_each_cut_said(repeated):
    """Z8: contents sum to at most SEARCH_TOKEN_BUDGET; each is a start of its memory, cut
    exactly when its result says so."""
    texts = [f"{number} {piece * times}" for number, (piece, times) in enumerate(repeated)]
    manager = manager_with(texts)
    stored = {item.id: item.content for item in manager.list("u")}
    reply = json.loads(
        ActiveRecall(manager, "u").handle_search_memory({"query": "deploy", "max_results": 10})
    )
    assert sum(estimate_tokens(result["content"]) for result in reply["results"]) <= (
        SEARCH_TOKEN_BUDGET
    )
    for result in reply["results"]:
        whole = stored[result["id"]]
        assert whole.startswith(result["content"])
        assert result["content_truncated"] is (result["content"] != whole)
