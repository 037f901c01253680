"""LoCoMo, what was tried beyond the context: each built on the product's public API.

Document 003 §6.1 asks that a retrieval change be measured before it is kept. Each way of
ranking, or of writing a turn, here is written on the public API (`MemoryManager.write`,
`recall` and the store's `statistics`), as a fork would try it, and, from a clone's root,
`python -m benchmarks.locomo_tried PATH...` prints its rows beside the default's, so a figure
in docs/benchmarks.md's "tried" table comes from a command.

Invariants:
    LT1 every ranking returns at most ten items, each once, all of them the user's, and
        recalls with the manager's default settings.
    LT2 fusion is reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009) with the
        constant `FUSION`: an item's fused score is the sum, over the lists holding it, of
        1 / (FUSION + its rank), ranks from 1; ties keep the first list's order.
    LT3 a turn as a variant writes it begins with the turn's words, whole, but for
        `normalised`, which changes only contractions and number words; `dated` follows
        them with one date per relative date found, resolved against the turn's own time;
        `key_phrases` gives at most `count` phrases, each a run of the text's words holding
        no stop word.
    LT4 `python -m benchmarks.locomo_tried PATH...` prints `python -m recuris.bench locomo`'s
        tables with a row per way of TRIED after the built-in rows, each on the in-memory
        store; it exits 1 as `locomo` does (BC5).
"""

import argparse
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from recuris.bench.command import run_locomo
from recuris.bench.locomo import Turn, through_manager, top_ten
from recuris.manager.entry import run_piped
from recuris.manager.manager import MemoryManager
from recuris.retrieval.bm25 import bm25_idf
from recuris.retrieval.scoring import STOP_WORDS, analyze
from recuris.storage.item import MemoryItem
from recuris.storage.memory_store import InMemoryStore

__all__ = [
    "FUSION",
    "fuse",
    "sessions_fused",
    "second_hop",
    "feedback",
    "normalised",
    "dated",
    "key_phrases",
    "Tried",
    "TRIED",
    "main",
]

FUSION = 60  # the constant of reciprocal rank fusion, as its authors set it
POOL = 50  # how many of the recall's results a ranking reads before it cuts to ten
FIRST = 3  # the first results a second hop or feedback reads its words from
WORDS = 3  # the words each adds to the question
KEYS = 3  # the key phrases written with a turn


def fuse(lists: Sequence[Sequence[MemoryItem]]) -> list[MemoryItem]:
    """Return the items of every list by reciprocal rank fusion, best first (LT2)."""
    scores: dict[str, float] = {}
    items: dict[str, MemoryItem] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, 1):
            scores[item.id] = scores.get(item.id, 0.0) + 1 / (FUSION + rank)
            items.setdefault(item.id, item)
    return [items[key] for key in sorted(scores, key=lambda key: -scores[key])]


def sessions_fused(manager: MemoryManager, user_id: str, question: str) -> list[MemoryItem]:
    """Fuse the turns' ranks with their sessions' ranks, a session scored by its turns' totals.

    Accesses are counted as the default counts them, on its ten best; the pool is read
    without counting.
    """
    results = manager.recall(question, user_id, top_k=POOL, count_access=False).results
    manager.recall(question, user_id, top_k=10)  # counted as the default counts
    sessions: Counter = Counter()
    for result in results:
        sessions[result.item.task_id] += result.total
    order = {task: rank for rank, (task, _) in enumerate(sessions.most_common())}
    by_session = sorted(results, key=lambda result: order[result.item.task_id])
    turns = [result.item for result in results]
    return fuse([turns, [result.item for result in by_session]])[:10]


def _rarest(manager: MemoryManager, user_id: str, question: str, found: Sequence[MemoryItem]):
    """Return the rarest words of the first results that the question lacks, rarest first."""
    asked = set(analyze(question))
    held = Counter(term for item in found[:FIRST] for term in set(analyze(item.content)))
    new = sorted(term for term in held if term not in asked)
    statistics = manager.store.statistics(user_id, "episodic", new)
    weight = {
        term: bm25_idf(statistics.documents, count)
        for term, count in statistics.frequencies.items()
    }
    return sorted(weight, key=lambda term: (-weight[term] * held[term], term))[:WORDS]


