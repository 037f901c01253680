"""Example tests for recuris.core.compression, the default summarizer (M1-M6)."""

import pytest

from recuris.core.compression import StructuredSummarizer, note_line, parse, without_note
from recuris.core.records import Step


def steps(*actions, failed=()):
    return [
        Step(i, action, "error: no" if action in failed else "ok", action in failed)
        for i, action in enumerate(actions, 1)
    ]


def test_summary_is_structured_done_and_phase():
    """M4: the summary lists done actions with arrows, and its phase line names the latest one."""
    assert StructuredSummarizer(400)("", steps("open page", "fill email")) == (
        "done: open page -> fill email\nphase: fill email"
    )


def test_merge_keeps_the_old_summary():
    """M1: a second merge extends the old summary; the prototype overwrote it."""
    summarize = StructuredSummarizer(400)
    first = summarize("", steps("open page"))
    assert summarize(first, steps("fill email")).startswith("done: open page -> fill email")


def test_failures_are_kept_as_notes():
    """Failed steps become failure notes with their result."""
    summary = StructuredSummarizer(400)("", steps("submit", failed={"submit"}))
    assert "failed: submit: error: no" in summary


def test_trimming_counts_old_actions_instead_of_dropping_them():
    """M1, M2: over budget, the oldest done actions become a count."""
    summarize = StructuredSummarizer(max_chars=80)
    summary = summarize("", steps(*[f"action number {i}" for i in range(10)]))
    parts = parse(summary)
    assert len(summary) <= 80
    assert parts.done_earlier + len(parts.done) == 10


def test_failure_notes_outlive_done_actions():
    """M3: trimming removes done actions before it touches a failure note."""
    summarize = StructuredSummarizer(max_chars=120)
    summary = summarize(
        "", steps("pay invoice", *[f"routine step {i}" for i in range(8)], failed={"pay invoice"})
    )
    assert "pay invoice: error: no" in summary


def test_phase_names_the_latest_folded_step():
    """M4: the phase is the action of the most recent folded step."""
    assert parse(StructuredSummarizer(400)("", steps("a", "b", "c"))).phase == "c"


def test_foreign_summary_text_is_kept_as_a_note():
    """A summary in another format (an LLM's, say) is kept as a note, not lost."""
    summary = StructuredSummarizer(400)("The user wants PostgreSQL.", steps("open"))
    assert "note: The user wants PostgreSQL." in summary


def test_actions_cannot_forge_summary_syntax():
    """M1: an action that looks like a separator or a count is escaped, so counts stay right."""
    summary = StructuredSummarizer(400)("", steps("(+9 earlier)", "a -> b", "c; d"))
    parts = parse(summary)
    assert parts.done_earlier == 0 and len(parts.done) == 3


def test_too_small_a_budget_is_refused():
    """M2: a budget below what the counts need is a ValueError naming the rule."""
    with pytest.raises(ValueError, match="M2"):
        StructuredSummarizer(max_chars=10)


def test_notes_are_added_as_note_lines_leaving_the_rest_as_it_was():
    """M5: `with_notes` adds each note on one line, as a `note:` line after those there."""
    summarize = StructuredSummarizer(400)
    summary = summarize("", steps("open page", "submit", failed={"submit"}))
    noted = summarize.with_notes(summary, ["cache on\nhost 7", "token -> expired"])
    assert noted == summary.replace(
        "phase: submit", "note: cache on host 7\nnote: token → expired\nphase: submit"
    )
    parts = parse(summarize.with_notes(noted, ["third"]))
    assert parts.notes == ["cache on host 7", "token → expired", "third"]


def test_past_the_budget_the_oldest_notes_go_before_any_step():
    """M3, M5: a summary over its budget drops its oldest notes first; steps stay listed."""
    summarize = StructuredSummarizer(max_chars=120)
    summary = summarize("", steps("open page", "pay", failed={"pay"}))
    noted = summarize.with_notes(summary, [f"note number {n} about the build" for n in range(5)])
    parts = parse(noted)
    assert len(noted) <= 120 and parts.notes[-1] == "note number 4 about the build"
    assert parts.done == ["open page"] and parts.failed == ["pay: error: no"]
    assert len(parts.notes) < 5


def test_without_note_takes_out_one_note_line_and_leaves_every_other_line():
    """M6: the line `note_line` gives for a folded note leaves the summary; the other notes,
    the done and phase lines stay as they were."""
    summary = StructuredSummarizer(400)("", steps("open page"))
    summary = StructuredSummarizer(400).with_notes(summary, ["code 4711", "host db-7"])
    assert without_note(summary, note_line("code 4711")) == (
        "done: open page\nnote: host db-7\nphase: open page"
    )


def test_without_note_leaves_a_summary_that_no_longer_holds_the_line_unchanged():
    """M6: a line trimmed before (M3) is in no summary: the summary comes back unchanged."""
    summary = StructuredSummarizer(400).with_notes("", ["host db-7"])
    assert without_note(summary, note_line("code 4711")) == summary
