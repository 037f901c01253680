"""Property tests for recuris.tour.svg (PL1, PL2, PL4)."""

import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from recuris.tour.svg import Reference, Series, line_plot

from plot_frames import NS, frame, vertices

numbers = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
points = st.lists(st.tuples(numbers, numbers), min_size=1, max_size=20)


texts = st.text(st.characters(), max_size=40) | st.sampled_from(
    ["a\rb", "\x00<&>", "x\r\ny", "\ud800"]
)


@given(texts, texts, points)
def test_PL1_any_text_gives_a_well_formed_document(label, name, line):
    """PL1: whatever the labels, the output parses as
    XML and the legend says the name (XML-safe chars)."""
    root = ET.fromstring(line_plot(label, label, label, [Series(name, line)]))
    legend = ["".join(t.itertext()) for t in root.iter(f"{NS}text") if t.get("class") == "legend"]
    assert len(legend) == 1
    xml_safe = "".join(
        c
        for c in name
        if (c in "\t\n\r" or ord(c) >= 32)
        and not 0xD800 <= ord(c) <= 0xDFFF
        and c not in "\ufffe\uffff"
    )
    assert legend[0] == " ".join(xml_safe.split())


@given(st.lists(points, min_size=1, max_size=4), st.lists(numbers, max_size=3))
def test_PL2_every_point_and_reference_lies_in_the_frame(lines, references):
    """PL2: each drawn vertex and each reference line lies inside the plot area."""
    svg = line_plot(
        "t",
        "x",
        "y",
        [Series(f"s{n}", line) for n, line in enumerate(lines)],
        [Reference(f"r{n}", y) for n, y in enumerate(references)],
    )
    root = ET.fromstring(svg)
    left, top, right, bottom = frame(root)
    for x, y in vertices(root):
        assert left - 0.1 <= x <= right + 0.1 and top - 0.1 <= y <= bottom + 0.1
    for line in root.iter(f"{NS}line"):
        if line.get("stroke-dasharray") == "2 3" and float(line.get("x2")) == right:
            assert top - 0.1 <= float(line.get("y1")) <= bottom + 0.1


@given(points)
def test_PL4_the_same_points_draw_the_same_bytes(line):
    """PL4: no clock and no random source: two drawings are equal."""
    assert line_plot("t", "x", "y", [Series("a", line)]) == line_plot(
        "t", "x", "y", [Series("a", line)]
    )
