"""LoCoMo: long-conversation memory retrieval, measured on the published benchmark's files.

Document 003 §6.1 asks for Recall@K and MRR on a labelled recall set; document 004 quotes
MemoryBank's recall falling as memory grows. LoCoMo (snap-research) is such a set: long
two-person conversations in sessions, and questions whose evidence is a list of turn ids.
For each question of categories 1-4 with evidence, every retriever ranks the turns of the
question's own conversation; a turn's text is `speaker: text`, plus the image caption.

The rows that matter are the product's: a default `MemoryManager` (in memory or on SQLite)
writes every turn as an episodic item of its session, who said it given as its `speaker`
(as a chat application knows it), with the clock at the session's date, and answers each
question with `recall(question, user, top_k=10)`, as a user would. A row writes the speaker
as a word of each turn instead, so that what the loader gives is never taken for recall's
own gain. The bare scorers stay beside it as references.

Invariants:
    LC1 every reference retriever ranks every turn of the conversation exactly once,
        deterministically (ties keep the conversation's order); the product ranks at most
        ten, each once.
    LC2 the loader keeps only questions of categories 1-4 that name evidence, and refuses a
        file that is not LoCoMo-shaped with a ValueError naming what is missing.
    LC3 the loader reads the turns of every session that has turns, in order, each as
        `speaker: text` followed by its image caption when it has one (`said` without the
        speaker), numbered by its session and dated at the session's date plus a minute per
        turn before it.
    LC4 a file holds one conversation (an object, its turns flat or nested under
        `conversation`, as the dev set's files) or the release's JSON list of them
        (`locomo10.json`); a malformed one is refused with a ValueError of one line naming
        the file, the conversation (its `sample_id`, else its place in the list, or for a
        file of one conversation the file's name) and the field missing or of the wrong type;
        so does LC2's refusal of a conversation without its speakers.
"""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..core.clock import DAY, ManualClock
from ..core.similarity import JaccardScorer
from ..manager.context import Context
from ..manager.manager import ManagerSettings, MemoryManager
from ..manager.recall import RecallPolicy, Weights
from ..retrieval.bm25 import BM25Settings
from ..retrieval.scoring import BM25Scorer
from ..storage.item import MemoryItem
from ..storage.store import Store
from .evaluation import recall_at_k, reciprocal_rank

__all__ = [
    "Turn",
    "Question",
    "Conversation",
    "load",
    "load_all",
    "RETRIEVERS",
    "evaluate",
    "through_manager",
    "top_ten",
    "ABLATIONS",
    "Scores",
]


@dataclass(frozen=True)
class Turn:
    id: str
    text: str  # `speaker: said`
    at: float = 0.0  # the session's date, plus a minute per turn
    session: int = 0
    speaker: str = ""
    said: str = ""  # the words and the image caption, without the speaker


def _date(text: str | None) -> float:
    # LoCoMo writes "1:56 pm on 8 May, 2023"; a missing or odd date counts as the epoch.
    try:
        return (
            datetime.strptime(text or "", "%I:%M %p on %d %B, %Y")
            .replace(tzinfo=timezone.utc)
            .timestamp()
        )
    except ValueError:
        return 0.0


@dataclass(frozen=True)
class Question:
    text: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Conversation:
    name: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def load(path: str | Path) -> Conversation:
    """Read a file of one LoCoMo conversation (LC2, LC4). Raises ValueError for another shape,
    or for a file of several conversations (`load_all` reads those)."""
    conversations = load_all(path)
    if len(conversations) != 1:
        raise ValueError(
            f"LC4: {path} holds {len(conversations)} conversations, not one; load_all reads them"
        )
    return conversations[0]


