"""Property tests for recuris.bench.long_horizon: the cut to a context limit (LH4)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.bench.long_horizon import FULL_HISTORY, ContextLimitedHistory
from recuris.core import prompt as layout
from recuris.core.text import estimate_tokens

words = st.text("abcdefgh xyz", min_size=1, max_size=60).filter(str.strip)
steps = st.lists(st.tuples(words, st.text("abcdefgh xyz:", max_size=300)), max_size=25)


def history(limit, keep_statement, pins, plan, taken):
    memory = ContextLimitedHistory(limit, FULL_HISTORY, keep_statement=keep_statement)
    memory.init_task("migrate the database", plan)
    for pin in pins:
        memory.pin(pin)
    for action, result in taken:
        memory.add_step(action, result)
    return memory


def fits(section, limit):
    return estimate_tokens(layout.build_prompt(section, ())) <= limit


@given(
    st.integers(60, 1_500),
    st.booleans(),
    st.lists(words, max_size=3),
    st.lists(words, min_size=1, max_size=8),
    steps,
)
def test_LH4_the_cut_keeps_the_longest_fitting_run_of_newest_messages(
    limit, keep_statement, pins, plan, taken
):
    """LH4: the section is the uncut history less its oldest messages, the statement first
    unless kept; it fits the limit, and one more message back would not; only the system
    message (with a kept statement) alone may be over the limit."""
    memory = history(limit, keep_statement, pins, plan, taken)
    uncut = history(10**9, keep_statement, pins, plan, taken).to_prompt_section().split("\n")
    recent = uncut.index(layout.RECENT)
    statement = uncut[1:recent]
    lines = uncut[recent + 1 :]

    def section(with_statement, first):
        shown = statement if with_statement else []
        return "\n".join([uncut[0], *shown, layout.RECENT, *lines[first:]])

    # The naive model: every way to drop the oldest messages, least dropped first; when none
    # fits, the one that drops them all.
    shapes = [(True, 0)] + [(keep_statement, first) for first in range(len(lines) + 1)]
    fitting = [shape for shape in shapes if fits(section(*shape), limit)]
    expected = section(*(fitting[0] if fitting else shapes[-1]))
    assert memory.to_prompt_section() == expected
    assert fitting or keep_statement
