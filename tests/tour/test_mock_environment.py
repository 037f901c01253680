"""Example tests for recuris.tour.mock_environment.MockEnvironment (ME1)."""

from recuris.tour.mock_environment import MockEnvironment


def test_answers_from_its_table_or_the_default_and_logs_actions():
    """ME1: the table's entry, else the default; every action executed is recorded."""
    env = MockEnvironment({"submit": "error: captcha"}, default="ok")
    assert [env("submit"), env("open"), env("submit")] == ["error: captcha", "ok", "error: captcha"]
    assert env.executed == ["submit", "open", "submit"]
