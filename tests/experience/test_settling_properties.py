"""Property tests for recuris.experience.settling: what settling keeps (DG1, DG2)."""

from itertools import product

from hypothesis import given
from hypothesis import strategies as st

from recuris.core.text import tokenize
from recuris.experience.settling import MARGIN, settle
from recuris.core.records import Episode, Hit, Step

# Two entries are phrasings of several words, held together by every goal that holds them.
WORDS = ["eu", "us", "csv", "json", "search", "billing", "roll out", "new build of the"]
ACTIONS = ["build", "push a", "push b", "load a", "load b"]


@st.composite
def hits(draw):
    """Hits of past tasks whose goals and steps come from small sets, so that they clash."""
    found = []
    for number in range(draw(st.integers(0, 6))):
        goal = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
        actions = draw(st.lists(st.sampled_from(ACTIONS), min_size=1, max_size=3))
        failed = draw(st.booleans())
        # A step before the last may have failed and been followed by others (a retry).
        retried = draw(st.lists(st.booleans(), min_size=len(actions), max_size=len(actions)))
        marks = [*retried[:-1], failed]
        steps = tuple(
            Step(index, action, "error" if mark else "ok", mark)
            for index, (action, mark) in enumerate(zip(actions, marks, strict=True), start=1)
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


def naive_settle(found, query, evidence):
    """DG2 recounted pair by pair: each hit and past task that contradict, each side read
    among the hits and the evidence (over a step, with the tasks that took the other side's
    action there), the query's words grouped by the past tasks holding them."""
    readers = {episode.id: episode for episode in evidence}
    readers.update((hit.episode.id, hit.episode) for hit in found)

    def failure(episode):
        if episode.status != "failed":
            return None
        step = episode.failed_step
        before = episode.trajectory[: episode.trajectory.index(step)]
        return tuple(done.action for done in before if not done.failed), step.action

    def did(episode, action):
        return any(step.action == action and not step.failed for step in episode.trajectory)

    def then(episode, before):
        # Walk the steps: the ones that worked must spell `before`, and the next one is it.
        expected = list(before)
        for step in episode.trajectory:
            if step.failed:
                continue
            if not expected:
                return step.action
            if step.action != expected.pop(0):
                return None
        return None

    def world(mine, theirs):
        # Failed at mine, or took neither side and did theirs' action right after the steps.
        def member(episode):
            if failure(episode) == mine:
                return True
            apart = failure(episode) not in (mine, theirs)
            return apart and then(episode, mine[0]) == theirs[1]

        return member

    sides = []
    hit_ids = {hit.episode.id for hit in found}
    for one, other in product(list(readers.values()), repeat=2):
        if one.id not in hit_ids and other.id not in hit_ids:
            continue
        mine, theirs = failure(one), failure(other)
        if mine and did(other, mine[1]):
            action = mine[1]
            sides.append((lambda e, a=action: (failure(e) or ((), None))[1] == a,
                          lambda e, a=action: did(e, a)))
        if mine and theirs and mine[0] == theirs[0] and mine[1] != theirs[1]:
            sides.append((world(mine, theirs), world(theirs, mine)))
    asked = set(tokenize(query))
    winning, losing = set(), set()
    for first, second in sides:
        side = [key for key, episode in readers.items() if first(episode)]
        other = [key for key, episode in readers.items() if second(episode)]
        groups = {}
        for word in asked:
            holders = (
                frozenset(key for key in side if word in tokenize(f"task {readers[key].goal}")),
                frozenset(key for key in other if word in tokenize(f"task {readers[key].goal}")),
            )
            groups.setdefault(holders, word)
        leaning = 0.0
        for in_side, in_other in groups:
            lean = (len(in_side) + 1) / (len(side) + 2) - (len(in_other) + 1) / (len(other) + 2)
            leaning += lean * abs(lean)
        if leaning >= MARGIN:
            winning.update(key for key in side if key in {hit.episode.id for hit in found})
            losing.update(key for key in other if key in {hit.episode.id for hit in found})
        elif -leaning >= MARGIN:
            winning.update(key for key in other if key in {hit.episode.id for hit in found})
            losing.update(key for key in side if key in {hit.episode.id for hit in found})
    return [hit for hit in found if hit.episode.id not in losing - winning]


@given(hits(), hits(), queries, st.booleans())
def test_dg2_settle_is_the_naive_recount_with_evidence(found, more, query, hits_too):
    """DG2: what settle leaves out is what a recount pair by pair leaves out, with more past
    tasks as evidence beside the hits (their ids apart from the hits'), the hits among the
    evidence too or not, as a manager's recall gives them."""
    evidence = [
        Episode(
            task_type=hit.episode.task_type,
            goal=hit.episode.goal,
            status=hit.episode.status,
            id=f"evidence-{hit.episode.id}",
            trajectory=hit.episode.trajectory,
            failure_reason=hit.episode.failure_reason,
        )
        for hit in more
    ]
    if hits_too:
        evidence += [hit.episode for hit in found]
    assert settle(found, query, evidence=evidence) == naive_settle(found, query, evidence)
