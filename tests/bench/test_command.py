"""Example tests for recuris.bench.command: `python
-m recuris.bench` on a LoCoMo fixture (BC1-BC5)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from interrupted import interrupted_reading
from locomo_conversation import CONVERSATION

from recuris import bench
from recuris.bench.command import run_locomo
from recuris.bench.locomo import ABLATIONS, RETRIEVERS, through_manager
from recuris.storage.memory_store import InMemoryStore


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


def test_a_store_named_by_a_spec_adds_its_row_and_ranks_as_the_store_it_makes(path, capsys):
    """BC3: `--store factories:sqlite_store` adds the default manager's row on the store the
    spec makes, with the SQLiteStore row's figures, overall and per category."""
    assert bench.main(["locomo", str(path), "--store", "factories:sqlite_store"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    built_in = [row for row in rows if "default, SQLiteStore" in row]
    named = [row for row in rows if "default, factories:sqlite_store |" in row]
    assert len(named) == len(built_in) == 2
    assert [row.split(" | ")[1:] for row in named] == [row.split(" | ")[1:] for row in built_in]


def test_further_retrievers_are_rows_after_the_built_in_ones_in_both_tables(path, capsys):
    """BC4: a retriever `run_locomo` is given by name adds its row after the built-in rows,
    overall and per category."""
    assert run_locomo([str(path)], more={"mine": through_manager(InMemoryStore)}) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    tables = [rows[: len(rows) // 2], rows[len(rows) // 2 :]]
    assert [table[-1].split(" | ")[0] for table in tables] == ["| mine", "| mine"]
    assert sum(row.startswith("| mine |") for row in rows) == 2


@pytest.mark.parametrize("spec", ["factories", "factories:no_such_factory", "no_such_fork:make"])
def test_a_store_spec_that_names_no_factory_exits_1_naming_it(path, capsys, spec):
    """BC3: a `--store` spec that names no factory exits 1, its message naming the spec."""
    assert bench.main(["locomo", str(path), "--store", spec]) == 1
    assert f"--store={spec!r}" in capsys.readouterr().err


def test_a_folder_without_conversations_exits_1_saying_what_it_looked_for(tmp_path, capsys):
    """BC5: `locomo FOLDER` with no *.json file in it exits 1, naming the folder and the
    files it looked for, and prints no table."""
    assert bench.main(["locomo", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert f"BC5: no LoCoMo conversation in {tmp_path}" in captured.err
    assert "*.json" in captured.err and captured.out == ""


def test_conversations_without_a_question_to_measure_exit_1(tmp_path, capsys):
    """BC5: conversations none of whose questions can be measured exit 1, printing no table."""
    path = tmp_path / "no-questions.json"
    path.write_text(json.dumps({**CONVERSATION, "qa": []}), encoding="utf-8")
    assert bench.main(["locomo", str(path)]) == 1
    captured = capsys.readouterr()
    assert "BC5: 1 conversations and no question to measure" in captured.err
    assert captured.out == ""


@pytest.mark.processes
def test_ctrl_c_ends_the_benchmark_with_one_line_and_status_130(tmp_path):
    """V18: Ctrl-C while `python -m recuris.bench locomo` reads its input is one line, 130."""
    fifo = tmp_path / "conversation.json"
    status, out, err = interrupted_reading(fifo, "-m", "recuris.bench", "locomo", str(fifo))
    assert (status, out, err) == (130, "", "interrupted (Ctrl-C)\n")


def bench_locomo(*paths):
    """Run `python -m recuris.bench locomo PATHS` as a user does; return the completed process."""
    return subprocess.run(
        [sys.executable, "-m", "recuris.bench", "locomo", *map(str, paths)],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )


def test_the_releases_file_of_several_conversations_is_measured(tmp_path):
    """LC4, BC2: `locomo locomo10.json`, the release's JSON list of conversations, measures
    every conversation in it."""
    body = {key: value for key, value in CONVERSATION.items() if key != "qa"}
    release = [
        {"qa": CONVERSATION["qa"], "conversation": body, "sample_id": f"conv-{number}"}
        for number in (1, 2)
    ]
    (tmp_path / "locomo10.json").write_text(json.dumps(release), encoding="utf-8")
    measured = bench_locomo(tmp_path / "locomo10.json")
    assert measured.returncode == 0 and measured.stderr == ""
    assert measured.stdout.startswith("LoCoMo retrieval: 2 conversations, 4 questions")


def test_a_conversation_without_speakers_exits_1_with_one_line_naming_it(tmp_path):
    """LC4, BC2: a conversation of the list without its speakers exits 1 with one line naming
    the file, the conversation and the field; no traceback, no KeyError's text."""
    body = {key: value for key, value in CONVERSATION.items() if not key.startswith("speaker")}
    release = [{"qa": CONVERSATION["qa"], "conversation": body, "sample_id": "conv-7"}]
    (tmp_path / "locomo10.json").write_text(json.dumps(release), encoding="utf-8")
    refused = bench_locomo(tmp_path / "locomo10.json")
    [line] = refused.stderr.splitlines()
    assert refused.returncode == 1 and refused.stdout == ""
    assert line.startswith("error: LC2: ") and "conversation conv-7" in line
    assert "no field 'speaker_a'" in line
