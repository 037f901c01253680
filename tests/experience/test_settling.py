"""Example tests for recuris.experience.settling: past tasks that contradict (DG1-DG4)."""

from recuris import EpisodicMemory, RetrievalSettings
from recuris.core.records import Episode, Hit, Step
from recuris.experience.settling import (
    CANDIDATES,
    EVIDENCE,
    candidates_and_evidence,
    retrieve_settled,
    settle,
)

from twins import deployment, failed_push, twins


def task(goal, *steps, score=0.5):
    """A hit for a past task whose steps are (action, failed) pairs, in order."""
    trajectory = tuple(
        Step(number, action, "error" if failed else "ok", failed)
        for number, (action, failed) in enumerate(steps, start=1)
    )
    failed = steps[-1][1]  # a task whose last step worked succeeded, a retry included
    episode = Episode(
        task_type="deployment",
        goal=goal,
        status="failed" if failed else "success",
        id=goal,
        trajectory=trajectory,
        failure_reason="error" if failed else "",
    )
    return Hit(score, episode)


EU = [
    task("deploy search to EU prod", ("build", False), ("push internal", True)),
    task("deploy billing to EU prod", ("build", False), ("push internal", True)),
]
US = [
    task("deploy search to US prod", ("build", False), ("push internal", False)),
    task("deploy checkout to US prod", ("build", False), ("push internal", False)),
]


def goals(hits):
    return [hit.episode.goal for hit in hits]


def test_a_hit_that_only_the_evidence_contradicts_is_settled():
    """DG1, DG2: the hits agree among themselves (two EU tasks pushed to the mirror), but past
    tasks given as evidence, all in the US, failed there: a US query leaves the hits out."""
    eu = [task(goal, ("build", False), ("push mirror", False))
          for goal in ["ship search live in the EU region", "release checkout to EU customers"]]
    us = [task(goal, ("build", False), ("push mirror", True))
          for goal in ["ship search live in the US region", "release checkout to US customers"]]
    evidence = [hit.episode for hit in us]
    assert settle(eu, "release search to US customers") == eu
    assert settle(eu, "release search to US customers", evidence=evidence) == []


def test_over_a_step_a_side_holds_the_tasks_that_went_the_other_way_and_worked():
    """DG2: PG failed at the exporter and MariaDB at the snapshotter after stopping the
    writers, and one failure each leaves a MariaDB query undecided; the MariaDB tasks that
    took the exporter there and worked count with the MariaDB failure, and the query leaves
    out the PG failure and a PG task that took the snapshotter."""
    stop = ("stop the writers", False)
    pg = task("take a snapshot of the PG billing db", stop, ("dump by exporter", True))
    maria = task("dump the MariaDB orders database", stop, ("dump by snapshotter", True))
    query = "take a snapshot of the MariaDB analytics db"
    assert settle([pg, maria], query) == [pg, maria]
    worked = [task(goal, stop, ("dump by exporter", False)) for goal in
              ["take a snapshot of the MariaDB billing db", "back up the MariaDB orders store"]]
    evidence = [hit.episode for hit in worked]
    pg_way = task("back up the PG analytics store", stop, ("dump by snapshotter", False))
    assert goals(settle([pg, maria, pg_way], query, evidence=evidence)) == goals([maria])


def test_hits_that_do_not_disagree_all_stay_in_their_order():
    """DG1: two failures at the same action and a success elsewhere: nothing is left out."""
    hits = [*EU, task("deploy search to US prod", ("build", False), ("roll out", False))]
    assert settle(hits, "deploy search to US prod") == hits


def test_a_query_holding_the_word_of_the_side_that_did_the_action_leaves_out_the_failures():
    """DG2: EU failed at "push internal", US did it; a US query leaves the EU episodes out."""
    assert goals(settle([*EU, *US], "deployment deploy search to US prod")) == goals(US)


def test_a_query_holding_the_word_of_the_failing_side_leaves_out_the_others():
    """DG2: the same disagreement, an EU query: the US episodes are left out."""
    assert goals(settle([*US, *EU], "deploy checkout to EU prod")) == goals(EU)


def test_a_query_holding_neither_sides_word_settles_nothing():
    """DG2: without "EU" or "US" the query sides with nobody: every hit stays."""
    assert settle([*EU, *US], "deploy search to prod") == [*EU, *US]


def test_a_query_holding_both_sides_words_settles_nothing():
    """DG2: a query naming both regions sides with neither."""
    assert settle([*EU, *US], "deploy search to EU and US prod") == [*EU, *US]


def test_words_that_vary_within_a_side_do_not_tell_it_apart():
    """DG2: "search" is in one EU and one US goal, so it tells neither side apart; a query
    naming only the service settles nothing."""
    assert settle([*EU, *US], "deploy search") == [*EU, *US]


