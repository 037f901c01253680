"""Property tests for forgetting cycles over a manager's store (O1-O4, O8)."""

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from recuris import InMemoryStore, ManualClock, MemoryItem, MemoryManager, SQLiteStore
from recuris.evolution.forgetting import merge
from recuris.core.records import Episode, Step
from recuris.core.text import normalize, tokenize
from recuris.storage.archives import episode_to_item
from recuris.core.similarity import jaccard

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
writes = st.lists(
    st.tuples(st.sampled_from(["ana", "bob"]), texts, st.floats(0, 1), st.floats(0, 20)),
    min_size=1,
    max_size=15,
)


@given(writes, st.floats(0, 40), st.sampled_from([0.5, 0.7, 0.9]))
def test_O1_O2_O3_after_a_cycle(writes, wait_days, similarity):
    """O1-O3: nothing left below the threshold, every removal audited, merges keep every id."""
    clock = ManualClock(0)
    manager = MemoryManager(clock=clock)
    for user, text, importance, gap in writes:
        clock.advance(gap * DAY / 10)
        manager.write(text, user, level="episodic", importance=importance)
    clock.advance(wait_days * DAY)
    decay = manager.forgetting.decay
    before = {user: {item.id for item in manager.list(user)} for user in ("ana", "bob")}
    for user in ("ana", "bob"):
        manager.run_decay(user, merge_similarity=similarity)
        after = manager.list(user)
        assert all(decay.weight(item) >= decay.settings.retention_threshold for item in after)  # O1
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


def says(item):
    """What an item says, read from its record: its level, and an episode's status and steps."""
    if item.metadata.get("kind") != "episode":
        return (item.level,)
    steps = [(normalize(action), failed) for _, action, _, failed in item.metadata["trajectory"]]
    return item.level, item.metadata["status"], steps


def naive_cycle(items, decay, now, ceiling, similarity):
    """The cycle as first written: weigh everything, then compare every pair of the band."""
    cycled = [item for item in items if item.level in ("episodic", "semantic")]
    weights = {item.id: decay.weight(item, now) for item in cycled}
    threshold = decay.settings.retention_threshold
    forgotten = [item.id for item in cycled if weights[item.id] < threshold]
    band = sorted(
        (i for i in cycled if threshold <= weights[i.id] < ceiling and i.is_valid),
        key=lambda item: (-weights[item.id], item.created_at, item.id),
    )
    grouped, groups = set(), []
    for lead in band:
        if lead.id in grouped:
            continue
        group = [lead] + [
            other
            for other in band
            if other is not lead
            and other.id not in grouped
            and says(other) == says(lead)
            and jaccard(tokenize(lead.content), tokenize(other.content)) >= similarity
        ]
        if len(group) > 1:
            grouped.update(item.id for item in group)
            groups.append(group)
    return forgotten, groups


words = st.lists(st.sampled_from("deploy failed plant water vpn".split()), min_size=1, max_size=4)
new_items = st.tuples(
    st.just("write"),
    words,
    st.sampled_from([0.2, 0.5, 0.8, 1.0]),
    st.sampled_from(["episodic", "semantic"]),
    st.floats(0, 20),
)
# An episode: its goal's words, importance, status and second action, age in days (O8).
new_episodes = st.tuples(
    st.just("episode"),
    words,
    st.sampled_from([0.2, 0.5, 0.8, 1.0]),
    st.sampled_from(["success", "failed"]),
    st.sampled_from(["push it", "pull it"]),
    st.floats(0, 20),
)
operations = st.lists(
    st.one_of(
        new_items,
        new_episodes,
        st.tuples(st.just("wait"), st.floats(0, 10)),
        st.tuples(st.just("use"), st.integers(0, 40)),
        st.tuples(st.just("rewrite"), st.integers(0, 40), words),
        st.tuples(st.just("restep"), st.integers(0, 40)),  # an episode's steps, not its text
        st.tuples(
            st.just("cycle"),
            st.sampled_from([0.5, 0.6, 0.7, 1.0]),
            st.integers(1, 5),
            st.integers(1, 4),
        ),  # similarity, batch size, delete batch
    ),
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(new_items, new_episodes), min_size=2, max_size=25),
    operations,
    st.sampled_from(["memory", "sqlite"]),
)
def test_O4_the_streamed_cycle_decides_exactly_as_the_naive_cycle(writes, operations, kind):
    """O4, O8: whatever the writes, uses, rewrites, cycles and batches, it decides as the naive
    one, which merges an episode only into one that says the same."""
    clock = ManualClock(0)
    manager = MemoryManager(
        InMemoryStore() if kind == "memory" else SQLiteStore(":memory:"), clock=clock
    )
    decay = manager.forgetting.decay
    model = {}
    written = 0
    for operation in [*writes, *operations, ("cycle", 0.6, 2, 50_000)]:
        if operation[0] == "write":
            written += 1
            # Written as if last used `age` days ago, so that items land in the merge band.
            used = clock() - operation[4] * DAY
            item = MemoryItem(
                id=f"i{written}",
                user_id="ana",
                level=operation[3],
                importance=operation[2],
                content=" ".join(operation[1]) or "-",
                created_at=used,
                last_access_at=used,
            )
            model[item.id] = item
            manager.store.put([item])
        elif operation[0] == "episode":
            written += 1
            used = clock() - operation[5] * DAY
            failed = operation[3] == "failed"
            steps = (Step(1, "build it", "ok"), Step(2, operation[4], "done", failed))
            episode = Episode(
                task_type="deploy",
                goal=" ".join(operation[1]),
                status=operation[3],
                id=f"i{written}",
                trajectory=steps,
                failure_reason=f"failed at {operation[4]}" if failed else "",
                created_at=used,
                importance=operation[2],
                last_access_at=used,
            )
            item = episode_to_item(episode, "ana")
            model[item.id] = item
            manager.store.put([item])
        elif operation[0] == "restep" and model:
            old = list(model.values())[operation[1] % len(model)]
            if old.metadata.get("kind") == "episode":
                steps = [list(row) for row in old.metadata["trajectory"]]
                steps[-1][1] = "pull it" if steps[-1][1] == "push it" else "push it"
                new = replace(old, metadata={**old.metadata, "trajectory": steps})
                model[new.id] = new
                manager.store.put([new])
        elif operation[0] == "wait":
            clock.advance(operation[1] * DAY)
        elif operation[0] in ("use", "rewrite") and model:
            old = list(model.values())[operation[1] % len(model)]
            if operation[0] == "use":
                new = replace(old, access_count=old.access_count + 1, last_access_at=clock())
            else:
                new = replace(old, content=" ".join(operation[2]) or "-")
            model[new.id] = new
            manager.store.put([new])
        elif operation[0] == "cycle":
            forgotten, groups = naive_cycle(list(model.values()), decay, clock(), 0.4, operation[1])
            report = manager.run_decay(
                "ana",
                merge_similarity=operation[1],
                batch_size=operation[2],
                delete_batch=operation[3],
            )
            assert [item.id for item in report.forgotten] == forgotten
            assert [(s.id, [o.id for o in others]) for s, others in report.merged] == [
                (group[0].id, [o.id for o in group[1:]]) for group in groups
            ]
            for item_id in forgotten:
                del model[item_id]
            for group in groups:
                model[group[0].id] = merge(group)
                for other in group[1:]:
                    del model[other.id]
        assert manager.list("ana") == list(model.values())
