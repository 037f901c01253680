"""Example tests for recuris.core.prompt, the layout shared by writer and reader (P1-P3)."""

from recuris import Episode, Hit, WorkingMemory
from recuris.core.prompt import EXPERIENCE_HEADER, INSTRUCTION, build_prompt, render_experience, subtask_options


def test_working_section_comes_before_experience_and_instruction():
    """P1: working memory first, experience second, the instruction last."""
    memory = WorkingMemory()
    memory.init_task("goal")
    text = build_prompt(memory.to_prompt_section(), [])
    assert text.index("Goal: goal") < text.index(EXPERIENCE_HEADER) < text.index(INSTRUCTION)


def test_no_experience_renders_as_none():
    """P2: no hits is said explicitly, never padded with weak ones."""
    assert render_experience([]).splitlines()[1].strip() == "(none)"


def test_experience_is_rendered_in_the_order_given():
    """P2: hits appear best first, one line each."""
    hits = [Hit(0.9, Episode(task_type="t", goal=g, status="success")) for g in ("first", "second")]
    lines = render_experience(hits).splitlines()[1:]
    assert [("first" in lines[0]), ("second" in lines[1])] == [True, True]


def test_subtask_options_split_on_the_separator():
    """P3: alternatives are separated by ' | ', first choice first."""
    assert subtask_options("submit | solve captcha then submit") == ["submit", "solve captcha then submit"]
    assert subtask_options("just one") == ["just one"]


def test_a_slot_in_an_option_matches_any_text():
    """P3: `{slot}` stands for any non-empty text; the rest must match, ignoring case and spacing."""
    from recuris.core.prompt import matches_option

    assert matches_option("Deploy to  EU-west", "deploy to {region}")
    assert not matches_option("deploy to", "deploy to {region}")
    assert not matches_option("deploy from eu-west", "deploy to {region}")
    assert matches_option("a.b", "a.b") and not matches_option("axb", "a.b")
