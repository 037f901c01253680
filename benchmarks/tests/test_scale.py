"""Example tests for benchmarks/scale.py: the workload
merges, and progress keeps off pipes (SZ1-SZ3)."""

import io
from collections.abc import Callable

import pytest

from benchmarks import scale


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_the_workload_is_a_function_of_size_and_seed_and_comes_in_batches():
    """SZ1: the same size and seed give the same memories, in batches of at most 1,000."""
    first = list(scale.memories(2500, seed=3))
    second = list(scale.memories(2500, seed=3))
    assert first == second and [len(batch) for batch in first] == [1000, 1000, 500]


def test_a_cycle_over_the_workload_forgets_and_merges():
    """SZ1: the forgetting workload merges even at a
    small size, and the store holds what the report says."""
    cycle = scale.forgetting_cycle(3000, quiet=True)
    assert cycle["forgotten"] > 0 and cycle["merged"] > 0
    assert cycle["left"] == 3000 - cycle["forgotten"] - cycle["merged"] and cycle["peak_mb"] > 0
    assert 0 <= cycle["cycle_gc_s"] <= cycle["cycle_s"]


@pytest.mark.parametrize("sqlite", [False, True])
def test_semantic_writes_supersede_facts(sqlite):
    """SZ3: the semantic-write measure supersedes a
    fact in about half of its writes, on either store."""
    writes = scale.semantic_writes(60, quiet=True, sqlite=sqlite)
    assert 15 < writes["superseded"] < 45 and 0 <= writes["gc_s"] <= writes["seconds"]


def _recorded(ran: list) -> Callable[[int], dict]:
    """Return a measure that notes each size it runs, and which run of all it was."""

    def measure(size):
        ran.append(size)
        return {"size": size, "run": len(ran)}

    return measure


def test_in_rounds_runs_every_size_each_round_in_order_then_reversed():
    """SZ3: each size runs once a round, its runs kept in round order; sizes take turns (SB3)."""
    ran = []
    measure = _recorded(ran)
    runs = scale.in_rounds(measure, (10, 100, 1000), (3, 3, 3))
    assert ran == [10, 100, 1000, 1000, 100, 10, 10, 100, 1000]
    assert [[run["run"] for run in size] for size in runs] == [[1, 6, 7], [2, 5, 8], [3, 4, 9]]


def test_a_size_with_fewer_rounds_runs_in_the_first_rounds_only():
    """SZ3: the largest size's three runs are rounds one to three; the others go on alone."""
    ran = []
    measure = _recorded(ran)
    runs = scale.in_rounds(measure, (10, 100, 1000), (5, 5, 3))
    assert ran == [10, 100, 1000, 1000, 100, 10, 10, 100, 1000, 100, 10, 10, 100]
    assert [[run["run"] for run in size] for size in runs] == [
        [1, 6, 7, 11, 12],
        [2, 5, 8, 10, 13],
        [3, 4, 9],
    ]


def test_in_rounds_refuses_a_count_missing_for_a_size():
    """SZ3: as many counts of rounds as sizes, or ValueError."""
    with pytest.raises(ValueError):
        scale.in_rounds(lambda size: {"size": size}, (10, 100), (3,))


def test_an_exponent_is_taken_between_the_runs_of_one_round():
    """SZ3: round by round, never between sorted times: 1 -> 20 s and 2 -> 10 s over tenfold."""
    smaller = [{"seconds": 1.0}, {"seconds": 2.0}]
    larger = [{"seconds": 20.0}, {"seconds": 10.0}]
    found = scale.round_exponents(10, smaller, 100, larger, lambda run: run["seconds"])
    assert [round(value, 3) for value in found] == [1.301, 0.699]


def test_exponents_pair_only_the_rounds_both_sizes_ran():
    """SZ3: a size that ran two rounds beside one that ran three gives two exponents."""
    smaller = [{"s": 1.0}, {"s": 2.0}, {"s": 4.0}]
    larger = [{"s": 10.0}, {"s": 20.0}]
    found = scale.round_exponents(10, smaller, 100, larger, lambda run: run["s"])
    assert [round(value, 3) for value in found] == [1.0, 1.0]


def test_the_growth_exponent_is_the_log_ratio_of_times_over_sizes():
    """SZ3: ten times the items in ten times the time is exponent 1; in a hundred times, 2."""
    assert (
        scale.exponent(10, 1.0, 100, 10.0) == 1.0
        and round(scale.exponent(10, 1.0, 100, 100.0), 9) == 2
    )


def test_progress_reaches_a_terminal_with_phase_count_rate_and_time():
    """SZ2: on a terminal, progress names the phase, the
    items done of the total, a rate and the seconds."""
    terminal = Terminal()
    progress = scale.Progress("fill 1,000", 1000, stream=terminal)
    progress.update(1000)
    progress.close()
    assert (
        terminal.getvalue().startswith("\rfill 1,000: 1,000 of 1,000, ")
        and "/s, " in terminal.getvalue()
    )


def test_progress_is_silent_on_a_pipe_or_when_quiet():
    """SZ2: nothing is written when the stream is not a terminal, or when asked to be quiet."""
    pipe = io.StringIO()
    terminal = Terminal()
    quiet = scale.Progress("fill", 10, quiet=True, stream=terminal)
    for progress in (scale.Progress("fill", 10, stream=pipe), quiet):
        progress.update(10)
        progress.close()
    assert pipe.getvalue() == terminal.getvalue() == ""


def test_a_cycle_on_the_in_memory_store_decides_as_on_sqlite():
    """SZ1: on the in-memory store the same workload forgets and merges the same items."""
    memory = scale.forgetting_cycle(3000, quiet=True, store="memory")
    sqlite = scale.forgetting_cycle(3000, quiet=True)
    decided = ("forgotten", "merged", "left")
    assert [memory[key] for key in decided] == [sqlite[key] for key in decided]


def test_a_cycle_on_an_unknown_store_is_refused():
    """SZ1: the forgetting cycle runs on "sqlite" or "memory"; any other is a ValueError."""
    with pytest.raises(ValueError, match="store"):
        scale.forgetting_cycle(10, quiet=True, store="postgres")
