"""Example tests for benchmarks/side_by_side.py: turns, spreads and tables (SB1-SB4)."""

import statistics
from types import SimpleNamespace

import pytest

from benchmarks import side_by_side
from benchmarks.side_by_side import (
    Turns,
    by_size,
    differences,
    in_turns,
    ratios,
    spread,
    timed_ms,
)


def test_turns_run_the_sides_in_the_order_given_then_reversed_and_add_up_their_seconds():
    """SB1: each take runs every side once, in order, then reversed; seconds add up."""
    ran = []
    turns = Turns()
    for _ in range(3):
        turns.take({"ours": lambda: ran.append("ours"), "plain": lambda: ran.append("plain")})
    assert ran == ["ours", "plain", "plain", "ours", "ours", "plain"]
    assert set(turns.seconds) == {"ours", "ours_cpu", "plain", "plain_cpu"}
    assert all(seconds >= 0 for seconds in turns.seconds.values())


def test_turns_made_reversed_first_begin_with_the_last_side():
    """SB1: runs of one take each alternate: a second run's turns start reversed."""
    ran = []
    turns = Turns(reversed_first=True)
    for _ in range(2):
        turns.take({"ours": lambda: ran.append("ours"), "plain": lambda: ran.append("plain")})
    assert ran == ["plain", "ours", "ours", "plain"]


def test_a_side_is_given_the_seconds_its_own_work_took(monkeypatch):
    """SB1: the seconds added are the side's own: on clocks that move only while a side works,
    a side that takes 3 s (2 s of CPU) is given those, one that does nothing is given none."""
    wall = [100.0]
    cpu = [10.0]
    # The module's clocks, driven by the sides themselves: a loaded machine cannot add to them
    clocks = SimpleNamespace(perf_counter=lambda: wall[0], process_time=lambda: cpu[0])
    monkeypatch.setattr(side_by_side, "time", clocks)

    def busy() -> None:
        wall[0] += 3.0
        cpu[0] += 2.0

    turns = Turns()
    for _ in range(2):
        turns.take({"busy": busy, "idle": lambda: None})
    assert turns.seconds == {"busy": 6.0, "busy_cpu": 4.0, "idle": 0.0, "idle_cpu": 0.0}


def test_spread_gives_the_median_lowest_highest_and_count():
    """SB2: the spread of [4, 1, 3, 2] is n 4, median 2.5, low 1, high 4."""
    assert spread([4.0, 1.0, 3.0, 2.0]) == {"n": 4, "median": 2.5, "low": 1.0, "high": 4.0}


def test_spread_of_nothing_is_refused():
    """SB2: no values, no figure: statistics refuses an empty list."""
    with pytest.raises(statistics.StatisticsError):
        spread([])


def test_timed_ms_calls_the_function_once_with_the_argument():
    """timed_ms calls `function(argument)` once and returns a time in milliseconds."""
    calls = []
    took = timed_ms(calls.append, "query")
    assert calls == ["query"] and took >= 0


def test_in_turns_runs_the_sides_in_order_then_in_reverse_query_by_query():
    """SB3: every side meets every query once, in the order given, then reversed, and so on."""
    ran = []
    sides = [lambda query, name=name: ran.append((name, query)) for name in "abc"]
    times = in_turns(sides, ["q0", "q1", "q2"])
    assert all(len(side) == 3 for side in times) and all(t >= 0 for side in times for t in side)
    assert ran == [
        ("a", "q0"), ("b", "q0"), ("c", "q0"),
        ("c", "q1"), ("b", "q1"), ("a", "q1"),
        ("a", "q2"), ("b", "q2"), ("c", "q2"),
    ]  # fmt: skip


def test_in_turns_keeps_what_its_measure_returns_of_each_run():
    """SB3: given a measure, each side's list holds its returns, in the order of the queries."""
    sides = [lambda query: query * 2, lambda query: query * 3]
    kept = in_turns(sides, [1, 2, 3], measure=lambda side, query: side(query))
    assert kept == [[2, 4, 6], [3, 6, 9]]


def test_ratios_and_differences_are_taken_pair_by_pair():
    """SB2: the median ratio of pairs (1/2, 4/1, 3/3) is 1, where the medians' ratio is 1.5."""
    ours = [1.0, 4.0, 3.0]
    theirs = [2.0, 1.0, 3.0]
    assert ratios(ours, theirs) == {"n": 3, "median": 1.0, "low": 0.5, "high": 4.0}
    assert differences(ours, theirs)["median"] == 0.0


def test_sides_of_unequal_length_are_refused():
    """SB2: a ratio needs pairs: sides of different lengths raise ValueError."""
    with pytest.raises(ValueError):
        ratios([1.0, 2.0], [1.0])


def test_a_table_by_size_prints_its_header_a_rule_each_size_then_the_load(capsys):
    """SB4: the header, a rule of as many columns, the rows of each size in order, the load."""
    def measure(size, rounds, queries, seed):
        print(f"| {size} | {rounds} {queries} {seed} |")

    arguments = ["--sizes", "20", "10", "--rounds", "2"]
    assert by_size(arguments, "a table", "| a | b |", measure, [1]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == ["| a | b |", "| --- | --- |", "| 20 | 2 5 1 |", "| 10 | 2 5 1 |"]
    assert lines[4].startswith("load average ") and len(lines) == 5
