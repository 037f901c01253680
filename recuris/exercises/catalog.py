"""The exercises: which module each one rebuilds, the chapter to read, and two hints.

Document 000 §2-§3 describes the loop that `recuris/core/` implements; its §4 prototype
(see the defects listed after it) shows how easily each part goes wrong. An exercise asks
the learner to rebuild one part, in the order of the core path (docs/README.md), from a
skeleton that keeps the module's signatures and invariants; the project's own tests grade
it. Nothing here imports the modules: they are read as files, so a broken one can be graded.

Invariants:
    EX1 the exercises follow the core path's order, with unique names: text, the
        working-memory window, compression, episodic retrieval, consolidation, decay, the loop.
    EX2 every exercise names modules of the package, chapters that exist in docs/, and, for
        each module, its example tests and its property tests (tests/<group>/test_<module>*.py).
    EX3 every exercise gives exactly two hints.
    EX4 an unknown exercise name is refused, naming the exercises there are (exit 2 from the
        command).
    EX5 every invariant an exercise's modules declare is named by a test in the files that
        grade it, so a passing check vouches for each one.
"""

import ast
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Exercise", "EXERCISES", "PACKAGE", "ROOT", "find"]

PACKAGE = Path(__file__).resolve().parent.parent  # the recuris folder this code runs from
ROOT = PACKAGE.parent  # a clone's root: docs/ and tests/ sit beside recuris/
INSTALL_TESTS = 'python -m pip install -e ".[test]"'


@dataclass(frozen=True)
class Exercise:
    """One module (or two) to rebuild, the chapters that teach it, and two hints (EX2, EX3)."""

    name: str
    title: str
    modules: tuple[str, ...]  # "group.module", in the order the tests run
    chapters: tuple[str, ...]  # paths from the repository root
    hints: tuple[str, str]

    @property
    def files(self) -> tuple[str, ...]:
        """The file names the learner writes: one per module, as the package names them."""
        return tuple(f"{module.split('.')[1]}.py" for module in self.modules)

    def source(self, module: str) -> Path:
        """The reference module in the package: the solution, and what the skeleton is cut from."""
        group, name = module.split(".")
        return PACKAGE / group / f"{name}.py"

    def invariants(self) -> dict[str, str]:
        """The numbered invariants its modules' docstrings declare: id -> text, lines joined."""
        found = {}
        current = None
        for module in self.modules:
            tree = ast.parse(self.source(module).read_text(encoding="utf-8"))
            for line in (ast.get_docstring(tree) or "").splitlines():
                if match := re.match(r"^\s+([A-Z]{1,2}\d+)\s+(.*)$", line):
                    current = match.group(1)
                    found[match.group(1)] = match.group(2).strip()
                elif current and line.startswith("        ") and line.strip():
                    found[current] += " " + line.strip()
                else:
                    current = None
        return found

    @property
    def tests(self) -> tuple[str, ...]:
        """The project's test files that grade it: each module's examples, then its properties."""
        paths = []
        for module in self.modules:
            group, name = module.split(".")
            paths += [f"tests/{group}/test_{name}.py", f"tests/{group}/test_{name}_properties.py"]
        return tuple(paths)


