"""Example tests for recuris.manager.tasks: the task lifecycle, its working memory kept in
the store, the context and LLM extraction (N1-N8)."""

import logging
from dataclasses import replace

import pytest
from outages import Outage

from recuris import InMemoryStore, ManagerSettings, ManualClock, MemoryManager, SQLiteStore
from recuris import WorkingSettings
from recuris.core.text import estimate_tokens
from recuris.storage.working_state import working_from_dict

GOOD = (
    '{"knowledge": [{"subject": "deploy target", "value": "eu-west", '
    '"category": "project_rule", "confidence": 0.9}]}'
)


def manager_with(llm=None, **settings):
    return MemoryManager(clock=ManualClock(1_000), llm=llm, settings=ManagerSettings(**settings))


def run_task(manager, user="ana", steps=3, goal="ship release 2"):
    manager.start_task(user, goal, "release")
    for n in range(steps):
        manager.record_step(user, f"step {n}", "ok")
    return manager.finish_task(user)


def test_one_task_at_a_time_per_user():
    """N1: a second start_task before finishing is refused."""
    manager = manager_with()
    manager.start_task("ana", "first")
    with pytest.raises(ValueError, match="N1"):
        manager.start_task("ana", "second")


def test_the_task_in_progress_is_a_task_state_holding_every_recorded_step():
    """N1: a task in progress is a TaskState whose working memory holds every recorded step."""
    # A budget so small that steps are folded early.
    manager = manager_with(working=WorkingSettings(token_budget=10))
    task_id = manager.start_task("ana", "ship release 2", "release")
    steps = [manager.record_step("ana", f"step {n}", "ok") for n in range(4)]
    task = manager.tasks.get("ana")
    assert (task.id, task.goal, task.task_type, task.steps) == (
        task_id,
        "ship release 2",
        "release",
        tuple(steps),
    )
    assert list(manager.tasks) == ["ana"]


def test_the_task_in_progress_is_one_working_item_holding_its_working_memory():
    """N1: the store holds one working item for the task; its metadata is the working memory."""
    manager = manager_with()
    task_id = manager.start_task("ana", "ship release 2", "release")
    manager.record_step("ana", "build", "ok")
    [item] = manager.list("ana", "working")
    working = working_from_dict(item.metadata["working"])
    assert (item.task_id, item.content, item.metadata["task_type"]) == (
        task_id,
        "goal: ship release 2",
        "release",
    )
    assert working.to_prompt_section() == manager.tasks.section("ana")


def test_a_task_state_reads_on_one_line():
    """N1: a TaskState's repr names the task, its goal (folded), type, step count and item."""
    manager = manager_with()
    manager.start_task("ana", "ship\nrelease  2", "release")
    manager.record_step("ana", "roll out", "ok")
    task = manager.tasks.get("ana")
    assert repr(task) == (
        f"TaskState('{task.id}', goal='ship release 2', task_type='release', steps=1, "
        f"item_id='{task.item.id}')"
    )


def test_finish_writes_one_episode_with_every_step_and_clears_working_memory():
    """N2: the episode holds all steps, folded or not; the task's working items are gone."""
    # A budget so small that steps were folded on the way.
    manager = manager_with(working=WorkingSettings(token_budget=10))
    manager.start_task("ana", "ship release 2")
    manager.write("waiting for the build", "ana", tags=["state"])  # a working note of the task
    for n in range(6):
        manager.record_step("ana", f"step {n}", "ok")
    report = manager.finish_task("ana")
    assert [s.action for s in report.episode.trajectory] == [f"step {n}" for n in range(6)]
    assert manager.list("ana", "working") == [] and len(manager.users.get("ana").episodic) == 1


def test_the_goal_survives_the_working_budget():
    """N1, W7: under a tiny budget, steps are folded into the summary but the goal stays."""
    manager = manager_with(working=WorkingSettings(token_budget=10))
    manager.start_task("ana", "keep this goal in view")
    for n in range(5):
        manager.record_step("ana", f"step {n}", "a fairly long result " * 3)
    section = manager.tasks.section("ana")
    assert "Goal: keep this goal in view" in section and "step 3" in section
    assert len(manager.tasks.get("ana").working.recent_steps) == 1


