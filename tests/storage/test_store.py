"""The Store contract, run against every implementation: the model store, the in-memory store
and SQLite, and a fork's (S1-S4, S9, S12, S16)."""

import pytest

from recuris import InMemoryStore, MemoryItem, MemoryManager, SQLiteStore
from recuris.storage.audit import AuditEntry
from recuris.storage.store import Access, id_prefix

from factories import store_factories


@pytest.fixture(params=list(store_factories()))
def store(request, tmp_path):
    store = store_factories()[request.param](tmp_path)  # a fork adds its own (tests/factories.py)
    yield store
    store.close()


def item(id, user="ana", level="episodic", content="something happened", **fields):
    return MemoryItem(id=id, user_id=user, level=level, content=content, **fields)


def test_put_then_get_returns_an_equal_copy(store):
    """S4: what is got back equals what was put, and changing it changes nothing stored."""
    store.put([item("i1", metadata={"tags": ["x"]})])
    got = store.get("ana", "i1")
    got.metadata["tags"].append("changed")
    assert store.get("ana", "i1") == item("i1", metadata={"tags": ["x"]})


def test_reads_are_scoped_to_one_user(store):
    """S1: get and list never return another user's item."""
    store.put([item("i1", user="ana"), item("i2", user="bob")])
    assert store.get("bob", "i1") is None
    assert [i.id for i in store.list("bob")] == ["i2"]


def test_get_many_gives_the_users_items_once_in_the_order_named(store):
    """S16: each of the user's ids once, in the order first named; others' and unknown left out."""
    store.put([item("i1"), item("i2", metadata={"k": 1}), item("b1", user="bob")])
    found = store.get_many("ana", ["i2", "b1", "nothing", "i1", "i2"])
    assert list(found) == ["i2", "i1"]
    assert found == {"i2": item("i2", metadata={"k": 1}), "i1": item("i1")}
    assert store.get_many("ana", []) == {}


def test_get_many_reads_more_ids_than_one_statement_names(store):
    """S16: 1,200 ids, more than a SQL statement names at once, come back whole and in order."""
    store.put([item(f"i{n}") for n in range(1_200)])
    named = [f"i{n}" for n in range(1_199, -1, -1)]
    assert list(store.get_many("ana", named)) == named


def test_adjacent_gives_the_ids_around_each_item_named(store):
    """S9: several items in one call, each with its thread's ids; width 0 gives empty tuples."""
    store.put([item(f"t{n}", task_id="chat") for n in range(4)] + [item("alone")])
    assert store.adjacent("ana", ["t0", "t2", "alone", "nothing"], 2) == {
        "t0": (None, None, "t1", "t2"),
        "t2": ("t0", "t1", "t3", None),
        "alone": (None, None, None, None),
    }
    assert store.adjacent("ana", ["t1"], 0) == {"t1": ()}
    assert store.adjacent("bob", ["t1"]) == {}


def test_adjacent_answers_more_ids_than_one_statement_names(store):
    """S9: 1,200 items of one thread named at once, each with its own neighbours, in order."""
    named = [f"t{n:04}" for n in range(1_200)]
    store.put([item(item_id, task_id="chat") for item_id in named])
    around = store.adjacent("ana", named, 2)
    assert list(around) == named
    assert around["t0001"] == (None, "t0000", "t0002", "t0003")
    assert around["t0500"] == ("t0498", "t0499", "t0501", "t0502")
    assert around["t0600"] == ("t0598", "t0599", "t0601", "t0602")
    assert around["t1199"] == ("t1197", "t1198", None, None)


def test_list_filters_by_level_and_task_in_insertion_order(store):
    """MS1: list returns the user's items oldest first, filtered by level and task."""
    store.put(
        [
            item("i1", level="working", task_id="t1"),
            item("i2"),
            item("i3", level="working", task_id="t2"),
        ]
    )
    assert [i.id for i in store.list("ana", "working")] == ["i1", "i3"]
    assert [i.id for i in store.list("ana", task_id="t2")] == ["i3"]


def test_put_replaces_an_item_in_place(store):
    """MS1: a second put of an id updates it and keeps its place in the order."""
    store.put([item("i1"), item("i2")])
    store.put([item("i1", access_count=3)])
    assert [(i.id, i.access_count) for i in store.list("ana")] == [("i1", 3), ("i2", 0)]


