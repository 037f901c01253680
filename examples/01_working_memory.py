"""Rung 1: working memory alone. A fixed goal, a pinned constraint, a window, a merged summary.

Run from the repository root after the README's set-up, `python -m pip install -e ".[test]"`:
    python examples/01_working_memory.py
"""

import sys

from recuris import WorkingMemory, WorkingSettings
from recuris.manager.entry import run_piped


def main() -> None:
    memory = WorkingMemory(WorkingSettings(window_size=3, max_summary_chars=200))
    subtasks = ["copy users", "copy orders", "build indexes"]
    memory.init_task("migrate the shop database", subtasks=subtasks)
    memory.pin("do not use MySQL")

    for table in ["users", "orders", "invoices", "payments", "refunds"]:
        memory.add_step(f"copy {table}", f"ok: {table} copied")
    memory.add_step("copy carts", "error: carts table is locked")
    memory.mark_done("copy users")

    print(memory.to_prompt_section())
    print()
    print(
        f"{len(memory.trajectory)} steps recorded; {len(memory.recent_steps)} in the window;"
        f" {len(memory.compressed_steps)} folded into a {len(memory.summary)}-character summary"
    )
    try:
        memory.goal = "something else"
    except AttributeError as error:
        print(f"changing the goal is refused: {error}")


if __name__ == "__main__":
    sys.exit(run_piped(main))  # a reader who stops early (`| head`) ends it quietly
