"""The demo is the main job: it runs offline, the same way every time, and says what it shows."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "agent_demo.txt"


def run_demo() -> str:
    completed = subprocess.run(
        [sys.executable, "agent_demo.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
        timeout=60,
    )
    assert completed.stderr == ""
    return completed.stdout


def test_demo_output_matches_the_saved_copy():
    """The demo's output is byte-for-byte the saved copy (fixed clock, deterministic mock).

    After an intended change, refresh it with: python agent_demo.py > tests/golden/agent_demo.txt
    """
    assert run_demo() == GOLDEN.read_text(encoding="utf-8")


def test_demo_shows_each_part_the_design_asks_for():
    """The tour shows a failure, a recovery, a long flat task, a promotion, a decay cycle, the manager."""
    text = GOLDEN.read_text(encoding="utf-8")
    assert "-> success=False; stored as" in text and "[avoid]" in text
    assert "-> success=True in 4 steps" in text
    assert "goal in 33/33 prompts, pin in 33/33" in text
    assert "-> promoted fact-1" in text and "reported conflict" in text
    assert "[audit t=" in text and "forget" in text
    assert (
        "supersede fact-1: superseded by fact-3" in text
        and "(procedure triggered by task type 'release')" in text
    )
    assert (
        "it followed the procedure" in text and "forget_user('bob') deleted 1 item(s); bob now has []" in text
    )
    assert "insight insight-1 (user_fact): 'staging host: stage-7.internal'" in text
    assert "executed: ['build', 'deploy to stage-7.internal']" in text
    assert "] merge item-3" in text and "] forget item-1" in text
    for stage in ("[1 initialise]", "[2 decide]", "[3 act]", "[4 observe]", "[5 update]", "[6 settle]"):
        assert stage in text


def test_demo_runs_the_same_tour_against_an_http_endpoint_and_shows_the_prompts():
    """`python agent_demo.py --llm URL --model NAME` sends every prompt over HTTP and prints it."""
    from stub_openai import StubServer

    with StubServer() as stub:
        command = [sys.executable, "agent_demo.py", "--llm", stub.url, "--model", "stub"]
        completed = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, encoding="utf-8", timeout=120
        )
        assert completed.returncode == 0, completed.stderr
        sent = [r for r in stub.requests if r["path"].endswith("/chat/completions")]
    assert completed.stdout.count(">>> prompt sent:") == len(sent) > 20
    assert "=== K. The state of memory after the tour" in completed.stdout


def test_the_demo_asks_an_http_model_for_one_action_line_at_most():
    """`--llm`: a decision asks for at most 96 tokens, one action line; a reflection for 512."""
    import importlib.util

    from stub_openai import StubServer

    spec = importlib.util.spec_from_file_location("agent_demo", ROOT / "agent_demo.py")
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    with StubServer() as stub:
        stub.script = [("text", "open page"), ("text", '{"insights": []}')]
        decide, reflect = demo.http_models(stub.url, "stub")
        decide("what next?"), reflect("reflect on this")
    assert [request["body"]["max_tokens"] for request in stub.requests] == [96, 512]