def test_a_rewrite_keeps_its_place_and_a_deleted_item_put_again_comes_last(store):
    """S11, MS1, MO1: list follows first put; a rewrite, even into a task, keeps its place; a
    deleted item put again is last."""
    store.put([item("a"), item("b"), item("c")])
    store.put([item("a", content="new text", task_id="t")])
    assert [i.id for i in store.list("ana")] == ["a", "b", "c"]
    store.delete("ana", ["b"])
    store.put([item("b")])
    assert [i.id for i in store.list("ana")] == ["a", "c", "b"]


def test_an_item_cannot_move_to_another_user(store):
    """S2: putting an id owned by another user is refused, and the whole batch with it."""
    store.put([item("i1", user="ana")])
    with pytest.raises(ValueError, match="S2"):
        store.put([item("i9", user="bob"), item("i1", user="bob")])
    assert store.list("bob") == [] and store.get("ana", "i1").user_id == "ana"


def test_delete_only_touches_the_users_items(store):
    """S12: delete with another user's id deletes nothing."""
    store.put([item("i1", user="ana")])
    assert store.delete("bob", ["i1"]) == 0 and store.get("ana", "i1") is not None
    assert store.delete("ana", ["i1", "i1", "nope"]) == 1


def test_delete_user_removes_every_item_of_the_user(store):
    """S12: delete_user removes all of one user's items, valid or not, and nothing else."""
    store.put([item("i1"), item("i2", invalidated_at=5.0), item("i3", user="bob")])
    assert store.delete_user("ana") == 2
    assert store.users() == ["bob"]


def test_new_ids_are_fresh(store):
    """S3: new_id never returns an id in use, by any user."""
    store.put([item("episode-1", user="bob")])
    first = store.new_id("episode")
    second = store.new_id("episode")
    assert "episode-1" not in (first, second) and first != second


@pytest.mark.parametrize(
    "make", [lambda path: InMemoryStore(), lambda path: SQLiteStore(path / "ids.db")]
)
def test_a_new_ids_prefix_is_recovered_from_it(make, tmp_path):
    """S3: on the stores recuris ships, `id_prefix` gives
    back the prefix `new_id` was given, dashes included."""
    store = make(tmp_path)
    assert [id_prefix(store.new_id(prefix)) for prefix in ("episode", "ana-task-7")] == [
        "episode",
        "ana-task-7",
    ]


def test_audit_is_listed_per_user_and_per_item_and_can_be_scrubbed(store):
    """S12: the audit log filters by user and item; scrubbing keeps id, time and operation only."""
    store.append_audit(
        [
            AuditEntry("i1", "write", "secret text", 1.0, 0.5, "ana"),
            AuditEntry("i2", "write", "bob's", 2.0, None, "bob"),
        ]
    )
    assert [r.item_id for r in store.audit(user_id="ana")] == ["i1"]
    assert [r.user_id for r in store.audit(item_id="i2")] == ["bob"]
    assert store.scrub_audit("ana") == 1
    assert store.audit("ana") == [AuditEntry("i1", "write", "", 1.0, None, "ana")]


def test_matching_returns_the_items_sharing_a_token_in_list_order(store):
    """S7: matching equals filtering list by shared tokens, for one user and level."""
    store.put(
        [
            item("i1", content="deploy the api"),
            item("i2", content="rotate keys"),
            item("i3", content="注册账号 today"),
            item("i4", content="deploy again", level="semantic"),
            item("i5", user="bob", content="deploy for bob"),
        ]
    )
    assert [i.id for i in store.matching("ana", "episodic", ["deploy", "账号"])] == ["i1", "i3"]
    assert store.matching("ana", "episodic", []) == []


def test_matching_follows_updates_and_deletes(store):
    """SH1: the term index follows a rewritten content and a deletion."""
    store.put([item("i1", content="alpha beta")])
    store.put([item("i1", content="gamma delta")])
    assert store.matching("ana", "episodic", ["alpha"]) == []
    assert [i.id for i in store.matching("ana", "episodic", ["gamma"])] == ["i1"]
    store.delete("ana", ["i1"])
    assert store.matching("ana", "episodic", ["gamma"]) == []


