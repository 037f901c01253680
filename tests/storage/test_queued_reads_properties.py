"""Reads through BufferedStore under random writes, outages and deletions, checked against the
queue replayed whole at each read, as reads did before the replays were kept (QR1, QR3)."""

import copy
from dataclasses import replace

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from recuris import InMemoryStore, MemoryItem, StoreError
from recuris.storage.buffered_store import BufferedStore
from recuris.storage.queued_reads import replay
from recuris.storage.store import Access

USERS = ["ana", "bob"]
LEVELS = ["episodic", "semantic", "working"]
NUMBERS = list(range(6))  # an item's id is its user's and a number: an id has one user (S2)


class Switchable(InMemoryStore):
    """Writes fail while `down`, or once `puts_left` puts have been written."""

    down = False
    puts_left = None

    def put(self, items, audit=(), delete=()):
        if self.down or self.puts_left == 0:
            raise StoreError("database is locked")
        if self.puts_left is not None:
            self.puts_left -= 1
        super().put(items, audit, delete)

    def record_access(self, accesses, audit=()):
        if self.down:
            raise StoreError("database is locked")
        super().record_access(accesses, audit)


def replayed_whole(store: BufferedStore, user: str, level: str | None) -> list[MemoryItem]:
    """`list` replayed naively: the whole queue over all of the user's stored items, in the
    store's order (S11: a rewrite keeps its place, even from another level), then the level."""
    view = replay(store._pending).get(user)
    stored = store.inner.list(user)
    if view is None:
        return [item for item in stored if level in (None, item.level)]
    merged = {item.id: item for item in stored if item.id not in view.gone}
    for key, (times, at) in view.counted.items():
        if key in merged:
            merged[key] = replace(
                merged[key], access_count=merged[key].access_count + times, last_access_at=at
            )
    merged.update((key, copy.deepcopy(item)) for key, item in view.fresh.items())
    return [item for item in merged.values() if level in (None, item.level)]


class QueuedReadsMachine(RuleBasedStateMachine):
    """Puts (a level may change), deletions, accesses, outages, partial flushes and forgets."""

    def __init__(self):
        super().__init__()
        self.inner = Switchable()
        self.store = BufferedStore(self.inner, access_batch=2)
        self.clock = 0.0

    @rule(
        user=st.sampled_from(USERS),
        number=st.sampled_from(NUMBERS),
        level=st.sampled_from(LEVELS),
        deleted=st.lists(st.sampled_from(NUMBERS), max_size=2),
    )
    def put(self, user, number, level, deleted):
        self.clock += 1
        key = f"{user}-{number}"
        item = MemoryItem(id=key, user_id=user, level=level, content=f"{level} {self.clock}")
        gone = [
            MemoryItem(id=f"{user}-{old}", user_id=user, level="episodic", content="gone")
            for old in deleted
            if old != number
        ]
        self.store.put([item], delete=gone)

    @rule(user=st.sampled_from(USERS), numbers=st.lists(st.sampled_from(NUMBERS), max_size=3))
    def access(self, user, numbers):
        self.clock += 1
        self.store.record_access([Access(user, f"{user}-{key}", self.clock) for key in numbers])

    @rule(down=st.booleans(), puts_left=st.none() | st.integers(0, 2))
    def switch(self, down, puts_left):
        self.inner.down = down
        self.inner.puts_left = puts_left

    @rule()
    def flush(self):
        self.store.flush()

    @rule(user=st.sampled_from(USERS), numbers=st.lists(st.sampled_from(NUMBERS), max_size=2))
    def delete(self, user, numbers):
        self.store.delete(user, [f"{user}-{number}" for number in numbers])

    @rule(user=st.sampled_from(USERS))
    def forget(self, user):
        self.store.delete_user(user)

    @invariant()
    def QR3_the_replays_kept_are_the_queue_replayed_whole(self):
        if self.store._replays is None:
            return
        whole = replay(self.store._pending)
        for user in USERS:
            kept, again = self.store._view(user), whole.get(user)
            if again is None:
                assert not kept.changes
                continue
            assert list(kept.fresh.items()) == list(again.fresh.items())
            assert (kept.gone, kept.counted) == (again.gone, again.counted)
            for level in LEVELS:
                assert kept.at_level(level) == [
                    item for item in again.fresh.values() if item.level == level
                ]

    @invariant()
    def QR1_QR3_a_list_or_get_many_reads_as_the_queue_replayed_whole_would(self):
        for user in USERS:
            for level in (None, *LEVELS):
                assert self.store.list(user, level) == replayed_whole(self.store, user, level)
            asked = [f"{user}-{number}" for number in NUMBERS]
            expected = {item.id: item for item in replayed_whole(self.store, user, None)}
            got = self.store.get_many(user, asked)
            assert got == {key: expected[key] for key in asked if key in expected}


TestQueuedReadsMachine = QueuedReadsMachine.TestCase
