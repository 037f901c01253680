"""Example tests for recuris.mcp.memory_tools: one user's memory as tools and resources."""

import json

import pytest
from outages import Outage

from recuris import (
    InMemoryStore,
    ManualClock,
    MemoryItem,
    MemoryManager,
    SQLiteStore,
    search_memory_tool,
)
from recuris.core.text import estimate_tokens
from recuris.manager.active_recall import SEARCH_TOKEN_BUDGET
from recuris.manager.bounds import MAX_QUERY_CHARS
from recuris.storage.audit import AuditEntry
from recuris.mcp.memory_tools import (
    MEMORY_DOWN,
    PAGE_SIZE,
    QUEUED_REASON,
    RECENT_URI,
    REMEMBERED_LEVELS,
    MemoryTools,
    history_uri,
)
from recuris.mcp.session import INVALID_PARAMS, RESOURCE_NOT_FOUND, RequestError


@pytest.fixture
def manager():
    return MemoryManager(clock=ManualClock(1_000_000.0))


def said(result: dict) -> dict:
    """Return what a tool answered, checking that its text and its structure agree."""
    answer = json.loads(result["content"][0]["text"])
    assert answer == result["structuredContent"]
    return answer


def read(tools: MemoryTools, uri: str) -> dict:
    return json.loads(tools.read(uri)["contents"][0]["text"])


def test_no_tool_or_resource_reaches_another_users_memory(manager):
    """MT1: ana's tools neither find, read nor forget bob's memory; his id reads as unknown."""
    bobs = manager.write("bob's vault code is 9999", "bob")
    tools = MemoryTools(manager, "ana")
    assert said(tools.call("search_memory", {"query": "vault code 9999"}))["results"] == []
    theirs = tools.call("forget", {"id": bobs.id})
    unknown = tools.call("forget", {"id": "item-404"})
    assert theirs["isError"] and said(theirs)["error"].replace(bobs.id, "X") == said(unknown)[
        "error"
    ].replace("item-404", "X")
    with pytest.raises(RequestError) as refused:
        tools.read(history_uri(bobs.id))
    assert refused.value.code == RESOURCE_NOT_FOUND
    assert read(tools, RECENT_URI) == {"memories": []}
    assert tools.resources()["resources"][1:] == []
    assert manager.get(bobs.id, "bob") is not None


def test_an_argument_naming_a_user_is_refused_and_changes_nothing(manager):
    """MT2: an argument outside the schema (a user id) is a tool error that names it."""
    tools = MemoryTools(manager, "ana")
    result = tools.call("remember", {"content": "the deploy region is eu-west", "user_id": "bob"})
    assert result["isError"] and "'user_id'" in said(result)["error"]
    assert manager.list("bob") == [] and manager.list("ana") == []


@pytest.mark.parametrize(
    "name, arguments, named",
    [
        ("remember", {}, "content"),
        ("remember", {"content": "the deploy region", "importance": 2}, "importance"),
        ("remember", {"content": "the deploy region", "importance": True}, "importance"),
        ("remember", {"content": "the deploy region", "level": "deep"}, "level"),
        ("forget", {"id": 42}, "'id'"),
        ("search_memory", {"query": ""}, "'query'"),
        ("search_memory", {"query": "x", "max_results": 0}, "'max_results'"),
    ],
)
def test_arguments_of_the_wrong_type_or_range_are_tool_errors(manager, name, arguments, named):
    """MT2: a wrong type or a value out of range is a tool error naming the argument."""
    result = MemoryTools(manager, "ana").call(name, arguments)
    assert result["isError"] and named in said(result)["error"]
    assert manager.list("ana") == []


def test_an_unknown_tool_is_a_protocol_error(manager):
    """MT2: a tool the server does not have is INVALID_PARAMS, not a tool result."""
    with pytest.raises(RequestError) as refused:
        MemoryTools(manager, "ana").call("drop_database", {})
    assert refused.value.code == INVALID_PARAMS