def load_all(path: str | Path) -> tuple[Conversation, ...]:
    """Read every LoCoMo conversation of a file: one object, or the release's list (LC4).

    Raises ValueError, in one line naming the file, the conversation and the field, for a
    file of another shape (LC2).
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as error:
        raise ValueError(f"LC2: {path} is not a LoCoMo conversation: {error}") from None
    if isinstance(data, dict):
        # Named by its sample_id, else by the file's name, as the dev set's files (26.json)
        # hold none; the conversation's own name stays the file's, as the tables print it.
        named = data.get("sample_id")
        name = named if isinstance(named, str) and named else Path(path).stem
        return (_conversation(data, Path(path).stem, f"{path}, conversation {name}"),)
    if not isinstance(data, list) or not data:
        raise ValueError(
            f"LC4: {path} is not a LoCoMo conversation: it holds neither one conversation "
            "(a JSON object) nor a list of them"
        )
    conversations = []
    for place, conversation in enumerate(data, 1):
        named = conversation.get("sample_id") if isinstance(conversation, dict) else None
        name = named if isinstance(named, str) and named else f"{Path(path).stem}-{place}"
        where = f"{path}, conversation {name}" if named else f"{path}, conversation {place}"
        conversations.append(_conversation(conversation, name, where))
    return tuple(conversations)


_KINDS = {str: "text", list: "a list", dict: "an object"}


def _field(data: object, key: str, kind: type, where: str):
    """Return data[key], or refuse the file, naming where the field is missing (LC4)."""
    if not isinstance(data, dict):
        raise ValueError(f"LC4: {where}: not an object")
    if key not in data:
        raise ValueError(f"LC4: {where}: no field {key!r}")
    if not isinstance(data[key], kind):
        raise ValueError(f"LC4: {where}: the field {key!r} is not {_KINDS[kind]}")
    return data[key]


def _conversation(data: object, name: str, where: str) -> Conversation:
    """Return the conversation an object holds, flat or nested under `conversation` (LC3)."""
    if not isinstance(data, dict):
        raise ValueError(f"LC4: {where}: not a LoCoMo conversation (an object)")
    # The release nests the sessions under `conversation`; the dev set's files do not.
    body = _field(data, "conversation", dict, where) if "conversation" in data else data
    if not isinstance(body.get("speaker_a"), str):
        raise ValueError(f"LC2: {where} is not a LoCoMo conversation: no field 'speaker_a' (text)")
    turns = []
    for number in range(1, 1000):
        session = body.get(f"session_{number}")
        if session is None and f"session_{number}_date_time" not in body:
            break
        date = _date(body.get(f"session_{number}_date_time"))
        if session is not None:
            _field(body, f"session_{number}", list, where)
        for index, turn in enumerate(session or ()):
            place = f"{where}, session_{number} turn {index + 1}"
            speaker = _field(turn, "speaker", str, place)
            said = _field(turn, "text", str, place)
            caption = turn.get("blip_caption")
            said = f"{said} {caption}" if caption else said
            at = date + 60.0 * index  # a minute a turn (LC3)
            turn_id = _field(turn, "dia_id", str, place)
            turns.append(Turn(turn_id, f"{speaker}: {said}", at, number, speaker, said))
    questions = []
    asked = _field(data, "qa", list, where) if "qa" in data else []
    for index, question in enumerate(asked):
        place = f"{where}, question {index + 1}"
        if not isinstance(question, dict):
            raise ValueError(f"LC4: {place}: not an object")
        if question.get("category") in (1, 2, 3, 4) and question.get("evidence"):
            text = _field(question, "question", str, place)
            evidence = _field(question, "evidence", list, place)
            questions.append(Question(text, tuple(evidence), int(question["category"])))
    return Conversation(name, tuple(turns), tuple(questions))


Ranker = Callable[[str], list[str]]


def _indexed(scorer_factory, neighbours: float = 0.0) -> Callable[[Conversation], Ranker]:
    def build(conversation: Conversation) -> Ranker:
        scorer = scorer_factory()
        for turn in conversation.turns:
            scorer.add(turn.id, scorer.analyzer(turn.text))
        order = [turn.id for turn in conversation.turns]

        def rank(question: str) -> list[str]:
            scores = dict(scorer.score_candidates(scorer.analyzer(question)))
            own = [scores.get(key, 0.0) for key in order]
            # A turn's neighbours are its context: an answer often sits next to the turn
            # that shares the question's words ("What did you adopt?" / "A puppy!").
            blended = [
                score
                + neighbours
                * ((own[i - 1] if i else 0.0) + (own[i + 1] if i + 1 < len(own) else 0.0))
                for i, score in enumerate(own)
            ]
            return [order[i] for i in sorted(range(len(order)), key=lambda i: (-blended[i], i))]

        return rank

    return build


def _split_words(text: str) -> list[str]:
    return text.lower().split()  # the prototype's tokenizer, for the baseline


RETRIEVERS: dict[str, Callable[[Conversation], Ranker]] = {
    "jaccard, str.split (document 000)": _indexed(lambda: JaccardScorer(analyzer=_split_words)),
    "jaccard, recuris tokens": _indexed(JaccardScorer),
    # Each reference names its settings, and passes them: they stay what the row says.
    "bm25 (k1 1.2, b 0.75)": _indexed(lambda: BM25Scorer(BM25Settings(k1=1.2, b=0.75))),
    # Short documents: weaker length normalisation and earlier term saturation (docs/benchmarks.md).
    "bm25 (k1 0.9, b 0.5) + neighbouring turns": _indexed(
        lambda: BM25Scorer(BM25Settings(k1=0.9, b=0.5)), neighbours=0.25
    ),
}


def top_ten(manager: MemoryManager, user_id: str, question: str) -> list[MemoryItem]:
    """Rank as a user would: the default recall's ten best."""
    return [result.item for result in manager.recall(question, user_id, top_k=10).results]


