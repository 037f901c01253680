"""Trace: one self-contained HTML page that shows what a recorded run did, stage by stage.

Document 000 §2.3 runs each task through six stages and §3.3 lays memory out in the
prompt; document 004 §2 forgets on a curve. The demo narrates them in text; this page
shows them whole: per part, every stage event, each prompt cut into its sections
(goal, pins, progress, summary, recent steps, experience, recalled memory), what each
tier holds afterwards, and the audit lines; then three plots: the prompt beside the full
history it replaces, each memory's decay weight against the retention threshold, and any
figure the caller adds (the demo adds the simulated year). The page runs no script and
loads nothing: it can be opened from a mail attachment, offline, years from now.

Invariants:
    TR1 the page is self-contained: no script element, no `src`, and every `href` is an
        anchor within the page.
    TR2 every recorded text (prompt, note, event, tier line, audit line, title) is escaped,
        so markup in a memory shows as text and never becomes an element.
    TR3 each model call recorded is one prompt block, inside the step it decided, with its
        sections in order and each labelled.
    TR4 the page is a pure function of the recorder and the figures: the same record gives
        the same bytes.
    TR5 any recorded text renders and the page encodes as UTF-8: a lone surrogate, which
        UTF-8 cannot encode, is shown as its escape (`\\ud800`).
    TR6 a prompt the caller shows and a table it prints stand where they were recorded,
        among the notes: the prompt open, in labelled sections; the table with its header.
"""

from collections.abc import Sequence
from html import escape
from pathlib import Path
from types import SimpleNamespace

from ..core.clock import DAY
from ..core.text import estimate_tokens, flatten
from .recorder import Part, Recorder, full_history, sections
from .svg import Reference, Series, line_plot

__all__ = ["render_page", "write_page", "prompt_plot", "decay_plots", "weight_curve"]

STAGE_COLOURS = ("#dbe4ff", "#fff3bf", "#d3f9d8", "#e3fafc", "#f3d9fa", "#ffe3e3")
SECTION_COLOURS = {
    "goal": "#fff3bf",
    "pins": "#ffe3e3",
    "progress": "#e6fcf5",
    "summary": "#f1f3f5",
    "recent steps": "#e7f5ff",
    "experience": "#f3f0ff",
    "recalled memory": "#fff0f6",
    "recalled by search_memory": "#fff4e6",
    "instruction": "#f8f9fa",
    "prompt": "#f8f9fa",
}
PROMPT_HEADING = "(a) The prompt stays flat; the full history grows"
PROMPT_CAPTION = (
    "Tokens sent to the model at each step of the longest task. recuris's prompt is bounded by "
    "its configuration (window size, summary cap); the full history grows with every step."
)
DECAY_HEADING = "(b) Decay weights and the retention threshold"
DECAY_CAPTION = (
    "Each memory's weight halves every half-life; an access (circle) restarts the clock and "
    "adds reinforcement. At the cycle, the memories under the dotted threshold are forgotten."
)
INTRODUCTION = (
    "<p>Plots first, then each part of the run: the stage events in order (1 initialise, 2 decide, "
    "3 act, 4 observe, 5 update, 6 settle), every prompt cut into its labelled sections (open a "
    "<em>the prompt</em> line), what each tier holds after the part, and its audit lines.</p>"
)
STYLE = "\n".join(
    [
        "body{font-family:sans-serif;max-width:60rem;margin:1rem auto;padding:0 "
        "1rem;color:#212529}",
        "pre{white-space:pre-wrap;margin:0;font-size:.85rem}",
        ".run{list-style:none;padding:0}.run li{margin:.2rem 0;padding:.2rem "
        ".4rem;border-radius:4px}",
        ".tag{display:inline-block;min-width:6.5rem;font-weight:bold}",
        ".prompt{margin:.3rem 0 .3rem 1rem}.section{display:flex;border-left:4px solid "
        "#868e96;margin:2px 0}",
        ".label{min-width:10rem;padding:.2rem .4rem;font-weight:bold;font-size:.8rem}",
        ".section pre{padding:.2rem .4rem}.note{margin:.3rem 0}.audit{background:#f8f9fa}",
        "table{border-collapse:collapse}td,th{border:1px solid #dee2e6;padding:.2rem "
        ".4rem;text-align:left}",
        *(f".stage-{n + 1}{{background:{colour}}}" for n, colour in enumerate(STAGE_COLOURS)),
        *(
            f".s-{name.replace(' ', '-')}{{background:{colour}}}"
            for name, colour in SECTION_COLOURS.items()
        ),
    ]
)