def test_the_words_one_phrasing_holds_count_once():
    """DG2: the query shares a phrasing's six words with an EU task that pushed to the mirror
    and "US" with a US task that failed there; the phrasing's words are held by the same task,
    so they weigh as one word: the two lean alike, and neither task is left out."""
    failing = task("deploy the notification worker to the US production cluster",
                   ("build", False), ("push mirror", True))
    working = task("roll out the new build of billing on EU prod",
                   ("build", False), ("push mirror", False))
    hits = [working, failing]
    assert settle(hits, "roll out the new build of checkout on US prod") == hits


def test_past_tasks_beyond_the_hits_are_evidence():
    """DG2: the same two hits, with two more US tasks that failed at the mirror and two EU
    tasks that pushed there, none in the query's phrasing: every US task holds "US", and the
    US query leaves the EU hit out."""
    failing = task("deploy the notification worker to the US production cluster",
                   ("build", False), ("push mirror", True))
    working = task("roll out the new build of billing on EU prod",
                   ("build", False), ("push mirror", False))
    us = [task(goal, ("build", False), ("push mirror", True))
          for goal in ["ship search live in the US region", "release checkout to US customers"]]
    eu = [task(goal, ("build", False), ("push mirror", False))
          for goal in ["ship search live in the EU region", "release checkout to EU customers"]]
    evidence = [hit.episode for hit in [*us, *eu]]
    settled = settle([working, failing], "roll out the new build of checkout on US prod",
                     evidence=evidence)
    assert goals(settled) == goals([failing])


def test_evidence_that_holds_only_the_hits_changes_nothing():
    """DG2: the hits' own episodes given as evidence are read once, as the hits are."""
    hits = [*EU, *US]
    query = "deploy search to US prod"
    assert settle(hits, query, evidence=[hit.episode for hit in hits]) == settle(hits, query)


CSV = [
    task("import the CRM CSV export", ("download", False), ("bulk load", True)),
    task("import the ticketing CSV export", ("download", False), ("bulk load", True)),
]
JSON = [
    task("import the payroll JSON export", ("download", False), ("row by row", True)),
    task("import the billing JSON export", ("download", False), ("row by row", True)),
]


def test_failures_at_different_actions_after_the_same_steps_are_settled():
    """DG2, over a step: CSV failed at one loader, JSON at the other, both after "download";
    a CSV query leaves the JSON failures out, so one way through the step stays open."""
    assert goals(settle([*JSON, *CSV], "import the payroll CSV dump")) == goals(CSV)


def test_failures_after_different_steps_are_not_a_disagreement():
    """DG1: failures at two actions reached by different steps are not alternatives."""
    other = [
        task("import the payroll JSON export", ("unzip", False), ("row by row", True)),
        task("import the billing JSON export", ("unzip", False), ("row by row", True)),
    ]
    assert settle([*other, *CSV], "import the payroll CSV dump") == [*other, *CSV]


def test_a_hit_the_query_sided_with_once_is_not_left_out_by_another_disagreement():
    """DG3: A failed at push after migrating, B at migrate after pushing; each did what the
    other failed at. A query naming EU and US sides with A over push and with B over migrate:
    both stay, and C (Asia, did both) is the one left out."""
    a = task("deploy storefront EU cluster", ("migrate", False), ("push", True))
    b = task("deploy storefront US cluster", ("push", False), ("migrate", True))
    c = task("deploy storefront Asia cluster", ("push", False), ("migrate", False))
    assert goals(settle([a, b, c], "replicate storefront from EU to US cluster")) == goals([a, b])


def test_a_retry_that_worked_counts_as_doing_the_action():
    """DG2: a task that failed at push, then pushed, did push without failing: it disagrees
    with one that failed at push, and a US query leaves the EU failure out."""
    recovered = task("deploy storefront US cluster", ("push", True), ("push", False))
    failed = task("deploy storefront EU cluster", ("push", True))
    assert goals(settle([failed, recovered], "deploy billing US cluster")) == goals([recovered])


def test_the_step_of_a_failure_is_the_one_it_is_shown_failing_at():
    """DG2: a task that failed at login, logged in again and failed at push failed at push
    after "login again"; one that failed at "check quota" after nothing is no alternative."""
    later = task(
        "deploy storefront EU cluster",
        ("login", True),
        ("login again", False),
        ("push", True),
    )
    other = task("deploy storefront US cluster", ("check quota", True))
    assert settle([later, other], "deploy billing EU cluster") == [later, other]


def test_the_words_compared_can_be_the_scorers():
    """DG2: with words that drop "the", a query holding "the" sides with nobody."""
    failed = task("deploy the storefront to EU", ("push", True))
    worked = task("deploy storefront to US", ("push", False))

    def without_the(text):
        return [word for word in text.lower().split() if word != "the"]

    assert goals(settle([failed, worked], "deploy the storefront")) == goals([failed])
    assert settle([failed, worked], "deploy the storefront", without_the) == [failed, worked]


