"""Example tests for recuris.bench.locomo and `python -m recuris.bench locomo` (LC1-LC3)."""

import json

import pytest
from locomo_conversation import CONVERSATION

from recuris import bench
from recuris.bench.locomo import RETRIEVERS, evaluate, load, through_manager
from recuris.storage.memory_store import InMemoryStore


@pytest.fixture
def path(tmp_path):
    target = tmp_path / "fixture.json"
    target.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    return target


def test_loader_reads_turns_with_speaker_and_caption(path):
    """LC3: a turn reads `speaker: text` plus its image caption; empty sessions are skipped."""
    conversation = load(path)
    assert [t.id for t in conversation.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert conversation.turns[2].text == "Ana: A beagle named Biscuit. a photo of a dog"


def test_each_turn_carries_its_session_and_the_sessions_date_plus_a_minute_a_turn(path):
    """LC3: turns are dated from their session's date, a minute apart, and numbered by session."""
    turns = load(path).turns
    may_8 = 1683550800.0  # 1:00 pm on 8 May 2023, UTC
    assert [(t.session, t.at - may_8) for t in turns] == [
        (1, 0.0),
        (1, 60.0),
        (1, 120.0),
        (2, 86400.0 + 3600.0),
        (2, 86400.0 + 3660.0),
    ]


def test_loader_keeps_categories_one_to_four_with_evidence(path):
    """LC2: no-evidence and category-5 questions are left out."""
    assert [q.text for q in load(path).questions] == [
        "What breed is Ana's dog?",
        "What instrument is Ben learning?",
    ]


def test_loader_refuses_a_file_of_another_shape(tmp_path):
    """LC2: a file that is not LoCoMo raises ValueError naming the file."""
    (tmp_path / "other.json").write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(ValueError, match="not a LoCoMo conversation"):
        load(tmp_path / "other.json")


def test_every_retriever_ranks_every_turn_once(path):
    """LC1: a full, duplicate-free, deterministic ranking."""
    conversation = load(path)
    for build in RETRIEVERS.values():
        rank = build(conversation)
        ranked = rank("What breed is the dog?")
        assert sorted(ranked) == sorted(t.id for t in conversation.turns) and ranked == rank(
            "What breed is the dog?"
        )


def test_bm25_finds_both_answers(path):
    """LC2: only the two questions the loader keeps are scored; BM25 ranks each evidence first."""
    scores = evaluate([load(path)], RETRIEVERS["bm25 (k1 1.2, b 0.75)"])
    assert (scores.questions, scores.r1, scores.mrr) == (2, 1.0, 1.0)


def test_bench_reports_a_bad_file_and_exits_1(tmp_path, capsys):
    """LC2, BC2: a file that is not LoCoMo gives exit status 1 and a message."""
    (tmp_path / "x.json").write_text("[]", encoding="utf-8")
    assert (
        bench.main(["locomo", str(tmp_path / "x.json")]) == 1
        and "error:" in capsys.readouterr().err
    )


def test_through_manager_writes_each_turn_as_written_says(path):
    """LC3: with `written`, the text a turn is written as is what recall finds."""
    conversation = load(path)
    marked = {turn.id for turn in conversation.turns[:2]}
    rank = through_manager(
        InMemoryStore,
        written=lambda turn: f"{turn.said} zebra" if turn.id in marked else turn.said,
    )(conversation)
    # Their neighbours follow through the context (CX2); the two come first.
    assert set(rank("zebra")[:2]) == marked
    assert through_manager(InMemoryStore)(conversation)("zebra") == []
