"""Helpers for the plot tests: the SVG namespace, where a plot's frame lies, what it draws."""

NS = "{http://www.w3.org/2000/svg}"


def frame(root) -> tuple[float, float, float, float]:
    """Return the plot area's left, top, right and bottom, read from its frame rectangle."""
    rectangle = root.find(f"{NS}rect")
    left = float(rectangle.get("x"))
    top = float(rectangle.get("y"))
    return left, top, left + float(rectangle.get("width")), top + float(rectangle.get("height"))


def vertices(root) -> list[tuple[float, float]]:
    """Return every vertex of every polyline the plot draws, as (x, y)."""
    found = []
    for line in root.iter(f"{NS}polyline"):
        for point in line.get("points").split():
            x, y = map(float, point.split(","))
            found.append((x, y))
    return found
