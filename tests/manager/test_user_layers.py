"""Example tests for recuris.manager.user_layers.UserLayers: a user's layers (UL1-UL4)."""

import threading

import pytest
from outages import Outage
from watched_lock import WatchedLock, waits_or_ends

from recuris import Episode, ManualClock, MemoryManager, SQLiteStore
from recuris.manager.recall import Recalled
from recuris.manager.user_layers import UserLayers
from recuris.storage.buffered_store import BufferedStore
from recuris.storage.memory_store import InMemoryStore


@pytest.fixture
def two_managers(tmp_path):
    here = MemoryManager(SQLiteStore(tmp_path / "m.db"), clock=ManualClock(0.0))
    elsewhere = MemoryManager(SQLiteStore(tmp_path / "m.db"), clock=ManualClock(0.0))
    return here, elsewhere


def test_a_forget_made_elsewhere_ends_the_task_in_progress_at_the_next_call(two_managers):
    """UL1: a manager that finds its user forgotten elsewhere drops their task before using it."""
    here, elsewhere = two_managers
    here.start_task("ana", "open the vault")
    elsewhere.forget_user("ana")
    assert here.recall("vault", "ana").results == ()
    assert list(here.tasks) == []


def test_a_forget_found_by_another_reader_ends_the_task_at_the_managers_next_read(two_managers):
    """UL1: a forget found through `users.get` (active recall, say) is noted for the manager."""
    here, elsewhere = two_managers
    here.start_task("ana", "open the vault")
    elsewhere.forget_user("ana")
    here.users.get("ana")  # a reader other than the manager finds the forget
    assert list(here.tasks) == ["ana"]  # noted, not yet acted on
    here.write("the vault opens at nine", "ana", level="semantic")
    assert list(here.tasks) == []


def test_a_task_started_after_a_forget_was_found_elsewhere_is_kept(two_managers):
    """UL1: the note of a forget ends the task it found, never one started after it."""
    here, elsewhere = two_managers
    here.write("the vault opens at nine", "ana", level="semantic")
    elsewhere.forget_user("ana")
    here.users.get("ana")
    task_id = here.start_task("ana", "open the vault")
    here.record_step("ana", "turn the dial", "ok")
    assert here.tasks.get("ana").id == task_id


def test_the_note_of_users_found_forgotten_is_taken_once(two_managers):
    """UL1: `found_forgotten` returns each user found forgotten elsewhere, then forgets the note."""
    here, elsewhere = two_managers
    here.write("the vault opens at nine", "ana", level="semantic")
    elsewhere.forget_user("ana")
    here.users.get("ana")
    assert here.users.found_forgotten() == ["ana"]
    assert here.users.found_forgotten() == []


def test_a_forget_made_here_is_not_noted_as_found_elsewhere():
    """UL1: the manager's own forget drops the task itself; nothing is left for it to take."""
    manager = MemoryManager(clock=ManualClock(0.0))
    manager.write("the vault opens at nine", "ana", level="semantic")
    manager.forget_user("ana")
    assert manager.users.found_forgotten() == [] and "ana" not in manager.users.loaded


def test_counting_a_use_keeps_a_loaded_episodic_layer_in_step():
    """UL1: counting an access updates the store and the episode a loaded layer holds."""
    clock = ManualClock(0.0)
    manager = MemoryManager(clock=clock)
    episodes = manager.users.get("ana").episodic
    episode = episodes.add_episode(Episode(task_type="t", goal="ship it", status="success"))
    clock.advance(60.0)
    item = manager.get(episode.id, "ana")
    manager.users.count_access("ana", [Recalled(item, {"relevance": 1.0}, 1.0, "a test")])
    assert (episode.access_count, episode.last_access_at) == (1, 60.0)
    assert manager.get(episode.id, "ana").access_count == 1
    assert [record.operation for record in manager.history("ana")][-1] == "recall"


def test_counting_a_use_of_a_user_not_loaded_loads_nothing():
    """UL1: counting accesses for a user whose layers are not cached writes them, loads none."""
    manager = MemoryManager(clock=ManualClock(0.0))
    item = manager.write("the vault opens at nine", "ana", level="episodic")
    manager.users.loaded.pop("ana", None)
    manager.users.count_access("ana", [Recalled(item, {"relevance": 1.0}, 1.0, "a test")])
    assert "ana" not in manager.users.loaded
    assert manager.get(item.id, "ana").access_count == 1


