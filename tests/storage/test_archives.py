"""Example tests for recuris.storage.archives: the core's episodes kept in a Store (AR1-AR6)."""

import logging
from dataclasses import replace

import pytest

from recuris import (
    Episode,
    InMemoryStore,
    ManualClock,
    MemoryManager,
    SQLiteStore,
    Step,
)
from recuris.storage.archives import StoredEpisodes


def test_an_episode_reads_back_equal_to_the_one_written(tmp_path):
    """AR1: id, text, trajectory, status and decay fields come back from SQLite unchanged."""
    store = SQLiteStore(tmp_path / "m.db")
    episode = Episode(
        task_type="deploy",
        goal="ship the api",
        status="failed",
        failure_reason="timeout",
        trajectory=(Step(1, "build", "ok"), Step(2, "push", "timeout", True)),
        created_at=5.0,
        importance=0.5,
        access_count=2,
        last_access_at=7.0,
    )
    StoredEpisodes(store, "ana").add_episode(episode)
    [loaded] = StoredEpisodes(SQLiteStore(tmp_path / "m.db"), "ana").episodes
    assert loaded == episode


def test_an_archive_sees_only_its_own_user():
    """AR3: another user's episodes never load into this user's memory."""
    store = InMemoryStore()
    StoredEpisodes(store, "bob").add_episode(Episode(task_type="t", goal="g", status="success"))
    assert len(StoredEpisodes(store, "ana")) == 0


def test_an_embedding_scorer_s_terms_are_kept_and_reloaded_without_analysing_again():
    """AR1: a scorer's kept terms are reloaded from the store, not analysed again."""
    from recuris.core.similarity import JaccardScorer

    class Counting(JaccardScorer):
        persist = True  # like an embedding scorer: its terms are worth keeping

        def __init__(self):
            super().__init__()
            self.analysed = 0

        def analyzer(self, text):
            self.analysed += 1
            return super().analyzer(text)

    store = InMemoryStore()
    StoredEpisodes(store, "ana", Counting).add_episode(
        Episode(task_type="deploy", goal="ship the api", status="success")
    )
    reloaded = StoredEpisodes(store, "ana", Counting)
    assert reloaded.scorer.analysed == 0 and [
        h.episode.goal for h in reloaded.retrieve("ship api", 1, 0.1)
    ] == ["ship the api"]


def test_settle_commits_the_episode_its_audit_and_the_deletions_in_one_put():
    """AR2: settle writes the episode, the audit records and the deletions in one transaction."""
    from recuris import MemoryItem
    from recuris import AuditEntry

    class Counting(InMemoryStore):
        puts = 0

        def put(self, items, audit=(), delete=()):
            self.puts += 1
            return super().put(items, audit, delete)

    store = Counting()
    scratch = MemoryItem(id="work-1", user_id="ana", level="working", content="step")
    store.put([scratch])
    memory = StoredEpisodes(store, "ana")
    done = Episode(task_type="deploy", goal="ship", status="success", id="episode-7")
    written = AuditEntry("episode-7", "write", "episode: success", 0.0, None, "ana")
    memory.settle(done, [written], [scratch])
    assert store.puts == 2 and memory.get("episode-7") is done
    assert [item.id for item in store.list("ana")] == ["episode-7"]
    assert [record.operation for record in store.audit("ana")] == ["write"]


def test_settle_refuses_an_id_the_memory_holds_and_writes_nothing():
    """AR2, E5: an episode id already held is refused before anything reaches the store."""
    store = InMemoryStore()
    memory = StoredEpisodes(store, "ana")
    memory.add_episode(Episode(task_type="t", goal="first", status="success", id="episode-1"))
    again = Episode(task_type="t", goal="second", status="success", id="episode-1")
    with pytest.raises(ValueError, match="E5"):
        memory.settle(again)
    with pytest.raises(ValueError, match="E5"):
        memory.settle(Episode(task_type="t", goal="no id", status="success"))
    assert [item.metadata["goal"] for item in store.list("ana")] == ["first"]


