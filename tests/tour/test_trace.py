"""Example tests for recuris.tour.trace: the self-contained HTML trace page (TR1-TR4)."""

import xml.etree.ElementTree as ET
from types import SimpleNamespace

from recuris import ManualClock
from recuris.tour.recorder import Recorder
from recuris.tour.trace import decay_plots, prompt_plot, render_page, weight_curve, write_page
from recuris.core.clock import DAY
from recuris.core.decay import DecayManager

from prompt_sections import SECTIONS
from trace_pages import SVG_NS, Page, svg_texts, svgs, traced_run


def test_the_page_is_well_formed_html_with_balanced_tags():
    """TR1: the page parses with html.parser, every element closed in order, one html and body."""
    page = Page(render_page(traced_run()))
    assert page.errors == []
    assert [tag for tag, _ in page.elements].count("body") == 1


def test_the_page_runs_no_script_and_loads_nothing():
    """TR1: no <script>, no src attribute, and every href is an anchor within the page."""
    page = Page(render_page(traced_run()))
    assert "script" not in [tag for tag, _ in page.elements]
    assert [attrs for _, attrs in page.elements if "src" in attrs] == []
    hrefs = [attrs["href"] for _, attrs in page.elements if "href" in attrs]
    assert hrefs and all(href.startswith("#") for href in hrefs)
    ids = {attrs["id"] for _, attrs in page.elements if "id" in attrs}
    assert {href[1:] for href in hrefs} <= ids


def test_the_page_has_a_heading_per_part_and_per_plot():
    """TR3: the title, the plots and each recorded part have headings, with the part's title."""
    recorder = traced_run()
    headings = Page(render_page(recorder, "my trace")).headings
    assert headings[0] == "my trace"
    assert {"Plots", "The run, part by part", "first task", "second task", "decay"} <= set(headings)
    assert any(h.startswith("(a)") for h in headings) and any(h.startswith("(b)") for h in headings)


def test_each_model_call_is_one_prompt_block_inside_its_step():
    """TR3: one prompt block per decide step (and per model call), each in a stage-2 item."""
    recorder = traced_run()
    text = render_page(recorder)
    page = Page(text)
    calls = sum(kind == "prompt" for part in recorder.parts for kind, _ in part.entries)
    entries = [entry for part in recorder.parts for entry in part.entries]
    steps = sum(kind == "event" and event.stage == 2 for kind, event in entries)
    assert len(page.with_class("prompt")) == calls == steps > 0
    assert text.count('<li class="stage-2">') == steps


def test_a_prompt_block_labels_its_sections_in_the_layout_order():
    """TR3: goal, pins, progress, summary, recent steps, experience, instruction, each labelled."""
    page = render_page(traced_run())
    first = page.split('<details class="prompt">')[1].split("</details>")[0]
    labels = [chunk.split("</span>")[0] for chunk in first.split('<span class="label">')[1:]]
    assert labels == SECTIONS


def test_the_page_shows_each_tier_after_each_part_and_the_audit_lines():
    """TR2: what each tier holds after a part is listed, and the cycle's audit lines are shown."""
    recorder = traced_run()
    page = Page(render_page(recorder))
    text = "".join(page.text)
    assert page.headings.count("What each tier holds after this part") == len(recorder.parts)
    assert "forget episode-1" in text and "Audit lines" in page.headings


def test_a_memory_holding_a_script_shows_as_text():
    """TR2: a goal `<script>alert(1)</script>` is escaped
    everywhere: text on the page, never an element."""
    evil = "<script>alert(1)</script>"
    recorder = traced_run(goal=evil)
    recorder.note(evil)
    text = render_page(recorder, title=evil)
    page = Page(text)
    assert "script" not in [tag for tag, _ in page.elements] and page.errors == []
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and evil not in text
    assert evil in "".join(page.text)


def test_every_svg_is_well_formed_with_axis_labels_and_a_legend():
    """TR1: each inline plot parses as XML and names both axes and every line in a legend."""
    plots = svgs(render_page(traced_run()))
    assert len(plots) == 2
    for svg in plots:
        assert svg.tag == f"{SVG_NS}svg"
        assert len(svg_texts(svg, "x-label")) == len(svg_texts(svg, "y-label")) == 1
        assert len(svg_texts(svg, "legend")) >= 2
    assert "(estimated tokens)" in svg_texts(plots[0], "y-label")[0]
    assert any("retention threshold" in text for text in svg_texts(plots[1], "legend"))


def test_the_prompt_plot_compares_the_longest_run_with_its_full_history():
    """TR3: plot (a) draws the longest run, recuris's prompt beside the full-history prompt."""
    svg = prompt_plot(traced_run())
    assert "recuris prompt" in svg and "full-history prompt" in svg


