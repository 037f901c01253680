"""Example tests for recuris.evolution.forgetting: cycles over a manager's store (O1-O8, D4, D5)."""

from dataclasses import replace

import pytest

from recuris import DecayManager, ManualClock, MemoryManager
from recuris.core.records import Episode, Step
from recuris.storage.archives import episode_to_item
from recuris.tour.simulation import simulate

DAY = 86_400.0


@pytest.fixture
def clock():
    return ManualClock(0)


@pytest.fixture
def manager(clock):
    return MemoryManager(clock=clock)


def test_stale_items_are_forgotten_with_weight_and_reason(manager, clock):
    """O1, O2: an unused event below the threshold is deleted and the deletion audited."""
    stale = manager.write("printer on floor 3 jammed", "ana", importance=0.5)
    clock.advance(30 * DAY)
    report = manager.run_decay("ana")
    assert [i.id for i in report.forgotten] == [stale.id] and manager.get(stale.id, "ana") is None
    [record] = manager.history("ana", stale.id)[-1:]
    assert (
        record.operation == "forget"
        and record.weight < 0.15
        and "below retention threshold" in record.reason
    )


def test_used_items_survive(manager, clock):
    """D4 over the store: recall reinforces: an item recalled on the way outlives an unused twin."""
    used = manager.write("the vpn needs the blue token", "ana")
    unused = manager.write("lunch menu changed on tuesday", "ana")
    for _ in range(4):
        clock.advance(6 * DAY)
        manager.recall("vpn token", "ana")
    manager.run_decay("ana")
    assert manager.get(used.id, "ana") is not None and manager.get(unused.id, "ana") is None


def test_similar_items_in_the_merge_band_are_merged_keeping_every_source(manager, clock):
    """O3: near-duplicates in the band become one item: every id kept, the highest importance."""
    a = manager.write("deploy failed: the DB_URL variable was missing", "ana", importance=0.6)
    b = manager.write("deploy failed: the DB_URL variable was missing again", "ana", importance=0.9)
    other = manager.write("the office plant needs water", "ana", importance=0.6)
    clock.advance(8 * DAY)  # 0.6 -> 0.27, 0.9 -> 0.41: a is in the band; b just above it
    clock.advance(2 * DAY)  # 0.9 -> 0.34: both in the band now
    report = manager.run_decay("ana")
    [(survivor, merged)] = report.merged
    assert survivor.id == b.id and [m.id for m in merged] == [a.id]
    kept = manager.get(b.id, "ana")
    assert kept.importance == 0.9 and a.id in kept.metadata["merged_ids"]
    assert manager.get(a.id, "ana") is None and manager.get(other.id, "ana") is not None
    assert manager.history("ana", a.id)[-1].operation == "merge"


def test_merging_never_crosses_users_or_touches_invalid_items(manager, clock):
    """O3: the same text for two users stays two items; superseded facts are not merged."""
    manager.write("deploy failed: the DB_URL variable was missing", "ana", importance=0.6)
    manager.write("deploy failed: the DB_URL variable was missing", "bob", importance=0.6)
    manager.write("database: MySQL", "ana", level="semantic")
    manager.write("database: PostgreSQL", "ana", level="semantic")
    clock.advance(9 * DAY)
    report = manager.run_decay("ana")
    assert report.merged == () and len(manager.list("bob")) == 1
    assert [i.content for i in manager.list("ana", "semantic")] == [
        "database: MySQL",
        "database: PostgreSQL",
    ]


def _stored_episode(manager, episode_id: str, goal: str, action: str, failed: bool):
    """Store an episode of importance 0.6 that did "build the image", then `action`."""
    steps = (Step(1, "build the image", "ok"), Step(2, action, "error" if failed else "ok", failed))
    episode = Episode(
        task_type="deploy",
        goal=goal,
        status="failed" if failed else "success",
        id=episode_id,
        trajectory=steps,
        failure_reason=f"failed at {action}" if failed else "",
        created_at=manager.clock(),
        importance=0.6,
    )
    manager.store.put([episode_to_item(episode, "ana")])


def test_episodes_that_failed_at_different_actions_are_not_merged(manager, clock):
    """O8: two failures alike in words but at different actions keep both lessons."""
    _stored_episode(manager, "eu", "deploy the shop to the EU cluster", "push to it", True)
    _stored_episode(manager, "us", "deploy the shop to the US cluster", "pull from it", True)
    clock.advance(9 * DAY)
    report = manager.run_decay("ana")
    assert report.merged == () and {item.id for item in manager.list("ana")} == {"eu", "us"}