def test_a_manager_opened_later_on_the_store_goes_on_with_the_task(tmp_path):
    """N5: a task started by one manager is found, continued and finished by the next one."""
    first = MemoryManager(SQLiteStore(tmp_path / "m.db"), clock=ManualClock(1_000))
    task_id = first.start_task("ana", "ship release 2", "release")
    first.record_step("ana", "build", "ok")
    first.store.close()
    second = MemoryManager(SQLiteStore(tmp_path / "m.db"), clock=ManualClock(2_000))
    second.record_step("ana", "deploy", "ok")
    assert second.tasks.get("ana").id == task_id
    with pytest.raises(ValueError, match="N1"):
        second.start_task("ana", "another task")
    report = second.finish_task("ana")
    assert [s.action for s in report.episode.trajectory] == ["build", "deploy"]
    assert report.episode.task_type == "release"


def test_a_task_whose_stored_state_cannot_be_read_is_kept_and_not_loaded(caplog):
    """N5: a corrupt task item stays stored as it was; recall and a new task still work."""
    store = InMemoryStore()
    first = MemoryManager(store, clock=ManualClock(1_000))
    first.start_task("ana", "ship release 2")
    [held] = first.list("ana", "working")
    broken = replace(held, metadata={**held.metadata, "working": {"goal": 7}})
    store.put([broken])
    second = MemoryManager(store, clock=ManualClock(2_000))
    assert second.recall("release", "ana").degraded is False
    second.start_task("ana", "ship release 3")
    kept = second.get(broken.id, "ana")
    assert kept.metadata == broken.metadata and kept.content == broken.content
    assert second.tasks.get("ana").goal == "ship release 3"
    assert "cannot be read" in caplog.text


NO_TASKS = {
    "task-type-as-number": lambda metadata: {**metadata, "task_type": 5},
    "working-without-goal": lambda metadata: {
        **metadata,
        "working": {key: value for key, value in metadata["working"].items() if key != "goal"},
    },
}


@pytest.mark.parametrize("edit", NO_TASKS.values(), ids=NO_TASKS)
def test_a_stored_task_that_cannot_be_read_takes_no_call_of_its_user_down(caplog, edit):
    """N8: a task item whose type or goal was edited is not loaded, stays stored as it was, and
    a warning names its id and N8; recall counts it as skipped, and a new task starts,
    records its steps and finishes."""
    store = InMemoryStore()
    first = MemoryManager(store, clock=ManualClock(1_000))
    first.start_task("ana", "ship release 2", "release")
    [held] = first.list("ana", "working")
    broken = replace(held, metadata=edit(held.metadata))
    store.put([broken])
    second = MemoryManager(store, clock=ManualClock(2_000))
    with caplog.at_level(logging.WARNING):
        assert second.recall("release", "ana").skipped == 1
    assert f"N8: task item {held.id!r}" in caplog.text
    second.start_task("ana", "ship release 3", "release")
    second.record_step("ana", "build", "ok")
    report = second.finish_task("ana")
    assert report.episode.goal == "ship release 3" and report.episode.task_type == "release"
    assert store.get("ana", held.id) == broken


def test_a_step_the_clock_refuses_is_not_added():
    """N1, I4: a step recorded while the clock is broken raises and leaves the task as it was."""
    reading = [1_000.0]
    manager = MemoryManager(clock=lambda: reading[0])
    manager.start_task("ana", "ship release 2")
    reading[0] = float("nan")
    with pytest.raises(ValueError, match="I4"):
        manager.record_step("ana", "build", "ok")
    assert manager.tasks.get("ana").steps == ()


def test_extracted_knowledge_is_observed_and_promoted_on_the_second_task():
    """C1 in finish_task: extraction feeds the consolidator; a statement of two tasks is a fact."""
    manager = manager_with(llm=lambda prompt: GOOD)
    assert run_task(manager).facts == ()
    [fact] = run_task(manager).facts
    assert (fact.subject, fact.value, len(fact.source_ids)) == ("deploy target", "eu-west", 2)


