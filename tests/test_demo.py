"""The demo is the main job: it runs offline, the same way every time, and says what it shows."""

import ast
import html
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from prompt_sections import SECTIONS

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "agent_demo.txt"
# A printed prompt's line: its section's label, then the text
PROMPT_LINE = re.compile(r"^      (.{16})\| ")


def python(*arguments: str, interpreter: str = sys.executable, **options):
    """Run `interpreter ARGUMENTS` from the repository's root; return the completed process."""
    return subprocess.run(
        [interpreter, *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        **options,
    )


def run_demo() -> str:
    completed = python("agent_demo.py", check=True)
    assert completed.stderr == ""
    return completed.stdout


def test_demo_output_matches_the_saved_copy():
    """The demo's output is byte-for-byte the saved copy (fixed clock, deterministic mock).

    After an intended change, refresh it with: python agent_demo.py > tests/golden/agent_demo.txt
    """
    assert run_demo() == GOLDEN.read_text(encoding="utf-8")


def imported_modules(nodes) -> set[str]:
    """Return the modules of recuris that the import statements among `nodes` name."""
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names if alias.name.startswith("recuris")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("recuris"):
            names.add(node.module)
    return names


def test_the_parts_of_document_000s_loop_import_the_core_and_the_tour_alone():
    """The demo's own imports are the core, the tour's recorder and mock world, and the
    entry point; parts A to E import nothing more, and every later import is in a function."""
    tree = ast.parse((ROOT / "agent_demo.py").read_text(encoding="utf-8"))
    # What runs as the file loads: its statements, those in a try block among them
    at_the_top = imported_modules(
        node
        for statement in tree.body
        for node in [statement, *(statement.body if isinstance(statement, ast.Try) else [])]
    )
    core = {name for name in at_the_top if name.startswith("recuris.core.")}
    tour = {"recuris.tour.recorder", "recuris.tour.mock_environment"}
    assert core and at_the_top == {"recuris", "recuris.manager.entry"} | core | tour
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    loop = ["failure_then_recovery", "long_task", "consolidation", "decay_cycle"]
    assert {name: imported_modules(ast.walk(functions[name])) for name in loop} == {
        name: set() for name in loop
    }


def test_demo_shows_each_part_the_design_asks_for():
    """The tour shows a failure, a recovery, a long
    flat task, a promotion, a decay cycle, the manager."""
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
        "it followed the procedure" in text
        and "forget_user('bob') deleted 1 item(s); bob now has []" in text
    )
    assert "insight insight-1 (user_fact): 'staging host: stage-7.internal'" in text
    assert "executed: ['build', 'deploy to stage-7.internal']" in text
    assert "] merge item-3" in text and "] forget item-1" in text
    for stage in (
        "[1 initialise]",
        "[2 decide]",
        "[3 act]",
        "[4 observe]",
        "[5 update]",
        "[6 settle]",
    ):
        assert stage in text


def test_demo_glosses_each_chinese_task_in_english_the_first_time():
    """The tasks of document 000 stay in Chinese (they
    need CJK bigrams), each glossed on first use."""
    text = GOLDEN.read_text(encoding="utf-8")
    glosses = [
        ("注册一个新账号", "sign up for a new account"),
        ("打开注册页", "open the sign-up page"),
        ("再注册一个测试账号", "sign up for another, test account"),
    ]
    for chinese, english in glosses:
        assert text.index(f"{chinese} ({english})") <= text.index(chinese)


def test_demo_prints_the_first_prompt_before_and_after_the_failure_is_remembered():
    """A's and B's first prompts are printed whole,
    every section labelled; only B's has the failure."""
    text = GOLDEN.read_text(encoding="utf-8")
    a = text.split("=== A.")[1].split("=== B.")[0]
    b = text.split("=== B.")[1].split("=== C.")[0]
    for part in (a, b):
        labels = [
            match.group(1).strip()
            for line in part.splitlines()
            if (match := PROMPT_LINE.match(line))
        ]
        assert [label for label in labels if label] == SECTIONS
    assert "|   - [avoid]" not in a and "|   - [avoid] 注册一个新账号" in b
    assert "the sections that differ from A's: goal, experience" in b


def test_demo_says_how_the_mock_decides_and_what_the_bar_means_before_the_first_decision():
    """Before the first decide event, one line says
    how the model decides and one what " | " means."""
    text = GOLDEN.read_text(encoding="utf-8")
    first_decision = text.index("[2 decide]")
    assert -1 < text.index('" | " separates alternative actions') < first_decision
    assert -1 < text.index("decides from the prompt alone") < first_decision


