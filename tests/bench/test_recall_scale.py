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

