"""What SQLite did during a call: the commits, and each statement's virtual-machine steps.

Work counted, never time: the tests of SX1 (steps per statement), Q6 and G10 (commits).
"""


def statements_of(store, call) -> list[tuple[str, int]]:
    """Return each statement `call` runs on a SQLiteStore, with SQLite's virtual-machine steps."""
    counted = []

    def started(statement: str) -> None:
        counted.append([statement, 0])

    def step() -> int:
        counted[-1][1] += 1
        return 0  # go on

    store._db.set_trace_callback(started)
    store._db.set_progress_handler(step, 1)
    try:
        call()
    finally:
        store._db.set_progress_handler(None, 1)
        store._db.set_trace_callback(None)
    return [(statement, steps) for statement, steps in counted]


def commits_of(store, call) -> int:
    """Return how many transactions `call` commits on a SQLiteStore."""
    return [statement for statement, _ in statements_of(store, call)].count("COMMIT")