def test_search_gives_equal_scores_to_the_later_written_item_first(store):
    """S8: among equal scores the later-written item comes first, a rewritten one keeping its
    place in write order, and the limit cuts after that order."""
    store.put([item(key, content="deploy failed") for key in ("a", "b", "c")])
    store.put([item("a", content="deploy failed", task_id="t")])
    ranked = store.search("ana", "episodic", ["deploy"], 3)
    assert [i.id for i, _ in ranked] == ["c", "b", "a"]
    assert len({score for _, score in ranked}) == 1
    assert [i.id for i, _ in store.search("ana", "episodic", ["deploy"], 2)] == ["c", "b"]


def test_an_id_written_twice_in_one_batch_keeps_its_last_version(store):
    """S4, SH1: within a batch the last write of an id wins, in the items and in the term index."""
    store.put([item("i1", content="alpha words"), item("i1", content="beta words", access_count=2)])
    assert [(i.content, i.access_count) for i in store.list("ana")] == [("beta words", 2)]
    assert store.matching("ana", "episodic", ["alpha"]) == []
    assert [i.id for i in store.matching("ana", "episodic", ["beta"])] == ["i1"]


def test_rewriting_only_access_fields_keeps_the_item_findable(store):
    """SH1: an update that leaves the content alone (a recall's reinforcement) keeps its terms."""
    store.put([item("i1", content="gamma words")])
    store.put([item("i1", content="gamma words", access_count=5)])
    assert [(i.id, i.access_count) for i in store.matching("ana", "episodic", ["gamma"])] == [
        ("i1", 5)
    ]


@pytest.mark.parametrize("text", ["caf\udce9", "\ud800 alone"])
def test_both_stores_refuse_a_lone_surrogate_the_same_way(text):
    """SQ2: text that is not valid Unicode is refused before either store sees it, so both agree."""
    for store in (InMemoryStore(), SQLiteStore(":memory:")):
        manager = MemoryManager(store)
        with pytest.raises(ValueError, match="valid Unicode"):
            manager.write(text + " deploy failed", "ana")
        assert store.list("ana") == []


def test_recording_an_access_changes_only_the_access_fields(store):
    """S10: an access counts a use; it never reopens a closed item, and a deleted one stays gone."""
    store.put([item("i1").closed(5.0, "i2"), item("gone"), item("bob's", user="bob")])
    store.delete("ana", ["gone"])
    store.record_access(
        [Access("ana", "i1", 9.0), Access("ana", "gone", 9.0), Access("ana", "bob's", 9.0)]
    )
    assert store.get("ana", "i1") == item("i1", access_count=1, last_access_at=9.0).closed(
        5.0, "i2"
    )
    assert store.get("ana", "gone") is None and store.get("bob", "bob's").access_count == 0


@pytest.mark.parametrize("level", [None, "working"])
def test_iterate_yields_what_list_returns_in_batches(store, level):
    """S11: iterate's batches, joined, are exactly list's items in list's order."""
    store.put(
        [
            item(f"i{n}", user="ana" if n % 4 else "bob", level=("episodic", "working")[n % 2])
            for n in range(23)
        ]
    )
    batches = list(store.iterate("ana", level, batch_size=3))
    assert all(len(batch) <= 3 for batch in batches)
    assert [i for batch in batches for i in batch] == store.list("ana", level)


def test_deleting_yielded_items_between_batches_changes_nothing_yielded(store):
    """S11: a caller may delete the items of each batch before asking for the next."""
    store.put([item(f"i{n}") for n in range(10)])
    seen = []
    for batch in store.iterate("ana", batch_size=4):
        seen += [i.id for i in batch]
        store.delete("ana", [i.id for i in batch])
    assert seen == [f"i{n}" for n in range(10)] and store.list("ana") == []


def test_delete_removes_only_the_named_items_of_the_user_and_counts_them(store):
    """S12: a batched delete removes the user's named
    items, counts each once, and never another user's."""
    store.put([item("i1"), item("i2"), item("i3", user="bob")])
    assert store.delete("ana", ["i1", "i1", "i3", "missing"]) == 1
    assert [i.id for i in store.list("ana")] == ["i2"] and store.get("bob", "i3") is not None


def test_a_put_that_deletes_another_users_item_cannot_take_its_id(store):
    """S2: putting an id another user owns is refused,
    even when the same put deletes that item first."""
    store.put([item("x", user="bob")])
    with pytest.raises(ValueError, match="S2"):
        store.put([item("x")], delete=[item("x", user="bob")])
    assert store.get("bob", "x") is not None and store.get("ana", "x") is None


