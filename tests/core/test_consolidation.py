"""Example tests for recuris.core.consolidation.Consolidator (C1-C4)."""

import pytest

from recuris import ConsolidationSettings, Consolidator, ManualClock, SemanticMemory
from recuris.core.clock import DAY


@pytest.fixture
def clock():
    return ManualClock(0)


@pytest.fixture
def consolidator(clock):
    return Consolidator(SemanticMemory(), ConsolidationSettings(), clock=clock)


def test_one_sighting_does_not_promote(consolidator):
    """C1: a single remark is not yet knowledge."""
    assert consolidator.observe("team language", "Python", "e1") is None
    assert len(consolidator.semantic) == 0


def test_second_consistent_sighting_promotes_with_both_sources(consolidator):
    """C1, C2: the second sighting promotes; the fact names both episodes."""
    consolidator.observe("team language", "Python", "e1")
    fact = consolidator.observe("team language", "python", "e2")
    assert (fact.subject, fact.value, fact.source_ids) == ("team language", "python", ("e1", "e2"))
    assert consolidator.semantic.facts == (fact,)


def test_same_source_repeating_itself_counts_once(consolidator):
    """C1: one episode saying it twice is one witness."""
    consolidator.observe("team language", "Python", "e1")
    assert consolidator.observe("team language", "Python", "e1") is None


def test_sightings_outside_the_window_do_not_count(consolidator, clock):
    """C1: a sighting older than the window has expired."""
    consolidator.observe("team language", "Python", "e1")
    clock.advance(8 * DAY)
    assert consolidator.observe("team language", "Python", "e2") is None


def test_conflicting_value_blocks_promotion_and_is_reported(consolidator):
    """C1, C4: a different value in the window blocks promotion and is reported."""
    consolidator.observe("team language", "Python", "e1")
    consolidator.observe("team language", "Java", "e2")
    assert consolidator.observe("team language", "Python", "e3") is None
    assert [c.values for c in consolidator.conflicts] == [("Python", "Java"), ("Python", "Java")]
    assert consolidator.conflicts[-1].source_ids == ("e1", "e2", "e3")


def test_conflict_expires_with_the_window(consolidator, clock):
    """C1: once the conflicting sighting leaves the window, promotion resumes."""
    consolidator.observe("team language", "Java", "e1")
    clock.advance(8 * DAY)
    consolidator.observe("team language", "Python", "e2")
    assert consolidator.observe("team language", "Python", "e3") is not None


def test_promoted_statement_is_never_promoted_again(consolidator):
    """C3: a third sighting of a known fact creates no duplicate."""
    for source in ("e1", "e2", "e3", "e4"):
        consolidator.observe("team language", "Python", source)
    assert len(consolidator.semantic) == 1


@pytest.mark.parametrize("arguments", [("", "v", "s"), ("s", None, "s"), ("s", "v", "  ")])
def test_empty_or_non_text_statement_is_refused(consolidator, arguments):
    """VL1: an empty or non-text subject, value or source is refused before anything is recorded."""
    with pytest.raises((TypeError, ValueError)):
        consolidator.observe(*arguments)


@pytest.mark.parametrize(
    "settings",
    [dict(min_occurrences=0), dict(window_seconds=0), dict(window_seconds=float("nan"))],
)
def test_bad_settings_are_refused(settings):
    """C1: min_occurrences < 1 or a window that is not a positive number is refused, naming C1."""
    with pytest.raises(ValueError, match="C1"):
        ConsolidationSettings(**settings)


def test_the_settings_default_to_two_sources_within_a_week():
    """C1: by default two distinct sources within seven days promote a statement."""
    assert ConsolidationSettings() == ConsolidationSettings(2, 7 * DAY)


def test_a_forgotten_source_no_longer_counts_toward_a_promotion(consolidator):
    """C5: after forget_sources, a source's sightings and conflicts are gone and count for none."""
    consolidator.observe("team language", "Python", "e1")
    consolidator.observe("team language", "Go", "e2")
    consolidator.forget_sources(["e1", "e2"])
    assert consolidator.conflicts == [] and "Python" not in repr(consolidator.__dict__)
    assert consolidator.observe("team language", "Python", "e3") is None
    assert consolidator.observe("team language", "Python", "e4").source_ids == ("e3", "e4")
