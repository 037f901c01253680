"""Example tests for recuris.manager.active_recall: search_memory and the density gate (Z1-Z10)."""

import json
from dataclasses import fields

import pytest

from recuris import InMemoryStore, ManualClock, MemoryItem, MemoryManager, Weights, WorkingMemory
from recuris.core.text import estimate_tokens
from recuris.manager.active_recall import (
    SEARCH_TOKEN_BUDGET,
    TOOL_RESULT_HEADER,
    ActiveRecall,
    parse_tool_call,
    search_memory_tool,
)


@pytest.fixture
def recall():
    manager = MemoryManager(clock=ManualClock(0))
    manager.write("deploy region: eu-west", "ana", level="semantic")
    manager.write("team language: Python", "ana", level="semantic")
    manager.write("database: SQLite", "bob", level="semantic")
    return ActiveRecall(manager, "ana", threshold=0.3)


def test_tool_definition_is_the_openai_function_format():
    """Z6: the tool has type function, a name, a description and a JSON Schema for parameters."""
    tool = search_memory_tool()
    assert tool["type"] == "function" and tool["function"]["name"] == "search_memory"
    parameters = tool["function"]["parameters"]
    assert parameters["type"] == "object" and parameters["required"] == ["query"]
    assert parameters["properties"]["query"]["type"] == "string"
    max_results = parameters["properties"]["max_results"]
    assert (max_results["type"], max_results["default"]) == ("integer", 3)
    assert (
        set(parameters["required"]) <= set(parameters["properties"])
        and json.loads(json.dumps(tool)) == tool
    )


def test_a_call_returns_json_results_with_score_breakdowns(recall):
    """Z3, Q4: handle_search_memory answers in JSON, with content and each score's parts."""
    reply = json.loads(
        recall.handle_search_memory('{"query": "deploy region", "max_results": 2}', "ana")
    )
    [first, *_] = reply["results"]
    assert first["content"] == "deploy region: eu-west"
    assert set(first["score"]) == {*(weight.name for weight in fields(Weights)), "total"}


def test_a_call_is_scoped_to_its_user(recall):
    """MG1 through the tool: bob's memory never answers ana's call, and vice versa."""
    reply = json.loads(recall.handle_search_memory({"query": "database"}, "ana"))
    assert reply["results"] == []


@pytest.mark.parametrize(
    "arguments",
    [
        '{"query": ',
        "[]",
        '{"max_results": 2}',
        '{"query": "  "}',
        '{"query": "x", "max_results": 0}',
        '{"query": "x", "max_results": "3"}',
        None,
        42,
        "[" * 10_000,
    ],
)
def test_malformed_arguments_give_a_json_error_never_an_exception(recall, arguments):
    """Z3: bad JSON, a missing or empty query, a bad max_results: {"error": ...}."""
    reply = json.loads(recall.handle_search_memory(arguments, "ana"))
    assert list(reply) == ["error"] and reply["error"].startswith("search_memory:")


def test_the_gate_opens_only_above_the_threshold(recall):
    """Z2: a close query passes the gate; an unrelated one does not."""
    assert recall.should_retrieve("which deploy region")
    assert not recall.should_retrieve("what is for lunch")


def test_retrieve_context_stays_within_its_budget(recall):
    """Z1: the memories returned fit max_tokens; nothing when the gate is closed."""
    context = recall.retrieve_context("deploy region", max_tokens=10)
    assert context == ["[semantic] deploy region: eu-west"] and estimate_tokens(context[0]) <= 10
    assert recall.retrieve_context("what is for lunch") == []


def test_parse_tool_call_accepts_both_shapes_and_nothing_else():
    """Z6: a function_call object or an OpenAI tool_calls message is a call; other text is not."""
    legacy = '{"function_call": {"name": "search_memory", "arguments": "{\\"query\\": \\"x\\"}"}}'
    modern = '{"tool_calls": [{"function": {"name": "search_memory", "arguments": "{}"}}]}'
    assert parse_tool_call(legacy)["name"] == parse_tool_call(modern)["name"] == "search_memory"
    assert parse_tool_call("open the page") is None and parse_tool_call("{not json") is None
    assert parse_tool_call('{"function_call": {"arguments": "{}"}}') is None