def test_demo_compares_the_flat_prompt_with_the_full_history_and_says_what_flat_means():
    """The long task's table heads its columns plainly;
    a sentence says flat is bounded by configuration."""
    text = GOLDEN.read_text(encoding="utf-8")
    assert "step  recuris prompt (tokens)  full-history prompt (tokens)" in text
    assert "Flat means bounded by configuration, not by the number of steps" in text
    rows = [
        line.split() for line in text.split("full-history prompt (tokens)")[1].splitlines()[1:7]
    ]
    assert all(int(ours) <= int(full) for _, ours, full in rows) and int(rows[-1][2]) > 2 * int(
        rows[-1][1]
    )


def test_demo_explains_each_outcome_where_it_is_printed():
    """The failed run names the rule that ended it; the cycle says why the failure was kept."""
    text = GOLDEN.read_text(encoding="utf-8")
    assert "why: step 4 failed" in text and "(max_failures=1)" in text
    # The weight is the forgetting curve's (D8); the golden file holds its value.
    assert re.search(r"kept episode-2 \(failed, weight 0\.\d{3}\): it was retrieved 1 time", text)
    assert "A memory survives by being used, not by being a success" in text


@pytest.fixture(scope="module")
def over_http() -> tuple[subprocess.CompletedProcess, int]:
    """The tour run once on a stub endpoint: the process, and how many chat requests it sent."""
    from stub_openai import StubServer

    with StubServer() as stub:
        completed = python("agent_demo.py", "--llm", stub.url, "--model", "stub")
        sent = [r for r in stub.requests if r["path"].endswith("/chat/completions")]
    return completed, len(sent)


def test_demo_runs_the_same_tour_against_an_http_endpoint_and_shows_the_prompts(over_http):
    """`python agent_demo.py --llm URL --model NAME` sends every prompt over HTTP and prints it."""
    completed, sent = over_http
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.count(">>> prompt sent:") == sent > 20
    assert "=== K. The state of memory after the tour" in completed.stdout


def test_on_a_real_model_the_narration_tells_what_that_model_did(over_http):
    """`--llm`: the tour names the model in use, and foretells none of its choices: no "mock",
    no title that says B avoids the failed path before B has run; what it did, it says."""
    out = over_http[0].stdout
    assert "The model is stub at http://127.0.0.1:" in out and "mock" not in out
    assert "=== B. A similar task and the experience its prompt holds" in out
    assert "=== G. The agent on the manager is given a recalled procedure" in out
    # The stub decides as the mock does, so what it did is what the narration says it did.
    assert "why: at the last subtask the [avoid] line ruled out 提交表单" in out
    assert "bring the failure back" in out and "the failure that saved task B stays" in out
    assert "it followed the procedure: run migrations -> set DB_URL -> roll out" in out


def test_on_a_model_that_finishes_at_once_the_narration_says_only_what_happened():
    """`--llm`: every sentence that states an outcome or what a prompt held is true of the run.
    A model that answers FINISH at once succeeds at task A: nothing tells the mock's story of a
    failure remembered, retrieved and kept, and what is said of A's success is so."""
    from stub_openai import StubServer

    with StubServer() as stub:
        stub.script = [("text", "FINISH")] * 100
        completed = python("agent_demo.py", "--llm", stub.url, "--model", "stub")
    out = completed.stdout
    assert completed.returncode == 0, completed.stderr
    for mock_story in [
        "A first task fails",
        "the model takes the first one not known to fail",
        "is told which path failed",
        "bring the failure back",
        "with the failure remembered",
        "the failure B was shown stays",
        "every subtask was ticked",
        "the window compresses",
    ]:
        assert mock_story not in out
    assert "-> success=True; stored as episode-2: [follow] 注册一个新账号" in out
    assert out.count("why: the model replied FINISH with 4 subtask(s) of the plan not ticked") == 2
    # B's first prompt held A's success, as the narration says
    assert "|   - [follow] 注册一个新账号 (网页表单填写) succeeded: (no steps)" in out
    assert "bring A's success back" in out
    assert "Its first prompt, with A's success remembered" in out


def an_unused_port() -> socket.socket:
    """A loopback socket bound to a port and not listening: connecting to it is refused."""
    bound = socket.socket()
    bound.bind(("127.0.0.1", 0))
    return bound


def test_an_endpoint_that_cannot_be_reached_stops_the_tour_at_once_with_exit_1():
    """`--llm` to an endpoint nobody listens at: one line on standard error, exit 1, after the
    first prompt; no task runs on, no "cannot reach" lesson is stored or narrated."""
    with an_unused_port() as bound:
        url = f"http://127.0.0.1:{bound.getsockname()[1]}/v1"
        completed = python("agent_demo.py", "--llm", url, "--model", "m")
    [line] = completed.stderr.splitlines()
    assert completed.returncode == 1 and line.startswith("error: cannot reach http://127.0.0.1:")
    assert completed.stdout.count(">>> prompt sent:") == 1
    assert "=== B." not in completed.stdout and "[avoid]" not in completed.stdout


