"""Example tests for benchmarks/locomo_tried.py: what was tried on the product (LT1-LT4)."""

import json
from datetime import datetime, timezone

import pytest
from locomo_conversation import CONVERSATION

from benchmarks.locomo_tried import TRIED, dated, fuse, key_phrases, main, normalised
from recuris import MemoryItem
from recuris.bench.locomo import ABLATIONS, RETRIEVERS, load, through_manager
from recuris.storage.memory_store import InMemoryStore


def item(key):
    return MemoryItem(id=key, user_id="ana", level="episodic", content=f"text {key}")


def test_fusion_sums_the_reciprocal_of_each_rank_plus_the_constant():
    """LT2: an item in both lists at ranks 2 and 1 beats one first in a list alone."""
    a, b, c = item("a"), item("b"), item("c")
    fused = fuse([[a, b], [b, c]])
    assert [i.id for i in fused] == ["b", "a", "c"]


def test_fusion_keeps_the_first_lists_order_among_ties():
    """LT2: two items of equal fused score keep the order of the first list."""
    a, b = item("a"), item("b")
    assert [i.id for i in fuse([[a, b], [b, a]])] == ["a", "b"]


@pytest.mark.parametrize("name", sorted(TRIED))
def test_every_tried_way_returns_at_most_ten_distinct_turns(tmp_path, name):
    """LT1: each way tried gives at most ten turns, each once, all of the conversation."""
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    conversation = load(path)
    way = TRIED[name]
    rank = through_manager(InMemoryStore, ranking=way.ranking, written=way.written)(conversation)
    turns = {turn.id for turn in conversation.turns}
    for question in conversation.questions:
        ranked = rank(question.text)
        assert len(ranked) <= 10 and len(set(ranked)) == len(ranked) and set(ranked) <= turns


def at(year, month, day):
    return datetime(year, month, day, 13, 56, tzinfo=timezone.utc).timestamp()


def test_LT3_normalising_writes_out_contractions_and_number_words_only():
    """LT3: contractions are written out, number words become digits, other words stay."""
    said = "I’m sure she's going, don't you think? I've got two dogs and Three cats, can't I?"
    written = "I am sure she going, do not you think? I have got 2 dogs and 3 cats, can not I?"
    assert normalised(said) == written


def test_LT3_a_relative_day_resolves_to_the_day_before_the_turn():
    """LT3: "yesterday" on 8 May 2023 is followed by 7 may 2023; the words stay first."""
    said = "I went to a support group yesterday"
    assert dated(said, at(2023, 5, 8)) == f"{said} (7 may 2023)"


def test_LT3_weeks_resolve_to_a_month_and_a_bare_month_to_its_last_year():
    """LT3: "last week" gives its month and year; "in June", said in May, the June before."""
    said = "We moved last week, and in June we travel"
    assert dated(said, at(2023, 5, 3)) == f"{said} (april 2023; june 2022)"


def test_LT3_months_and_years_resolve_by_the_calendar_not_by_days():
    """LT3: "last month" on 31 May is April, "last year" on 31 December the year before."""
    assert dated("last month", at(2023, 5, 31)) == "last month (april 2023)"
    assert dated("last month", at(2023, 1, 5)) == "last month (december 2022)"
    assert dated("last year", at(2024, 12, 31)) == "last year (2023)"


def test_LT3_a_month_given_with_its_year_is_left_alone():
    """LT3: "in May 2021" names its year already: nothing is added."""
    said = "We met in May 2021"
    assert dated(said, at(2023, 5, 8)) == said


def test_LT3_key_phrases_are_runs_of_words_between_stop_words():
    """LT3: RAKE keeps the longest runs first, each without a stop word, at most `count`."""
    text = "I joined a local pottery class and the pottery teacher was kind"
    phrases = key_phrases(text, count=2)
    assert phrases == ["local pottery class", "pottery teacher"]


def test_LT4_the_command_adds_a_row_per_way_tried_after_the_built_in_rows(tmp_path, capsys):
    """LT4: `python -m benchmarks.locomo_tried PATH` prints the locomo tables, each with a row
    per way tried after the built-in rows."""
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    assert main([str(path)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    rows = [row for row in rows if "---" not in row]
    built_in = 1 + 2 + 1 + len(ABLATIONS) + len(RETRIEVERS)  # a header, then the rows
    table = built_in + len(TRIED)
    assert len(rows) == 2 * table
    for rows_of_one_table in (rows[:table], rows[table:]):
        names = [row.split(" | ")[0] for row in rows_of_one_table[built_in:]]
        assert names == [f"| tried: {name}" for name in TRIED]


def test_LT4_a_folder_without_conversations_exits_1_as_locomo_does(tmp_path, capsys):
    """LT4: the command exits 1, printing no table, where `locomo` would (BC5)."""
    assert main([str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "BC5: no LoCoMo conversation" in captured.err and captured.out == ""