@pytest.mark.parametrize("reply", ["not json at all", "", '{"knowledge": [{"subject": 3}]}', None])
def test_bad_extraction_loses_nothing_and_is_reported(reply):
    """N3: a malformed reply costs only the extraction: episode stored, problem audited."""
    manager = manager_with(llm=lambda prompt: reply)
    report = run_task(manager)
    assert report.problems and len(manager.users.get("ana").episodic) == 1
    assert [r.operation for r in manager.history("ana", report.episode.id)][-1] == "extract-problem"


def test_an_llm_exception_is_reported_not_raised():
    """N3: an exception from the model is reported with its type."""

    def broken(prompt):
        raise TimeoutError("model took too long")

    report = run_task(manager_with(llm=broken))
    assert report.problems == ("llm raised TimeoutError: model took too long",)


def test_low_confidence_knowledge_is_reported_and_not_observed():
    """N3: a statement below min_confidence is not observed."""
    low = GOOD.replace("0.9", "0.2")
    manager = manager_with(llm=lambda prompt: low)
    run_task(manager)
    report = run_task(manager)
    assert report.facts == () and "confidence 0.2 < 0.6" in report.problems[0]


def test_llm_context_as_text_and_as_messages():
    """N6: get_llm_context gives the working section and the recall; messages the same as chat."""
    manager = manager_with()
    manager.write("deploy target: eu-west", "ana", level="semantic")
    manager.start_task("ana", "ship to the deploy target")
    manager.record_step("ana", "build", "ok")
    text = manager.get_llm_context("ana")
    assert text.startswith(manager.tasks.section("ana"))
    assert (
        "Goal: ship to the deploy target" in text
        and "  - [semantic] deploy target: eu-west" in text
    )
    messages = manager.get_llm_messages("ana")
    assert [m["role"] for m in messages] == ["system", "user"] and text in messages[0]["content"]


def test_the_context_shows_the_task_once():
    """N6: the task's working item is not recalled again below the working section."""
    manager = manager_with()
    manager.start_task("ana", "ship release 2")
    assert manager.get_llm_context("ana").count("ship release 2") == 1


def test_with_no_task_the_working_section_says_none():
    """N6: a user with no task in progress gets the core's empty working section."""
    manager = manager_with()
    assert manager.tasks.section("ana") == "## Working memory\n  (none)"


def test_a_lone_surrogate_from_the_model_is_reported_never_raised_from_finish_task():
    """N3: a subject that is not valid Unicode is a problem reported, not an exception."""
    entry = '{"subject": "region \\ud800", "value": "eu", "confidence": 0.9}'
    manager = manager_with(llm=lambda prompt: '{"knowledge": [' + entry + "]}")
    report = run_task(manager)
    assert report.problems and report.facts == () and len(manager.users.get("ana").episodic) == 1


def long_note(number):
    return f"note {number}: the build cache for release 2 is on host {number}. " * 3


def tier(manager, user="ana"):
    """Return the task's working tier in estimated tokens (section and notes), and its notes."""
    task = manager.tasks.get(user)
    notes = [
        item
        for item in manager.list(user, "working")
        if item.task_id == task.id and item.metadata.get("kind") != "task"
    ]
    tokens = estimate_tokens(task.working.to_prompt_section())
    return tokens + sum(estimate_tokens(note.content) for note in notes), notes


def test_notes_written_past_the_budget_fold_into_the_summary():
    """N7: 25 notes written at the working level during a task leave its section and notes
    within the token budget; the oldest are folded into the summary, the newest is stored."""
    manager = manager_with()
    manager.start_task("ana", "ship release 2")
    written = [manager.write(long_note(number), "ana", level="working") for number in range(25)]
    tokens, notes = tier(manager)
    assert tokens <= WorkingSettings().token_budget and 1 < len(notes) < 25
    assert notes[-1] == written[-1] and [note.id for note in notes] == [
        note.id for note in written[-len(notes) :]
    ]
    summary = manager.tasks.get("ana").working.summary
    assert f"note: note {24 - len(notes)}: the build cache" in summary