@pytest.mark.parametrize(
    "failure, said",
    [(("status", 500, "boom"), "HTTP 500: boom"), (("garbage",), "not JSON")],
    ids=["http-500", "no-chat-reply"],
)
def test_a_model_that_fails_after_good_replies_stops_the_tour_with_exit_1(failure, said):
    """The model's failure is not the task's: at the first call that gets no reply (an HTTP
    error, a reply that is no chat reply: any LLMError) the tour stops with one line naming
    it, exit 1; no task fails of it, no lesson or prompt holds it."""
    from stub_openai import StubServer

    with StubServer() as stub:
        # Three good replies, then the failure on every try (LM2 retries a 500)
        stub.script = [("auto",)] * 3 + [failure] * 10
        completed = python("agent_demo.py", "--llm", stub.url, "--model", "stub")
    [line] = completed.stderr.splitlines()
    assert completed.returncode == 1
    assert line.startswith("error: the model stub at http://127.0.0.1:") and said in line
    assert line.endswith("; the tour stopped here")
    assert completed.stdout.count(">>> prompt sent:") == 4
    assert "llm_fn raised" not in completed.stdout and "[avoid]" not in completed.stdout
    assert "success=" not in completed.stdout


@pytest.mark.parametrize(
    "arguments, said",
    [
        (["--html", "missing/trace.html"], "VA6: there is no folder"),
        (["--html", "tests"], "VA6: tests is a folder"),
        (["--html", "/proc/trace.html"], "VA6: cannot write /proc/trace.html"),
        (["--llm", "http://127.0.0.1:9/v1"], "LM3: set base_url and model"),
        (["--llm", "notaurl", "--model", "m"], "LM3: base_url must be an http:// or https:// URL"),
        (["--model", "m"], "--model m needs --llm URL"),
    ],
    ids=[
        "html-in-no-folder",
        "html-a-folder",
        "html-not-writable",
        "llm-without-model",
        "llm-not-a-url",
        "model-without-llm",
    ],
)
def test_a_bad_argument_is_one_line_and_exit_2_before_the_tour_starts(arguments, said):
    """VA6, LM3: a trace that cannot be written, a model the client refuses or a model without
    the endpoint that serves it is said in one error line, exit 2, before the tour prints
    anything."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in ("RECURIS_MODEL", "OPENAI_BASE_URL")
    }
    completed = python("agent_demo.py", *arguments, env=environment)
    errors = [line for line in completed.stderr.splitlines() if "error:" in line]
    assert completed.returncode == 2 and completed.stdout == ""
    assert len(errors) == 1 and said in errors[0] and "Traceback" not in completed.stderr


@pytest.mark.processes
def test_ctrl_c_ends_the_tour_with_one_line_and_status_130():
    """V18: Ctrl-C while the tour waits for a model's reply prints one line and exits 130."""
    from interrupted import interrupt, sleeping_in, with_ctrl_c
    from stub_openai import StubServer

    with StubServer() as stub:
        stub.script = [("slow", 60)]  # the first reply never comes in the test's time
        child = subprocess.Popen(
            [sys.executable, "agent_demo.py", "--llm", stub.url, "--model", "stub"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            preexec_fn=with_ctrl_c,
        )
        # The request is recorded as it arrives; the tour then waits for its reply in a poll
        # of its socket, where a signal wakes it (sent before the poll, it would wake nothing).
        while not stub.requests and child.poll() is None:
            time.sleep(0.01)
        sleeping_in(child, "poll_schedule_timeout")
        status, _, err = interrupt(child)
    assert (status, err) == (130, "interrupted (Ctrl-C)\n")


def python_3_9() -> str | None:
    """Return a Python 3.9 interpreter that runs, on the path or in pyenv, if there is one."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [shutil.which("python3.9"), *map(str, pyenv.glob("versions/3.9*/bin/python3.9"))]
    for candidate in filter(None, candidates):
        # A pyenv shim is on the path even when it has no 3.9 to run: ask the interpreter.
        asked = [candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 9))"]
        found = subprocess.run(asked, capture_output=True, text=True, timeout=60)
        if found.stdout.strip() == "True":
            return candidate
    return None


PYTHON_3_9 = python_3_9()


@pytest.mark.parametrize("path", ["agent_demo.py", "recuris/__init__.py"])
def test_what_python_3_9_reads_before_the_version_check_is_python_3_9(path):
    """The demo and the package parse under Python 3.9's grammar up to their version check."""
    ast.parse((ROOT / path).read_text(encoding="utf-8"), feature_version=(3, 9))


@pytest.mark.skipif(PYTHON_3_9 is None, reason="no python3.9 on this machine")
@pytest.mark.parametrize("command", [["agent_demo.py"], ["-m", "recuris", "stats"]], ids=" ".join)
def test_python_3_9_is_told_in_one_line_that_3_10_is_needed(command):
    """On Python 3.9 the demo and `python -m recuris` say in one line that they need 3.10."""
    completed = python(*command, interpreter=PYTHON_3_9)
    [line] = completed.stderr.splitlines()
    assert completed.returncode == 1 and "needs Python 3.10 or newer" in line


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
        decide("what next?")
        reflect("reflect on this")
    assert [request["body"]["max_tokens"] for request in stub.requests] == [96, 512]


@pytest.fixture(scope="module")
def traced(demo_trace) -> tuple[str, str]:
    """The tour run once with --html: (what the terminal shows, the page)."""
    terminal, path = demo_trace
    return terminal, path.read_text(encoding="utf-8")


def page_part(page: str, number: int) -> str:
    return page.split(f'<section id="part-{number}">')[1].split("</section>")[0]


def plain(markup: str) -> str:
    """The text of some markup, every run of white space one space."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


PROMPT_LINE_TEXT = re.compile(r"^      (.{16})\| (.*)$")


def test_the_page_shows_the_first_prompts_where_parts_a_and_b_narrate_them(traced):
    """TR6: A's and B's first prompt stand open on the page right after the line that
    announces them, in labelled sections, holding every line the terminal prints."""
    terminal, page = traced
    for number, announced in ((1, "section by section:"), (2, "the sections that differ")):
        after = page_part(page, number).split(announced)[1].split("</p>", 1)[1]
        assert after.startswith('<details class="prompt" open>'), after[:200]
        block = after.split("</details>")[0]
        labels = [chunk.split("</span>")[0] for chunk in block.split('<span class="label">')[1:]]
        assert labels == SECTIONS
        shown = terminal.split(("=== A.", "=== B.")[number - 1])[1].split("===")[0]
        printed = [m.group(2) for line in shown.splitlines() if (m := PROMPT_LINE_TEXT.match(line))]
        assert printed and [line for line in printed if line.strip() not in plain(block)] == []


def test_the_page_shows_the_long_tasks_table_as_the_terminal_prints_it(traced):
    """TR6: part C's step and token table is on the page, in place, with the terminal's rows."""
    terminal, page = traced
    rows = [
        line.split()
        for line in terminal.split("full-history prompt (tokens)")[1].splitlines()[1:]
        if re.fullmatch(r"\s+\d+\s+\d+\s+\d+", line)
    ]
    part = page_part(page, 3)
    table = part.split('<table class="shown">')[1].split("</table>")[0]
    cells = re.findall(r"<t[hd]>(.*?)</t[hd]>", table)
    header = ["step", "recuris prompt (tokens)", "full-history prompt (tokens)"]
    assert cells == header + [cell for row in rows for cell in row] and len(rows) == 6
    assert part.index('<table class="shown">') < part.index("Flat means bounded")


def test_every_line_the_terminal_shows_is_on_the_page(traced):
    """TR6: each line of the tour's terminal output, its event tag or prompt label aside,
    is in the page's text."""
    terminal, page = traced
    text = plain(page)
    missing = []
    for line in terminal.splitlines()[:-1]:  # the last line says where the page is
        line = re.sub(r"^\s*\[(\d) (\w+)\]", r"\1 \2", line)
        line = PROMPT_LINE_TEXT.sub(r"\2", line).removeprefix("=== ")
        if line.strip() and " ".join(line.split()) not in text:
            missing.append(line)
    assert missing == []


def test_a_statement_routed_by_rule_is_audited_as_what_was_stored(traced):
    """The audit line of a statement written without a level says it was stored as an
    episodic event, as the tier shows it, not "routed to semantic"."""
    _, page = traced
    part = plain(page_part(page, 6))
    assert "item-1: deploy region: eu-west" in part and "routed to semantic" not in part
    assert "write item-1: a statement, routed by rule to episodic" in part


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ["agent_demo.py"],
        ["-m", "recuris.simulation"],
        ["-m", "recuris.exercises", "list"],
        ["-m", "recuris.bench.long_horizon"],
        *[[f"examples/{path.name}"] for path in sorted((ROOT / "examples").glob("*.py"))],
    ],
    ids=" ".join,
)
def test_a_command_ends_quietly_when_its_reader_has_closed_the_pipe(command):
    """A reader that stops early (`| head`) ends the command silently, with status 0."""
    reading, writing = os.pipe()
    os.close(reading)  # the reader is gone before the first line: every write meets EPIPE
    try:
        done = subprocess.run(
            [sys.executable, *command],
            cwd=ROOT,
            stdout=writing,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        os.close(writing)
    assert (done.returncode, done.stderr) == (0, "")