def through_manager(
    store_factory: Callable[[], Store],
    policy: RecallPolicy | None = None,
    speakers: bool = True,
    ranking: Callable[[MemoryManager, str, str], list[MemoryItem]] = top_ten,
    written: Callable[[Turn], str] | None = None,
) -> Callable[[Conversation], Ranker]:
    """Return the product as a retriever: a manager writes every turn, then recalls for each.

    With `speakers`, each turn's speaker is given to `write`; without, it is a word of the
    text. `ranking` turns a question into the items ranked, through the manager; `written`,
    if given, a turn into the text written (the speaker, if given, apart).
    """

    def build(conversation: Conversation) -> Ranker:
        clock = ManualClock(conversation.turns[0].at if conversation.turns else 0.0)
        settings = ManagerSettings(recall=policy or RecallPolicy())
        manager = MemoryManager(store_factory(), clock=clock, settings=settings)
        user = "speaker"
        for turn in conversation.turns:
            clock.advance(max(0.0, turn.at - clock()))
            if written is not None:
                text = written(turn)
            else:
                text = turn.said if speakers else turn.text
            manager.write(
                text,
                user,
                level="episodic",
                task_id=f"session-{turn.session}",
                metadata={"turn": turn.id},
                speaker=turn.speaker if speakers else None,
            )
        clock.advance(DAY)  # the questions come a day after the last session

        def rank(question: str) -> list[str]:
            return [item.metadata["turn"] for item in ranking(manager, user, question)]

        return rank

    return build


# The default recall with one of its choices undone, to show what each choice does.
ABLATIONS = {
    # The terms kept are named; every other term, one added later included, is 0 (Q8).
    "relevance weight only (no recency, no importance, no speaker)": RecallPolicy(
        weights=Weights.only("relevance", "context")
    ),
    "recency at a fixed 7-day half-life": RecallPolicy(stretch_half_life=False),
    "no context (each turn scored alone)": RecallPolicy(context=Context(width=0)),
    "context of one turn on either side": RecallPolicy(context=Context(width=1)),
}

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


@dataclass(frozen=True)
class Scores:
    """Mean R@1, R@5, R@10 and MRR@10 over the questions, and per category."""

    questions: int
    r1: float
    r5: float
    r10: float
    mrr: float
    by_category: tuple[tuple[str, "Scores"], ...] = ()


def _mean(rows: list[list[float]]) -> Scores:
    if not rows:
        return Scores(0, 0.0, 0.0, 0.0, 0.0)
    return Scores(len(rows), *(sum(column) / len(rows) for column in zip(*rows, strict=True)))


def evaluate(
    conversations: Iterable[Conversation], build: Callable[[Conversation], Ranker]
) -> Scores:
    """Rank each question's conversation with the retriever; return R@1, R@5, R@10 and MRR@10."""
    rows: dict[int, list[list[float]]] = {}
    for conversation in conversations:
        rank = build(conversation)
        for question in conversation.questions:
            ranked = rank(question.text)[:10]
            rows.setdefault(question.category, []).append(
                [recall_at_k(ranked, question.evidence, k) for k in (1, 5, 10)]
                + [reciprocal_rank(ranked, question.evidence)]
            )
    total = _mean([row for category in sorted(rows) for row in rows[category]])
    parts = tuple((CATEGORIES.get(c, str(c)), _mean(rows[c])) for c in sorted(rows))
    return Scores(total.questions, total.r1, total.r5, total.r10, total.mrr, parts)