def test_remember_then_search_then_forget(manager):
    """MT1: a memory written is recalled with its id, and forgotten by that id."""
    tools = MemoryTools(manager, "ana")
    stored = said(
        tools.call("remember", {"content": "the deploy region is eu-west", "importance": 0.9})
    )
    assert stored == {"stored": True, "id": stored["id"], "level": "episodic", "queued": False}
    found = said(tools.call("search_memory", {"query": "deploy region"}))
    assert [result["id"] for result in found["results"]] == [stored["id"]]
    assert said(tools.call("forget", {"id": stored["id"]})) == {
        "forgotten": True,
        "id": stored["id"],
    }
    assert said(tools.call("search_memory", {"query": "deploy region"}))["results"] == []


def test_remember_says_when_content_is_too_short_to_keep(manager):
    """MT2: trivial content is not an error: the answer says it was not stored (U1)."""
    assert said(MemoryTools(manager, "ana").call("remember", {"content": "ok"}))["stored"] is False


def test_a_failing_store_degrades_every_tool_and_fails_no_call():
    """MT3: recall answers nothing, degraded; a write is queued; forget says nothing was done."""
    store = Outage()
    manager = MemoryManager(store)
    tools = MemoryTools(manager, "ana")
    kept = said(tools.call("remember", {"content": "the deploy region is eu-west"}))
    store.down = "writes"
    queued = said(tools.call("remember", {"content": "the staging host is stage-7"}))
    assert queued["stored"] is False and queued["queued"] is True
    forget = tools.call("forget", {"id": kept["id"]})
    assert forget["isError"] and "nothing forgotten" in said(forget)["error"]
    store.down = "all"
    assert said(tools.call("search_memory", {"query": "deploy"}))["degraded"] is True
    with pytest.raises(RequestError) as down:
        tools.read(RECENT_URI)
    assert down.value.code == MEMORY_DOWN
    store.down = None
    manager.close()
    assert [item.content for item in store.list("ana")][-1] == "the staging host is stage-7"


def test_resources_are_listed_once_each_across_pages(manager):
    """MT4: every resource once, at most PAGE_SIZE a page, recent first, newest memory next."""
    written = [manager.write(f"memory number {n} about deploys", "ana") for n in range(120)]
    tools = MemoryTools(manager, "ana")
    pages = [tools.resources()]
    while "nextCursor" in pages[-1]:
        pages.append(tools.resources(pages[-1]["nextCursor"]))
    uris = [resource["uri"] for page in pages for resource in page["resources"]]
    assert all(len(page["resources"]) <= PAGE_SIZE for page in pages) and len(pages) == 3
    assert uris == [RECENT_URI, *(history_uri(item.id) for item in reversed(written))]


@pytest.mark.parametrize("cursor", ["", "not base64!", "eyJvZmZzZXQiOiAtMX0=", 7])
def test_a_cursor_the_server_did_not_make_is_refused(manager, cursor):
    """MT4: a cursor that does not decode to an offset >= 0 is INVALID_PARAMS."""
    with pytest.raises(RequestError) as refused:
        MemoryTools(manager, "ana").resources(cursor)
    assert refused.value.code == INVALID_PARAMS


def test_the_recent_memories_and_a_history_read_as_json(manager):
    """MT1: the recent memories are the user's, newest first; a history lists its operations."""
    first = manager.write("the deploy region is eu-west", "ana")
    second = manager.write("the staging host is stage-7", "ana")
    tools = MemoryTools(manager, "ana")
    recent = read(tools, RECENT_URI)["memories"]
    assert [memory["id"] for memory in recent] == [second.id, first.id]
    tools.call("forget", {"id": first.id})
    history = read(tools, history_uri(first.id))
    assert [entry["operation"] for entry in history["history"]] == ["write", "forget"]
    with pytest.raises(RequestError) as unknown:
        tools.read("memory://items/")
    assert unknown.value.code == RESOURCE_NOT_FOUND


def test_search_memory_is_the_active_recall_tool_and_needs_no_density_gate(manager):
    """MT5: same schema as search_memory_tool; a query sharing little still gets its best match."""
    [search] = [
        tool for tool in MemoryTools(manager, "ana").tools() if tool["name"] == "search_memory"
    ]
    assert search["inputSchema"] == search_memory_tool()["function"]["parameters"]
    manager.write("the deploy region is eu-west", "ana")
    asked = "which region, and also the budget, the owner, the deadline and the colour scheme"
    found = said(MemoryTools(manager, "ana").call("search_memory", {"query": asked}))
    assert [result["content"] for result in found["results"]] == ["the deploy region is eu-west"]


