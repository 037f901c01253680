"""Property tests for forgetting cycles over a manager's store (O1-O3)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris import DecayManager, ManualClock, MemoryManager

DAY = 86_400.0
texts = st.sampled_from(
    [
        "deploy failed: the DB_URL variable was missing",
        "deploy failed: the DB_URL variable was missing again",
        "the office plant needs water",
        "the office plant needs water today",
        "printer jammed",
        "vpn token is blue",
    ]
)
writes = st.lists(st.tuples(st.sampled_from(["ana", "bob"]), texts, st.floats(0, 1), st.floats(0, 20)),
                  min_size=1, max_size=15)


@given(writes, st.floats(0, 40), st.sampled_from([0.5, 0.7, 0.9]))
def test_O1_O2_O3_after_a_cycle(writes, wait_days, similarity):
    """O1: nothing left below the threshold; O2: every removal audited; O3: merges keep every id, per user."""
    clock = ManualClock(0)
    manager = MemoryManager(clock=clock)
    for user, text, importance, gap in writes:
        clock.advance(gap * DAY / 10)
        manager.write(text, user, level="episodic", importance=importance)
    clock.advance(wait_days * DAY)
    decay = DecayManager(clock=clock)
    before = {user: {item.id for item in manager.list(user)} for user in ("ana", "bob")}
    for user in ("ana", "bob"):
        manager.run_decay(decay, user, merge_similarity=similarity)
        after = manager.list(user)
        assert all(decay.weight(item) >= decay.retention_threshold for item in after)  # O1
        removed = before[user] - {item.id for item in after}
        audited = {r.item_id for r in manager.history(user) if r.operation in ("forget", "merge")}
        assert removed <= audited  # O2
        kept_ids = {item.id for item in after} | {
            m for item in after for m in item.metadata.get("merged_ids", [])
        }
        merged_away = {r.item_id for r in manager.history(user) if r.operation == "merge"}
        assert merged_away <= kept_ids  # O3: a merged item's id lives on in its survivor
        assert all(
            m in before[user] for item in after for m in item.metadata.get("merged_ids", [])
        )  # per user
