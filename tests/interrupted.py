"""Ctrl-C sent to a command at a moment it is known to be working, never on a timer (V18).

`interrupted_reading` starts `python ARGUMENTS`, whose arguments name `fifo` as an input:
opening a FIFO for reading waits for a writer, so once this side's open succeeds the child
is inside its command, past start-up; once the kernel says it sleeps in the pipe's read, it
is waiting for its first line. SIGINT then lands where Ctrl-C would, in the middle of the work.

`interrupted_importing` starts `python tests/interrupted.py MODULE ARGUMENTS`: run as a script,
this file puts a finder first on the import path, then runs `python ARGUMENTS` (a script, or
`-m` and a module) as Python would. When anything first imports MODULE, the finder sends SIGINT
to its own process. kill() delivers a signal to the process that sends it before it returns,
and Python raises KeyboardInterrupt at the next instruction of the main thread: inside that
import, every time, whatever the machine's speed (EN2).
"""

import errno
import os
import runpy
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def with_ctrl_c() -> None:
    """In the child before it runs: give SIGINT its default action, as a terminal's job has.

    A shell starts a background job (a suite run with `&`, a CI runner's step) with SIGINT
    ignored, and a child inherits that: Python then installs no KeyboardInterrupt, and the
    signal this module sends would be lost. Pass as `preexec_fn`.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt(child: subprocess.Popen) -> tuple[int, str, str]:
    """Send SIGINT, as Ctrl-C does; return the exit status, standard output and error."""
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    return child.returncode, out, err


def interrupted_reading(fifo: Path, *arguments: str) -> tuple[int, str, str]:
    """Run `python ARGUMENTS`, interrupt it while it reads `fifo`; return what `interrupt` does."""
    os.mkfifo(fifo)
    child = subprocess.Popen(
        [sys.executable, *arguments],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=with_ctrl_c,
    )
    while True:
        try:
            # Without a reader, a non-blocking open for writing fails (ENXIO): a child that
            # died before reading is seen, instead of waited for forever.
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as error:
            if error.errno != errno.ENXIO:
                raise
            if child.poll() is not None:
                raise AssertionError(f"the child ended before reading: {child.communicate()}")
            time.sleep(0.01)
    try:
        # The child's open has returned, but its read may not have begun: a SIGINT that lands
        # between the two is noted by Python and wakes nothing, and the read then waits for
        # ever (seen once in 15 runs on a loaded machine). On Linux the kernel names where a
        # process sleeps: the signal is sent once the child sleeps in the pipe's read.
        sleeping_in(child, "pipe_read")
        return interrupt(child)
    finally:
        os.close(writer)


def sleeping_in(child: subprocess.Popen, where: str, seconds: float = 60) -> None:
    """Wait until the child sleeps in the kernel function `where` (Linux's /proc), or ends."""
    wchan = Path(f"/proc/{child.pid}/wchan")
    if not wchan.exists():
        return  # no /proc: the signal is sent at once, as before
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and child.poll() is None:
        try:
            if where in wchan.read_text():
                return
        except OSError:
            return
        time.sleep(0.01)


def interrupted_importing(module: str, *arguments: str) -> tuple[int, str, str]:
    """Run `python ARGUMENTS`, Ctrl-C it as it first imports `module`; return the exit status,
    standard output and error."""
    child = subprocess.run(
        [sys.executable, __file__, module, *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=with_ctrl_c,
    )
    return child.returncode, child.stdout, child.stderr


class InterruptOnImport:
    """A finder that finds nothing: it sends SIGINT to this process when `module` is first asked
    for, then leaves the import path, so that the import goes on as it would have."""

    def __init__(self, module: str) -> None:
        self.module = module

    def find_spec(self, name, path=None, target=None) -> None:
        if name == self.module:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None


if __name__ == "__main__":
    module, *command = sys.argv[1:]
    sys.path.remove(str(Path(__file__).parent))  # the command sees the path Python gives it
    sys.meta_path.insert(0, InterruptOnImport(module))
    if command[0] == "-m":
        sys.argv = [command[1], *command[2:]]
        runpy.run_module(command[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = command
        sys.path.insert(0, str(ROOT / Path(command[0]).parent))
        runpy.run_path(command[0], run_name="__main__")