def _prompt_block(prompt: str, opened: bool = False) -> str:
    """Render one prompt as labelled sections, in order (TR2, TR3); `opened` shows them (TR6)."""
    rows = [
        f'<div class="section s-{label.replace(" ", "-")}">'
        f'<span class="label">{escape(label)}</span><pre>{escape(text.rstrip())}</pre></div>'
        for label, text in sections(prompt)
    ]
    summary = f"the prompt ({estimate_tokens(prompt)} tokens, {len(rows)} sections)"
    state = " open" if opened else ""
    return f'<details class="prompt"{state}><summary>{summary}</summary>{"".join(rows)}</details>'


def _table(rows: Sequence[Sequence[str]]) -> str:
    """Render a recorded table: its first row as the header (TR2, TR6)."""
    header, *body = rows
    head = "".join(f"<th>{escape(cell)}</th>" for cell in header)
    cells = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in body
    )
    return f'<table class="shown"><tr>{head}</tr>{cells}</table>'


def _beside(kind: str, value) -> str:
    """Render a note, a shown prompt or a table (TR2, TR6)."""
    if kind == "shown prompt":
        return _prompt_block(value, opened=True)
    if kind == "table":
        return _table(value)
    return f'<p class="note">{escape(value)}</p>'


def _part(number: int, part: Part, start: float) -> str:
    out = [
        f'<section id="part-{number}"><h3>{escape(part.title)}</h3>',
        f"<p>day {(part.at - start) / DAY:.1f} of the trace</p>",
        '<ol class="run">',
    ]
    pending: list[str] = []  # prompts sent, waiting for the decide event that answers them

    def unanswered() -> None:  # a model call that ended the run (an exception, an empty reply)
        out.extend(
            f'<li class="stage-2"><span class="tag">no reply</span>{_prompt_block(text)}</li>'
            for text in pending
        )
        pending.clear()

    for kind, value in part.entries:
        if kind == "prompt":
            pending.append(value)
        elif kind == "event":
            block = _prompt_block(pending.pop(0)) if value.stage == 2 and pending else ""
            out.append(
                f'<li class="stage-{value.stage}"><span class="tag">{value.stage} '
                f"{escape(value.name)}"
                f"</span>{escape(value.detail)}{block}</li>"
            )
        else:  # what the narration shows beside the run, where it shows it (TR6)
            unanswered()
            out.append(f'</ol>{_beside(kind, value)}<ol class="run">')
    unanswered()
    out.append("</ol>")
    if part.tiers:
        out.append("<h4>What each tier holds after this part</h4><table>")
        for name, lines in part.tiers.items():
            items = "".join(f"<li>{escape(line)}</li>" for line in lines) or "<li>(empty)</li>"
            out.append(f"<tr><th>{escape(name)}</th><td><ul>{items}</ul></td></tr>")
        out.append("</table>")
    if part.audit:
        out.append(
            f'<h4>Audit lines</h4><pre class="audit">{escape(chr(10).join(part.audit))}</pre>'
        )
    out.append("</section>")
    return "\n".join(out).replace('<ol class="run">\n</ol>', "")  # no empty lists between notes


def prompt_plot(recorder: Recorder) -> str | None:
    """Plot (a): the longest run's prompt tokens per step beside its full-history prompt's."""
    runs = [run for part in recorder.parts for run in part.runs()]
    if not runs:
        return None
    run = max(runs, key=len)
    ours = [(n, estimate_tokens(p)) for n, p in enumerate(run, 1)]
    full = [(n, estimate_tokens(p)) for n, p in enumerate(full_history(run), 1)]
    return line_plot(
        f"Prompt size per step: the longest task ({len(run)} model calls)",
        "step of the task (model call number)",
        "prompt size (estimated tokens)",
        [
            Series("recuris prompt (goal, pins, summary, window, experience)", ours),
            Series("full-history prompt (every step verbatim)", full, dashed=True),
        ],
        whole_x=True,
    )