def test_a_long_query_is_cut_as_the_manager_cuts_it(manager):
    """MT5: a query past MAX_QUERY_CHARS is cut, and the answer says so (BD2, Z5)."""
    found = said(MemoryTools(manager, "ana").call("search_memory", {"query": "x" * 50_000}))
    assert found["query_truncated"] is True and len(found["query"]) == MAX_QUERY_CHARS


@pytest.mark.parametrize("mark", ["-", "*"])
def test_the_audits_marks_for_no_one_memory_are_not_resources(manager, mark):
    """MT1: the history of "-" or "*" (skips, recalls, a forget of the user) cannot be read."""
    tools = MemoryTools(manager, "ana")
    tools.call("remember", {"content": "ok"})  # audited as a skip, under "-"
    tools.call("search_memory", {"query": "region"})  # audited as a recall, under "-"
    manager.forget_user("ana")  # audited under "*"
    with pytest.raises(RequestError) as refused:
        tools.read(history_uri(mark))
    assert refused.value.code == RESOURCE_NOT_FOUND


def test_forget_says_what_it_erases_and_what_stays(manager):
    """MG7: the forget tool's description says a fact goes with its last source, a copy stays."""
    [forget] = [tool for tool in MemoryTools(manager, "ana").tools() if tool["name"] == "forget"]
    assert "once every memory it was learned from is forgotten" in forget["description"]
    assert "says the same thing on its own stays" in forget["description"]


def test_an_id_with_a_lone_surrogate_is_forgotten_as_no_memory(tmp_path):
    """MT6: forget of an id holding a lone surrogate is a tool error; nothing is forgotten."""
    manager = MemoryManager(SQLiteStore(tmp_path / "m.db"))
    kept = manager.write("the deploy region is eu-west", "ana")
    result = MemoryTools(manager, "ana").call("forget", {"id": "item-\ud800"})
    assert result["isError"] and "'id'" in said(result)["error"]
    assert [item.id for item in manager.list("ana")] == [kept.id]
    manager.close()


def test_a_history_uri_with_a_lone_surrogate_is_not_found(tmp_path):
    """MT6: reading the history of an id holding a lone surrogate is RESOURCE_NOT_FOUND."""
    manager = MemoryManager(SQLiteStore(tmp_path / "m.db"))
    with pytest.raises(RequestError) as refused:
        MemoryTools(manager, "ana").read("memory://items/item-\ud800/history")
    assert refused.value.code == RESOURCE_NOT_FOUND
    manager.close()


def test_every_level_remember_offers_stores(manager):
    """MT7: each level in remember's schema stores the memory; "procedural" is not offered."""
    tools = MemoryTools(manager, "ana")
    [remember] = [tool for tool in tools.tools() if tool["name"] == "remember"]
    offered = remember["inputSchema"]["properties"]["level"]["enum"]
    assert offered == list(REMEMBERED_LEVELS) and "procedural" not in offered
    for level in offered:
        content = f"the {level} note says the deploy region is eu-west"
        assert said(tools.call("remember", {"content": content, "level": level}))["stored"]


def test_remember_at_the_procedural_level_is_a_tool_error_naming_the_rule(manager):
    """MT7: level "procedural" is answered as a tool error citing MT7; nothing is stored."""
    result = MemoryTools(manager, "ana").call(
        "remember", {"content": "run the migrations before deploying", "level": "procedural"}
    )
    assert result["isError"] and "MT7" in said(result)["error"]
    assert manager.list("ana") == []


def test_a_memory_of_200000_characters_is_cut_to_the_search_budget(manager):
    """MT5, Z8: search_memory's result holds a huge memory cut to the budget, and says so."""
    manager.write("deploy notes: " + "the region is eu-west, the host stage-7. " * 5_000, "ana")
    found = said(MemoryTools(manager, "ana").call("search_memory", {"query": "deploy notes"}))
    [result] = found["results"]
    assert result["content_truncated"] is True
    assert estimate_tokens(result["content"]) <= SEARCH_TOKEN_BUDGET


