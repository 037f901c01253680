"""Example tests for recuris.storage.model_store: write order, tie order, what it keeps and
imports (MO1-MO3). The store contract (test_store.py) runs on it as on every store."""

import ast
from pathlib import Path

import recuris.storage.model_store
from recuris import MemoryItem
from recuris.storage.model_store import ModelStore


def item(id, content="x", task_id=None, level="episodic"):
    return MemoryItem(id=id, user_id="ana", level=level, content=content, task_id=task_id)


def test_equal_scores_go_to_the_later_written_item_first():
    """MO2: items of equal score are ranked later-written first, and the limit cuts after."""
    store = ModelStore()
    store.put([item(key, "deploy failed") for key in ("a", "b", "c")])
    assert [i.id for i, _ in store.search("ana", "episodic", ["deploy"], 3)] == ["c", "b", "a"]
    assert [i.id for i, _ in store.search("ana", "episodic", ["deploy"], 2)] == ["c", "b"]
    assert store.search("ana", "episodic", ["deploy"], 0) == []


def test_a_rewritten_item_keeps_its_place_in_the_tie_order():
    """MO1, MO2: the tie order is write order, where a rewrite keeps its place: a rewritten
    first item still loses a tie to the second."""
    store = ModelStore()
    store.put([item("a", "deploy failed"), item("b", "deploy failed")])
    store.put([item("a", "deploy failed", task_id="t")])
    assert [i.id for i, _ in store.search("ana", "episodic", ["deploy"], 2)] == ["b", "a"]


def test_a_higher_score_comes_before_a_later_write():
    """MO2: the score orders first: a shorter item holding the term beats a later, longer one."""
    store = ModelStore()
    store.put([item("short", "deploy"), item("long", "deploy failed on friday night again")])
    found = store.search("ana", "episodic", ["deploy"], 2)
    assert [i.id for i, _ in found] == ["short", "long"] and found[0][1] > found[1][1]


def test_the_model_keeps_only_its_items_audit_counters_and_generations():
    """MO3: nothing beside the items, the audit log, the id counters and the generations (and
    the BM25 settings it reports): no index, cache or order kept for speed."""
    assert set(vars(ModelStore())) == {
        "bm25",
        "_items",
        "_audit",
        "_counters",
        "_generations",
        "_seen",
    }


def test_the_model_imports_only_the_protocol_the_records_and_the_formula():
    """MO3: model_store.py imports of recuris only the protocol, the records, the analyzer,
    BM25's definition and the argument checks, at any level: no index, row or chunk."""
    path = Path(recuris.storage.model_store.__file__)
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            imported.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names if alias.name.startswith("recuris"))
    assert imported == {
        "..core.validation",
        "..retrieval.bm25",
        "..retrieval.scoring",
        ".audit",
        ".item",
        ".store",
    }
