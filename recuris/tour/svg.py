"""SVG plots: line charts drawn with the standard library, for the trace page and the year.

Document 000 §1.2 names the failure recuris exists to prevent, a prompt that grows with
every step; document 004 §2 draws forgetting as a curve that falls between accesses and a
store that levels off. Both are claims about shapes, and a shape is best checked by eye.
This module draws them: one `line_plot` takes named series of (x, y) points, optional
horizontal reference lines (a retention threshold, a plateau) and markers (the accesses
that reinforce a memory), and returns one SVG document, with no library, font or script.

Invariants:
    PL1 the output is one well-formed SVG document whatever the text given: every title,
        label and name is escaped, on one line, without the characters XML cannot hold.
    PL2 every point, marker and reference line lies inside the plot area: the axes span the
        data and the reference lines, and a span of zero width is widened.
    PL3 a plot names both axes (with their units) and has a legend entry for each series,
        each reference line and, when there are markers, for the markers; the entries sit
        in aligned columns, as many as fit the width.
    PL4 the same arguments give the same bytes: no clock, no random source, fixed formats.
    PL5 an axis of whole numbers (`whole_x`: steps, calls) is ticked at whole numbers only;
        the y axis ends at a tick above the highest point, with headroom under the frame.
"""

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from unicodedata import east_asian_width

__all__ = ["Series", "Reference", "line_plot", "nice_ticks", "tick_step", "PALETTE"]

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
PALETTE = ("#1f6fb4", "#d9480f", "#2b8a3e", "#7048e8", "#c2255c", "#0c8599", "#e67700", "#495057")
WIDTH = 680
HEIGHT = 340
# The plot area's margins; the legend sits below.
LEFT = 70
RIGHT = 20
TOP = 40
BOTTOM = 96


@dataclass(frozen=True)
class Series:
    """One named line; `markers` are points to circle on it (say, the accesses of a memory)."""

    name: str
    points: Sequence[tuple[float, float]]
    markers: Sequence[tuple[float, float]] = field(default_factory=tuple)
    dashed: bool = False


@dataclass(frozen=True)
class Reference:
    """A horizontal line across the plot at `y`, named in the legend (a threshold, a plateau)."""

    name: str
    y: float


def _text(text: str) -> str:
    """Escape text for XML on one line: whitespace folded, what XML 1.0 cannot hold gone (PL1)."""
    return escape(" ".join(_NOT_XML.sub("", text).split()))


def tick_step(low: float, high: float, count: int = 5, whole: bool = False) -> float:
    """Return a round step (1, 2 or 5 times a power of ten) giving about `count` ticks.

    With `whole`, the step is a whole number, at least 1 (PL5).
    """
    raw = (high - low) / max(1, count)
    if not raw > 0:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return max(1.0, float(round(step))) if whole else step


def nice_ticks(low: float, high: float, count: int = 5, whole: bool = False) -> list[float]:
    """Return round tick values (steps of 1, 2 or 5 times a power of ten) within [low, high].

    With `whole`, only whole numbers (PL5).
    """
    if not (high - low) > 0:
        return [low]
    step = tick_step(low, high, count, whole)
    first = math.ceil(low / step - 1e-9)
    ticks = [round((first + n) * step, 10) for n in range(int((high - low) / step + 1e-9) + 2)]
    return [tick for tick in ticks if low - 1e-9 <= tick <= high + 1e-9]


def _span(values: list[float], floor: float | None) -> tuple[float, float]:
    # PL2: the axis covers every value (and the floor, say 0); a single value gets a width of one.
    low = min(values)
    high = max(values)
    if floor is not None:
        low = min(low, floor)
        high = max(high, floor)
    if not high - low > 1e-9 * max(
        1.0, abs(low), abs(high)
    ):  # too narrow to scale (or draw ticks on)
        low = low - 0.5
        high = high + 0.5
    return low, high


def _number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value % 1 else f"{value:,.0f}"


