"""What SQLite did during a call: the commits, and each statement's virtual-machine steps.

Work counted, never time: the tests of SX1 (steps per statement), Q6 and G10 (commits),
SQ4 (waits for the write lock).
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


def lock_waits_of(store, call) -> int:
    """Return how many times `call` asks a SQLiteStore for the write lock allowing a wait.

    Each such BEGIN IMMEDIATE waits up to the store's `timeout` while another connection holds
    the lock; one run with `PRAGMA busy_timeout = 0` in force takes the lock only if it is free.
    """
    waits = 0
    allowed = store.timeout > 0  # the connection opens with busy_timeout = timeout
    for statement, _ in statements_of(store, call):
        if statement.startswith("PRAGMA busy_timeout"):
            allowed = int(statement.rpartition("=")[2]) > 0
        elif statement.startswith("BEGIN IMMEDIATE") and allowed:
            waits += 1
    return waits
