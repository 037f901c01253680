"""Example tests for recuris.manager.routing: what is worth remembering, and where (U1, U2)."""

import pytest

from recuris.manager.routing import is_trivial, route


@pytest.mark.parametrize("text", ["", "  ", "ok", "OK ", "Thanks", "好的", "hi"])
def test_blank_short_or_acknowledgement_is_trivial(text):
    """U1: nothing worth a memory."""
    assert is_trivial(text)


def test_real_content_is_not_trivial():
    """U1: a sentence is worth considering."""
    assert not is_trivial("the deploy failed on step 3")


def test_route_by_tag_statement_or_event():
    """U2: state tags go to working memory, statements to semantic, the rest is an event."""
    assert route("now on step 4", tags=["state"]) == "working"
    assert route("team language: Python") == "semantic"
    assert route("the deploy failed on step 3") == "episodic"
