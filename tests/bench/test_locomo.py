"""Example tests for recuris.bench.locomo and `python -m recuris.bench locomo` (LC1-LC4)."""

import json

import pytest
from locomo_conversation import CONVERSATION

from recuris import bench
from recuris.bench.locomo import RETRIEVERS, evaluate, load, load_all, through_manager
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


def released(sample_id: str) -> dict:
    """Return the fixture as the release writes a conversation: its turns nested, named."""
    body = {key: value for key, value in CONVERSATION.items() if key != "qa"}
    return {"qa": CONVERSATION["qa"], "conversation": body, "sample_id": sample_id}


def test_the_releases_list_of_conversations_is_read_as_its_conversations(path, tmp_path):
    """LC4: a JSON list of conversations, as the release's locomo10.json, gives each one, named
    by its sample_id, with the turns and questions of the same conversation in one file."""
    release = tmp_path / "locomo10.json"
    release.write_text(json.dumps([released("conv-1"), released("conv-2")]), encoding="utf-8")
    one = load(path)
    found = load_all(release)
    assert [conversation.name for conversation in found] == ["conv-1", "conv-2"]
    for conversation in found:
        assert (conversation.turns, conversation.questions) == (one.turns, one.questions)
    assert load_all(path) == (one,)


def without(data: dict, *keys) -> dict:
    """Return a copy of data with the field at the end of `keys` (a path into it) removed."""
    copy = json.loads(json.dumps(data))
    *inner, last = keys
    place = copy
    for key in inner:
        place = place[key]
    del place[last]
    return copy


MISSING = {
    "speakers": (
        ("conversation", "speaker_a"),
        "conversation conv-2 is not a LoCoMo conversation: no field 'speaker_a'",
    ),
    "turn-id": (
        ("conversation", "session_2", 1, "dia_id"),
        "conversation conv-2, session_2 turn 2: no field 'dia_id'",
    ),
    "turn-text": (
        ("conversation", "session_1", 0, "text"),
        "conversation conv-2, session_1 turn 1: no field 'text'",
    ),
    "question": (("qa", 0, "question"), "conversation conv-2, question 1: no field 'question'"),
}


@pytest.mark.parametrize("keys, said", MISSING.values(), ids=MISSING)
def test_a_malformed_conversation_is_refused_naming_file_conversation_and_field(
    tmp_path, keys, said
):
    """LC4: a conversation lacking a field is refused with one line naming the file, the
    conversation and the field, not the text of a KeyError."""
    release = tmp_path / "locomo10.json"
    broken = without(released("conv-2"), *keys)
    release.write_text(json.dumps([released("conv-1"), broken]), encoding="utf-8")
    with pytest.raises(ValueError) as refused:
        load_all(release)
    [line] = str(refused.value).splitlines()
    assert line.startswith(("LC2: ", "LC4: ")) and f"{release}, {said}" in line


@pytest.mark.parametrize(
    "data, name",
    [
        (without(CONVERSATION, "speaker_a"), "26"),
        (without(released("conv-26"), "conversation", "speaker_a"), "conv-26"),
    ],
    ids=["flat-as-the-dev-set", "nested-as-the-release"],
)
def test_a_file_of_one_conversation_without_its_speakers_names_it(tmp_path, data, name):
    """LC2, LC4: a file of one conversation lacking `speaker_a` is refused in one line naming
    the file, the conversation (its sample_id, else the file's name, as the dev set's 26.json)
    and the field."""
    target = tmp_path / "26.json"
    target.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError) as refused:
        load(target)
    [line] = str(refused.value).splitlines()
    assert line.startswith(f"LC2: {target}, conversation {name} ")
    assert "no field 'speaker_a'" in line
