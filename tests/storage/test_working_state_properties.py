"""Working state checked on any task: saved and loaded, it is the same working memory (WJ1)."""

import json

from hypothesis import given
from hypothesis import strategies as st

from recuris import WorkingMemory, WorkingSettings
from recuris.storage.working_state import working_from_dict, working_to_dict

texts = st.text(min_size=1, max_size=80).filter(str.strip)


@given(
    window_size=st.integers(1, 6),
    token_budget=st.none() | st.integers(1, 300),
    goal=texts,
    pins=st.lists(texts, max_size=3),
    steps=st.lists(st.tuples(texts, st.text(max_size=80)), max_size=12),
)
def test_WJ1_a_saved_task_loads_back_the_same(window_size, token_budget, goal, pins, steps):
    """WJ1: through JSON and back, a task renders, reads and goes on as the original."""
    settings = WorkingSettings(window_size=window_size, token_budget=token_budget)
    memory = WorkingMemory(settings)
    memory.init_task(goal)
    for constraint in pins:
        memory.pin(constraint)
    for action, result in steps:
        memory.add_step(action, result)
    data = json.loads(json.dumps(working_to_dict(memory)))
    again = working_from_dict(data, settings)
    assert again.to_prompt_section() == memory.to_prompt_section()
    assert working_to_dict(again) == data
    memory.add_step("one more", "ok")
    again.add_step("one more", "ok")
    assert again.to_prompt_section() == memory.to_prompt_section()
