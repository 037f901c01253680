"""Property tests for recuris.core.text (T1, J1, T2, T3, T5)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.core.text import estimate_tokens, fit, fits, statement, tokenize

token_sets = st.sets(st.text(alphabet="abcdef", min_size=1, max_size=3), max_size=8)


@given(st.text())
def test_T1_tokens_are_lower_case_and_deterministic(text):
    """T1: tokenize is deterministic and yields only lower-cased, non-empty tokens."""
    tokens = tokenize(text)
    assert tokens == tokenize(text)
    assert all(token and token == token.lower() for token in tokens)


@given(st.text(alphabet="注册账号测试一个新", min_size=2, max_size=20))
def test_T1_a_cjk_run_of_n_characters_gives_n_minus_one_bigrams(run):
    """T1: an unbroken CJK run of n >= 2 characters yields n - 1 bigrams."""
    tokens = tokenize(run)
    assert len(tokens) == len(run) - 1 and all(len(token) == 2 for token in tokens)


@given(st.text(), st.text())
def test_T2_estimate_never_decreases_when_text_is_appended(head, tail):
    """T2: appending text never lowers the estimate, and only "" costs 0."""
    assert estimate_tokens(head + tail) >= estimate_tokens(head)
    assert (estimate_tokens(head) == 0) == (head == "")


@given(st.text(), st.sampled_from([":", "="]), st.text())
def test_T3_a_statement_has_two_non_empty_parts_or_is_none(subject, separator, value):
    """T3: statement returns None or (subject, value), both non-empty."""
    found = statement(subject + separator + value)
    assert found is None or (len(found) == 2 and all(part.strip() for part in found))


# Latin and CJK characters together: each costs a different share of a token (T5's estimate).
mixed_text = st.text(alphabet=st.sampled_from("ab 注册账号\n"), max_size=60)
budgets = st.integers(min_value=0, max_value=20)


@given(mixed_text, budgets)
def test_T5_the_fitted_start_is_never_over_the_budget(text, tokens):
    """T5: fit returns a start of the text whose estimate is at most the budget."""
    fitted = fit(text, tokens)
    assert text.startswith(fitted) and estimate_tokens(fitted) <= tokens


@given(mixed_text, budgets)
def test_T5_the_fitted_start_is_the_longest_that_fits(text, tokens):
    """T5: one character more than fit returns would be over the budget."""
    fitted = fit(text, tokens)
    assert fitted == text or not fits(text[: len(fitted) + 1], tokens)


@given(mixed_text, budgets)
def test_T5_a_text_that_fits_is_returned_whole(text, tokens):
    """T5: a text whose estimate is within the budget, or with no budget, comes back whole."""
    assert fit(text, None) == text
    assert (fit(text, tokens) == text) == (estimate_tokens(text) <= tokens) == fits(text, tokens)