def test_each_folded_note_is_deleted_with_an_audit_record_saying_why():
    """N7: a folded note leaves the store; its audit record says it was folded into the task."""
    manager = manager_with(working=WorkingSettings(token_budget=120))
    task_id = manager.start_task("ana", "ship release 2")
    written = [manager.write(long_note(number), "ana", level="working") for number in range(4)]
    _, notes = tier(manager)
    folded = [note for note in written if note not in notes]
    assert folded and all(manager.get(note.id, "ana") is None for note in folded)
    for note in folded:
        [*_, last] = manager.history("ana", note.id)
        assert last.operation == "fold" and task_id in last.reason and "budget" in last.reason


def test_notes_routed_by_their_tags_and_steps_recorded_after_them_keep_to_the_budget():
    """N7: whatever the route in, a note tagged as state or a step that lengthens the section,
    the tier fits the budget afterwards, one note at least left."""
    manager = manager_with(working=WorkingSettings(token_budget=200))
    manager.start_task("ana", "ship release 2")
    for number in range(6):
        manager.write(long_note(number), "ana", tags=["state"])
        assert tier(manager)[0] <= 200
    for number in range(6):
        manager.record_step("ana", f"deploy region {number}", "ok: " + "healthy " * 12)
        tokens, notes = tier(manager)
        assert tokens <= 200 or len(notes) == 1


def test_a_task_reopened_by_another_manager_keeps_its_folded_notes():
    """N7, N5: the summary holding folded notes is the task's stored state."""
    store = InMemoryStore()
    first = MemoryManager(store, clock=ManualClock(1_000))
    first.start_task("ana", "ship release 2")
    for number in range(25):
        first.write(long_note(number), "ana", level="working")
    second = MemoryManager(store, clock=ManualClock(2_000))
    assert second.tasks.get("ana").working.summary == first.tasks.get("ana").working.summary
    assert "note: note" in second.finish_task("ana").episode.summary


@pytest.mark.parametrize("down", ["writes", "all"])
def test_during_an_outage_notes_are_kept_and_fold_once_the_store_is_back(down):
    """N7, G1: while the store fails no note is lost; reads down, folding waits for a write."""
    inner = Outage()
    manager = MemoryManager(inner, clock=ManualClock(1_000))
    manager.start_task("ana", "ship release 2")
    inner.down = down
    written = [manager.write(long_note(number), "ana", level="working") for number in range(25)]
    assert all(note is not None for note in written)
    inner.down = None
    manager.write(long_note(25), "ana", level="working")
    assert manager.store.flush() and manager.store.pending == 0
    tokens, notes = tier(manager)
    assert tokens <= WorkingSettings().token_budget and notes[-1].content == long_note(25)


def loose_tier(manager, user="ana"):
    """Return the user's loose working tier in estimated tokens, its notes and its summaries."""
    loose = [item for item in manager.list(user, "working") if item.task_id is None]
    summaries = [item for item in loose if item.metadata.get("kind") == "notes"]
    notes = [item for item in loose if item.metadata.get("kind") != "notes"]
    return sum(estimate_tokens(item.content) for item in loose), notes, summaries


def test_loose_notes_written_past_the_budget_fold_into_one_summary():
    """N9: 40 working notes written with no task in progress leave the user's loose notes and
    their one summary within the token budget; the oldest are folded, the newest kept whole."""
    manager = manager_with()
    written = [manager.write(long_note(number), "ana", level="working") for number in range(40)]
    tokens, notes, [summary] = loose_tier(manager)
    assert tokens <= WorkingSettings().token_budget and 1 < len(notes) < 40
    assert [note.id for note in notes] == [note.id for note in written[-len(notes) :]]
    assert notes[-1] == written[-1]
    assert f"note: note {39 - len(notes)}: the build cache" in summary.content
    assert len(summary.content) <= WorkingSettings().max_summary_chars


def test_each_folded_loose_note_is_deleted_with_an_audit_record_saying_why():
    """N9: a folded loose note leaves the store; its audit record says why, and the summary's
    says how many it took in."""
    manager = manager_with(working=WorkingSettings(token_budget=120))
    written = [manager.write(long_note(number), "ana", level="working") for number in range(4)]
    _, notes, [summary] = loose_tier(manager)
    folded = [note for note in written if note not in notes]
    assert folded and all(manager.get(note.id, "ana") is None for note in folded)
    for note in folded:
        [*_, last] = manager.history("ana", note.id)
        assert last.operation == "fold" and "budget" in last.reason
    assert all("folded into their summary" in r.reason for r in manager.history("ana", summary.id))


