"""A re-entrant lock that says when a thread has to wait for it: TS1 and UL2 shown, not timed.

Letting another thread run for a fixed while and then finding it unfinished proves nothing on a
busy machine, where it may not have started. `WatchedLock.waiting` is set the moment a thread
finds the lock taken and is about to wait, so a test waits for that instead of sleeping.
"""

import threading


class WatchedLock:
    """Wrap a re-entrant lock (a new one by default); set `waiting` when a thread must wait."""

    def __init__(self, lock=None) -> None:
        self.lock = lock if lock is not None else threading.RLock()
        self.waiting = threading.Event()

    def __enter__(self) -> "WatchedLock":
        if not self.lock.acquire(blocking=False):
            self.waiting.set()
            self.lock.acquire()
        return self

    def __exit__(self, *raised) -> None:
        self.lock.release()


def waits_or_ends(lock: WatchedLock, worker: threading.Thread) -> bool:
    """Start `worker`; return True once it waits for `lock`, False if it ends without waiting."""
    worker.start()
    # One of the two must happen: a wait for something that must happen, never a bound.
    while worker.is_alive() and not lock.waiting.wait(0.01):
        pass
    return lock.waiting.is_set()
