"""Entry points: how every command of the package ends, from its first import on.

Document 003 §6.3 asks that memory be explainable to the operator, who works from a shell:
each command ends as a shell's commands end. `python -m recuris`, `python -m recuris.bench`,
`python -m recuris.simulation`, `python -m recuris.mcp` and `agent_demo.py` run their command
through `run_piped`; a command's modules take a noticeable moment to load, and Ctrl-C in that
moment is a Ctrl-C like any other, so this module loads nothing of the command.

Invariants:
    EN1 `run_piped` returns the command's exit status; Ctrl-C ends the command with one line
        on standard error and 130, as a shell reports an interrupted command (V18); a reader
        that closed standard output early (`| head`) ends it silently, with status 0.
    EN2 importing this module after `import recuris` loads no other module; each entry point
        imports it before any module of its command, which it imports inside `run_piped`
        (the demo, a script, in a block that ends as EN1 says): Ctrl-C while the command's
        modules load is EN1's one line and 130, never a traceback.
"""

import os
import sys
from collections.abc import Callable  # loaded already, by `typing` in recuris/__init__.py

__all__ = ["run_piped", "interrupted", "INTERRUPTED"]

INTERRUPTED = 130  # 128 + SIGINT (EN1)


def interrupted() -> int:
    """Say in one line, on standard error, that Ctrl-C ended the command; return 130 (EN1)."""
    # One line: a traceback would only show where the work, or the loading, happened to be.
    print("interrupted (Ctrl-C)", file=sys.stderr)
    return INTERRUPTED


def run_piped(command: Callable[[], int | None]) -> int:
    """Run `command` and return its exit status; 0, silently, if standard output's reader
    closed the pipe early (`| head`), as Unix tools end; 130, with one line, on Ctrl-C (EN1)."""
    try:
        status = command()
        sys.stdout.flush()  # inside the try: the last lines may meet the closed pipe here
    except KeyboardInterrupt:
        return interrupted()
    except BrokenPipeError:
        # Standard output goes to the null device, so that the interpreter's last flush finds
        # nothing to write and says nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return status or 0
