"""Consolidator checked against a naive model that rescans every sighting (C1-C4)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris import ConsolidationSettings, Consolidator, ManualClock, SemanticMemory

events = st.lists(
    st.tuples(
        st.sampled_from(["team language", "database"]),
        st.sampled_from(["Python", "python", "Java", "PostgreSQL"]),
        st.sampled_from(["e1", "e2", "e3", "e4"]),
        st.integers(0, 4),  # days to wait before this sighting
    ),
    max_size=25,
)


@given(events, st.integers(1, 3), st.integers(1, 5))
def test_C1_C2_C3_C4_promotion_matches_a_naive_rescan(sightings, min_occurrences, window_days):
    """C1-C4: each observe() promotes exactly when a rescan of the history says it should."""
    clock = ManualClock(0)
    window = window_days * 86_400
    settings = ConsolidationSettings(min_occurrences, window)
    consolidator = Consolidator(SemanticMemory(), settings, clock)
    history, current, conflicts = [], {}, 0
    for subject, value, source, wait in sightings:
        clock.advance(wait * 86_400)
        history.append((subject.casefold(), value.casefold(), source, clock()))
        recent = [h for h in history if h[0] == subject.casefold() and clock() - h[3] <= window]
        values = {h[1] for h in recent}
        sources = list(dict.fromkeys(h[2] for h in recent))
        conflict = len(values) > 1
        expected = (
            not conflict
            and current.get(subject) != value.casefold()
            and len(sources) >= min_occurrences
        )
        fact = consolidator.observe(subject, value, source)
        conflicts += conflict
        assert (fact is not None) == expected  # C1
        if fact is not None:
            assert fact.source_ids == tuple(sources)  # C2
            current[subject] = value.casefold()
    valid = [f.subject.casefold() for f in consolidator.semantic.current()]
    assert len(valid) == len(set(valid))  # C3: one valid fact per subject, never a duplicate
    assert len(consolidator.conflicts) == conflicts  # C4
