"""Example tests for recuris.experience.slot_llm: the core's mock, filling slots (SL1-SL3)."""

from recuris import WorkingMemory
from recuris.core.mock_llm import PromptFollowingLLM, read_prompt
from recuris.core.prompt import ContextSection, build_prompt
from recuris.experience.slot_llm import SlotFollowingLLM, SlotView


def deploy_prompt(*results, sections=(), tools_instruction=""):
    """A prompt for "deploy to {region}" after each result, as "look up" steps, is in the window."""
    memory = WorkingMemory()
    memory.init_task("ship", ["look up the region", "deploy to {region}"])
    memory.mark_done("look up the region")
    for result in results:
        memory.add_step("look up the region", result)
    return build_prompt(memory.to_prompt_section(), [], list(sections), [], tools_instruction)


def test_a_slot_is_filled_from_a_note_in_a_recent_step():
    """SL2: `note: region = eu-west` in a recent result fills {region}."""
    assert SlotFollowingLLM()(deploy_prompt("ok; note: region = eu-west")) == "deploy to eu-west"


def test_a_value_noted_twice_is_the_first_one_or_with_latest_wins_the_last():
    """SL2: of two notes for one slot, the first is read, or with `latest_wins` the last."""
    prompt = deploy_prompt("ok; note: region = eu-west", "ok; note: region = us-east")
    assert SlotFollowingLLM()(prompt) == "deploy to eu-west"
    assert SlotFollowingLLM(latest_wins=True)(prompt) == "deploy to us-east"


def test_a_section_is_read_only_by_the_reader_given_for_its_header():
    """SL1, SL2: a section the core does not lay out fills a slot only through its reader."""

    def read(line, view):
        view.known.setdefault("region", line.partition(": ")[2])

    prompt = deploy_prompt(sections=[ContextSection("## Notes", ("region: eu-west",))])
    assert SlotFollowingLLM()(prompt) == "deploy to {region}"
    assert SlotFollowingLLM(readers={"## Notes": read})(prompt) == "deploy to eu-west"


def test_a_slot_nothing_fills_is_asked_of_a_tool_when_the_asker_replies():
    """SL3: an unfilled {slot} goes to `ask`; when it returns None the option is left as written."""

    def ask(slot, view):
        return f"ask: {slot}" if "ask:" in view.instruction else None

    assert SlotFollowingLLM(ask=ask)(deploy_prompt()) == "deploy to {region}"
    offered = deploy_prompt(tools_instruction="Or reply ask: x")
    assert SlotFollowingLLM(ask=ask)(offered) == "ask: region"


def test_a_subtask_is_done_by_an_action_using_the_value_read_for_its_slot():
    """SL3: "deploy to eu-west" done, with region noted as eu-west, does "deploy to {region}"."""
    memory = WorkingMemory()
    memory.init_task("ship", ["deploy to {region}", "smoke-test"])
    memory.add_step("look up", "ok; note: region = eu-west")
    memory.add_step("deploy to eu-west", "ok")
    prompt = build_prompt(memory.to_prompt_section(), [])
    assert SlotFollowingLLM()(prompt) == "smoke-test"
    assert PromptFollowingLLM()(prompt) == "deploy to {region}"  # the core reads no slot


def test_the_view_is_the_cores_view_with_the_slots_read():
    """SL1: the core's one reader fills the view: the core's fields, the slots, the instruction."""
    prompt = deploy_prompt("ok; note: region = eu-west", tools_instruction="Or ask.")
    view = read_prompt(prompt, SlotFollowingLLM().new_view())
    assert isinstance(view, SlotView) and view.goal == "ship"
    assert view.known == {"region": "eu-west"}
    assert view.instruction == prompt.rsplit("\n\n", 1)[-1]
