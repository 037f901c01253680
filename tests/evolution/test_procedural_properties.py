"""ProceduralMemory's trigger matching checked against a naive rule (H1-H3)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris import ManualClock, ProceduralMemory
from recuris.core.text import normalize, tokenize

words = st.sampled_from(["deploy", "release", "hotfix", "report", "backup", "staging"])
procedures = st.lists(
    st.tuples(
        st.sampled_from(["ship", "Ship", "restore", "audit"]),
        st.lists(words, max_size=2),
        st.lists(words, max_size=2),
    ),
    max_size=6,
)


@given(procedures, st.lists(words, max_size=4).map(" ".join), st.none() | words)
def test_H1_H3_a_valid_procedure_matches_iff_a_trigger_does(specs, query, task_type):
    """H1: the match set equals a naive check of every
    valid procedure's triggers; H3: one valid per name."""
    memory = ProceduralMemory(clock=ManualClock(0))
    latest = {}
    for name, task_types, keywords in specs:
        if not task_types and not keywords:
            continue
        memory.add(name, ["step"], task_types, keywords)
        latest[normalize(name)] = (task_types, keywords)
    expected = {
        name
        for name, (types, keywords) in latest.items()
        if (task_type is not None and task_type in types)
        or any(set(tokenize(k)) <= set(tokenize(query)) for k in keywords)
    }
    assert {normalize(p.name) for p, _ in memory.match(query, task_type)} == expected
    assert len(memory.procedures) == len(latest)
