"""Text: the tokens every memory compares by, the token cost of a prompt, and statements.

Document 000 §4.2 compares `str.split()` words, which finds nothing in Chinese (a sentence
is one "word"); 001 §3 counts about 1.5 Chinese characters per model token and fits a
context to a token budget. This module fixes the first and keeps the second: `fits` is the
one test of a budget and `fit` the one cut to it, whatever a caller fits (working memory's
section, recall's lines, a tool's answer). `statement` reads 003 §4.2's "database: PostgreSQL".

Invariants:
    T1  `tokenize` is deterministic and lower-cases; a run of CJK characters yields its
        character bigrams (a lone CJK character stays a unigram).
    T2  `estimate_tokens` is 0 only for the empty string and never decreases when text
        is appended.
    T3  `statement` returns (subject, value) with both non-empty, or None.
    T4  `escape_line_breaks` returns JSON text that reads as the same JSON and holds no
        character `str.splitlines` splits on: U+0085, U+2028 and U+2029, which JSON leaves
        raw inside a string, are written escaped, as JSON escapes the control characters.
    T5  a text fits a budget of n tokens when its estimate is at most n (None: no budget);
        `fit(text, n)` is the longest start of text that fits: the text whole when it fits,
        never over the budget, and one character more would be.
"""

import math
import re

__all__ = [
    "tokenize",
    "estimate_tokens",
    "fits",
    "fit",
    "looks_like_failure",
    "clip",
    "flatten",
    "normalize",
    "statement",
    "escape_line_breaks",
]

# Han ideographs (with extension A and compatibility forms), kana and Hangul: scripts
# written without spaces, where a bigram is the smallest unit that carries meaning.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
# A word is a run of letters or digits that are not CJK; `_` and punctuation split words.
_TOKEN = re.compile(f"(?P<cjk>[{_CJK}]+)|(?P<word>[^\\W_{_CJK}]+)")
_ASCII_WORD = re.compile(r"[^\W_]+")  # the same words in text without CJK

CJK_CHARS_PER_TOKEN = 1.5
OTHER_CHARS_PER_TOKEN = 4.0

# The line breaks of `str.splitlines` that JSON leaves raw inside a string (T4).
LINE_BREAKS_LEFT_RAW = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}

# The default failure test of document 000's loop, shared by the agent and the summary.
FAILURE_MARKERS = ("error", "fail", "失败")


def tokenize(text: str) -> list[str]:
    """Split text into lower-cased words and CJK character bigrams, in order.

    Raises TypeError if text is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize needs a str, got {type(text).__name__}")
    if text.isascii():  # no CJK: the same words, found in one call rather than a match each
        return _ASCII_WORD.findall(text.lower())
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


def estimate_tokens(text: str) -> int:
    """Estimate model tokens: about 1.5 CJK characters or 4 other characters per token.

    Raises TypeError if text is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"estimate_tokens needs a str, got {type(text).__name__}")
    cjk = sum(len(run) for run in _CJK_RUN.findall(text))
    other = len(text) - cjk
    return math.ceil(cjk / CJK_CHARS_PER_TOKEN + other / OTHER_CHARS_PER_TOKEN)


def fits(text: str, tokens: int | None) -> bool:
    """Return True if the text's estimated tokens are at most `tokens`; None is no budget (T5)."""
    return tokens is None or estimate_tokens(text) <= tokens


def fit(text: str, tokens: int | None) -> str:
    """Return the longest start of text that `fits` `tokens`: the text itself if it fits (T5)."""
    if fits(text, tokens):
        return text
    # No character costs less than 1 / OTHER_CHARS_PER_TOKEN of a token, which bounds the
    # search; a longer start never costs less (T2), so the search can halve.
    low = 0
    high = min(len(text), int(tokens * OTHER_CHARS_PER_TOKEN))
    while low < high:
        middle = (low + high + 1) // 2
        if fits(text[:middle], tokens):
            low = middle
        else:
            high = middle - 1
    return text[:low]


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


def normalize(text: str) -> str:
    """Return text case-folded with whitespace folded: the key under which statements match."""
    return " ".join(text.casefold().split())


# "subject: value" or "subject = value", on one line, with a short subject.
# Each part opens with a character that is not white space, so neither is empty once stripped
# (T3): "0:\r" is no statement.
_STATEMENT = re.compile(r"^\s*([^\s:=][^:=\n]{0,79}?)\s*[:=]\s*(\S[^\n]{0,299}?)\s*$")


def statement(content: str) -> tuple[str, str] | None:
    """Split `subject: value` (or `subject = value`) into its two parts, or return None (T3)."""
    match = _STATEMENT.match(content)
    return (match.group(1).strip(), match.group(2).strip()) if match else None


def escape_line_breaks(json_text: str) -> str:
    """Return JSON text with the line breaks JSON leaves raw written escaped (T4)."""
    # Outside a string JSON allows none of them, so each one met is inside a string.
    for character, escaped in LINE_BREAKS_LEFT_RAW.items():
        json_text = json_text.replace(character, escaped)
    return json_text