def line_plot(
    title: str,
    x_label: str,
    y_label: str,
    series: Sequence[Series],
    references: Sequence[Reference] = (),
    *,
    marker_label: str = "marker",
    y_floor: float | None = 0.0,
    whole_x: bool = False,
    width: int = WIDTH,
    height: int = HEIGHT,
) -> str:
    """Draw the series as lines on shared axes and return the SVG text (PL1-PL4).

    `x_label` and `y_label` should carry their units ("time (days)"); `whole_x` ticks the x
    axis at whole numbers only (steps, calls). Raises ValueError if no series has a point,
    or a value is not finite.
    """
    points = [p for s in series for p in (*s.points, *s.markers)]
    if not points:
        raise ValueError("a plot needs at least one point")
    values = [v for p in points for v in p] + [r.y for r in references]
    if not all(math.isfinite(v) for v in values):
        raise ValueError("every x and y must be a finite number")
    x_low, x_high = _span([x for x, _ in points], None)
    y_low, y_high = _span([y for _, y in points] + [r.y for r in references], y_floor)
    y_high += (y_high - y_low) * 0.05  # headroom: the highest point does not touch the frame
    # PL5: ...and the axis ends at the next tick, so a tick stands above the peak
    step = tick_step(y_low, y_high)
    y_high = math.ceil(y_high / step - 1e-9) * step
    right = width - RIGHT
    bottom = height - BOTTOM
    # (label, colour, dash, is the marker entry)
    legend = [
        (s.name, PALETTE[n % len(PALETTE)], ' stroke-dasharray="6 4"' if s.dashed else "", False)
        for n, s in enumerate(series)
    ]
    legend += [(r.name, "#000", ' stroke-dasharray="2 3"', False) for r in references]
    legend += [(marker_label, "#000", "", True)] if any(s.markers for s in series) else []
    # PL3: the entries in aligned columns, row by row, as many columns as fit; the picture
    # grows to fit the rows
    column = 44 + max(_width(entry[0]) for entry in legend)
    columns = max(1, (right - LEFT + 44 - 30) // column)
    placed = [
        (LEFT + column * (n % columns), bottom + 58 + 18 * (n // columns), *entry)
        for n, entry in enumerate(legend)
    ]
    y = placed[-1][1]
    height = max(height, y + 12)

    def at(x: float, y: float) -> tuple[float, float]:
        return (
            LEFT + (x - x_low) / (x_high - x_low) * (right - LEFT),
            bottom - (y - y_low) / (y_high - y_low) * (bottom - TOP),
        )

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif" font-size="12">',
        f"<title>{_text(title)}</title>",
        f'<text x="{width / 2:.0f}" y="20" text-anchor="middle" font-size="14" font-weight="bold">'
        f"{_text(title)}</text>",
        f'<rect x="{LEFT}" y="{TOP}" width="{right - LEFT}" height="{bottom - TOP}" '
        'fill="none" stroke="#888"/>',
    ]
    for tick in nice_ticks(x_low, x_high, whole=whole_x):
        x = at(tick, y_low)[0]
        out.append(
            f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 4}" stroke="#888"/>'
        )
        out.append(
            f'<text class="x-tick" x="{x:.1f}" y="{bottom + 17}" text-anchor="middle">'
            f"{_number(tick)}</text>"
        )
    for tick in nice_ticks(y_low, y_high):
        y = at(x_low, tick)[1]
        out.append(_hline(y, "#eee", "", LEFT, right))
        out.append(
            f'<text class="y-tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
            f"{_number(tick)}</text>"
        )
    middle = (TOP + bottom) / 2
    out.append(
        f'<text class="x-label" x="{(LEFT + right) / 2:.0f}" y="{bottom + 36}" '
        'text-anchor="middle">'
        f"{_text(x_label)}</text>"
    )
    out.append(
        f'<text class="y-label" x="16" y="{middle:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 16 {middle:.0f})">{_text(y_label)}</text>'
    )
    for line, (_, colour, dash, _) in zip(series, legend):
        if line.points:
            path = " ".join("{:.1f},{:.1f}".format(*at(x, y)) for x, y in line.points)
            out.append(
                f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="{path}"/>'
            )
        for x, y in line.markers:
            out.append(_circle(*at(x, y), colour))
    for reference in references:
        y = at(x_low, reference.y)[1]
        out.append(_hline(y, "#000", ' stroke-dasharray="2 3"', LEFT, right))
    for x, y, label, colour, dash, marker in placed:
        out.append(
            _circle(x + 11, y - 4, colour) if marker else _hline(y - 4, colour, dash, x, x + 22, 2)
        )
        out.append(f'<text class="legend" x="{x + 28}" y="{y}">{_text(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _width(label: str) -> int:
    """About how wide a label is drawn at 12 px: wide (CJK) characters count twice."""
    return sum(14 if east_asian_width(char) in "WF" else 7 for char in label)


def _circle(x: float, y: float, colour: str) -> str:
    return (
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4.5" fill="white" '
        f'stroke="{colour}" stroke-width="2"/>'
    )


def _hline(y: float, colour: str, dash: str, start: float, end: float, width: int = 1) -> str:
    return (
        f'<line x1="{start}" y1="{y:.1f}" x2="{end}" y2="{y:.1f}" stroke="{colour}" '
        f'stroke-width="{width}"{dash}/>'
    )
