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


def test_a_slot_matches_the_value_given_for_its_text():
    """P3: `{slot}` takes its text's known value; the rest must match, ignoring case and spacing."""
    from recuris.core.prompt import matches_option

    assert matches_option("Deploy to  EU-west", "deploy to {region}", {"region": "eu-west"})
    assert not matches_option("deploy to us-east", "deploy to {region}", {"region": "eu-west"})
    assert not matches_option("deploy from eu-west", "deploy to {region}", {"region": "eu-west"})
    assert matches_option("a.b", "a.b") and not matches_option("axb", "a.b")


def test_a_slot_without_a_value_matches_no_action_but_itself():
    """P3: "book {preferred hotel}" is not done when "book the red-eye flight" runs."""
    from recuris.core.prompt import matches_option

    assert not matches_option("book the red-eye flight", "book {preferred hotel}")
    assert matches_option("book {preferred hotel}", "book {preferred hotel}")


def test_a_note_in_a_result_gives_a_value_for_its_slot_text():
    """P3: `note: key = value` in a step's result gives the value, its key normalised."""
    from recuris.core.prompt import noted_values

    assert noted_values("ok; note: API  Port = 8080") == [("api port", "8080")]
    assert noted_values("ok: done") == []


def test_an_action_completes_an_option_with_any_value_given_for_its_slot():
    """P3: each value given for the slot completes the option; a slot with none matches itself."""
    from recuris.core.prompt import completes

    known = {"api port": ["8080", "9090"]}
    assert completes("use 8080", "use {api port}", known)
    assert completes("use 9090", "use {api port}", known)
    assert not completes("use 7070", "use {api port}", known)
    assert completes("use {api port}", "use {api port}", {})
    assert not completes("use {api port}", "use {api port}", known)


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
