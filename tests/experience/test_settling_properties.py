"""Property tests for recuris.experience.settling: what settling keeps (DG1, DG2)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.experience.settling import settle
from recuris.core.records import Episode, Hit, Step

WORDS = ["eu", "us", "csv", "json", "search", "billing", "deploy", "import"]
ACTIONS = ["build", "push a", "push b", "load a", "load b"]


@st.composite
def hits(draw):
    """Hits of past tasks whose goals and steps come from small sets, so that they clash."""
    found = []
    for number in range(draw(st.integers(0, 6))):
        goal = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
        actions = draw(st.lists(st.sampled_from(ACTIONS), min_size=1, max_size=3))
        failed = draw(st.booleans())
        steps = tuple(
            Step(
                index,
                action,
                "error" if failed and index == len(actions) else "ok",
                failed and index == len(actions),
            )
            for index, action in enumerate(actions, start=1)
        )
        episode = Episode(
            task_type="task",
            goal=goal,
            status="failed" if failed else "success",
            id=f"episode-{number}",
            trajectory=steps,
            failure_reason="error" if failed else "",
        )
        found.append(Hit(1.0 / (number + 1), episode))
    return found


queries = st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join)


@given(hits(), queries)
def test_dg1_the_result_is_a_subsequence_in_order(found, query):
    """DG1: settling only leaves hits out; those kept keep their order."""
    kept = settle(found, query)
    remaining = iter(found)
    assert all(any(hit is other for other in remaining) for hit in kept)


@given(hits(), queries)
def test_dg1_without_a_failure_nothing_is_left_out(found, query):
    """DG1: with no failed episode there is no disagreement, so every hit stays."""
    successes = [hit for hit in found if hit.episode.status == "success"]
    assert settle(successes, query) == successes


@given(hits())
def test_dg2_a_query_without_words_settles_nothing(found):
    """DG2: a query holds no telling word of either side, so nothing is left out."""
    assert settle(found, "") == found


@given(hits(), queries)
def test_dg2_every_hit_left_out_failed_or_did_an_action_that_another_failed_at(found, query):
    """DG2: a hit is left out only as a side of a disagreement: it failed itself, or did
    without failing an action that a kept or left-out hit failed at."""
    kept = {hit.episode.id for hit in settle(found, query)}
    failed_at = {hit.episode.failed_step.action for hit in found if hit.episode.status == "failed"}
    for hit in found:
        if hit.episode.id not in kept:
            done = {step.action for step in hit.episode.trajectory if not step.failed}
            assert hit.episode.status == "failed" or done & failed_at