def test_the_recent_memories_are_cut_to_the_search_budget_and_say_so(manager):
    """MT8: ten 195 KB memories read as the recent ones hold the search budget at most."""
    for number in range(10):
        manager.write(f"notes {number}: " + "the region is eu-west, host stage-7. " * 5_300, "ana")
    manager.write("the deploy region is eu-west", "ana")
    recent = read(MemoryTools(manager, "ana"), RECENT_URI)["memories"]
    assert len(recent) == 11 and len(recent[1]["content"]) < len(manager.list("ana")[0].content)
    assert [memory["content_truncated"] for memory in recent] == [False] + [True] * 10
    assert recent[0]["content"] == "the deploy region is eu-west"
    assert sum(estimate_tokens(memory["content"]) for memory in recent) <= SEARCH_TOKEN_BUDGET


def test_search_memory_says_how_many_stored_items_it_could_not_read():
    """MT5, Z9: a stored fact recall cannot read (FA4) is counted in the answer's skipped."""
    store = InMemoryStore()
    manager = MemoryManager(store, clock=ManualClock(1_000_000.0))
    manager.write("we deploy the database on Fridays", "ana")
    metadata = {"subject": "database", "value": "PostgreSQL"}
    store.put(
        [MemoryItem(id="fact-9", user_id="ana", level="semantic", content="db", metadata=metadata)]
    )
    found = said(MemoryTools(manager, "ana").call("search_memory", {"query": "deploy"}))
    assert (found["skipped"], len(found["results"])) == (1, 1)


def test_remember_says_a_queued_write_is_not_stored_yet():
    """MT9: a write the store could not take is `stored: false, queued: true`, with a reason."""
    store = Outage()
    tools = MemoryTools(MemoryManager(store), "ana")
    store.down = "writes"
    queued = said(tools.call("remember", {"content": "the staging host is stage-7"}))
    assert queued == {
        "stored": False,
        "queued": True,
        "id": queued["id"],
        "level": "episodic",
        "reason": QUEUED_REASON,
    }
    store.down = None
    stored = said(tools.call("remember", {"content": "the deploy region is eu-west"}))
    assert (stored["stored"], stored["queued"]) == (True, False)


def test_a_query_with_no_word_to_search_for_is_a_tool_error(manager):
    """MT5, Z10: search_memory answers a query of stop words alone as a tool error naming the
    rule, as the command line's search refuses it (VA7), not as empty results."""
    manager.write("the deploy region is eu-west", "ana")
    answer = MemoryTools(manager, "ana").call("search_memory", {"query": "the of and"})
    assert answer["isError"] and "Z10: the query 'the of and' has no word" in said(answer)["error"]


def test_a_long_history_holds_its_newest_records_within_the_search_budget(manager):
    """MT10: a memory audited 1,500 times reads as its newest records, oldest first, whose
    JSON holds the search budget at most, saying how many older ones were left out."""
    item = manager.write("the deploy region is eu-west", "ana")
    manager.store.append_audit(
        AuditEntry(item.id, "update", f"note {number} folded", 2e6 + number, None, "ana")
        for number in range(1_500)
    )
    history = read(MemoryTools(manager, "ana"), history_uri(item.id))
    shown = history["history"]
    assert 0 < len(shown) < 1_501 and history["older_records_left_out"] == 1_501 - len(shown)
    assert shown[-1]["reason"] == "note 1499 folded"
    assert [entry["at"] for entry in shown] == sorted(entry["at"] for entry in shown)
    costs = [estimate_tokens(json.dumps(entry, ensure_ascii=False)) for entry in shown]
    assert sum(costs) <= SEARCH_TOKEN_BUDGET


def test_a_history_record_too_long_for_the_budget_is_cut_and_says_so(manager):
    """MT10: the newest record is shown even when its reason alone exceeds the budget: cut
    to it, flagged `reason_truncated`."""
    item = manager.write("the deploy region is eu-west", "ana")
    manager.store.append_audit([AuditEntry(item.id, "update", "why " * 10_000, 2e6, None, "ana")])
    history = read(MemoryTools(manager, "ana"), history_uri(item.id))
    [newest] = history["history"]
    assert newest["reason_truncated"] is True and newest["reason"].startswith("why why")
    assert estimate_tokens(json.dumps(newest, ensure_ascii=False)) <= SEARCH_TOKEN_BUDGET
    assert history["older_records_left_out"] == 1
