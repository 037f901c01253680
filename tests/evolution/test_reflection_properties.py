"""Property tests for reflection: the live path and failures never lose an interaction (Y1-Y4)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris import ManualClock, MemoryManager
from recuris.evolution.reflecting_llm import ReflectingLLM
from recuris.evolution.reflection import ReflectionCallback

messages = st.sampled_from(
    [
        "Our deploy region is eu-west.",
        "Our deploy region is us-east.",
        "I prefer tea",
        "I prefer coffee",
        "hello",
        "That is wrong",
    ]
)
replies = st.sampled_from(["ok", "Sorry, I was wrong.", "Noted."])
outcomes = st.lists(st.sampled_from(["good", "garbage", "raise"]), min_size=1, max_size=6)


@given(st.lists(st.tuples(messages, replies), min_size=1, max_size=12), outcomes)
def test_Y1_to_Y4_buffer_survives_failures_and_insights_keep_their_sources(turns, plan):
    """Y1: adding never calls the model; Y2: a failure keeps the buffer; Y3: no duplicate valid
    insight; Y4: a superseding insight keeps its predecessor's sources."""
    manager, calls = MemoryManager(clock=ManualClock(0)), []

    def llm(prompt):
        calls.append(prompt)
        outcome = plan[(len(calls) - 1) % len(plan)]
        if outcome == "raise":
            raise RuntimeError("boom")
        return "garbage" if outcome == "garbage" else ReflectingLLM()(prompt)

    callback = ReflectionCallback(llm, manager, threshold=2, user_id="u")
    for user, agent in turns:
        calls_before = len(calls)
        callback.add_interaction(user, agent)
        assert len(calls) == calls_before  # Y1
        if callback.ready:
            before = list(callback.buffer)
            report = callback.reflect()
            assert (callback.buffer == before) if report.failed else callback.buffer == []  # Y2
    items = manager.list("u", "semantic")
    valid = [(i.metadata["type"], i.content.casefold()) for i in items if i.is_valid]
    assert len(valid) == len(set(valid))
    by_id = {i.id: i for i in items}
    for item in items:
        if not item.is_valid:
            assert set(item.metadata["source_ids"]) <= set(
                by_id[item.superseded_by].metadata["source_ids"]
            )
