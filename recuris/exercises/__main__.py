"""Learn by rebuilding the core: `python -m recuris.exercises list | start | check`."""

import argparse
import os
import sys
from pathlib import Path

from .catalog import EXERCISES, find
from .grading import TIMEOUT, check, stop_on_signals
from .skeleton import start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m recuris.exercises",
        description="Rebuild the core's modules one by one; the project's own tests grade them.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="the exercises, in the order of the core path")
    begin = commands.add_parser(
        "start", help="write an exercise's skeleton and README-NAME.md into DIR"
    )
    grade = commands.add_parser("check", help="run the module's tests against DIR/<module>.py")
    for command in (begin, grade):
        command.add_argument("name", help="an exercise, as `list` names it")
        command.add_argument("dir", type=Path, help="the folder holding your files")
    begin.add_argument("--force", action="store_true", help="replace files already there")
    grade.add_argument(
        "--all", action="store_true", help="run every test, not only up to the first failure"
    )
    grade.add_argument(
        "--thorough", action="store_true", help="try each property on 100 examples, not 10"
    )
    grade.add_argument(
        "--timeout",
        type=float,
        default=TIMEOUT,
        metavar="SECONDS",
        help=f"stop a check that runs longer, naming the test that hung (default {TIMEOUT:g})",
    )
    arguments = parser.parse_args(argv)

    if arguments.command == "list":
        width = max(len(exercise.name) for exercise in EXERCISES)
        for number, exercise in enumerate(EXERCISES, 1):
            modules = ", ".join(f"recuris/{m.replace('.', '/')}.py" for m in exercise.modules)
            chapters = ", ".join(exercise.chapters)
            print(
                f"{number}. {exercise.name:<{width}}  {exercise.title} ({modules}; read {chapters})"
            )
        return 0
    try:
        exercise = find(arguments.name)
    except KeyError as error:
        print(error.args[0], file=sys.stderr)
        return 2
    if arguments.command == "start":
        number = EXERCISES.index(exercise) + 1
        try:
            written = start(exercise, arguments.dir, number, len(EXERCISES), force=arguments.force)
        except FileExistsError as error:
            print(error, file=sys.stderr)
            return 2
        wrote = ", ".join(map(str, written))
        print(f"Exercise {number} of {len(EXERCISES)}: {exercise.title}. Wrote {wrote}.")
        print(
            f"Read {written[-1]}, fill in every TODO, then: python -m recuris.exercises check "
            f"{exercise.name} {arguments.dir}"
        )
        return 0
    stop_on_signals()
    return check(
        exercise,
        arguments.dir,
        every=arguments.all,
        thorough=arguments.thorough,
        timeout=arguments.timeout,
    )


def piped(argv: list[str] | None = None) -> int:
    """Run `main`; a reader who stops early (`| head`) ends it quietly, with status 0.

    The same as `recuris.manager.entry.run_piped`, written again: the exercises import nothing
    of the parts they grade, so that a broken part can still be graded.
    """
    try:
        status = main(argv)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return status


if __name__ == "__main__":
    sys.exit(piped())
