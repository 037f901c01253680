"""Example tests for recuris.retrieval.bm25: what the index holds, beside its properties (B1, B2)."""

import gc

from recuris.retrieval.bm25 import BM25Index


def test_postings_are_objects_the_garbage_collector_never_tracks():
    """Each term's postings are one bytearray, so a large index adds nothing to every collection's walk."""
    index = BM25Index()
    for number in range(200):
        index.add(f"doc-{number}", ["shared", f"rare{number}", f"rare{number}"])
    gc.collect()
    assert len(index.postings) == 201
    assert not any(gc.is_tracked(postings) for postings in index.postings.values())


def test_removing_a_document_after_a_query_resizes_its_postings():
    """B2: a query's views of the postings are released when it returns, so a removal can shrink them."""
    index = BM25Index()
    for key, words in {"a": "deploy api", "b": "deploy db", "c": "rotate keys"}.items():
        index.add(key, words.split())
    assert [key for key, _ in index.top(["deploy"], 2)] == ["b", "a"]
    index.remove("b")
    assert index.holding("deploy") == ["a"] and [key for key, _ in index.top(["deploy"], 2)] == ["a"]
