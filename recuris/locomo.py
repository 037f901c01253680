"""LoCoMo: long-conversation memory retrieval, measured on the published benchmark's files.

Document 003 §6.1 asks for Recall@K and MRR on a labelled recall set; document 004 quotes
MemoryBank's recall falling as memory grows. LoCoMo (snap-research) is such a set: long
two-person conversations in sessions, and questions whose evidence is a list of turn ids.
For each question of categories 1-4 with evidence, every retriever ranks the turns of the
question's own conversation; a turn's text is `speaker: text`, plus the image caption.

Invariants:
    Q6  every retriever ranks every turn of the conversation exactly once, deterministically
        (ties keep the conversation's order).
    Q7  the loader keeps only questions of categories 1-4 that name evidence, and refuses a
        file that is not LoCoMo-shaped with a ValueError naming what is missing.
"""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .evaluation import recall_at_k, reciprocal_rank
from .scoring import BM25Scorer, JaccardScorer

__all__ = ["Turn", "Question", "Conversation", "load", "RETRIEVERS", "evaluate"]


@dataclass(frozen=True)
class Turn:
    id: str
    text: str


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
    """Read one LoCoMo conversation file (Q7). Raises ValueError for a file of another shape."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        data.get("conversation", data)["speaker_a"]  # the released files nest, the dev set does not
    except (ValueError, KeyError, AttributeError, TypeError) as error:
        raise ValueError(f"Q7: {path} is not a LoCoMo conversation: {error}") from None
    body = data.get("conversation", data)
    turns = []
    for number in range(1, 1000):
        session = body.get(f"session_{number}")
        if session is None and f"session_{number}_date_time" not in body:
            break
        for turn in session or ():
            caption = f" {turn['blip_caption']}" if turn.get("blip_caption") else ""
            turns.append(Turn(turn["dia_id"], f"{turn['speaker']}: {turn['text']}{caption}"))
    questions = tuple(
        Question(str(q["question"]), tuple(q["evidence"]), int(q["category"]))
        for q in data.get("qa", ())
        if q.get("category") in (1, 2, 3, 4) and q.get("evidence")
    )
    return Conversation(Path(path).stem, tuple(turns), questions)


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
                score + neighbours * ((own[i - 1] if i else 0.0) + (own[i + 1] if i + 1 < len(own) else 0.0))
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
    "bm25 (k1 1.2, b 0.75)": _indexed(BM25Scorer),
    # Short documents: weaker length normalisation and earlier term saturation (docs/benchmarks.md).
    "bm25 (k1 0.9, b 0.5) + neighbouring turns": _indexed(lambda: BM25Scorer(k1=0.9, b=0.5), neighbours=0.25),
}


@dataclass(frozen=True)
class Scores:
    questions: int
    r1: float
    r5: float
    r10: float
    mrr: float


def evaluate(conversations: Iterable[Conversation], build: Callable[[Conversation], Ranker]) -> Scores:
    """Rank each question's conversation with the retriever; return mean R@1, R@5, R@10 and MRR."""
    rows = []
    for conversation in conversations:
        rank = build(conversation)
        for question in conversation.questions:
            ranked = rank(question.text)
            rows.append([recall_at_k(ranked, question.evidence, k) for k in (1, 5, 10)]
                        + [reciprocal_rank(ranked, question.evidence)])
    if not rows:
        return Scores(0, 0.0, 0.0, 0.0, 0.0)
    means = [sum(column) / len(rows) for column in zip(*rows, strict=True)]
    return Scores(len(rows), *means)
