"""Example tests for recuris.tour.svg: line plots drawn with the standard library (PL1-PL4)."""

import xml.etree.ElementTree as ET

import pytest

from recuris.tour.svg import Reference, Series, line_plot, nice_ticks

from plot_frames import NS, frame, vertices


def texts(svg: str, css_class: str) -> list[str]:
    found = ET.fromstring(svg).iter(f"{NS}text")
    return ["".join(t.itertext()) for t in found if t.get("class") == css_class]


def plot(**options) -> str:
    series = [
        Series("recuris", [(1, 351), (16, 588), (33, 607)]),
        Series("full history", [(1, 351), (33, 1297)], dashed=True),
    ]
    return line_plot("Prompt size", "step (model call)", "prompt (tokens)", series, **options)


def test_a_plot_is_one_svg_document():
    """PL1: the output parses as XML, its root an <svg> in the SVG namespace, with a title."""
    root = ET.fromstring(plot())
    assert root.tag == f"{NS}svg" and root.find(f"{NS}title").text == "Prompt size"


def test_a_plot_names_both_axes_with_their_units():
    """PL3: one x label and one y label, as given (with their units)."""
    svg = plot()
    assert texts(svg, "x-label") == ["step (model call)"] and texts(svg, "y-label") == [
        "prompt (tokens)"
    ]


def test_the_legend_names_every_series_reference_and_the_markers():
    """PL3: one legend entry per series, per reference
    line, and one for markers when there are any."""
    series = [Series("weight", [(0, 1), (5, 0.6)], markers=[(2, 0.9)])]
    svg = line_plot(
        "Decay",
        "time (days)",
        "weight (no unit)",
        series,
        [Reference("threshold 0.15", 0.15)],
        marker_label="access",
    )
    assert texts(svg, "legend") == ["weight", "threshold 0.15", "access"]
    assert texts(plot(), "legend") == ["recuris", "full history"]


def test_text_is_escaped_and_characters_xml_cannot_hold_are_dropped():
    """PL1: markup in a label stays text; control characters do not break the document."""
    svg = line_plot("<b>&", "x\x00 (days)", "y", [Series("<script>", [(0, 0)])])
    assert texts(svg, "legend") == ["<script>"] and texts(svg, "x-label") == ["x (days)"]
    assert "<script>" not in svg


def test_every_point_lies_inside_the_plot_area():
    """PL2: polyline points and reference lines fall within the frame, even for one point."""
    for series in ([Series("one", [(3, 3)])], [Series("flat", [(0, 5), (10, 5)])]):
        root = ET.fromstring(line_plot("t", "x", "y", series, [Reference("r", 4)]))
        left, top, right, bottom = frame(root)
        for x, y in vertices(root):
            assert left <= x <= right and top <= y <= bottom


def test_the_same_arguments_give_the_same_bytes():
    """PL4: drawing is deterministic."""
    assert plot() == plot()


def test_a_plot_without_points_or_with_a_non_finite_value_is_refused():
    """PL2: nothing to draw, or a NaN or infinity, raises ValueError."""
    with pytest.raises(ValueError):
        line_plot("t", "x", "y", [Series("empty", [])])
    with pytest.raises(ValueError):
        line_plot("t", "x", "y", [Series("nan", [(0, float("nan"))])])


def test_ticks_are_round_numbers_within_the_range():
    """PL2: ticks are steps of 1, 2 or 5 times a power of ten, inside the span."""
    assert nice_ticks(0, 23) == [0, 5, 10, 15, 20]
    assert nice_ticks(0, 2730) == [0, 1000, 2000]
    assert nice_ticks(4, 4) == [4]


def test_a_long_legend_wraps_and_the_picture_grows_to_hold_it():
    """PL3: many legend entries wrap onto new rows, and the height grows so none is cut off."""
    series = [Series(f"memory number {n} with a long name", [(0, n), (1, n)]) for n in range(8)]
    root = ET.fromstring(line_plot("t", "x", "y", series))
    height = float(root.get("height"))
    ys = [float(t.get("y")) for t in root.iter(f"{NS}text") if t.get("class") == "legend"]
    assert len(set(ys)) > 1 and max(ys) < height


def test_a_whole_number_axis_has_only_whole_number_ticks():
    """PL5: with `whole_x`, a step axis over 1..3 is ticked 1, 2, 3: never 1.5."""
    svg = line_plot(
        "steps", "step (call)", "tokens", [Series("a", [(1, 5), (2, 6), (3, 7)])], whole_x=True
    )
    assert texts(svg, "x-tick") == ["1", "2", "3"]
    assert nice_ticks(1, 3, whole=True) == [1, 2, 3] and nice_ticks(0, 2, whole=True) == [0, 1, 2]


def test_the_y_axis_keeps_headroom_and_a_tick_above_the_peak():
    """PL2: the highest y tick lies above the highest point, and the point below the frame's top."""
    svg = line_plot("year", "day (days)", "items", [Series("size", [(1, 10), (2, 2130), (3, 900)])])
    ticks = [float(tick.replace(",", "")) for tick in texts(svg, "y-tick")]
    assert max(ticks) > 2130
    line = ET.fromstring(svg).find(f"{NS}polyline").get("points").split()
    assert min(float(point.split(",")[1]) for point in line) > 40 + 5


def test_the_legend_sits_in_aligned_columns():
    """PL3: every row of the legend starts its entries at the same column positions."""
    names = ["a", "a much longer series name", "mid length name", "b", "another one", "c", "dd"]
    names += ["a third, long name for a series", "e"]
    series = [Series(name, [(0, n), (1, n)]) for n, name in enumerate(names)]
    root = ET.fromstring(line_plot("legend", "x (s)", "y (m)", series))
    entries = [t for t in root.iter(f"{NS}text") if t.get("class") == "legend"]
    rows = {}
    for entry in entries:
        rows.setdefault(entry.get("y"), []).append(float(entry.get("x")))
    columns = sorted({x for row in rows.values() for x in row})
    assert len(rows) > 1 and all(row == columns[: len(row)] for row in rows.values())
