"""Example tests for recuris.bench.command: `python
-m recuris.bench` on a LoCoMo fixture (BC1, BC2)."""

import json

import pytest
from locomo_conversation import CONVERSATION

from recuris import bench
from recuris.bench.locomo import ABLATIONS, RETRIEVERS


@pytest.fixture
def path(tmp_path):
    target = tmp_path / "fixture.json"
    target.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    return target


def test_bench_prints_a_table_per_retriever(path, capsys):
    """BC2: `bench locomo PATH` prints R@1-R@10 and
    MRR@10 for both stores, each ablation and reference."""
    assert bench.main(["locomo", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "2 questions" in lines[0] and lines[2] == "| retriever | R@1 | R@5 | R@10 | MRR@10 |"
    rows = [line for line in lines if line.startswith("| ") and "---" not in line]
    # Overall, then per category: a header, both stores, the speaker as a word, the ablations.
    assert len(rows) == 2 * (1 + 2 + 1 + len(ABLATIONS) + len(RETRIEVERS))
    assert sum("(what users run)" in row for row in rows) == 4


def test_a_benchmark_writes_nothing_beside_its_input_or_where_it_runs(path, tmp_path, monkeypatch):
    """BC1: `bench locomo PATH` leaves the folder of PATH and the working folder as they were."""
    working = tmp_path / "working"
    working.mkdir()
    monkeypatch.chdir(working)
    before = sorted(tmp_path.rglob("*"))
    assert bench.main(["locomo", str(path)]) == 0
    assert sorted(tmp_path.rglob("*")) == before
