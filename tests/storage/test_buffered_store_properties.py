"""BufferedStore under random outages, checked against a naive model: a list of writes (G1-G3)."""

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from recuris import InMemoryStore, MemoryItem, StoreError
from recuris.storage.buffered_store import BufferedStore


class Switchable(InMemoryStore):
    down = False

    def put(self, *arguments, **keywords):
        if self.down:
            raise StoreError("database is locked")
        super().put(*arguments, **keywords)


class BufferedMachine(RuleBasedStateMachine):
    """Writes, outages, recoveries and user deletions; the model is what should end up stored."""

    def __init__(self):
        super().__init__()
        self.inner = Switchable()
        self.store = BufferedStore(self.inner)
        self.model = {}  # id -> content, in write order
        self.count = 0

    @rule(user=st.sampled_from(["ana", "bob"]))
    def write(self, user):
        self.count += 1
        item_id = f"{user}-{self.count}"
        item = MemoryItem(id=item_id, user_id=user, level="episodic", content=f"event {self.count}")
        self.store.put([item])
        self.model[item_id] = user

    @rule(down=st.booleans())
    def switch(self, down):
        self.inner.down = down

    @rule(user=st.sampled_from(["ana", "bob"]))
    def forget(self, user):
        self.store.delete_user(user)
        self.model = {k: v for k, v in self.model.items() if v != user}

    @invariant()
    def G1_G3_every_write_is_stored_or_queued_and_nothing_deleted_comes_back(self):
        if not self.inner.down:
            self.store.flush()
        stored = [i.id for user in ("ana", "bob") for i in self.inner.list(user)]
        queued = [item.id for items, _, _ in self.store._pending for item in items]
        assert sorted(stored + queued) == sorted(self.model)

    @invariant()
    def G2_stored_writes_keep_their_order(self):
        for user in ("ana", "bob"):
            numbers = [int(i.id.split("-")[1]) for i in self.inner.list(user)]
            assert numbers == sorted(numbers)


TestBufferedMachine = BufferedMachine.TestCase