def without(field):
    return lambda metadata: {key: value for key, value in metadata.items() if key != field}


def with_value(field, value):
    return lambda metadata: {**metadata, field: value}


NO_EPISODES = {
    "without-trajectory": without("trajectory"),
    "trajectory-as-text": with_value("trajectory", "build"),
    "trajectory-as-object": with_value("trajectory", {"build": "ok"}),
    "step-without-result": with_value("trajectory", [[1, "build"]]),
    "without-goal": without("goal"),
    "goal-as-number": with_value("goal", 5),
    "unknown-status": with_value("status", "weird"),
    "summary-as-number": with_value("summary", 7),
}


@pytest.mark.parametrize("edit", NO_EPISODES.values(), ids=NO_EPISODES)
def test_a_stored_item_that_is_no_episode_takes_no_task_of_its_user_down(caplog, edit):
    """AR4: an episode whose metadata was edited is left out of the user's episodes, unchanged
    in the store, with a warning naming its id and AR4; the next task starts and finishes."""
    store = InMemoryStore()
    manager = MemoryManager(store, clock=ManualClock(1_000))
    manager.start_task("ana", "deploy the api", "deploy")
    manager.record_step("ana", "build", "ok")
    first = manager.finish_task("ana").episode
    stored = store.get("ana", first.id)
    edited = replace(stored, metadata=edit(stored.metadata))
    store.put([edited])
    manager = MemoryManager(store, clock=ManualClock(2_000))
    manager.start_task("ana", "deploy the api again", "deploy")
    manager.record_step("ana", "build", "ok")
    with caplog.at_level(logging.WARNING):
        second = manager.finish_task("ana").episode
    archive = StoredEpisodes(store, "ana")
    assert [episode.id for episode in archive.episodes] == [second.id]
    assert archive.skipped == (first.id,) and store.get("ana", first.id) == edited
    assert f"AR4: episodic item {first.id!r}" in caplog.text


def test_an_episode_saved_again_keeps_the_notes_its_summary_holds():
    """AR5: an episode settled with its folded notes, saved again when accessed, still maps
    them, so that a note forgotten later is found in it."""
    store = InMemoryStore()
    memory = StoredEpisodes(store, "ana")
    line = "note: the vault code is 4711"
    done = Episode(task_type="deploy", goal="ship", status="success", id="episode-7", summary=line)
    memory.settle(done, folded={"item-3": line})
    done.access_count += 1
    memory.save(done)
    stored = store.get("ana", "episode-7")
    assert stored.access_count == 1 and stored.metadata["folded_notes"] == {"item-3": line}


def test_a_new_memory_on_the_same_store_holds_the_same_episodes_and_hits():
    """AR6: a memory opened again on the store and user holds what the first one wrote, added,
    saved or removed, and retrieves the same hits."""
    store = InMemoryStore()
    memory = StoredEpisodes(store, "ana")
    for goal in ("deploy the billing service", "deploy the search service", "rotate keys"):
        memory.add_episode(Episode(task_type="ops", goal=goal, status="success"))
    first = memory.episodes[0]
    first.access_count += 1
    memory.save(first)
    memory.remove([memory.episodes[2].id, "unknown"])
    again = StoredEpisodes(store, "ana")
    assert again.episodes == memory.episodes
    assert again.retrieve("deploy billing", 2, 0.1) == memory.retrieve("deploy billing", 2, 0.1)


def test_an_episode_the_store_refuses_is_not_held():
    """AR6, AR3: an id another user owns is refused by the store, and the memory holds nothing."""
    store = InMemoryStore()
    StoredEpisodes(store, "bob").add_episode(
        Episode(task_type="t", goal="g", status="success", id="episode-1")
    )
    memory = StoredEpisodes(store, "ana")
    with pytest.raises(ValueError):
        memory.add_episode(Episode(task_type="t", goal="g", status="success", id="episode-1"))
    assert len(memory) == 0