def test_the_answer_section_says_it_came_from_recall(recall):
    """Z6: the prompt section of an answer is labelled as recalled by search_memory."""
    call = {"name": "search_memory", "arguments": '{"query": "deploy region"}'}
    section = recall.answer(call)
    text = section.render()
    assert text.startswith("## Recalled by search_memory") and "deploy region: eu-west" in text
    assert section.values == (("deploy region", "eu-west"),)
    assert "unknown tool" in recall.answer({"name": "rm_rf", "arguments": "{}"}).render()


def test_the_mock_model_asks_for_a_slot_once_then_fills_it_from_the_answer():
    """Z6, L3: an unknown {slot} becomes one search_memory call where the prompt offers the tool."""
    from recuris.core.prompt import ContextSection, build_prompt
    from recuris.manager.experience import model_on_manager

    memory = WorkingMemory()
    memory.init_task("ship", ["deploy to {deploy region}"])
    offer = ActiveRecall.instruction  # the tool is offered: the instruction says how to call it
    bare = build_prompt(memory.to_prompt_section(), [])
    assert model_on_manager()(bare) == "deploy to {deploy region}"
    asking = build_prompt(memory.to_prompt_section(), [], tools_instruction=offer)
    call = json.loads(model_on_manager()(asking))
    assert call["function_call"]["name"] == "search_memory"
    found = "- [semantic] deploy region: eu-west (relevance 1.00)"
    answer = ContextSection(TOOL_RESULT_HEADER, ("query: deploy region", found))
    answered = build_prompt(memory.to_prompt_section(), [], (), [answer], offer)
    assert model_on_manager()(answered) == "deploy to eu-west"
    nothing = ContextSection(TOOL_RESULT_HEADER, ("query: deploy region",))
    empty = build_prompt(memory.to_prompt_section(), [], (), [nothing], offer)
    # Asked once: no second call.
    assert model_on_manager()(empty) == "deploy to {deploy region}"


def test_a_weak_but_nonzero_match_stays_under_the_gate(recall):
    """Z4: one of four asked terms held (0.25) is under a 0.3 gate, though recall finds it."""
    text = "deploy pipeline logs yesterday"
    assert recall.best_similarity(text) == 0.25 and not recall.should_retrieve(text)
    assert recall.manager.recall(
        text, "ana", count_access=False
    ).results  # relevance alone would open it


def test_z2_a_closed_gate_retrieves_nothing_and_counts_no_use(recall):
    """Z2: under a 0.3 gate, a weak match (0.25) that recall finds is neither returned by
    `retrieve_context` nor counted as used."""
    text = "deploy pipeline logs yesterday"
    assert recall.manager.recall(text, "ana", count_access=False).results
    assert recall.retrieve_context(text) == []
    assert [item.access_count for item in recall.manager.list("ana")] == [0, 0]


def test_a_similarity_equal_to_the_threshold_opens_the_gate():
    """Z4: the gate is inclusive: half the asked terms held opens a 0.5 gate."""
    manager = MemoryManager(clock=ManualClock(0))
    manager.write("deploy region: eu-west", "ana", level="semantic")
    gate = ActiveRecall(manager, "ana", threshold=0.5)
    assert gate.best_similarity("deploy budget") == 0.5 and gate.should_retrieve("deploy budget")


def test_a_query_past_the_cap_is_cut_and_the_cut_is_reported(recall):
    """Z5: a search_memory query past MAX_QUERY_CHARS is cut; the answer says so, and is short."""
    from recuris.manager.bounds import MAX_QUERY_CHARS

    reply = json.loads(
        recall.handle_search_memory(json.dumps({"query": "deploy region " * 50_000}))
    )
    assert reply["query_truncated"] is True and len(reply["query"]) == MAX_QUERY_CHARS
    assert reply["results"][0]["content"] == "deploy region: eu-west"
    call = {"name": "search_memory", "arguments": json.dumps({"query": "deploy region " * 1_000})}
    assert len(recall.answer(call).render()) < 1_000