def test_episodes_that_say_the_same_are_merged(manager, clock):
    """O8: two failures at the same action after the same ones, alike in words, are merged."""
    _stored_episode(manager, "one", "deploy the shop to the EU cluster", "push to it", True)
    _stored_episode(manager, "two", "deploy the shop to the EU cluster now", "push to it", True)
    clock.advance(9 * DAY)
    [(survivor, merged)] = manager.run_decay("ana").merged
    assert {survivor.id, *(item.id for item in merged)} == {"one", "two"}


def test_an_episode_whose_steps_were_rewritten_is_compared_again(manager, clock):
    """O8, O4: an episode whose stored steps now say what another's say, its text unchanged,
    is merged with it at the next cycle, as the naive cycle would."""
    _stored_episode(manager, "eu", "deploy the shop to the EU cluster", "push to it", True)
    _stored_episode(manager, "us", "deploy the shop to the US cluster", "pull from it", True)
    clock.advance(9 * DAY)
    assert manager.run_decay("ana").merged == ()
    us = manager.get("us", "ana")
    steps = [list(row) for row in us.metadata["trajectory"]]
    steps[-1][1] = "push to it"
    manager.store.put([replace(us, metadata={**us.metadata, "trajectory": steps})])
    assert len(manager.run_decay("ana").merged) == 1


def test_an_episode_that_cannot_be_read_is_merged_with_none(manager, clock):
    """O8: episodes whose stored structure is broken, alike in words, are not merged, neither
    with each other nor with one that is read."""
    goal = "deploy the shop to the EU cluster"
    for key, words in (("one", goal), ("two", f"{goal} now"), ("three", f"{goal} today")):
        _stored_episode(manager, key, words, "push to it", True)
    for key in ("two", "three"):
        broken = manager.get(key, "ana")
        manager.store.put([replace(broken, metadata={**broken.metadata, "trajectory": "push"})])
    clock.advance(9 * DAY)
    assert manager.run_decay("ana").merged == ()


def test_consolidated_memory_decays_more_slowly(clock):
    """D5: a fact outlives an event of the same importance by the slowdown factor."""
    decay = DecayManager(clock=clock)
    manager = MemoryManager(clock=clock, decay=decay)
    event = manager.write("the cache was cleared", "ana", importance=0.8)
    fact = manager.write("cache ttl: 10 minutes", "ana", level="semantic")
    clock.advance(30 * DAY)
    stored_fact = manager.get(fact.id, "ana")
    half_life = decay.settings.half_life_days * DAY * decay.settings.consolidated_slowdown
    expected = stored_fact.importance * decay.settings.curve.weight(30 * DAY, half_life)
    assert decay.weight(stored_fact) == pytest.approx(expected)
    # Wait until the event falls below the threshold, whatever the curve: the fact outlives it.
    threshold = decay.settings.retention_threshold
    while decay.weight(manager.get(event.id, "ana")) >= threshold:
        clock.advance(DAY)
    manager.run_decay("ana")
    assert manager.get(event.id, "ana") is None and manager.get(fact.id, "ana") is not None


def test_a_cycle_refreshes_the_layers(manager, clock):
    """O1 in the layers: after a cycle, the episodic layer never retrieves what was forgotten."""
    from recuris import Episode

    episodes = manager.users.get("ana").episodic
    episodes.add_episode(
        Episode(task_type="deploy", goal="ship release 7", status="success", created_at=0.0)
    )
    clock.advance(60 * DAY)
    manager.run_decay("ana")
    assert manager.users.get("ana").episodic.retrieve("deploy ship release") == []


def test_a_simulated_quarter_levels_off_and_keeps_the_habits():
    """Forgetting makes the store plateau: size stops growing linearly; recalled habits survive."""
    report = simulate(days=90, per_day=10, seed=3)
    second_month, third_month = report.sizes[30:60], report.sizes[60:]
    assert max(third_month) < 1.2 * max(second_month)  # growth has stopped
    assert report.plateau < 0.25 * report.written  # far below what was written
    assert report.habit_survival == 1.0 and report.one_off_survival < 0.05


