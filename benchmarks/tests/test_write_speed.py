"""Example tests for benchmarks/write_speed.py, small: the same rows on both sides (WS1-WS3)."""

import sqlite3

from benchmarks import write_speed
from recuris.storage.sqlite_store import SQLiteStore


def _schema(db: sqlite3.Connection, table: str) -> tuple[list, set]:
    columns = [row[1:3] for row in db.execute(f"PRAGMA table_info({table})")]
    indexes = {
        tuple(row[2] for row in db.execute(f"PRAGMA index_info({index[1]})"))
        for index in db.execute(f"PRAGMA index_list({table})")
    }
    return columns, indexes


def test_the_plain_side_has_the_columns_indexes_and_settings_of_the_store(tmp_path):
    """WS1: the plain table has the columns and indexes of `items`, and the same journal mode
    and `synchronous` as the store beside it."""
    store = SQLiteStore(tmp_path / "recuris.db", synchronous="NORMAL")
    direct = write_speed._direct(tmp_path / "plain.db", store)
    assert _schema(direct, "items") == _schema(store._db, "items")
    for setting in ("journal_mode", "synchronous"):
        assert direct.execute(f"PRAGMA {setting}").fetchall() == store._run(f"PRAGMA {setting}")


def test_the_plain_write_stores_each_row_and_its_fts5_entry_by_rowid(tmp_path):
    """WS1: after a plain batch, FTS5 finds each text under the rowid of its row."""
    store = SQLiteStore(tmp_path / "recuris.db")
    direct = write_speed._direct(tmp_path / "plain.db", store)
    texts = ["alpha beta", "gamma delta", "beta gamma"]
    write_speed._raw_write(direct, write_speed.items_of(texts[:2]), 0)
    write_speed._raw_write(direct, write_speed.items_of(texts[2:], first=2), 2)
    found = direct.execute(
        "SELECT items.content FROM texts JOIN items ON items.rowid = texts.rowid "
        "WHERE texts MATCH 'gamma' ORDER BY texts.rowid"
    ).fetchall()
    assert found == [("gamma delta",), ("beta gamma",)]


def test_batched_writes_report_both_sides_and_the_ratio_with_their_spread():
    """WS2: every figure is a spread of n runs: median, lowest and highest."""
    figures = write_speed.batched_writes(300, runs=2, batch=100, synchronous="NORMAL")
    assert set(figures) == {"put_s", "plain_s", "ratio", "cpu_ratio", "load"}
    for name in ("put_s", "plain_s", "ratio", "cpu_ratio"):
        spread = figures[name]
        assert spread["n"] == 2 and 0 < spread["low"] <= spread["median"] <= spread["high"]


def test_single_writes_time_both_sides_per_item():
    """WS1: a manager write and the plain row with its FTS5 entry are both timed, per item."""
    figures = write_speed.single_writes(20)
    assert set(figures) == {"write_ms", "raw_ms"} and all(value > 0 for value in figures.values())
    runs = write_speed.single_write_runs(runs=3, count=10, synchronous="NORMAL")
    assert runs["ratio"]["n"] == 3 and set(runs) >= {"write_ms", "raw_ms", "cpu_ratio", "load"}


def test_the_parts_of_a_write_add_up_to_less_than_the_whole():
    """WS2: each statement's time and the Python's are shares of the whole write."""
    parts = write_speed.write_parts(30)
    assert parts["statements"] and all(value > 0 for value in parts["statements"].values())
    assert 0 < parts["python_us"] < parts["total_us"]
    assert any(name.startswith("INSERT INTO pending_postings") for name in parts["statements"])
    batched = write_speed.write_parts(300, batch=100)
    assert any(name.startswith("INSERT INTO postings") for name in batched["statements"])


def test_each_layout_of_the_term_index_is_timed_against_the_plain_side():
    """WS3: every layout has a ratio of wall and of CPU seconds to the plain side's."""
    figures = write_speed.term_layouts(200, runs=1, batch=100)
    layouts = ("posting rows", "term blocks", "terms in FTS5")
    assert set(figures) == {*layouts, *(f"{name} (CPU)" for name in layouts), "load"}
    assert all(figures[name]["median"] > 0 for name in layouts)