def test_a_context_that_would_run_over_its_budget_keeps_what_fits():
    """Z1: of matching memories worth more than max_tokens, those that fit are kept, in order."""
    manager = MemoryManager(clock=ManualClock(0))
    long = "deploy " + "notes on the rollout of the billing service " * 4
    manager.write(long, "ana", level="episodic")
    manager.write("deploy window: friday", "ana", level="semantic")
    manager.write("deploy owner: ana", "ana", level="semantic")
    gate = ActiveRecall(manager, "ana", threshold=0.1)
    found = [r.render() for r in manager.recall("deploy", "ana", count_access=False).results]
    costs = [estimate_tokens(line) for line in found]
    budget = sum(costs) - 1  # one token short of everything: something must be left out
    context = gate.retrieve_context("deploy", max_tokens=budget)
    assert sum(estimate_tokens(line) for line in context) <= budget
    assert 0 < len(context) < len(found) and context == [line for line in found if line in context]


def test_an_answer_to_a_query_holding_a_lone_surrogate_can_be_sent_as_utf8(recall):
    """Z7: a lone surrogate in the query comes back as U+FFFD, and the answer encodes as UTF-8."""
    answer = recall.handle_search_memory(json.dumps({"query": "deploy \ud800 region"}))
    answer.encode("utf-8")
    reply = json.loads(answer)
    assert reply["query"] == "deploy \ufffd region"
    assert reply["results"][0]["content"] == "deploy region: eu-west"


@pytest.mark.parametrize(
    "call",
    [{"name": "search_memory"}, {"arguments": "{}"}, {}, None, "search_memory", ["x"]],
    ids=["no arguments", "no name", "empty", "None", "text", "list"],
)
def test_a_malformed_call_gets_an_error_section_never_an_exception(recall, call):
    """Z3: a call lacking "arguments" or "name", or not an object, is answered by an error."""
    section = recall.answer(call)
    assert section.header == TOOL_RESULT_HEADER and section.lines[0].startswith("error:")


@pytest.mark.parametrize("reply", [None, 42, b'{"function_call": {}}', {"function_call": {}}])
def test_parse_tool_call_of_anything_but_text_is_no_call(reply):
    """Z6: a reply that is not text (None, a number, bytes, an object) is not a tool call."""
    assert parse_tool_call(reply) is None


def test_a_search_answer_holds_at_most_the_token_budget_and_says_what_it_cut():
    """Z8: a 200,000-character memory is cut to fit; the short one beside it stays whole."""
    manager = MemoryManager(clock=ManualClock(0))
    document = "deploy notes: " + "the region is eu-west and the host is stage-7. " * 4_300
    manager.write(document, "ana")
    manager.write("deploy region: eu-west", "ana", level="semantic")
    reply = json.loads(ActiveRecall(manager, "ana").handle_search_memory({"query": "deploy"}))
    contents = {result["content_truncated"]: result["content"] for result in reply["results"]}
    assert len(document) > 200_000 and set(contents) == {True, False}
    assert contents[False] == "deploy region: eu-west" and document.startswith(contents[True])
    assert sum(estimate_tokens(text) for text in contents.values()) <= SEARCH_TOKEN_BUDGET




def test_a_search_answer_counts_the_stored_items_recall_could_not_read():
    """Z9: a stored fact without its sources (FA4) is left out and counted; none left out is 0."""
    store = InMemoryStore()
    manager = MemoryManager(store, clock=ManualClock(0))
    manager.write("we deploy the database on Fridays", "ana")
    manager.write("we deploy the database on Mondays", "bob")
    metadata = {"subject": "database", "value": "PostgreSQL"}
    fact = MemoryItem(
        id="fact-9", user_id="ana", level="semantic", content="database", metadata=metadata
    )
    store.put([fact])
    ana = json.loads(ActiveRecall(manager, "ana").handle_search_memory({"query": "deploy"}))
    bob = json.loads(ActiveRecall(manager, "bob").handle_search_memory({"query": "deploy"}))
    assert (ana["skipped"], len(ana["results"])) == (1, 1)
    assert (bob["skipped"], len(bob["results"])) == (0, 1)


@pytest.mark.parametrize("query", ["the of and", "!!!"])
def test_a_query_with_no_word_to_search_for_is_an_error_naming_the_rule(recall, query):
    """Z10: a query of stop words or punctuation alone is answered as an error, not as no
    results, in the words the command line refuses it with (VA7, SR5)."""
    reply = json.loads(recall.handle_search_memory({"query": query}, "ana"))
    assert set(reply) == {"error"}
    assert reply["error"].startswith("search_memory: Z10: the query")
    assert "no word to search for" in reply["error"]
