"""Example tests for recuris.tour.simulation's command line and plot (O4)."""

import xml.etree.ElementTree as ET

import pytest

from recuris.tour import simulation

NS = "{http://www.w3.org/2000/svg}"
REAL = simulation.simulate


def test_the_year_plot_shows_the_store_size_by_day_with_its_plateau():
    """O4: year_plot draws one point per day and names the plateau, with axis units."""
    report = REAL(days=30, per_day=4, seed=3)
    root = ET.fromstring(simulation.year_plot(report))
    texts = {
        t.get("class"): "".join(t.itertext()) for t in root.iter(f"{NS}text") if t.get("class")
    }
    assert texts["x-label"] == "day of the simulated year (days)"
    assert texts["y-label"] == "memories in the store (items)"
    [line] = root.iter(f"{NS}polyline")
    assert len(line.get("points").split()) == 30
    assert f"plateau: mean of the last quarter, {report.plateau:.0f} items" in simulation.year_plot(
        report
    )


def test_the_command_writes_the_plot_with_svg(tmp_path, monkeypatch, capsys):
    """O4: `python -m recuris.simulation --svg FILE` prints the figures and writes the plot."""
    monkeypatch.setattr(simulation, "simulate", lambda: REAL(days=365, per_day=1, seed=3))
    path = tmp_path / "year.svg"
    simulation.main(["--svg", str(path)])
    assert ET.parse(path).getroot().tag == f"{NS}svg"
    out = capsys.readouterr().out
    assert "day 365:" in out and f"plot written to {path}" in out


def test_the_command_without_svg_writes_nothing(tmp_path, monkeypatch, capsys):
    """O4: without --svg, the command only prints."""
    monkeypatch.setattr(simulation, "simulate", lambda: REAL(days=365, per_day=1, seed=3))
    monkeypatch.chdir(tmp_path)
    simulation.main([])
    assert list(tmp_path.iterdir()) == [] and "plot written" not in capsys.readouterr().out


def test_the_year_plot_has_a_tick_above_its_peak_and_whole_days():
    """O4: the y axis ends at a tick above the largest store size; days are ticked whole."""
    report = REAL(days=30, per_day=4, seed=3)
    root = ET.fromstring(simulation.year_plot(report))
    ticks = {
        kind: [
            float("".join(t.itertext()).replace(",", ""))
            for t in root.iter(f"{NS}text")
            if t.get("class") == kind
        ]
        for kind in ("x-tick", "y-tick")
    }
    assert max(ticks["y-tick"]) > max(report.sizes)
    assert ticks["x-tick"] and all(tick == int(tick) for tick in ticks["x-tick"])


@pytest.mark.parametrize("where", ["missing/year.svg", ".", "/proc/plot.svg"])
def test_an_svg_that_cannot_be_written_is_refused_before_the_year_is_simulated(
    tmp_path, monkeypatch, capsys, where
):
    """VA6: `--svg` into a missing folder, onto a folder or where no file can be made (/proc)
    exits 2 before anything is simulated."""
    simulated = []
    monkeypatch.setattr(simulation, "simulate", lambda: simulated.append(1))
    with pytest.raises(SystemExit) as exit:
        simulation.main(["--svg", str(tmp_path / where)])
    assert exit.value.code == 2 and simulated == []
    assert "VA6" in capsys.readouterr().err