def test_an_event_queued_in_an_outage_loads_no_layers_and_still_lands_after_a_forget():
    """UL4, S6: an event queued for a user not loaded loads none of their layers; after a
    forget made elsewhere it is put again, behind the forget."""
    inner = Outage()
    manager = MemoryManager(inner, clock=ManualClock(0.0))
    inner.down = "writes"
    item = manager.write("the vault opens at nine", "ana", level="episodic")
    assert "ana" not in manager.users.loaded and manager.store.holds(item)
    inner.down = None
    MemoryManager(inner, clock=ManualClock(0.0)).forget_user("ana")
    inner.down = "writes"
    again = manager.write("the vault opens at ten", "ana", level="episodic")
    assert "ana" not in manager.users.loaded and not manager.store.holds(item)
    inner.down = None
    assert manager.store.flush() and [i.id for i in inner.list("ana")] == [again.id]


def test_counting_a_use_after_a_forget_elsewhere_touches_no_stale_episode(two_managers):
    """UL1, S6: the store refuses the accesses: the episode held and the audit are unchanged."""
    here, elsewhere = two_managers
    episode = here.users.get("ana").episodic.add_episode(
        Episode(task_type="t", goal="ship it", status="success")
    )
    item = here.get(episode.id, "ana")
    elsewhere.forget_user("ana")
    here.users.count_access("ana", [Recalled(item, {"relevance": 1.0}, 1.0, "a test")])
    assert (episode.access_count, episode.last_access_at) == (0, item.last_access_at)
    assert [entry.operation for entry in here.store.audit("ana")] == ["forget-user"]


def test_a_refresh_keeps_the_consolidators_sightings():
    """UL1: reloading a user's layers after a forgetting cycle keeps the sightings not promoted."""
    manager = MemoryManager(clock=ManualClock(0.0))
    manager.write("team language: Python", "ana")
    manager.users.refresh("ana")
    manager.write("team language: python", "ana")
    assert [fact.value for fact in manager.users.get("ana").semantic.current()] == ["python"]


def test_a_part_standing_alone_makes_its_own_reentrant_lock():
    """UL2: without the manager's lock, the part takes one of its own, which a call may re-enter."""
    clock = ManualClock(0.0)
    users = UserLayers(BufferedStore(InMemoryStore(), clock), clock)
    with users.lock:
        assert users.get("ana").user_id == "ana"  # re-entered, not deadlocked


def test_a_call_waits_while_another_thread_holds_the_lock_it_was_given():
    """UL2: every public method runs under the lock the manager gives."""
    clock = ManualClock(0.0)
    lock = WatchedLock()
    users = UserLayers(BufferedStore(InMemoryStore(), clock), clock, lock=lock)
    done = []
    worker = threading.Thread(target=lambda: done.append(users.get("ana")))
    with lock:
        assert waits_or_ends(lock, worker) and done == []
    worker.join(timeout=60)
    assert len(done) == 1


def test_a_recall_through_the_manager_reaches_a_loaded_episodic_layer():
    """UL1: after `recall` counts a use, the episode a loaded layer holds shows the new count."""
    clock = ManualClock(0.0)
    manager = MemoryManager(clock=clock)
    episodes = manager.users.get("ana").episodic
    episode = episodes.add_episode(
        Episode(task_type="release", goal="ship the billing service", status="success")
    )
    clock.advance(60.0)
    recalled = manager.recall("billing service", "ana")
    assert episode.id in [result.item.id for result in recalled.results]
    assert (episode.access_count, episode.last_access_at) == (1, 60.0)


def test_a_cycle_reads_each_item_once_and_its_reload_only_the_facts_and_procedures_left():
    """UL3: run_decay reads the user's items once, in the cycle; the reload of the layers then
    lists the semantic and procedural levels only, the episodic one on its next use, so it
    reads no more items than are left of those levels."""
    from recuris.core.clock import DAY

    class Counting(InMemoryStore):
        def __init__(self):
            super().__init__()
            self.reads = []

        def list(self, user_id, level=None, task_id=None):
            items = super().list(user_id, level, task_id)
            self.reads.append(("list", level, len(items)))
            return items

        def iterate(self, user_id, level=None, batch_size=5000):
            for batch in super().iterate(user_id, level, batch_size):
                self.reads.append(("iterate", level, len(batch)))
                yield batch

    store = Counting()
    clock = ManualClock(0)
    manager = MemoryManager(store, clock=clock)
    for number in range(40):
        importance = 0.1 if number % 2 else 0.9
        manager.write(f"deploy of service {number}", "ana", level="episodic", importance=importance)
    for number in range(5):
        manager.write(f"setting{number}: value {number}", "ana", level="semantic")
    assert len(manager.users.get("ana").episodic) == 0  # loaded, so that the reload drops it
    clock.advance(14 * DAY)
    store.reads.clear()
    report = manager.run_decay("ana")
    left = {level: len(store.list("ana", level)) for level in ("semantic", "procedural")}
    reads = store.reads[: -len(left)]
    assert report.forgotten_count > 0
    assert reads[0] == ("iterate", None, report.size_before)
    assert sorted(reads[1:]) == sorted(("list", level, n) for level, n in left.items())