def test_erase_deletes_the_named_items_and_blanks_the_audit_about_them(store):
    """S13: erase deletes the user's named items and blanks the records naming or quoting them."""
    store.put([item("i1", content="vault code 4242"), item("i2"), item("b1", user="bob")])
    store.append_audit(
        [
            AuditEntry("i1", "write", "routed", 1.0, 0.5, "ana"),
            AuditEntry("i0", "supersede", "superseded by i1: 'vault code 4242'", 2.0, None, "ana"),
            AuditEntry("i2", "write", "kept", 3.0, None, "ana"),
            AuditEntry("b1", "write", "bob's own", 4.0, None, "bob"),
        ]
    )
    assert store.erase("ana", ["i1", "b1", "unknown"]) == 1
    assert [i.id for i in store.list("ana")] == ["i2"]
    assert [i.id for i in store.list("bob")] == ["b1"]
    assert [(r.item_id, r.reason, r.weight) for r in store.audit("ana")] == [
        ("i1", "", None),
        ("i0", "", None),
        ("i2", "kept", None),
    ]
    assert [r.reason for r in store.audit("bob")] == ["bob's own"]
    assert store.matching("ana", "episodic", ["vault"]) == []


def test_erase_takes_the_erased_ids_out_of_the_lists_of_ids_kept_items_quote(store):
    """S13: erase takes the erased ids out of the `source_ids` and `merged_ids` of the user's
    items it keeps, in the same erase; the rest of each item, and another user's, stay."""
    fact = item(
        "f1",
        level="semantic",
        content="database: PostgreSQL",
        metadata={"subject": "database", "value": "PostgreSQL", "source_ids": ["i1", "i199"]},
    )
    survivor = item("s1", metadata={"merged_ids": ["i1", "i10"], "source_ids": "i1"})
    bobs = item("b2", user="bob", metadata={"source_ids": ["i1"]})
    store.put([item("i1"), item("i10"), fact, survivor, bobs])
    assert store.erase("ana", ["i1"]) == 1
    assert store.get("ana", "f1") == item(
        "f1",
        level="semantic",
        content="database: PostgreSQL",
        metadata={"subject": "database", "value": "PostgreSQL", "source_ids": ["i199"]},
    )
    # A field that is not a list (O7 broken) is left as it is.
    assert store.get("ana", "s1").metadata == {"merged_ids": ["i10"], "source_ids": "i1"}
    assert store.get("bob", "b2") == bobs
    assert [i.id for i in store.list("ana")] == ["i10", "f1", "s1"]
    assert [i.id for i in store.matching("ana", "semantic", ["postgresql"])] == ["f1"]


def test_erase_blanks_the_records_whose_reason_names_an_erased_id_whole(store):
    """S13: erase blanks a record whose reason holds an erased id whole (a recall's, filed
    under no item, naming a procedure's trigger), not one holding it inside a longer id."""
    store.put([item("i1", level="procedural"), item("i10"), item("b1", user="bob")])
    naming = "i1: procedure triggered by keyword 'zanzibar', total 0.955"
    store.append_audit(
        [
            AuditEntry("-", "recall", naming, 1.0, None, "ana"),
            AuditEntry("-", "recall", "i10: semantic fact, total 0.500", 2.0, None, "ana"),
            AuditEntry("-", "recall", "i10-b, i1x and xi1 hold it only inside", 3.0, None, "ana"),
            AuditEntry("-", "recall", naming, 4.0, None, "bob"),
        ]
    )
    assert store.erase("ana", ["i1"]) == 1
    assert [(r.reason, r.weight) for r in store.audit("ana")] == [
        ("", None),
        ("i10: semantic fact, total 0.500", None),
        ("i10-b, i1x and xi1 hold it only inside", None),
    ]
    assert [r.reason for r in store.audit("bob")] == [naming]


def test_erase_finds_an_id_whole_whatever_characters_it_holds(store):
    """S13: an id holding `*`, `?`, `[`, `.` (special to a pattern) is named whole like any
    other: at the end of a reason or before a colon, not before a letter or after one."""
    odd = "i*[1]?.x"
    store.put([item(odd)])
    reasons = [f"{odd}: episode", f"erased with its last source {odd}", f"{odd}y", f"y{odd}"]
    store.append_audit([AuditEntry("-", "recall", reason, 1.0, None, "ana") for reason in reasons])
    assert store.erase("ana", [odd]) == 1
    assert [r.reason for r in store.audit("ana")] == ["", "", f"{odd}y", f"y{odd}"]