def _asked_again(
    manager: MemoryManager, user_id: str, question: str
) -> tuple[list[MemoryItem], list[MemoryItem]]:
    """Return the ten best, and the ten best once the first results' rarest words are added.

    Neither recall counts use; the default's ten are counted after, as the default counts
    them, so the second question's recency is the first's.
    """
    first = _inspected(manager, user_id, question)
    words = _rarest(manager, user_id, question, first)
    again = _inspected(manager, user_id, f"{question} {' '.join(words)}") if words else first
    manager.recall(question, user_id, top_k=10)
    return first, again


def _inspected(manager: MemoryManager, user_id: str, question: str) -> list[MemoryItem]:
    """Return the ten best without counting their use."""
    return [r.item for r in manager.recall(question, user_id, top_k=10, count_access=False).results]


def second_hop(manager: MemoryManager, user_id: str, question: str) -> list[MemoryItem]:
    """Ask again with the first results' rarest words added; fuse both lists (LT2)."""
    return fuse(_asked_again(manager, user_id, question))[:10]


def feedback(manager: MemoryManager, user_id: str, question: str) -> list[MemoryItem]:
    """Ask once more with the first results' rarest words added, and keep only that list."""
    return _asked_again(manager, user_id, question)[1]


# Contractions written out, and number words as digits: what an analyser could do for any
# English text. "'s" is dropped, being "is", "has" or a possessive.
CONTRACTIONS = (
    ("can't", "can not"),
    ("won't", "will not"),
    ("n't", " not"),
    ("'m", " am"),
    ("'re", " are"),
    ("'ve", " have"),
    ("'ll", " will"),
    ("'d", " would"),
    ("'s", ""),
)
# "can't" and "won't" whole, before the "n't" of any other word.
_CONTRACTION = re.compile(
    r"\b(can't|won't)\b|(?<=\w)("
    + "|".join(re.escape(short) for short, _ in CONTRACTIONS[2:])
    + r")\b",
    re.IGNORECASE,
)
_WRITTEN_OUT = {short: long for short, long in CONTRACTIONS}
NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
).split()
_NUMBER = re.compile(r"\b(" + "|".join(NUMBERS) + r")\b", re.IGNORECASE)


def normalised(text: str) -> str:
    """Return the text with contractions written out and number words as digits (LT3)."""
    text = text.replace("\u2019", "'")  # a typographic apostrophe is an apostrophe
    text = _CONTRACTION.sub(lambda match: _WRITTEN_OUT[match.group(0).lower()], text)
    return _NUMBER.sub(lambda match: str(NUMBERS.index(match.group(1).lower())), text)


# Relative dates: how far before the turn each points (negative: after it), and in what:
# days resolve to a day, weeks to the month and year of the day, months and years by the
# calendar ("last month" on 31 May is April).
RELATIVE = {
    "today": ("days", 0),
    "tonight": ("days", 0),
    "this morning": ("days", 0),
    "this afternoon": ("days", 0),
    "this evening": ("days", 0),
    "yesterday": ("days", 1),
    "last night": ("days", 1),
    "the other day": ("days", 3),
    "a few days ago": ("days", 3),
    "tomorrow": ("days", -1),
    "last week": ("weeks", 1),
    "last weekend": ("weeks", 1),
    "a week ago": ("weeks", 1),
    "two weeks ago": ("weeks", 2),
    "next week": ("weeks", -1),
    "last month": ("months", 1),
    "a month ago": ("months", 1),
    "next month": ("months", -1),
    "last year": ("years", 1),
}
MONTHS = (
    "january february march april may june july august september october november december"
).split()
_RELATIVE = re.compile(
    r"\b(" + "|".join(sorted(RELATIVE, key=len, reverse=True)) + r")\b", re.IGNORECASE
)
_IN_MONTH = re.compile(r"\bin (" + "|".join(MONTHS) + r")\b(?!,? \d)", re.IGNORECASE)


def _resolved(when: datetime, unit: str, back: int) -> str:
    """Return the date `back` units before `when`, as words: a day, a month or a year."""
    if unit == "years":
        return f"{when.year - back}"
    if unit == "months":
        months = when.year * 12 + when.month - 1 - back
        return f"{MONTHS[months % 12]} {months // 12}"
    then = when - timedelta(days=back * (7 if unit == "weeks" else 1))
    if unit == "weeks":
        return f"{MONTHS[then.month - 1]} {then.year}"
    return f"{then.day} {MONTHS[then.month - 1]} {then.year}"


