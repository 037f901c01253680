"""Text: the tokens every memory compares by, and the token cost of a prompt.

Document 000 §4.2 compares texts by Jaccard similarity of `str.split()` words, which
finds nothing in Chinese (a sentence is one "word"); document 001 §3 estimates about
1.5 Chinese characters per model token. This module fixes the first and keeps the second.

Invariants:
    T1  `tokenize` is deterministic and lower-cases; a run of CJK characters yields its
        character bigrams (a lone CJK character stays a unigram).
    T2  `jaccard` is symmetric, lies in [0, 1], is 1 for equal non-empty token sets and
        0 for disjoint ones (and for two empty sets: no evidence is not similarity).
    T3  `jaccard_candidates` misses no pair whose similarity reaches the threshold.
    T4  `estimate_tokens` is 0 only for the empty string and never decreases when text
        is appended.
"""

import math
import re
from collections.abc import Iterable

__all__ = [
    "tokenize",
    "jaccard",
    "jaccard_candidates",
    "estimate_tokens",
    "looks_like_failure",
    "clip",
    "flatten",
    "normalize",
    "require_text",
    "require_texts",
    "unicode_problem",
]

# Han ideographs (with extension A and compatibility forms), kana and Hangul: scripts
# written without spaces, where a bigram is the smallest unit that carries meaning.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
# A word is a run of letters or digits that are not CJK; `_` and punctuation split words.
_TOKEN = re.compile(f"(?P<cjk>[{_CJK}]+)|(?P<word>[^\\W_{_CJK}]+)")

CJK_CHARS_PER_TOKEN = 1.5
OTHER_CHARS_PER_TOKEN = 4.0

# The default failure test of document 000's loop, shared by the agent and the summary.
FAILURE_MARKERS = ("error", "fail", "失败")


def tokenize(text: str) -> list[str]:
    """Split text into lower-cased words and CJK character bigrams, in order.

    Raises TypeError if text is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize needs a str, got {type(text).__name__}")
    tokens: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        run = match.group("cjk")
        if run is None:
            tokens.append(match.group("word"))
        elif len(run) == 1:
            tokens.append(run)
        else:
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """Return |A ∩ B| / |A ∪ B| of two token collections, treated as sets (T2)."""
    set_a, set_b = set(a), set(b)
    if not set_a or not set_b:
        return 0.0
    shared = len(set_a & set_b)
    return shared / (len(set_a) + len(set_b) - shared)


def jaccard_candidates(token_sets: dict[str, frozenset[str]], threshold: float) -> dict[str, set[str]]:
    """For each key, return the other keys whose Jaccard similarity with it may reach threshold.

    Prefix filtering (T3): order tokens rarest first; two sets with Jaccard >= t share a
    token among the first |X| - ceil(t·|X|) + 1 of each. So only sets sharing a prefix
    token are candidates, and no pair that reaches the threshold is missed.
    Raises ValueError unless 0 < threshold <= 1.
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"T3: threshold must lie in (0, 1], got {threshold!r}")
    frequency: dict[str, int] = {}
    for tokens in token_sets.values():
        for token in tokens:
            frequency[token] = frequency.get(token, 0) + 1
    postings: dict[str, set[str]] = {}
    prefixes = {}
    for key, tokens in token_sets.items():
        ordered = sorted(tokens, key=lambda token: (frequency[token], token))
        prefixes[key] = ordered[: len(ordered) - math.ceil(threshold * len(ordered) - 1e-9) + 1]
        for token in prefixes[key]:
            postings.setdefault(token, set()).add(key)
    return {key: set().union(*(postings[t] for t in prefix)) - {key} for key, prefix in prefixes.items()}


def estimate_tokens(text: str) -> int:
    """Estimate model tokens: about 1.5 CJK characters or 4 other characters per token.

    Raises TypeError if text is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"estimate_tokens needs a str, got {type(text).__name__}")
    cjk = sum(len(run) for run in _CJK_RUN.findall(text))
    other = len(text) - cjk
    return math.ceil(cjk / CJK_CHARS_PER_TOKEN + other / OTHER_CHARS_PER_TOKEN)


def looks_like_failure(result: str) -> bool:
    """Return True if an action result mentions a failure marker ("error", "fail", "失败")."""
    lowered = result.lower()
    return any(marker in lowered for marker in FAILURE_MARKERS)


def clip(text: str, limit: int) -> str:
    """Return text cut to at most `limit` characters, marking a cut with '…'."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def flatten(text: str, limit: int) -> str:
    """Return text on one line, whitespace folded, clipped to `limit` characters.

    Untrusted text (an action, a result, a goal) is flattened before it enters a prompt
    or a summary, so that a newline in it cannot forge a line of the layout.
    """
    return clip(" ".join(text.split()), limit)


def require_text(name: str, value: object) -> str:
    """Return value if it is a non-blank str.

    Raises TypeError for a non-str and ValueError for blank text, naming `name`.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must not be empty")
    if problem := unicode_problem(value):
        raise ValueError(f"{name} must be valid Unicode text: {problem}")
    return value


def require_texts(name: str, values: object, rule: str = "") -> list[str]:
    """Return values as a list if it is a collection of non-blank str (not one str).

    Raises TypeError naming `name` (and `rule`, if given) for a str or a non-iterable.
    """
    prefix = f"{rule}: " if rule else ""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{prefix}{name} must be a collection of str, got {type(values).__name__}")
    return [require_text(name, value) for value in values]


def unicode_problem(text: str) -> str:
    """Return why text cannot be written as UTF-8 (a lone surrogate), or "" if it can."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"lone surrogate at position {error.start}"
    return ""


def normalize(text: str) -> str:
    """Return text case-folded with whitespace folded: the key under which statements match."""
    return " ".join(text.casefold().split())
