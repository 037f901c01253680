"""Example tests for recuris.tour.recorder: a run recorded without being changed (RC1-RC5)."""

import pytest

from recuris import (
    DecayManager,
    Episode,
    ManualClock,
)
from recuris.tour.recorder import Recorder, full_history, sections
from recuris.core.clock import DAY
from recuris.core.text import estimate_tokens

from prompt_sections import SECTIONS
from trace_pages import recorded_agent, traced_run


def long_run(window: int = 2) -> list[str]:
    agent = recorded_agent(Recorder(ManualClock(0.0)), window)
    agent.run(
        "migrate",
        "db",
        lambda action: f"ok: {action} done",
        [f"table {n}" for n in range(8)],
        constraints=["do not use MySQL"],
    )
    return agent.llm_fn.prompts


def test_a_prompt_is_cut_into_its_labelled_sections_in_order():
    """RC1: an agent's prompt gives goal, pins, progress,
    summary, recent steps, experience, instruction."""
    prompt = long_run()[5]
    parts = sections(prompt)
    assert [label for label, _ in parts] == SECTIONS
    assert "".join(text for _, text in parts) == prompt
    assert dict(parts)["pins"].splitlines()[1] == "  - do not use MySQL"


def test_recalled_memory_and_tool_results_are_sections_of_their_own():
    """RC1: the manager's recalled section and a search_memory answer have their own labels."""
    prompt = "\n".join(
        [
            "## Working memory",
            "Goal: g",
            "",
            "## Recalled memory (from the manager's recall: facts, procedures, events)",
            "  - [semantic] a: b",
            "",
            "## Recalled by search_memory (a tool call you made)",
            "  query: a",
            "",
        ]
    )
    assert [label for label, _ in sections(prompt)] == [
        "goal",
        "recalled memory",
        "recalled by search_memory",
    ]


def test_a_prompt_in_another_layout_is_one_section():
    """RC1: a reflection prompt (or any other text) is a single section labelled "prompt"."""
    reflection = "Interactions:\n  [turn-1] user: hi\n"
    assert sections(reflection) == [("prompt", reflection)]
    assert sections("") == []


def test_the_full_history_prompt_keeps_every_step_in_place_of_summary_and_window():
    """RC3: step n's full history lists steps 1..n-1
    verbatim, the summary empty, the rest unchanged."""
    prompts = long_run(window=2)
    full = full_history(prompts)
    last = dict(sections(full[-1]))
    assert last["recent steps"].count("ok: table") == 8 and "(none)" in last["summary"]
    assert [
        line.split(".")[0].strip() for line in last["recent steps"].splitlines()[1:] if line.strip()
    ] == [str(n) for n in range(1, 9)]
    for ours, theirs in zip(prompts, full):
        same = {k: v for k, v in sections(ours) if k not in ("summary", "recent steps")}
        assert same == {k: v for k, v in sections(theirs) if k not in ("summary", "recent steps")}
    assert full[0] == prompts[0] and estimate_tokens(full[-1]) > estimate_tokens(prompts[-1])


def test_the_wrapped_model_keeps_each_prompt_in_the_open_part_and_answers_unchanged():
    """RC2: prompts go to the part open when sent, and to `prompts`; the reply is the model's."""
    recorder = Recorder(ManualClock(0.0))
    llm = recorder.wrap(lambda prompt: prompt.upper())
    recorder.begin("one")
    assert llm("a") == "A"
    recorder.begin("two")
    llm("b")
    assert llm.prompts == ["a", "b"]
    assert [part.entries for part in recorder.parts] == [[("prompt", "a")], [("prompt", "b")]]


def test_an_exception_from_the_model_passes_through_after_the_prompt_is_kept():
    """RC2: the recorder does not swallow the model's failure."""
    recorder = Recorder(ManualClock(0.0))

    def broken(prompt):
        raise TimeoutError("slow")

    with pytest.raises(TimeoutError):
        recorder.wrap(broken)("p")
    assert recorder.parts[0].entries == [("prompt", "p")] and recorder.parts[0].title == "run"


def test_a_part_splits_its_prompts_into_runs_at_each_task_start():
    """RC2: `Part.runs` gives each run's prompts; a run begins at its stage-1 event."""
    recorder = traced_run()
    first = recorder.parts[0]
    assert len(first.runs()) == 1 and len(first.runs()[0]) == 3


def test_the_watched_decay_decides_as_the_manager_it_wraps():
    """RC4: same weights, same accesses, same verdicts;
    the recorder keeps the accesses and the cycle."""
    clock = ManualClock(0.0)
    recorder = Recorder(clock)
    plain = DecayManager(clock=clock)
    watched = recorder.watch(DecayManager(clock=clock))
    twins = [
        [Episode(task_type="t", goal=f"g{n}", status="success", id=f"e{n}") for n in range(3)]
        for _ in range(2)
    ]
    clock.advance(2 * DAY)
    plain.on_access(twins[0][1])
    watched.on_access(twins[1][1])
    clock.advance(20 * DAY)
    a = plain.run_cycle(twins[0])
    b = watched.run_cycle(twins[1])
    assert a.weights == b.weights and [i.id for i in a.forgotten] == [i.id for i in b.forgotten]
    assert recorder.accesses == {"e1": [2 * DAY]}
    [cycle] = recorder.cycles
    assert cycle.forgotten == {item.id for item in a.forgotten}
    assert [s.id for s in cycle.items] == ["e0", "e1", "e2"]
    assert watched.settings == plain.settings


def test_one_cycle_read_in_batches_is_recorded_once():
    """RC4: several run_cycle calls at one instant (a
    store read in batches) make one recorded cycle."""
    clock = ManualClock(0.0)
    recorder = Recorder(clock)
    decay = recorder.watch(DecayManager(clock=clock))
    items = [Episode(task_type="t", goal=f"g{n}", status="success", id=f"e{n}") for n in range(4)]
    decay.run_cycle(items[:2])
    decay.run_cycle(items[2:])
    assert len(recorder.cycles) == 1 and len(recorder.cycles[0].items) == 4


def test_settle_records_tiers_and_renders_audit_records():
    """RC2: `settle` keeps what each tier holds and each audit line as text."""
    recorder = traced_run()
    last = recorder.parts[-1]
    assert last.tiers["episodic"] and all(line.startswith("[audit t=") for line in last.audit)


def test_a_shown_prompt_and_a_table_are_kept_in_place_and_are_no_model_call():
    """RC5: show_prompt and table add entries after the last note; runs() and prompts skip them."""
    recorder = traced_run()
    runs = [part.runs() for part in recorder.parts]
    prompts = list(recorder.parts[0].runs()[0])
    recorder.note("shown next")
    recorder.show_prompt(prompts[0])
    recorder.table(["step", "tokens"], [[1, 10]])
    assert recorder.parts[-1].entries[-3:] == [
        ("note", "shown next"),
        ("shown prompt", prompts[0]),
        ("table", (("step", "tokens"), ("1", "10"))),
    ]
    assert [part.runs() for part in recorder.parts] == runs
