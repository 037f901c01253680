"""Property tests for recuris.mcp.memory_tools: no sequence of tool calls or reads, with any
arguments a model may send, reaches another user's memory (MT1, MT2), checked by a state
machine against a naive model of the user's own memories."""

import json

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from recuris import ManualClock, MemoryManager
from recuris.mcp.memory_tools import RECENT_URI, MemoryTools, history_uri
from recuris.mcp.session import RequestError

SECRET = "zanzibar"  # in every one of bob's memories, and in no word a test draws for ana
BOB = [f"bob's {SECRET} vault code {n}: {1000 + n}" for n in range(3)]
# What a model may try: bob's ids and name, his secret's words, and anything else.
BOB_IDS = st.sampled_from(["item-1", "item-2", "item-3"])
words = st.sampled_from(["vault", "code", "bob", "deploy", "region", "eu-west", "1001", "item-2"])
text = st.lists(words, min_size=1, max_size=6).map(" ".join) | st.text(max_size=30)
scalar = st.none() | st.booleans() | st.integers(-3, 12) | st.floats() | text | BOB_IDS
value = st.recursive(scalar, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
keys = st.sampled_from(
    ["query", "max_results", "content", "level", "importance", "id", "user_id", "user"]
)
arguments = st.dictionaries(keys | st.text(max_size=8), value, max_size=4)
names = st.sampled_from(["search_memory", "remember", "forget", "forget_user", "recall"])
uris = (
    st.sampled_from([RECENT_URI, "memory://items/item-2/history"])
    | BOB_IDS.map(history_uri)
    | st.text(max_size=40)
)


class ToolCallsStayWithTheirUser(RuleBasedStateMachine):
    """Ana's tools, driven by arbitrary calls, beside bob's memories."""

    def __init__(self) -> None:
        super().__init__()
        self.manager = MemoryManager(clock=ManualClock(1_000_000.0))
        self.bobs = [self.manager.write(content, "bob").id for content in BOB]
        self.bobs_audit = self.manager.history("bob")
        self.tools = MemoryTools(self.manager, "ana")
        self.kept: set[str] = set()  # the naive model: ana's memories remembered, not forgotten
        self.forgotten: set[str] = set()
        self.answers: list[str] = []

    def observe(self, name: str, result: dict) -> None:
        answer = result["structuredContent"]
        self.answers.append(json.dumps(result))
        if name == "remember" and answer.get("stored"):
            self.kept.add(answer["id"])
        if name == "forget" and answer.get("forgotten"):
            self.kept.discard(answer["id"])
            self.forgotten.add(answer["id"])

    @rule(name=names, given=arguments)
    def call_any_tool(self, name, given):
        try:
            result = self.tools.call(name, given)
        except RequestError:
            return  # an unknown tool: a protocol error, nothing run
        self.observe(name, result)

    @rule(content=text, importance=st.none() | st.floats(0, 1))
    def remember(self, content, importance):
        given = (
            {"content": content}
            if importance is None
            else {"content": content, "importance": importance}
        )
        self.observe("remember", self.tools.call("remember", given))

    @rule(item_id=BOB_IDS | st.sampled_from(["item-4", "item-5", "item-6"]))
    def forget(self, item_id):
        self.observe("forget", self.tools.call("forget", {"id": item_id}))

    @rule(query=text)
    def search(self, query):
        self.observe("search_memory", self.tools.call("search_memory", {"query": query}))

    @rule(uri=uris, cursor=st.none() | st.text(max_size=12))
    def read_resources(self, uri, cursor):
        for read in (lambda: self.tools.read(uri), lambda: self.tools.resources(cursor)):
            try:
                self.answers.append(json.dumps(read()))
            except RequestError as error:
                self.answers.append(error.message)

    @invariant()
    def mt1_no_answer_holds_bobs_memory(self):
        assert not [answer for answer in self.answers if SECRET in answer]

    @invariant()
    def mt1_bobs_memory_and_audit_are_untouched(self):
        assert [self.manager.get(item_id, "bob").content for item_id in self.bobs] == BOB
        assert self.manager.history("bob") == self.bobs_audit

    @invariant()
    def mt2_anas_memory_is_what_her_calls_made_it(self):
        held = {item.id for item in self.manager.list("ana")}
        assert self.kept <= held and not self.forgotten & held


TestToolCallsStayWithTheirUser = ToolCallsStayWithTheirUser.TestCase