def test_a_decay_curve_jumps_up_at_each_access_and_falls_between():
    """TR3: weight_curve uses the decay formula; an access is a marker where the weight jumps up."""
    decay = DecayManager()
    item = SimpleNamespace(
        id="e",
        created_at=0.0,
        importance=1.0,
        consolidated=False,
        access_count=1,
        last_access_at=3 * DAY,
    )
    points, markers = weight_curve(decay, item, [3 * DAY], 0.0, 10 * DAY)
    assert points[0] == (0.0, 1.0) and len(markers) == 1
    before, after = [y for x, y in points if x == 3.0]
    assert before < after == markers[0][1] == 1.0 + decay.settings.reinforcement_per_access
    falling = [y for x, y in points if x > 3.0]
    assert falling == sorted(falling, reverse=True)


def test_a_decay_plot_marks_each_item_kept_or_forgotten():
    """TR3: plot (b) names each item weighed by the cycle with the cycle's verdict."""
    recorder = traced_run()
    [svg] = decay_plots(recorder)
    assert "episode-1 (old report): forgotten" in svg


def test_the_page_is_the_same_for_the_same_record():
    """TR4: rendering twice gives the same text."""
    recorder = traced_run()
    assert render_page(recorder) == render_page(recorder)


def test_extra_figures_are_added_with_their_heading(tmp_path):
    """TR2: a caller's figure appears under its escaped heading; write_page writes UTF-8."""
    figure = ("(c) a <figure>", "caption & more", '<svg xmlns="http://www.w3.org/2000/svg"></svg>')
    path = write_page(tmp_path / "t.html", traced_run(), figures=[figure])
    text = path.read_text(encoding="utf-8")
    assert "(c) a &lt;figure&gt;" in text and "caption &amp; more" in text
    assert "注册一个新账号" in text


def test_the_demo_writes_the_trace(demo_trace):
    """TR1: `python agent_demo.py --html FILE` writes
    one self-contained page with the three plots."""
    terminal, path = demo_trace
    text = path.read_text(encoding="utf-8")
    page = Page(text)
    assert page.errors == [] and "script" not in [tag for tag, _ in page.elements]
    headings = page.headings
    assert [h[:3] for h in headings if h[:1] == "("] == ["(a)", "(b)", "(c)"]
    assert sum(h.startswith(("A. ", "B. ", "K. ")) for h in headings) == 3
    assert len(svgs(text)) == 3
    assert f"The trace is in {path}" in terminal


def test_a_lone_surrogate_in_any_recorded_text_is_written_as_its_escape(tmp_path):
    """TR5: a note, a prompt, a tier, an audit line and a title holding a lone surrogate still
    give a page, where it shows as its escape (`\\ud800`)."""
    recorder = traced_run()
    recorder.note("a note \udfff")
    recorder.wrap(lambda prompt: "ok")("a prompt \ud800")
    recorder.settle({"tier \ud801": ["line \ud802"]}, ["audit \ud803"])
    path = write_page(tmp_path / "t.html", recorder, title="title \ud800")
    text = path.read_text(encoding="utf-8")
    shown = ["a note \\udfff", "a prompt \\ud800", "tier \\ud801", "line \\ud802"]
    assert [t for t in [*shown, "audit \\ud803", "title \\ud800"] if t not in text] == []


def test_a_shown_prompt_is_on_the_page_where_the_narration_shows_it():
    """TR6: a prompt the caller shows (`show_prompt`) is an open
    block of labelled sections after the note before it."""
    recorder = traced_run()
    prompt = recorder.parts[0].runs()[0][0]
    recorder.note("The first prompt, section by section:")
    recorder.show_prompt(prompt)
    text = render_page(recorder)
    after = text.split("The first prompt, section by section:")[1]
    block = after.split('<details class="prompt" open>')[1].split("</details>")[0]
    labels = [chunk.split("</span>")[0] for chunk in block.split('<span class="label">')[1:]]
    assert labels == SECTIONS and after.index("<details") < after.index("</section>")


def test_a_table_is_on_the_page_in_place_with_its_header_and_rows():
    """TR6: a recorded table is an HTML table, header then rows, after the note before it."""
    recorder = traced_run()
    recorder.note("the table follows")
    recorder.table(["step", "tokens"], [[1, 10], [8, 12]])
    text = render_page(recorder)
    after = text.split("the table follows")[1]
    table = Page(after.split("</table>")[0] + "</table>")
    assert table.text[:6] == ["step", "tokens", "1", "10", "8", "12"]


def test_the_prompt_plot_ticks_its_steps_at_whole_numbers():
    """TR3: plot (a)'s step axis shows only whole step numbers, even for a run of three calls."""
    recorder = Recorder(ManualClock(0.0))
    llm = recorder.wrap(lambda prompt: "FINISH")
    for step in range(3):
        llm(f"## Working memory\nGoal: step {step}\n")
    svg = ET.fromstring(prompt_plot(recorder))
    ticks = ["".join(t.itertext()) for t in svg.iter(f"{SVG_NS}text") if t.get("class") == "x-tick"]
    assert ticks and all(tick.isdigit() for tick in ticks)