def test_an_item_weighing_exactly_the_merge_ceiling_is_not_merged(manager, clock):
    """O3: the merge band lies strictly below the ceiling; at the ceiling an item stays whole."""
    a = manager.write("deploy failed: the DB_URL variable was missing", "ana", importance=0.8)
    manager.write("deploy failed: the DB_URL variable was missing again", "ana", importance=0.8)
    decay = manager.forgetting.decay
    clock.advance(decay.settings.half_life_seconds)  # both weigh 0.8 / 2 = 0.4 exactly
    assert decay.weight(manager.get(a.id, "ana")) == 0.4
    assert manager.run_decay("ana", merge_ceiling=0.4).merged == ()
    clock.advance(1.0)
    assert len(manager.run_decay("ana", merge_ceiling=0.4).merged) == 1


def test_an_item_rewritten_since_the_last_cycle_is_compared_again(manager, clock):
    """O4: two band items left apart by one cycle merge in the next once one is rewritten alike."""
    first = manager.write("the office plant needs water", "ana", level="episodic", importance=0.5)
    second = manager.write("vpn token is blue", "ana", level="episodic", importance=0.5)
    clock.advance(5 * DAY)  # both now weigh about 0.3: in the merge band
    assert manager.run_decay("ana").merged == ()
    manager.store.put(
        [replace(manager.get(second.id, "ana"), content="the office plant needs water")]
    )
    [(survivor, others)] = manager.run_decay("ana").merged
    assert {survivor.id, *(other.id for other in others)} == {first.id, second.id}


def test_a_large_cycle_reports_counts_without_items(manager, clock):
    """O5: without `itemized`, the report counts what was forgotten and merged, holding no item."""
    for text in ("printer jammed", "the office plant needs water", "the office plant needs water"):
        manager.write(text, "ana", level="episodic", importance=0.5)
    clock.advance(5 * DAY)
    report = manager.run_decay("ana", itemized=False, batch_size=1)
    assert (report.forgotten, report.merged, report.audit) == ((), (), ())
    assert (report.merged_count, report.size_before, report.size_after) == (1, 3, 2)


def test_an_item_similar_to_two_leads_is_merged_into_one_group_only(manager, clock):
    """O3, O4: in a chain a ~ b ~ c with a and c apart, b joins the stronger lead, c stays whole."""
    words = "amber basil cedar dune ember fjord grove heath iris juniper".split()
    a = manager.write(" ".join(words), "ana", importance=0.6)
    b = manager.write(" ".join([*words[:9], "kelp"]), "ana", importance=0.5)  # 9/11 like a
    c = manager.write(" ".join([*words[:8], "kelp", "lotus"]), "ana", importance=0.55)  # 9/11 b
    clock.advance(8 * DAY)  # all three weigh between 0.2 and 0.3: in the merge band
    report = manager.run_decay("ana")
    groups = [[survivor.id, *(item.id for item in merged)] for survivor, merged in report.merged]
    assert groups == [[a.id, b.id]]
    assert manager.get(c.id, "ana") is not None and manager.get(b.id, "ana") is None


UNMERGEABLE = {
    "merged-ids-as-text": {"merged_ids": "item-1"},
    "merged-ids-as-number": {"merged_ids": 5},
    "merged-ids-as-object": {"merged_ids": {"item-1": True}},
    "source-ids-as-number": {"source_ids": 7},
}


@pytest.mark.parametrize("edit", UNMERGEABLE.values(), ids=UNMERGEABLE)
@pytest.mark.parametrize("stronger", [True, False], ids=["edited-leads", "edited-follows"])
def test_an_item_whose_sources_are_not_a_list_of_text_is_left_out_of_the_merge(
    manager, clock, caplog, edit, stronger
):
    """O7: an item whose `merged_ids` or `source_ids` is no list of text takes no cycle down and
    is merged with nothing, unchanged (never read letter by letter); a warning names it and O7."""
    a = manager.write("deploy failed: the DB_URL variable was missing", "ana", importance=0.6)
    b = manager.write("deploy failed: the DB_URL variable was missing", "ana", importance=0.6)
    edited = replace(a, importance=0.7 if stronger else 0.5, metadata={**a.metadata, **edit})
    manager.store.put([edited])
    clock.advance(8 * DAY)  # both weigh between 0.2 and 0.4: in the merge band
    with caplog.at_level("WARNING"):
        report = manager.run_decay("ana")
    assert report.merged == () and report.forgotten == ()
    assert manager.get(a.id, "ana") == edited and manager.get(b.id, "ana") == b
    assert f"O7: item {a.id!r}" in caplog.text
