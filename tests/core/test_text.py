"""Example tests for recuris.core.text: tokens, Jaccard, token estimates (T1, J1, T2-T5)."""

import json

import pytest

from recuris.core.text import (
    clip,
    escape_line_breaks,
    estimate_tokens,
    fit,
    fits,
    flatten,
    looks_like_failure,
    normalize,
    statement,
    tokenize,
)


def test_latin_words_are_lower_cased_and_split_on_punctuation():
    """T1: Latin words and digits are lower-cased; punctuation and `_` split them."""
    assert tokenize("Fill the E-mail_field, step 2!") == [
        "fill",
        "the",
        "e",
        "mail",
        "field",
        "step",
        "2",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Fill the E-mail_field, step 2!",
        "a__b--c\t\nD9x",
        "",
        "___",
        "x" * 300,
        "ALL CAPS 42 and 4.2",
        "Ünïcode beside ascii",
    ],
)
def test_ascii_text_splits_as_the_general_path_splits_it(text):
    """T1: ASCII text, split in one call, gives the general path's tokens (a non-ASCII twin)."""
    twin = tokenize(text + " é")  # one non-ASCII word sends the same text down the general path
    assert tokenize(text) == twin[:-1] and twin[-1] == "é"


def test_cjk_run_becomes_character_bigrams():
    """T1: a run of CJK characters yields its overlapping bigrams."""
    assert tokenize("注册账号") == ["注册", "册账", "账号"]


def test_single_cjk_character_stays_a_unigram():
    """T1: a lone CJK character between non-CJK text stays one token."""
    assert tokenize("a 表 b") == ["a", "表", "b"]


def test_mixed_script_splits_at_the_script_boundary():
    """T1: Latin and CJK runs written together become separate tokens."""
    assert tokenize("用Python写API") == ["用", "python", "写", "api"]


def test_str_split_tokenisation_defect_is_fixed_for_chinese():
    """T1: two Chinese goals about the same thing now share tokens (str.split gave none)."""
    shared = set(tokenize("注册一个新账号")) & set(tokenize("再注册一个测试账号"))
    assert {"注册", "账号"} <= shared


def test_tokenize_rejects_non_text():
    """T1: tokenize takes text only."""
    with pytest.raises(TypeError, match="needs a str"):
        tokenize(42)


def test_estimate_tokens_uses_one_and_a_half_cjk_characters_per_token():
    """T2: three CJK characters estimate as two tokens."""
    assert estimate_tokens("注册账") == 2


def test_estimate_tokens_uses_four_other_characters_per_token():
    """T2: eight Latin characters estimate as two tokens; a ninth rounds up."""
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("abcdefghi") == 3


def test_estimate_tokens_of_empty_text_is_zero():
    """T2: only the empty string costs nothing."""
    assert estimate_tokens("") == 0
    assert estimate_tokens(" ") == 1


def test_fit_cuts_a_text_to_the_longest_start_within_the_budget():
    """T5: three tokens hold twelve Latin characters, or three CJK characters and no fourth."""
    assert fit("register an account", 3) == "register an "
    assert fit("注册一个新账号", 2) == "注册一"


def test_no_budget_fits_any_text_whole():
    """T5: None is no budget: every text fits it and comes back whole."""
    assert fits("x" * 10_000, None) and fit("x" * 10_000, None) == "x" * 10_000


def test_failure_markers_are_found_in_any_case_and_in_chinese():
    """The default failure test recognises "error", "fail" and "失败"."""
    assert looks_like_failure("ERROR: timeout")
    assert looks_like_failure("login failed")
    assert looks_like_failure("提交失败")
    assert not looks_like_failure("ok: saved")


def test_clip_marks_a_cut_and_keeps_the_limit():
    """clip never returns more than `limit` characters and marks a cut with an ellipsis."""
    assert clip("abcdef", 4) == "abc…"
    assert clip("abc", 4) == "abc"


def test_flatten_puts_text_on_one_line():
    """flatten folds newlines so untrusted text cannot forge a line of a layout."""
    assert flatten("ok\nGoal: evil", 100) == "ok Goal: evil"


def test_normalize_folds_case_and_space():
    """normalize is the matching key: case- and whitespace-insensitive."""
    assert normalize("  Team   LANGUAGE ") == "team language"


def test_statement_splits_subject_and_value():
    """T3: `subject: value` and `subject = value` split into two parts; other text is None."""
    assert statement("team language: Python") == ("team language", "Python")
    assert statement("db = PostgreSQL 16") == ("db", "PostgreSQL 16")
    assert statement("no separator here") is None
    assert statement("two\nlines: x") is None
    assert statement("0:\r") is None and statement("\r= x") is None


def test_escaped_json_reads_the_same_and_holds_no_line_break_a_reader_splits_on():
    """T4: U+0085, U+2028 and U+2029 inside JSON strings are escaped; the JSON is unchanged."""
    data = {"content": "a\u0085b\u2028c\u2029d\ne", "id": "x\u2028"}
    text = escape_line_breaks(json.dumps(data, ensure_ascii=False))
    assert text.splitlines() == [text] and json.loads(text) == data
