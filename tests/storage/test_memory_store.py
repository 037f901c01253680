"""Example tests for recuris.storage.memory_store: write order and copies (MS1, S4)."""

from recuris import InMemoryStore, MemoryItem


def item(id, content="x", task_id=None):
    return MemoryItem(id=id, user_id="ana", level="episodic", content=content, task_id=task_id)


def test_a_rewrite_keeps_its_place_and_a_deleted_item_put_again_comes_last():
    """MS1: list follows first put; a rewrite keeps its place; a deleted item put again is last."""
    store = InMemoryStore()
    store.put([item("a"), item("b"), item("c")])
    store.put([item("a", "new text", task_id="t")])
    assert [i.id for i in store.list("ana")] == ["a", "b", "c"]
    store.delete("ana", ["b"])
    store.put([item("b")])
    assert [i.id for i in store.list("ana")] == ["a", "c", "b"]


def test_what_is_read_is_a_copy():
    """S4: changing a read item's metadata changes nothing stored."""
    store = InMemoryStore()
    store.put(
        [MemoryItem(id="a", user_id="ana", level="episodic", content="x", metadata={"k": [1]})]
    )
    store.get("ana", "a").metadata["k"].append(2)
    assert store.get("ana", "a").metadata == {"k": [1]}