def dated(said: str, at: float) -> str:
    """Return the words followed by the date each relative date in them points to (LT3).

    A day ("yesterday") resolves to its day, month and year; a week ("last week") to its
    month and year; a month ("last month") to the calendar's month before; "last year" to
    its year; "in May", without a year, to the last May up to the turn's month. Resolved
    against `at`, the turn's time (seconds since the epoch).
    """
    when = datetime.fromtimestamp(at, timezone.utc)
    found = [
        _resolved(when, *RELATIVE[match.group(1).lower()]) for match in _RELATIVE.finditer(said)
    ]
    for match in _IN_MONTH.finditer(said):
        month = MONTHS.index(match.group(1).lower()) + 1
        found.append(f"{MONTHS[month - 1]} {when.year - (month > when.month)}")
    return f"{said} ({'; '.join(found)})" if found else said


def key_phrases(text: str, count: int = KEYS) -> list[str]:
    """Return the text's `count` best key phrases by RAKE (Rose et al., 2010), best first (LT3).

    A phrase is a run of words between stop words and punctuation; a word scores its degree
    over its frequency among the phrases, a phrase the sum of its words'. Ties keep the
    phrases' order in the text.
    """
    phrases = []
    for clause in re.split(r"[^\w\s]+", text.lower()):
        run: list[str] = []
        for word in clause.split():
            if word in STOP_WORDS:
                if run:
                    phrases.append(tuple(run))
                run = []
            else:
                run.append(word)
        if run:
            phrases.append(tuple(run))
    frequency: Counter = Counter()
    degree: Counter = Counter()
    for phrase in phrases:
        for word in phrase:
            frequency[word] += 1
            degree[word] += len(phrase)
    scored = {
        " ".join(phrase): sum(degree[word] / frequency[word] for word in phrase)
        for phrase in phrases
    }
    return sorted(scored, key=lambda phrase: -scored[phrase])[:count]


def _normalised_turn(turn: Turn) -> str:
    return normalised(turn.said)


def _dated_turn(turn: Turn) -> str:
    return dated(turn.said, turn.at)


def _keyed_turn(turn: Turn) -> str:
    return f"{turn.said} ({'; '.join(key_phrases(turn.said))})"


def normalised_question(manager: MemoryManager, user_id: str, question: str) -> list[MemoryItem]:
    """Rank as the default does, the question normalised as the turns were (LT3)."""
    return top_ten(manager, user_id, normalised(question))


@dataclass(frozen=True)
class Tried:
    """A way to write the turns and a way to rank for a question, tried beside the default."""

    ranking: Callable[[MemoryManager, str, str], list[MemoryItem]] = top_ten
    written: Callable[[Turn], str] | None = None


TRIED: dict[str, Tried] = {
    "sessions ranked by their turns' totals, fused with the turns": Tried(sessions_fused),
    "a second hop: the first three results' rarest words asked again, fused": Tried(second_hop),
    "pseudo-relevance feedback: the same words, the second list alone": Tried(feedback),
    "relative dates in turns resolved against the turn's date, written after it": Tried(
        written=_dated_turn
    ),
    "the three best RAKE key phrases of each turn written with it as extra keys": Tried(
        written=_keyed_turn
    ),
    "contractions written out and number words as digits, in turns and questions": Tried(
        normalised_question, _normalised_turn
    ),
}


def main(argv: list[str] | None = None) -> int:
    """Measure the rankings tried on LoCoMo files or folders of them (LT4); return the status."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.locomo_tried", description=__doc__.splitlines()[0]
    )
    parser.add_argument("paths", nargs="+", help="LoCoMo conversations, or folders of them")
    arguments = parser.parse_args(argv)
    tried = {
        f"tried: {name}": through_manager(InMemoryStore, ranking=way.ranking, written=way.written)
        for name, way in TRIED.items()
    }
    return run_piped(lambda: run_locomo(arguments.paths, more=tried))


if __name__ == "__main__":
    sys.exit(main())
