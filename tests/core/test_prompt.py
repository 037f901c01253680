"""Example tests for recuris.core.prompt, the layout shared by writer and reader (P1-P4)."""

from recuris import Episode, Hit, WorkingMemory
from recuris.core.prompt import (
    EXPERIENCE_HEADER,
    INSTRUCTION,
    ContextSection,
    build_prompt,
    read_sections,
    render_experience,
    subtask_options,
)


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
    assert subtask_options("submit | solve captcha then submit") == [
        "submit",
        "solve captcha then submit",
    ]
    assert subtask_options("just one") == ["just one"]


def test_an_action_does_a_subtask_when_it_is_one_of_its_options_normalised():
    """P3: the core compares an action with each option, ignoring case and spacing, nothing more."""
    from recuris.core.mock_llm import PromptFollowingLLM

    memory = WorkingMemory()
    memory.init_task("goal", ["open page", "submit | solve captcha then submit"])
    memory.add_step("Open  PAGE", "ok")
    memory.add_step("solve captcha then submit", "ok")
    text = build_prompt(memory.to_prompt_section(), [])
    assert PromptFollowingLLM()(text) == "FINISH"


def test_a_section_renders_its_header_then_its_lines_and_only_with_lines():
    """P1: an extra section follows experience; one without lines is left out."""
    from recuris.core.prompt import ContextSection

    memory = WorkingMemory()
    memory.init_task("goal")
    shown = ContextSection("## Notes", ("- a: b",))
    empty = ContextSection("## Empty")
    text = build_prompt(memory.to_prompt_section(), [], [shown, empty])
    assert (
        text.index(EXPERIENCE_HEADER) < text.index("## Notes\n  - a: b") < text.index(INSTRUCTION)
    )
    assert "## Empty" not in text


def test_the_core_layout_and_mock_name_no_tool_and_no_layer_above():
    """P1, L2: headers and tools of the layers above are theirs; the core spells none of them."""
    import inspect

    from recuris.core import agent, mock_llm, prompt

    for module in (prompt, mock_llm, agent):
        source = inspect.getsource(module)
        assert "search_memory" not in source and "[procedural]" not in source
        assert "Recalled memory" not in source and "Recalled by" not in source


def test_a_prompt_is_read_back_in_sections_at_each_line_not_indented():
    """P4: each unindented line opens a section, blank lines too; indented lines stand under it."""
    memory = WorkingMemory()
    memory.init_task("register an account")
    notes = ContextSection("## Notes", ("- region: eu-west",))
    sections = read_sections(build_prompt(memory.to_prompt_section(), [], [notes]))
    headings = [section.heading for section in sections]
    assert headings[:3] == ["## Working memory", "Goal: register an account", "Pinned constraints:"]
    assert headings[-3:] == ["## Notes", "", INSTRUCTION]
    notes_read = sections[headings.index("## Notes")]
    assert notes_read.body() == ["- region: eu-west"]
    assert notes_read.text == "## Notes\n  - region: eu-west\n"


def test_indented_lines_before_any_heading_stand_under_none():
    """P4: a prompt opening with indented lines gives them a section whose heading is None."""
    sections = read_sections("  - stray\n## Notes\n  - kept")
    assert [(section.heading, section.body()) for section in sections] == [
        (None, ["- stray"]),
        ("## Notes", ["- kept"]),
    ]


def test_a_contested_action_renders_its_label_and_outcomes_newest_first():
    """P5: the label, the action quoted, then each outcome, newest first, with its goal."""
    from recuris.core.prompt import CONTESTED, render_contested

    line = render_contested("push", [("deploy search", True), ("deploy billing", False)])
    said = "worked in deploy search; failed in deploy billing"
    assert line == f'{CONTESTED} "push", newest first: {said}'