def test_retrieve_settled_leaves_out_what_the_query_sides_against():
    """DG4: two EU failures at one push and two US failures at the other disagree over a
    step; a US query is shown the US failures only, the EU ones left out by `settle`."""
    memory = EpisodicMemory()
    for number, goal in enumerate(["deploy search to EU", "deploy billing to EU"]):
        memory.add_episode(failed_push(goal, "push internal", number))
    for number, goal in enumerate(["deploy search to US", "deploy checkout to US"]):
        memory.add_episode(failed_push(goal, "push mirror", 10 + number))
    settings = RetrievalSettings(top_k=4, threshold=0.1)
    query = "deploy deploy search to US"
    assert len(memory.retrieve(query, 4, 0.1)) == 4
    assert goals(retrieve_settled(memory, query, settings)) == [
        "deploy search to US",
        "deploy checkout to US",
    ]


def test_a_hit_settled_out_is_replaced_from_beyond_top_k():
    """DG4: `top_k` · CANDIDATES hits are read: the best hit, a failure the query's "US" sides
    against once its EU twin beyond top_k is read, gives way to the US hit ranked after it."""
    memory = EpisodicMemory()
    memory.add_episode(failed_push("deploy storefront search nightly to EU", "push internal", 1))
    memory.add_episode(failed_push("deploy billing to EU", "push internal", 2))
    pushed = (Step(1, "build", "ok", False), Step(2, "push internal", "ok", False))
    memory.add_episode(deployment("deploy storefront to US", pushed, 3))
    query = "deploy storefront search nightly to US"
    assert goals(memory.retrieve(query, 1, 0.1)) == ["deploy storefront search nightly to EU"]
    settled = retrieve_settled(memory, query, RetrievalSettings(top_k=1, threshold=0.1))
    assert goals(settled) == ["deploy storefront to US"]


def test_the_evidence_is_the_nearest_episodes_at_least_the_threshold():
    """DG4: the candidates are retrieve's top_k · CANDIDATES, the evidence its top_k ·
    CANDIDATES · EVIDENCE at the threshold or above, best first."""
    memory = EpisodicMemory()
    for number in range(12):
        memory.add_episode(failed_push(f"deploy service {number} to EU", "push internal", number))
    memory.add_episode(failed_push("rotate the keys", "push internal", 20))
    settings = RetrievalSettings(top_k=2, threshold=0.2)
    candidates, evidence = candidates_and_evidence(memory, "deploy to EU", settings)
    assert candidates == memory.retrieve("deploy to EU", 2 * CANDIDATES, 0.2)
    assert evidence == [hit.episode for hit in memory.retrieve("deploy to EU", 13, 0.2)]
    assert len(evidence) == 12  # "rotate the keys" shares only the task type: 1 word of 6


def test_the_evidence_is_bounded_whatever_the_memory_holds():
    """DG4: of more past tasks above the threshold, the evidence is the nearest top_k ·
    CANDIDATES · EVIDENCE."""
    memory = EpisodicMemory()
    for number in range(CANDIDATES * EVIDENCE + 5):
        memory.add_episode(failed_push(f"deploy service {number} to EU", "push internal", number))
    settings = RetrievalSettings(top_k=1, threshold=0.2)
    _, evidence = candidates_and_evidence(memory, "deploy to EU", settings)
    nearest = memory.retrieve("deploy to EU", CANDIDATES * EVIDENCE, 0.2)
    assert evidence == [hit.episode for hit in nearest]


def test_retrieve_settled_without_settling_is_retrieve():
    """DG4: with settling off it returns exactly `retrieve`'s top k."""
    memory = twins()
    settings = RetrievalSettings(top_k=2, threshold=0.1)
    query = "deploy search to US"
    unsettled = retrieve_settled(memory, query, settings, settling=False)
    assert unsettled == memory.retrieve(query, 2, 0.1)
    assert goals(retrieve_settled(memory, query, settings)) == ["deploy search to US"]


def typed(task_type, goal, *steps):
    """A hit for a past task of a given task type (`task`'s, its type replaced)."""
    hit = task(goal, *steps)
    episode = hit.episode
    return Hit(hit.score, Episode(
        task_type=task_type,
        goal=goal,
        status=episode.status,
        id=goal,
        trajectory=episode.trajectory,
        failure_reason=episode.failure_reason,
    ))


def test_a_task_type_word_in_the_goals_of_one_side_does_not_side_the_query_with_it():
    """DG2: each hit is read as its task type and goal, as the query is: the task type "deploy"
    is in every hit then, and a query telling no side apart settles nothing."""
    failing = [
        typed("deploy", "deploy search to EU prod", ("build", False), ("push internal", True)),
        typed("deploy", "deploy billing to EU prod", ("build", False), ("push internal", True)),
    ]
    working = [
        typed("deploy", "ship search live in US", ("build", False), ("push internal", False)),
        typed("deploy", "ship checkout live in US", ("build", False), ("push internal", False)),
    ]
    hits = [*failing, *working]
    assert settle(hits, "deploy roll out the new build of checkout") == hits