EXERCISES = (
    Exercise(
        "text",
        "text and tokens",
        ("core.text",),
        ("docs/core/text.md",),
        (
            "One regular expression with two named groups (a run of CJK characters, or a run of "
            "letters and digits that are not CJK) finds every token in order once the text is "
            "lower-cased; a CJK run of n characters gives its n-1 overlapping bigrams, a lone one "
            "stays itself (T1).",
            "estimate_tokens: count CJK characters apart and round cjk/1.5 + other/4 up with "
            "math.ceil, so any non-empty text costs at least 1 and appending never lowers it "
            "(T2); statement: one anchored pattern, a short subject, then ':' or '=', then the "
            "value, both stripped (T3); fits compares the estimate with the budget, None fitting "
            "anything, and fit halves its search for the longest start that fits, since a longer "
            "start never costs less (T5).",
        ),
    ),
    Exercise(
        "working",
        "the working-memory window",
        ("core.working",),
        ("docs/core/working-memory.md",),
        (
            "Keep every step in a list (the trajectory) and the window in a deque; once the "
            "window holds more than window_size steps, pop its oldest and fold it into the "
            "summary (W2, W3), and while the section is over token_budget and more than one step "
            "is left, fold the oldest too (W7). compressed_steps is the trajectory without the "
            "window's last len(window) steps.",
            "Make goal a property whose setter raises AttributeError naming W1; render each pin, "
            "subtask and step flattened to one line and clipped, so the section's size depends on "
            "the settings, never on the number of steps (W4), and every pin is shown every time "
            "(W5). resume, on a task just started, takes saved steps back without summarizing "
            "them again: the trajectory as given, its last `recent` steps as the window, the "
            "summary as given, then the window and the budget as after a step (W8).",
        ),
    ),
    Exercise(
        "compression",
        "compression that merges",
        ("core.compression",),
        ("docs/core/compression.md",),
        (
            "Merging is parse, append, render: read the old summary back into its parts (done "
            "actions with their '(+N earlier)' count, failure notes, the phase), add the new "
            "steps, render again. Never start from an empty summary: that is the prototype's "
            "defect (M1, M4).",
            "To fit max_chars, drop in order of least value: foreign notes, then the oldest done "
            "action (adding 1 to its count), then the oldest failure (counted too); clip the "
            "phase only as a last resort (M2, M3). Escape '->' and ';' inside items so that parse "
            "reads back what render wrote.",
        ),
    ),
    Exercise(
        "episodic",
        "episodic retrieval: an inverted index equal to a scan",
        ("core.similarity", "core.episodic"),
        ("docs/core/similarity.md", "docs/core/episodic-memory.md"),
        (
            "In similarity.py keep postings, term -> set of keys; score_candidates walks only the "
            "query terms' postings, counts the shared terms per key, and computes Jaccard from "
            "the three sizes with the very function score uses (SM2): the floats must equal a "
            "scan's (E4).",
            "In episodic.py rank every candidate by one key, (-score, -created_at, -insertion "
            "number), keep only score > 0 and score >= threshold (E2: the threshold is inclusive) "
            "and the first top_k (E1, E3); retrieve and retrieve_by_scan share that ranking code.",
        ),
    ),
    Exercise(
        "consolidation",
        "consolidation with sources",
        ("core.consolidation",),
        ("docs/core/consolidation.md", "docs/core/semantic-memory.md"),
        (
            "Per normalised subject keep only the sightings still inside the window (drop the "
            "older ones at each observe) and count distinct source ids, not sightings: one "
            "episode repeating itself is one witness (C1).",
            "Test in this order: a conflict (two normalised values in the window: record a "
            "Conflict, promote nothing, C4); then a value that is already the subject's valid "
            "fact (C3); then promote, giving the fact exactly the window's distinct sources, in "
            "order (C2).",
        ),
    ),
    Exercise(
        "decay",
        "decay with reinforcement",
        ("core.decay",),
        ("docs/core/decay.md",),
        (
            "weight = importance * curve.weight(elapsed, half_life) + min(cap, per_access * "
            "access_count), where Exponential.weight is 0.5 ** (elapsed / half_life): write "
            "0.5 ** x, not exp(-ln 2 * x), so one half-life gives exactly half (D2), and its "
            "elapsed_for the inverse, half_life * log2(1 / weight) (D8); the min is the cap "
            "(D3); clamp elapsed at 0 so an access in the future cannot raise the weight (D1).",
            "on_access moves last_access_at to the clock and counts one access; run_cycle weighs "
            "every item once at the same now and audits each forgotten one once (D4), into a "
            "deque(maxlen=max_audit_log) (D6); semantic and procedural items get the longer "
            "half-life (D5).",
        ),
    ),
    Exercise(
        "agent",
        "the six-stage loop",
        ("core.agent",),
        ("docs/core/agent.md", "docs/core/prompt.md"),
        (
            "Wrap the loop in run with try/except: whatever ends it (FINISH, a failed step, "
            "max_steps, an exception from the model or the action) the whole trajectory is "
            "settled as exactly one episode before returning or re-raising (A2); `for number in "
            "range(1, max_steps + 1)` bounds the calls (A1).",
            "Build every prompt with build_prompt from working.to_prompt_section() (A3); recall "
            "with episodic.retrieve at the start, after a failed step that does not end the run "
            "and when a subtask completes, never otherwise (A4); remember the ids reinforced in "
            "this run (A5); the loop calls the methods a subclass overrides, each a `def`.",
        ),
    ),
)


def find(name: str) -> Exercise:
    """Return the exercise called `name`; raise KeyError naming the ones there are."""
    for exercise in EXERCISES:
        if exercise.name == name:
            return exercise
    raise KeyError(f"no exercise {name!r}; there are: {', '.join(e.name for e in EXERCISES)}")
