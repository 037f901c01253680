"""Property tests for recuris.core.compression: merging many batches (M1-M4)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.core.compression import StructuredSummarizer, parse
from recuris.core.records import Step

step_lists = st.lists(
    st.tuples(st.text(min_size=1, max_size=80).filter(str.strip), st.booleans()), max_size=40
)


def fold_all(summarize, specs, batch):
    summary, folded = "", []
    for start in range(0, len(specs), batch):
        chunk = [
            Step(start + i + 1, action, "error" if failed else "ok", failed)
            for i, (action, failed) in enumerate(specs[start : start + batch])
        ]
        summary = summarize(summary, chunk)
        folded.extend(chunk)
    return summary, folded


@given(step_lists, st.integers(1, 5), st.integers(80, 400))
def test_M1_M2_merging_loses_no_count_and_stays_within_budget(specs, batch, max_chars):
    """M1: done actions listed plus counted equal the successful steps; M2: within max_chars."""
    summary, folded = fold_all(StructuredSummarizer(max_chars), specs, batch)
    parts = parse(summary)
    assert len(summary) <= max_chars
    assert parts.done_earlier + len(parts.done) == sum(not step.failed for step in folded)
    assert parts.failed_earlier + len(parts.failed) == sum(step.failed for step in folded)


@given(step_lists.filter(bool), st.integers(1, 5))
def test_M4_phase_is_the_latest_folded_action(specs, batch):
    """M4: the phase line names the last folded step's action (as escaped for the summary)."""
    summary, folded = fold_all(StructuredSummarizer(400), specs, batch)
    expected = parse(StructuredSummarizer(400)("", [folded[-1]])).phase
    assert parse(summary).phase == expected


@given(st.integers(0, 30))
def test_M3_a_failure_note_survives_any_amount_of_later_progress(later):
    """M3: a short failure note is kept while done actions can still be counted away."""
    summarize = StructuredSummarizer(160)
    summary = summarize("", [Step(1, "pay", "error: card declined", True)])
    for i in range(later):
        summary = summarize(summary, [Step(i + 2, f"routine step number {i}", "ok")])
    assert "pay: error: card declined" in summary