def weight_curve(
    decay,
    item: SimpleNamespace,
    accesses: Sequence[float],
    start: float,
    end: float,
    samples: int = 60,
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """Sample an item's weight as (days since `start`, weight), jumping at each access.

    `item` carries its state at `end`. Accesses the recorder did not see (an item reinforced
    elsewhere) count as one access at the item's last access, the rest as made before `start`.
    """
    if not accesses and item.access_count and item.last_access_at > item.created_at:
        accesses = [item.last_access_at]
    earlier = max(0, item.access_count - len(accesses))
    begin = max(start, item.created_at)

    def weight(at: float, before: bool) -> float:
        done = [a for a in accesses if a < at or (a == at and not before)]
        last = max(done, default=item.created_at)
        state = SimpleNamespace(
            importance=item.importance,
            consolidated=item.consolidated,
            access_count=earlier + len(done),
            last_access_at=last,
        )
        return decay.weight(state, now=at)

    times = sorted(
        {begin + (end - begin) * n / samples for n in range(samples + 1)}
        | {a for a in accesses if begin <= a <= end}
    )
    points = []
    markers = []
    for at in times:
        x = (at - start) / DAY
        if at in accesses:
            points.append((x, weight(at, True)))
            markers.append((x, weight(at, False)))
        points.append((x, weight(at, False)))
    return points, markers


def decay_plots(recorder: Recorder) -> list[str]:
    """Plot (b), one per cycle: each item's weight until the cycle, the threshold, the accesses."""
    plots = []
    for cycle in recorder.cycles:
        series = []
        for item in cycle.items:
            points, markers = weight_curve(
                cycle.decay, item, recorder.accesses.get(item.id, []), recorder.start, cycle.at
            )
            verdict = "forgotten" if item.id in cycle.forgotten else "kept"
            series.append(
                Series(f"{item.id} ({flatten(str(item.text), 28)}): {verdict}", points, markers)
            )
        threshold = Reference(
            f"retention threshold {cycle.decay.settings.retention_threshold:g}",
            cycle.decay.settings.retention_threshold,
        )
        plots.append(
            line_plot(
                f"Decay weight until the cycle on day {(cycle.at - recorder.start) / DAY:.1f}",
                "time (days since the trace began)",
                "retention weight (no unit)",
                series,
                [threshold],
                marker_label="access (a retrieval reinforces it)",
            )
        )
    return plots


def render_page(
    recorder: Recorder, title: str = "recuris trace", figures: Sequence[tuple[str, str, str]] = ()
) -> str:
    """Return the page: plots, then each part; `figures` adds (heading, caption, svg) (TR1-TR4)."""
    flat = prompt_plot(recorder)
    plots = [(PROMPT_HEADING, PROMPT_CAPTION, flat)] if flat else []
    plots += [(DECAY_HEADING, DECAY_CAPTION, svg) for svg in decay_plots(recorder)] + list(figures)
    parts = enumerate(recorder.parts, 1)
    links = "".join(f'<li><a href="#part-{n}">{escape(part.title)}</a></li>' for n, part in parts)
    body = [
        f"<h1>{escape(title)}</h1>",
        INTRODUCTION,
        f'<nav><h2>Contents</h2><ol><li><a href="#plots">Plots</a></li>{links}</ol></nav>',
        '<h2 id="plots">Plots</h2>',
    ]
    body += [
        f"<figure><h3>{escape(heading)}</h3>{svg}"
        f"<figcaption>{escape(caption)}</figcaption></figure>"
        for heading, caption, svg in plots
    ]
    body.append("<h2>The run, part by part</h2>")
    body += [_part(n, part, recorder.start) for n, part in enumerate(recorder.parts, 1)]
    page = (
        '<!DOCTYPE html>\n<html lang="en">\n<head><meta '
        f'charset="utf-8"><title>{escape(title)}</title>\n'
        f"<style>\n{STYLE}\n</style></head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )
    # TR5: a lone surrogate (text decoded with "surrogateescape", or cut from a pair) becomes
    # its escape, so the page always encodes.
    return page.encode("utf-8", "backslashreplace").decode("utf-8")


def write_page(
    path: str | Path,
    recorder: Recorder,
    title: str = "recuris trace",
    figures: Sequence[tuple[str, str, str]] = (),
) -> Path:
    """Write `render_page(...)` to `path` as UTF-8 and return the path."""
    path = Path(path)
    path.write_text(render_page(recorder, title, figures), encoding="utf-8")
    return path
