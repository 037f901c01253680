"""Property tests for recuris.core.text (T1, T2, T4)."""

from hypothesis import given
from hypothesis import strategies as st

from recuris.core.text import estimate_tokens, jaccard, jaccard_candidates, tokenize

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


@given(token_sets, token_sets)
def test_T2_jaccard_is_symmetric_and_in_unit_interval(a, b):
    """T2: symmetric, and within [0, 1]."""
    assert jaccard(a, b) == jaccard(b, a)
    assert 0.0 <= jaccard(a, b) <= 1.0


@given(token_sets.filter(bool))
def test_T2_jaccard_of_a_set_with_itself_is_one(a):
    """T2: a non-empty set is fully similar to itself."""
    assert jaccard(a, set(a)) == 1.0


@given(token_sets, token_sets)
def test_T2_jaccard_is_zero_exactly_when_nothing_is_shared(a, b):
    """T2: the score is 0 iff the sets share no token."""
    assert (jaccard(a, b) == 0.0) == (not (a & b))


@given(st.text(), st.text())
def test_T4_estimate_never_decreases_when_text_is_appended(head, tail):
    """T4: appending text never lowers the estimate, and only "" costs 0."""
    assert estimate_tokens(head + tail) >= estimate_tokens(head)
    assert (estimate_tokens(head) == 0) == (head == "")


@given(
    st.dictionaries(st.text(alphabet="abc", min_size=1, max_size=3), token_sets.filter(bool), max_size=12),
    st.floats(0.05, 1.0),
)
def test_T3_prefix_filtering_misses_no_similar_pair(sets, threshold):
    """T3: every pair reaching the threshold is among the candidates."""
    frozen = {key: frozenset(value) for key, value in sets.items()}
    candidates = jaccard_candidates(frozen, threshold)
    for a in frozen:
        for b in frozen:
            if a != b and jaccard(frozen[a], frozen[b]) >= threshold:
                assert b in candidates[a]
