"""Example tests for benchmarks/recall_scale.py at small sizes: both sides, the same rows (RS1)."""

from benchmarks import recall_scale


def test_the_corpus_is_deterministic_and_zipf_like():
    """RS1: one seed gives the same texts; the commonest word is far commoner than a rare one."""
    texts = recall_scale.corpus(500, seed=3)
    assert texts == recall_scale.corpus(500, seed=3) and len(texts) == 500
    words = " ".join(texts).split()
    assert words.count("w1") > 20 * max(1, words.count("w5000"))


def test_recall_among_unrelated_items_is_timed_with_and_without_them():
    """RS1: the in-memory recall is timed on the same queries without and with the crowd."""
    alone, crowded = recall_scale.unrelated_items(200, 200, queries=5)
    assert alone > 0 and crowded > 0


def test_the_query_classes_are_chosen_by_measured_document_frequency():
    """RS1: a rare word is in 20 to 50 texts, a common one in more than 40 % of them."""
    texts = recall_scale.corpus(3_000, seed=2)
    asked = recall_scale.class_queries(texts, 4, seed=3)
    assert set(asked) == set(recall_scale.CLASSES) and all(len(q) == 4 for q in asked.values())

    def frequency(word):
        return sum(word in text.split() for text in texts)

    assert all(20 <= frequency(word) <= 50 for word in asked["rare"])
    assert all(frequency(word) > 0.4 * len(texts) for word in asked["common"])
    assert all(len(set(query.split())) == 3 for query in asked["mixed"] + asked["document"])


def test_every_class_is_timed_beside_fts5_warm_and_first():
    """RS1: each class has a warm and a first row, both sides timed the same number of times."""
    figures = recall_scale.query_classes(3_000, repeats=2)
    rows = {(row["class"], row["state"]): row for row in figures["rows"]}
    assert set(rows) == {
        (kind, state) for kind in recall_scale.CLASSES for state in ("warm", "first")
    }
    assert figures["peak_mb"] > 0 and all(
        row["n"] == 2 and row["recall_ms"]["median"] > 0 < row["fts5_ms"]["median"]
        for row in rows.values()
    )


def test_counting_use_commits_once_a_recall_and_batched_less():
    """RS1: recall counting at once commits once a recall; batched by 2, about half as often."""
    figures = recall_scale.access_counting(3_000, repeats=2, batch=2)
    assert figures["counted_commits"] == 1.0 and figures["batched_commits"] < 1.0


def test_in_sessions_every_class_is_timed_on_three_sides_alike():
    """RS2: each class's three sides are timed on the same queries, as often each."""
    figures = recall_scale.in_sessions(3_000, repeats=3, session=10)
    assert [row["class"] for row in figures["rows"]] == list(recall_scale.CLASSES)
    for row in figures["rows"]:
        sides = (row["recall_ms"], row["alone_ms"], row["fts5_ms"])
        assert row["n"] == 3 and all(side["n"] == 3 and side["median"] > 0 for side in sides)


def test_items_in_sessions_share_a_task_every_session_items():
    """RS2: with `session`, each run of that many consecutive items shares one task."""
    items = recall_scale.items_of(["a", "b", "c", "d", "e"], session=2)
    assert [item.task_id for item in items] == [
        "session-0", "session-0", "session-1", "session-1", "session-2",
    ]  # fmt: skip
