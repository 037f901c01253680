"""Example tests for recuris.bench.recall_scale at small sizes: both sides, the same rows (RS1)."""

from recuris.bench import recall_scale


def test_the_corpus_is_deterministic_and_zipf_like():
    """RS1: one seed gives the same texts; the commonest word is far commoner than a rare one."""
    texts = recall_scale.corpus(500, seed=3)
    assert texts == recall_scale.corpus(500, seed=3) and len(texts) == 500
    words = " ".join(texts).split()
    assert words.count("w1") > 20 * max(1, words.count("w5000"))


def test_recall_and_the_direct_query_report_side_by_side():
    """RS1: every figure of a small run is present and positive."""
    figures = recall_scale.against_fts5(400, queries=5)
    assert set(figures) == {
        "fill_items_per_s",
        "raw_fill_items_per_s",
        "fts5_ms",
        "first_ms",
        "warm_ms",
        "counted_ms",
        "peak_mb",
    }
    assert all(value > 0 for value in figures.values())
    assert recall_scale.unrelated_items(200, 200, queries=5) > 0


def test_single_writes_time_both_sides_per_item():
    """RS1: a manager write and the raw row with its FTS5 entry are both timed, per item."""
    figures = recall_scale.single_writes(20)
    assert set(figures) == {"write_ms", "raw_ms"} and all(value > 0 for value in figures.values())


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
    assert all(
        row["n"] == 2 and row["recall_ms"][0] > 0 < row["fts5_ms"][0] for row in rows.values()
    )


def test_counting_use_commits_once_a_recall_and_batched_less():
    """RS1: recall counting at once commits once a recall; batched by 2, about half as often."""
    figures = recall_scale.access_counting(3_000, repeats=2, batch=2)
    assert figures["counted_commits"] == 1.0 and figures["batched_commits"] < 1.0