def test_a_loose_note_past_the_budget_alone_is_kept_whole():
    """N9: the newest loose note stays whole, even longer than the budget by itself."""
    manager = manager_with(working=WorkingSettings(token_budget=20))
    manager.write(long_note(1), "ana", level="working")
    newest = manager.write(long_note(2) * 3, "ana", level="working")
    _, notes, [summary] = loose_tier(manager)
    assert notes == [newest] and "note: note 1" in summary.content


def test_a_task_started_later_leaves_the_loose_notes_as_they_are():
    """N9: a task started after loose notes neither takes them in nor, finished, clears them."""
    manager = manager_with()
    for number in range(40):
        manager.write(long_note(number), "ana", level="working")
    before = manager.list("ana", "working")
    manager.start_task("ana", "ship release 2")
    manager.write(long_note(99), "ana", level="working")
    report = manager.finish_task("ana")
    assert "note 3" not in report.episode.summary
    assert manager.list("ana", "working") == before


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_loose_notes_fold_alike_on_every_store_and_stay_folded_when_reopened(tmp_path, kind):
    """N9: on SQLite as in memory, a manager reopened on the store goes on with the same one
    summary, and the tier keeps to the budget."""
    store = SQLiteStore(tmp_path / "m.db") if kind == "sqlite" else InMemoryStore()
    first = MemoryManager(store, clock=ManualClock(1_000))
    for number in range(30):
        first.write(long_note(number), "ana", level="working")
    [summary] = loose_tier(first)[2]
    second = MemoryManager(store, clock=ManualClock(2_000))
    for number in range(30, 60):
        second.write(long_note(number), "ana", level="working")
    tokens, _, [again] = loose_tier(second)
    assert again.id == summary.id and tokens <= WorkingSettings().token_budget


@pytest.mark.parametrize("down", ["writes", "all"])
def test_during_an_outage_loose_notes_are_kept_and_fold_once_the_store_is_back(down):
    """N9, G1: while the store fails no loose note is lost; folding waits for a write."""
    inner = Outage()
    manager = MemoryManager(inner, clock=ManualClock(1_000))
    inner.down = down
    written = [manager.write(long_note(number), "ana", level="working") for number in range(25)]
    assert all(note is not None for note in written)
    inner.down = None
    manager.write(long_note(25), "ana", level="working")
    assert manager.store.flush() and manager.store.pending == 0
    tokens, notes, [summary] = loose_tier(manager)
    assert tokens <= WorkingSettings().token_budget and notes[-1].content == long_note(25)
    assert "note: note" in summary.content


def secret_note(number):
    return f"note {number}: the vault code is vault{number:03d}code. " * 3


def secret(number):
    return f"vault{number:03d}code"


def stored_text(manager, user="ana"):
    """Return everything the store holds of the user: items, audit records and loaded layers."""
    layers = manager.users.get(user)
    return repr((manager.export(user), manager.history(user), layers.episodic._episodes))


def on_disk(tmp_path):
    return b"".join(path.read_bytes() for path in tmp_path.iterdir())


