"""Example tests for recuris.retrieval.bm25: the settings and what the index holds (B1-B3)."""

import gc

import pytest

from recuris.retrieval.chunks import CHUNK
from recuris.retrieval import bm25
from recuris.retrieval.bm25 import BM25Index, BM25Settings


def test_postings_are_objects_the_garbage_collector_never_tracks():
    """Each term's postings are one bytearray: a large index adds nothing to a collection's walk."""
    index = BM25Index()
    for number in range(200):
        index.add(f"doc-{number}", ["shared", f"rare{number}", f"rare{number}"])
    gc.collect()
    assert len(index.postings) == 201
    assert not any(gc.is_tracked(postings) for postings in index.postings.values())


def test_keys_are_chunks_the_garbage_collector_stops_tracking():
    """Each document's key lies in a tuple of strings, which a collection stops walking."""
    index = BM25Index()
    count = CHUNK * 2 + 5
    for number in range(count):
        index.add(f"doc-{number}", [f"word{number}", "shared"])
    gc.collect()
    assert len(index._keys._full) == 2
    assert not any(gc.is_tracked(chunk) for chunk in index._keys._full)
    assert index.top([f"word{CHUNK}"], 1)[0][0] == f"doc-{CHUNK}"


def test_B4_renumbering_keeps_only_the_live_documents_terms():
    """B4: after a renumbering, the vocabulary holds the live documents' terms and no other."""
    index = BM25Index()
    count = bm25.DEAD + bm25.SPARE + 1  # the last removal renumbers: one document is live
    for number in range(count):
        index.add(f"doc-{number}", [f"gone{number}", "kept"])
    index.add("last", ["kept", "own"])
    for number in range(count):
        index.remove(f"doc-{number}")
    assert set(index._vocabulary) == {"kept", "own"}
    assert index.held("last", ["kept", "own", "gone1"]) == (2, {"kept": 1, "own": 1})


def test_removing_a_document_after_a_query_resizes_its_postings():
    """B2: a query's views of the postings are released on return, so a removal can shrink them."""
    index = BM25Index()
    for key, words in {"a": "deploy api", "b": "deploy db", "c": "rotate keys"}.items():
        index.add(key, words.split())
    assert [key for key, _ in index.top(["deploy"], 2)] == ["b", "a"]
    index.remove("b")
    assert index.holding("deploy") == ["a"] and [key for key, _ in index.top(["deploy"], 2)] == [
        "a"
    ]


def test_a_write_while_a_reader_holds_a_view_of_the_postings_still_lands_whole():
    """B2: a view left alive (another thread's query, a kept traceback) never fails a write."""
    index = BM25Index()
    index.add("a", ["t", "u"])
    index.add("b", ["t"])
    held = memoryview(index.postings["t"])  # stands for a reader that has not let go yet
    index.add("c", ["u", "t"])
    assert index.holding("t") == ["a", "b", "c"] and index.holding("u") == ["a", "c"]
    index.remove("b")
    assert index.holding("t") == ["a", "c"] and [key for key, _ in index.top(["t"], 3)] == [
        "c",
        "a",
    ]
    assert held.nbytes == 16  # the reader's snapshot is unchanged: a and b


def test_B3_settings_out_of_range_are_refused():
    """B3: k1 must be a finite number above 0 and b one in [0, 1]; else a ValueError naming B3."""
    for bad in ({"k1": 0}, {"k1": float("nan")}, {"k1": True}, {"b": 1.5}, {"b": -0.1}):
        with pytest.raises(ValueError, match="B3"):
            BM25Settings(**bad)


def test_B1_one_definition_weighs_every_path():
    """B1: the index's raw score is the sum of BM25Settings.weights, with the settings given."""
    settings = BM25Settings(k1=1.5, b=0.25)
    index = BM25Index(settings)
    index.add("a", ["red", "apple", "red"])
    index.add("b", ["green", "pear"])
    [weight] = settings.weights(index.idf("red"), [2], [3], 2.5)
    assert index.raw(["red"], "a") == weight == index.accumulate(["red"])["a"]
    assert index.top(["red"], 1) == [("a", weight)]


def test_B2_a_document_keeps_the_order_it_was_given_across_renumbering():
    """B2: `order` and `held` answer for a document after others go and it is renumbered."""
    index = BM25Index()
    count = bm25.SPARE + 100
    for number in range(count):
        index.add(f"doc-{number}", ["shared"], order=10 * number)
    for number in range(count - 1):
        index.remove(f"doc-{number}")
    assert len(index._keys) < count  # the dead were dropped and the living renumbered
    assert index.order(f"doc-{count - 1}") == 10 * (count - 1)
    assert index.held(f"doc-{count - 1}", ["shared", "absent"]) == (1, {"shared": 1})
    with pytest.raises(KeyError):
        index.order("doc-0")


def test_B1_the_normaliser_is_what_weights_divides_a_frequency_by():
    """B1: a weight is idf · f · (k1 + 1) / (f + k1 · normaliser(length)), for any length."""
    settings = BM25Settings()
    for frequency, length, average in [(1, 3, 7.5), (4, 20, 7.5), (2, 0, 1.0)]:
        normaliser = settings.normaliser(length, average)
        expected = 1.7 * frequency * (settings.k1 + 1) / (frequency + settings.k1 * normaliser)
        assert settings.weights(1.7, [frequency], [length], average) == [expected]