def store_of(kind, tmp_path):
    return SQLiteStore(tmp_path / "m.db") if kind == "sqlite" else InMemoryStore()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_note_folded_into_the_task_is_erased_from_its_summary(tmp_path, kind):
    """N10, MG7: forgetting a note folded into the task's summary answers True and takes its
    line out of the summary, in the store, the loaded task, the audit and the file's bytes."""
    manager = MemoryManager(store_of(kind, tmp_path), clock=ManualClock(1_000))
    manager.start_task("ana", "migrate the vault", "release")
    written = [manager.write(secret_note(number), "ana", level="working") for number in range(30)]
    folded = manager.tasks.get("ana").folded
    number, *others = [n for n, note in enumerate(written) if note.id in folded]
    assert secret(number) in manager.tasks.get("ana").working.summary
    assert manager.forget_memory(written[number].id, "ana") is True
    summary = manager.tasks.get("ana").working.summary
    assert secret(number) not in summary and all(secret(n) in summary for n in others)
    assert written[number].id not in manager.tasks.get("ana").folded
    assert secret(number) not in stored_text(manager)
    assert secret(number) not in manager.finish_task("ana").episode.summary
    manager.close()
    if kind == "sqlite":
        assert secret(number).encode() not in on_disk(tmp_path)
        assert secret(number).encode().hex().encode() not in on_disk(tmp_path)
        assert secret(others[0]).encode() in on_disk(tmp_path)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_note_folded_into_a_settled_episode_is_erased_from_it(tmp_path, kind):
    """N10, MG7: a note folded into a task that finished is erased from the episode's summary,
    the stored one and the one the user's episodic memory holds."""
    manager = MemoryManager(store_of(kind, tmp_path), clock=ManualClock(1_000))
    manager.start_task("ana", "migrate the vault", "release")
    written = [manager.write(secret_note(number), "ana", level="working") for number in range(30)]
    folded = manager.tasks.get("ana").folded
    number = next(n for n, note in enumerate(written) if note.id in folded)
    episode = manager.finish_task("ana").episode
    assert secret(number) in episode.summary
    assert manager.forget_memory(written[number].id, "ana") is True
    [kept] = manager.users.get("ana").episodic._episodes.values()
    assert secret(number) not in kept.summary and "note: note" in kept.summary
    assert secret(number) not in stored_text(manager)
    manager.close()
    if kind == "sqlite":
        assert secret(number).encode() not in on_disk(tmp_path)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_loose_note_folded_into_the_notes_summary_is_erased_from_it(tmp_path, kind):
    """N10, MG7: forgetting a loose note folded into the user's notes summary answers True and
    takes its line out of that summary, the others staying."""
    manager = MemoryManager(store_of(kind, tmp_path), clock=ManualClock(1_000))
    written = [manager.write(secret_note(number), "ana", level="working") for number in range(40)]
    [summary] = loose_tier(manager)[2]
    mapped = summary.metadata["folded_notes"]
    number = next(n for n, note in enumerate(written) if note.id in mapped)
    assert manager.forget_memory(written[number].id, "ana") is True
    [after] = loose_tier(manager)[2]
    assert secret(number) not in after.content and secret(number + 1) in after.content
    assert secret(number) not in stored_text(manager)
    manager.close()
    if kind == "sqlite":
        assert secret(number).encode() not in on_disk(tmp_path)


def test_a_note_line_trimmed_from_the_summary_is_held_nowhere_and_no_longer_mapped():
    """N10, M3: a note whose line the full summary trimmed is mapped by no item; forgetting it
    answers False, and its text is in no record."""
    manager = manager_with()
    manager.start_task("ana", "migrate the vault", "release")
    written = [manager.write(secret_note(number), "ana", level="working") for number in range(60)]
    task = manager.tasks.get("ana")
    assert written[0].id not in task.folded and secret(0) not in stored_text(manager)
    assert manager.forget_memory(written[0].id, "ana") is False
    assert set(task.folded) == {
        note.id for number, note in enumerate(written) if secret(number) in task.working.summary
    }


def test_a_working_note_naming_no_task_in_progress_is_refused():
    """N11, MG6: a working note whose task_id names no task in progress is refused, naming
    N11, and leaves nothing stored or audited."""
    manager = manager_with()
    with pytest.raises(ValueError, match="N11"):
        manager.write(long_note(1), "ana", level="working", task_id="whatever")
    assert manager.list("ana") == [] and manager.history("ana") == []


def test_a_working_note_naming_another_task_than_the_one_in_progress_is_refused():
    """N11: during a task, a working note naming another task id is refused, naming N11; one
    naming the task in progress is its note."""
    manager = manager_with()
    task_id = manager.start_task("ana", "ship release 2")
    with pytest.raises(ValueError, match="N11"):
        manager.write(long_note(1), "ana", level="working", task_id="task-999")
    note = manager.write(long_note(2), "ana", level="working", task_id=task_id)
    assert tier(manager)[1] == [note]
